/**
 * Request headers for the core, shared by the Node adapters (Express, Fastify, node:http). Node
 * silently keeps only the first of some repeated headers (`authorization` among them); those are
 * passed as arrays so the core sees the repetition and can refuse it (RFC 6750 §2). Headers Node
 * joins (cookie, ...) stay as Node gives them. Internal: not an entry point of the package.
 */
import type { OAuthRequest } from '../src/index.js';

/** The parts of a Node `IncomingMessage` this reads (`fastify.inject()` fakes lack `headersDistinct`). */
interface RawRequest {
  rawHeaders?: unknown;
  headersDistinct?: Record<string, string[] | undefined>;
}

/**
 * `received` (the framework's view of the headers, which host hooks may have changed) as the
 * core's headers, with every header that came on several lines as the array of its values.
 */
export function coreHeaders(received: Record<string, string | string[] | undefined>, raw: RawRequest): OAuthRequest['headers'] {
  const headers: OAuthRequest['headers'] = { ...received };
  // The usual case: no header came twice, so none has several values to pass on.
  if (noRepeatedHeader(raw.rawHeaders)) return headers;
  for (const [name, values] of Object.entries(raw.headersDistinct ?? {})) {
    if (values && values.length > 1 && received[name] === values[0]) headers[name] = values;
  }
  return headers;
}

/**
 * Whether no header name came on more than one line (in any case): then every list of
 * `headersDistinct` has one value, and that array per header need not be built.
 */
function noRepeatedHeader(rawHeaders: unknown): boolean {
  if (!Array.isArray(rawHeaders)) return false;
  if (rawHeaders.length <= 2) return true;
  const names = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = String(rawHeaders[i]).toLowerCase();
    if (names.has(name)) return false;
    names.add(name);
  }
  return true;
}

/**
 * RFC 9110 §7.2 `Host`: `uri-host [ ":" port ]` (RFC 3986 §3.2.2), an IP literal in brackets or a
 * registered name, without user information.
 */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::[0-9]*)?$/;

/**
 * The host for the request URL the core reads: the `Host` header (or the proxy's host the
 * framework trusted) when it is one, else `localhost`, as when none came. Node passes any value,
 * and the URL is that value and the path joined: a `/`, `?` or `#` in it (or an empty one) would
 * move the path the core reads, which a DPoP proof's `htu` names and a resource's
 * `requiredScope` rule is given, away from the path the request was routed to.
 */
export function requestHost(host: string | undefined): string {
  return host !== undefined && HOST.test(host) ? host : 'localhost';
}
