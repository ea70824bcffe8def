/**
 * What a rate limiter in front of the adapters needs to know of OAuth, for any framework's
 * limiter (docs/reference.md#rate-limiting; the tested recipes are in examples/rate-limit/):
 * which endpoints to limit, whose budget a request spends, and the OAuth-style 429 body. The
 * core counts nothing itself.
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

/**
 * The endpoints to limit, each with a budget of its own, under the OAuth routes' `basePath`:
 * token, device authorization, revocation. Mount the limiter on `basePath + endpoint`.
 * @group Adapter kit
 */
export const RATE_LIMITED_ENDPOINTS: readonly ['/token', '/device', '/revoke'] = ['/token', '/device', '/revoke'];

/**
 * The client id an HTTP Basic `Authorization` header claims (RFC 6749 §2.3.1: form-encoded), or
 * undefined for no header, another scheme, or one that does not decode. Unverified: a claim.
 * @group Adapter kit
 */
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

/**
 * Whose budget a request spends: the claimed client id at `address` (`client "id" at 192.0.2.1`),
 * else the address (`address 192.0.2.1`). The id is quoted, so no id can pose as an address or
 * another id. Put a ceiling per address in front (ten times the per-client limit, say): a claimed
 * id is anyone's to invent, and must not open a fresh budget by itself.
 * @param authorization The request's `Authorization` header, if any.
 * @param address The client's address as the framework sees it (behind a proxy, only once the
 *   framework trusts the proxy: docs/reference.md#behind-a-proxy).
 * @group Adapter kit
 */
export function rateLimitKey(authorization: string | undefined, address: string): string {
  const clientId = basicClientId(authorization);
  return clientId === undefined ? `address ${address}` : `client ${JSON.stringify(clientId)} at ${address}`;
}

/**
 * The JSON body of a 429 (send it with `Retry-After` and `Cache-Control: no-store`): an OAuth
 * error (RFC 6749 §5.2 shape), `temporarily_unavailable` as the revocation endpoint already
 * answers an outage (RFC 7009 §2.2.1). Not `slow_down`: that one (RFC 8628 §3.5) tells a
 * device-flow client still waiting for the user to poll less often, and means nothing to a code
 * exchange, a refresh or a revocation, which a limiter cannot tell apart without reading the body.
 * @param retryAfterSeconds What `Retry-After` says; the description leaves the number out when it
 *   is not a number of seconds.
 * @group Adapter kit
 */
export function tooManyRequests(retryAfterSeconds: number): { error: 'temporarily_unavailable'; error_description: string } {
  const when = Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0 ? `in ${Math.ceil(retryAfterSeconds)} seconds` : 'later';
  return { error: 'temporarily_unavailable', error_description: `Too many requests: try again ${when}.` };
}
