/**
 * The URL a Hono request was sent to, for `requireToken` (index.ts): under `app.mount()` Hono
 * hands the mounted app a request without the mount path.
 */
import type { Context } from 'hono';

/** What `c.env.incoming` is on Node (`@hono/node-server`'s bindings): the request as received. */
interface Received {
  url?: unknown;
  originalUrl?: unknown;
}

/**
 * The URL the client sent the request to, which a DPoP proof's `htu` names (RFC 9449 §4.3 point
 * 9). `c.req.url` is that of the request this app was handed, and `app.mount(path, …)` hands a
 * mounted app a copy without `path` (`app.route()` does not): compared with it, a real client's
 * proof would be refused, and one made for another URL of the host accepted. On Node,
 * `@hono/node-server` passes the request as received as `c.env.incoming`: its path (or a
 * connect-style host's `originalUrl`, as the node:http `requireToken` takes) is the one sent.
 * Other runtimes hand over nothing of the kind: there the check belongs in the app that mounts
 * (docs/reference.md#dpop-rfc-9449). No allocation when the two agree, the usual case.
 */
export function sentUrl(c: Context): string {
  const url = c.req.url;
  const incoming = (c.env as { incoming?: Received } | undefined)?.incoming;
  if (typeof incoming !== 'object' || incoming === null) return url;
  const sent = typeof incoming.originalUrl === 'string' ? incoming.originalUrl : incoming.url;
  if (typeof sent !== 'string' || url.endsWith(sent)) return url;
  // A request target in absolute form (RFC 9112 §3.2.2), which Hono's Node server routes by its
  // path as it does any other: the mount path is in it too.
  const absolute = sent.startsWith('http://') || sent.startsWith('https://');
  if (!absolute && !sent.startsWith('/')) return url;
  try {
    // Parsed as Hono's Node server parses it (dot segments resolved, as the router saw the
    // path), so a resource's `requiredScope` is given the path that was routed. A path is
    // appended to the origin, never resolved against it: a path `//other/…` stays a path.
    return new URL(absolute ? sent : new URL(url).origin + sent).href;
  } catch {
    return url;
  }
}
