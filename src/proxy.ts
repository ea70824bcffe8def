/**
 * Behind a TLS-terminating reverse proxy (docs/reference.md#behind-a-proxy): the scheme the
 * client used, as the proxy reports it, for the adapters whose framework has no proxy setting
 * of its own (Hono, node:http). Fastify (`trustProxy`) reports it itself, through
 * `request.protocol`; the Express adapter reads it here when Express's `trust proxy` trusts the
 * peer (its `req.protocol` would believe the left-most value).
 *
 * The headers are read only when the host says a proxy is in front (`trustProxy: true`): any
 * client can send them, so by default they are ignored. The adapters pick the reading once,
 * when their routes are mounted, so a host that trusts no proxy pays nothing per request.
 */
import type { OAuthRequest } from './types.js';

/**
 * The option of the Hono and node:http adapters for a reverse proxy in front.
 * @group Adapter kit
 */
export interface TrustProxyOptions {
  /**
   * Every request comes through a reverse proxy that sets `X-Forwarded-Proto` or `Forwarded`
   * (RFC 7239): the request URL handed to the core then has the scheme the proxy reports, so the
   * CSRF and browser-binding cookies get `Secure` behind a proxy that terminates TLS. Only the
   * last (right-most) value counts, the one the proxy next to the app wrote; `X-Forwarded-Proto`
   * is read first, `Forwarded: proto=` when it is absent. The host stays the `Host` header's
   * (`X-Forwarded-Host` is not read). Default `false`: those headers come from whoever sends
   * them, so never set it on an app that is reachable without the proxy. Express and Fastify
   * have no such option: set their own (`app.set('trust proxy', ...)`, `Fastify({ trustProxy })`).
   */
  trustProxy?: boolean;
}

type HeaderValue = OAuthRequest['headers'][string];

/** The last line of a header that may have come on several. */
const lastLine = (value: HeaderValue): string | undefined => (Array.isArray(value) ? value[value.length - 1] : value);

/** The last element of a comma-separated list (RFC 9110 §5.6.1), skipping commas inside quoted strings. */
function lastElement(line: string): string {
  let quoted = false;
  for (let i = line.length - 1; i >= 0; i--) {
    const c = line[i];
    if (c === '"' && line[i - 1] !== '\\') quoted = !quoted;
    else if (c === ',' && !quoted) return line.slice(i + 1).trim();
  }
  return line.trim();
}

/** `proto=` of a `Forwarded` element (RFC 7239 §4: `pair *( ";" pair )`, values maybe quoted). */
const FORWARDED_PROTO = /(?:^|;)\s*proto\s*=\s*"?([A-Za-z][A-Za-z0-9+.-]*)"?\s*(?:;|$)/i;

/**
 * The scheme the proxy next to the app reports for `headers`: the last value of
 * `X-Forwarded-Proto` when it is present, else the `proto=` of the last element of `Forwarded`;
 * `undefined` when neither says `http` or `https`.
 * @group Adapter kit
 */
export function forwardedScheme(headers: OAuthRequest['headers']): 'http' | 'https' | undefined {
  const xfp = lastLine(headers['x-forwarded-proto']);
  let scheme: string | undefined;
  if (xfp !== undefined) scheme = lastElement(xfp);
  else {
    const forwarded = lastLine(headers['forwarded']);
    scheme = forwarded === undefined ? undefined : FORWARDED_PROTO.exec(lastElement(forwarded))?.[1];
  }
  scheme = scheme?.toLowerCase();
  return scheme === 'http' || scheme === 'https' ? scheme : undefined;
}

/**
 * `request` as it reached the proxy in front of the app: its absolute URL with the scheme the
 * proxy reports (`forwardedScheme`), changed in place. For the adapters' `trustProxy: true`
 * only: it believes the headers.
 * @group Adapter kit
 */
export function fromTrustedProxy(request: OAuthRequest): OAuthRequest {
  const scheme = forwardedScheme(request.headers);
  // Only an absolute http(s) URL has a scheme to change: a bare path may carry '://' in its query.
  const current = request.url.startsWith('http://') ? 'http' : request.url.startsWith('https://') ? 'https' : undefined;
  if (scheme !== undefined && current !== undefined && current !== scheme) request.url = scheme + request.url.slice(current.length);
  return request;
}

/**
 * Whether the cookies of the interaction routes (CSRF, browser binding) get `Secure`: always
 * with an https `issuer` (the public URL is https, whatever the hop to the app was), otherwise
 * when the request URL the adapter built is https.
 * @group Adapter kit
 */
export const secureCookies = (issuer: string | undefined, request: Pick<OAuthRequest, 'url'>): boolean =>
  issuer?.startsWith('https:') === true || request.url.startsWith('https:');
