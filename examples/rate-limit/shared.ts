/**
 * What the three rate-limit recipes (express.ts, fastify.ts, hono.ts) share: which endpoints
 * are limited, whose budget a request spends, and the OAuth-style 429 answer.
 *
 * The key: the client id of an HTTP Basic `Authorization` header (RFC 6749 §2.3.1) paired with
 * the address the request came from, else the address alone. The id is only a claim at this
 * point (the core checks the secret later), and client ids are not secret: paired with the
 * address, nobody can spend a client's budget from elsewhere, while clients behind one address
 * (a NAT, a hosting platform) each have their own. A `client_id` in the form body is not read:
 * the adapters read their own raw bodies, so a limiter in front of them cannot see it without
 * buffering the body itself; such clients (public ones, on users' own devices) are limited by
 * address.
 */

/** The endpoints limited, under the OAuth routes' `basePath`: token, device authorization, revocation. */
export const LIMITED_ENDPOINTS = ['/token', '/device', '/revoke'] as const;

/** The client id an HTTP Basic `Authorization` header claims (RFC 6749 §2.3.1: form-encoded), or undefined. */
export function basicClientId(authorization: string | undefined): string | undefined {
  if (!authorization || !/^basic\s/i.test(authorization)) return undefined;
  try {
    const decoded = atob(authorization.slice(6).trim());
    const colon = decoded.indexOf(':');
    // Ids this long are not ours (and would only grow the limiter's store).
    if (colon < 1 || colon > 200) return undefined;
    return decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
  } catch {
    return undefined; // not base64, or not percent-encoding: the core will say invalid_client
  }
}

/** Whose budget a request spends: the claimed client id at this address, else the address. */
export function rateLimitKey(authorization: string | undefined, address: string): string {
  const clientId = basicClientId(authorization);
  return clientId === undefined ? `address ${address}` : `client ${JSON.stringify(clientId)} at ${address}`;
}

/**
 * The body of the 429: an OAuth error (RFC 6749 §5.2 shape), `temporarily_unavailable` as the
 * revocation endpoint already answers an outage (RFC 7009 §2.2.1). Not `slow_down`: that one
 * (RFC 8628 §3.5) tells a device-flow client still waiting for the user to poll less often, and
 * means nothing to a code exchange, a refresh or a revocation, which the limiter cannot tell
 * apart without reading the body.
 */
export const tooManyRequests = (retryAfterSeconds: number) => ({
  error: 'temporarily_unavailable',
  error_description: `Too many requests: try again in ${retryAfterSeconds} seconds.`,
});
