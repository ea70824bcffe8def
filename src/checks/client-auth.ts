import { findClientWith, type Presented } from './clients.js';
import { audit, type Context } from '../context.js';
import { sha256Base64url, timingSafeEqual } from '../crypto.js';
import { invalidClient, OAuthError } from '../errors.js';
import { header, queryParams, repeatedAuthorization } from '../http.js';
import type { ClientRecord } from '../storage/types.js';
import type { OAuthRequest } from '../types.js';

/** Client credentials found in a request (RFC 6749 §2.3.1). */
export interface ClientCredentials {
  clientId: string;
  secret: string | undefined;
}

/** Client credentials, with the store's lookup of the client they name under way (`clientClaim`). */
interface ClientClaim extends ClientCredentials {
  /** The stored client, once the store answers; `null` for an id no store can hold. */
  found: Promise<ClientRecord | null> | null;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** The `application/x-www-form-urlencoded` decoding RFC 6749 §2.3.1 asks for inside Basic. */
function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

/**
 * `Basic <base64(id:secret)>`, or `undefined` when the header is absent, empty or `Bearer` (some
 * clients send the token that way at revocation: no client authentication;
 * docs/reference.md#client-authentication). Any other scheme is one this server does not
 * support: `invalid_client` (RFC 6749 §5.2).
 */
function basicCredentials(request: OAuthRequest): { clientId: string; secret: string } | undefined {
  if (repeatedAuthorization(request)) {
    throw new OAuthError('invalid_request', 'The request carries more than one Authorization header.');
  }
  const value = header(request, 'authorization');
  if (value === undefined) return undefined;
  if (!/^basic(\s|$)/i.test(value)) {
    if (/^bearer(\s|$)/i.test(value) || value.trim() === '') return undefined;
    throw invalidClient();
  }
  const match = /^basic(?: +(\S*))?\s*$/i.exec(value);
  if (!match) throw invalidClient();
  try {
    const encoded = match[1] ?? '';
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw invalidClient();
    const text = decoder.decode(Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0)));
    const colon = text.indexOf(':');
    if (colon <= 0) throw invalidClient();
    return { clientId: formDecode(text.slice(0, colon)), secret: formDecode(text.slice(colon + 1)) };
  } catch {
    throw invalidClient();
  }
}

/**
 * Client authentication (RFC 6749 §2.3.1), in one step, for every endpoint that authenticates
 * clients (token, revocation, introspection, device authorization): the client the request
 * authenticates as, `null` when it presents no credentials, or `invalid_client` (401; an
 * unknown client and a wrong secret alike, RFC 6749 §5.2) and `invalid_request` (credentials in
 * the query string, two methods at once). Credentials come from HTTP Basic or from `client_id` /
 * `client_secret` parameters, never from the query string (unless `allowCredentialsInQuery`).
 * Two methods at once are `invalid_request` (OAuth 2.1 §2.4: a client MUST NOT use more than
 * one). Every failed check is reported to `onAudit` with the claimed client id only, so a host
 * can rate limit guessing (RFC 6819 §4.3.5).
 *
 * The caller awaits the answer once (`const client = await authenticateClient(ctx, request,
 * params)`): the store's lookup with the synchronous check chained onto it, a value at once when
 * nothing needs looking up (no credentials, an id no store can hold), and a malformed request
 * thrown synchronously, inside the caller's `try`. Not an `async` function, whose own promise and
 * resumption issue 15 measured at 4-8% of W2 and W4 (BENCHMARKS.md); the chained check costs one
 * promise and one tick where the store answers, against the two calls it replaced.
 *
 * `presented`: the code or token the request presents, read in the same store call as the client
 * when the store has the `combinedReads` group (`findClientWith`); its record is then in
 * `presented.found`, read whether or not the client authenticates (nothing is used up by it).
 */
export function authenticateClient(
  ctx: Context,
  request: OAuthRequest,
  params: Partial<Record<'client_id' | 'client_secret', string>>,
  presented?: Presented,
): ClientRecord | null | Promise<ClientRecord | null> {
  const claim = clientClaim(ctx, request, params, presented);
  if (claim === null) return null;
  const found = claim.found;
  return found === null ? checkClaim(ctx, claim, null) : found.then((client) => checkClaim(ctx, claim, client));
}

/**
 * The client credentials a request presents (RFC 6749 §2.3.1), with the store's lookup of the
 * client they name already under way; `null` when it presents none.
 */
function clientClaim(
  ctx: Context,
  request: OAuthRequest,
  params: Partial<Record<'client_id' | 'client_secret', string>>,
  presented: Presented | undefined,
): ClientClaim | null {
  if (!ctx.options.allowCredentialsInQuery && request.url.includes('?') && queryParams(request).has('client_secret')) {
    // RFC 6749 §2.3.1: client credentials MUST NOT be included in the request URI.
    throw new OAuthError('invalid_request', 'Client credentials must not be sent in the query string.');
  }
  const basic = basicCredentials(request);
  if (basic) {
    if (params.client_secret !== undefined) {
      throw new OAuthError('invalid_request', 'The client used more than one authentication method.');
    }
    if (params.client_id !== undefined && params.client_id !== basic.clientId) {
      throw new OAuthError('invalid_request', 'The client_id parameter differs from the client authenticated by HTTP Basic.');
    }
    // An empty password is no secret (RFC 6749 §2.3.1): Go's golang.org/x/oauth2 sends
    // `client_id:` for a public client. A confidential client without a secret still fails.
    return {
      clientId: basic.clientId,
      secret: basic.secret === '' ? undefined : basic.secret,
      found: findClientWith(ctx, basic.clientId, presented),
    };
  }
  if (params.client_id === undefined) {
    if (params.client_secret !== undefined) throw invalidClient();
    return null;
  }
  return { clientId: params.client_id, secret: params.client_secret, found: findClientWith(ctx, params.client_id, presented) };
}

/** The client a claim authenticates, once the store has answered for it, or `invalid_client` (audited). */
function checkClaim(ctx: Context, claim: ClientClaim, found: ClientRecord | null): ClientRecord {
  try {
    return verifyClient(found, claim);
  } catch (error) {
    audit(ctx, { type: 'client.authentication_failed', clientId: claim.clientId.slice(0, 200) });
    throw error;
  }
}

// Compared against when the client is unknown, so unknown and wrong take the same time.
const DUMMY_HASH = 'x'.repeat(43);

/**
 * The authenticated client, or `invalid_client` (401), once the store has answered for the
 * claimed id. An unknown client and a wrong secret take the same path and give the
 * same answer (RFC 6749 §5.2, RFC 6819 §4.3.5). A public client is identified by `client_id`
 * alone; its codes are bound to it and protected by PKCE.
 */
function verifyClient(client: ClientRecord | null, credentials: ClientCredentials): ClientRecord {
  const presented = sha256Base64url(credentials.secret ?? '');
  const expected = client?.secretHash ?? DUMMY_HASH;
  const match = timingSafeEqual(presented, expected);
  if (client && client.secretHash === null) {
    // A public client identifies itself with client_id alone and must not send a secret.
    if (credentials.secret !== undefined) throw invalidClient();
    return client;
  }
  if (!client || credentials.secret === undefined || !match) throw invalidClient();
  return client;
}

/**
 * Whether a client may use a grant type (RFC 7591 §2 `grant_types`): every type when it was
 * registered without a list, else only those listed.
 */
export function mayUseGrant(client: ClientRecord, grantType: string): boolean {
  return !client.grantTypes || (client.grantTypes as string[]).includes(grantType);
}
