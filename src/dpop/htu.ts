/**
 * The comparison form of a proof's `htu` and of the request URL it must match (RFC 9449 §4.3
 * point 9: "ignoring any query and fragment parts", after the syntax- and scheme-based
 * normalisation of RFC 3986 §6.2.2 and §6.2.3).
 */

/** RFC 3986 §2.3: the characters a percent-encoding never needs to hide. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** One `%XX` triplet in its normal form: the character if unreserved (§6.2.2.2), else upper-case hex (§6.2.2.1). */
function percentTriplet(triplet: string): string {
  const char = String.fromCharCode(Number.parseInt(triplet.slice(1), 16));
  return UNRESERVED.test(char) ? char : triplet.toUpperCase();
}

/**
 * `scheme://host[:port]/path` of an http or https URL, normalised; `undefined` for anything
 * else (not a URL, another scheme, user information). The WHATWG URL parser does most of RFC
 * 3986 §6.2.2 and §6.2.3: scheme and host in lower case, the default port and dot segments
 * removed, an empty path made `/`, international host names in their ASCII form; what it leaves,
 * percent-encodings, is normalised here. Query and fragment are dropped.
 *
 * User information is refused rather than ignored: a request URL never carries it, and an `htu`
 * that does names another resource, or hides one (`https://good.example@evil.example/`).
 */
export function normalizeHtu(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '') return undefined;
  return `${url.protocol}//${url.host}${url.pathname.replace(/%[0-9A-Fa-f]{2}/g, percentTriplet)}`;
}

/**
 * The URL a request was sent to, for its proof's `htu`: the request's own when the adapter gave
 * an absolute one (the adapters do, proxy-aware), else the path on the issuer's origin.
 */
export function requestUrl(issuer: string | undefined, url: string): string {
  if (!url.startsWith('/') || issuer === undefined) return url;
  return new URL(issuer).origin + url;
}

/**
 * The URL of an endpoint of this server (the token endpoint, userinfo) as its metadata advertises
 * it, which is what a client's proof names: the issuer, with its path (docs/reference.md#metadata-endpoint),
 * then the path and query the request came to (a mount point, a `basePath`). So neither a `Host`
 * header nor a proxy's scheme decides it, and an issuer with a path, behind a proxy that strips
 * that path, is named with it.
 */
export function endpointUrl(issuer: string, url: string): string {
  let path = url;
  if (!url.startsWith('/')) {
    // A URL that does not parse (the adapter built it from a Host header no host can be) names no
    // path: kept as it is, which no htu matches (`normalizeHtu`), never the root, which a proof
    // made for the root URL would match whatever path the request was routed to.
    const parsed = URL.parse(url);
    if (parsed === null) return url;
    path = parsed.pathname + parsed.search;
  }
  return issuer.replace(/\/$/, '') + path;
}

/**
 * The URL a request to a configured protected resource was sent to, for its proof's `htu`: the
 * resource identifier's origin (scheme, host, port), then the path and query the request came to.
 * The origin is the one the host configured, never the request's `Host` header (nor a proxy's
 * scheme), so a proof a client made for another server's URL does not pass here when that server
 * relays it with its own name as `Host` (RFC 9449 §4.3 point 9, §11.1).
 */
export function resourceUrl(resource: string, url: string): string {
  return endpointUrl(new URL(resource).origin, url);
}
