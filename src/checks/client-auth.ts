import { audit, type Context } from '../context.js';
import { sha256Base64url, timingSafeEqual } from '../crypto.js';
import { OAuthError } from '../errors.js';
import { header, queryParams, repeatedAuthorization } from '../http.js';
import type { ClientRecord } from '../storage/types.js';
import type { OAuthRequest } from '../types.js';

/** Client credentials found in a request (RFC 6749 §2.3.1). */
export interface ClientCredentials {
  clientId: string;
  secret: string | undefined;
  method: 'basic' | 'post';
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
    throw basicFailure();
  }
  const match = /^basic(?: +(\S*))?\s*$/i.exec(value);
  if (!match) throw basicFailure();
  try {
    const encoded = match[1] ?? '';
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw basicFailure();
    const text = decoder.decode(Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0)));
    const colon = text.indexOf(':');
    if (colon <= 0) throw basicFailure();
    return { clientId: formDecode(text.slice(0, colon)), secret: formDecode(text.slice(colon + 1)) };
  } catch {
    throw basicFailure();
  }
}

/**
 * `invalid_client` for a request that tried HTTP Basic or another scheme in `Authorization`:
 * RFC 6749 §5.2 asks for a challenge (`jsonFailure` adds a Basic one).
 */
export function basicFailure(): OAuthError {
  return new OAuthError('invalid_client', 'Client authentication failed.', 401);
}

/**
 * The client credentials of a request, from HTTP Basic or from `client_id` / `client_secret`
 * parameters; `null` when none were sent. Two methods at once are `invalid_request`
 * (OAuth 2.1 §2.4: a client MUST NOT use more than one).
 */
export function clientCredentials(request: OAuthRequest, params: Partial<Record<'client_id' | 'client_secret', string>>): ClientCredentials | null {
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
    return { clientId: basic.clientId, secret: basic.secret === '' ? undefined : basic.secret, method: 'basic' };
  }
  if (params.client_id === undefined) {
    if (params.client_secret !== undefined) throw new OAuthError('invalid_client', 'Client authentication failed.', 401);
    return null;
  }
  return { clientId: params.client_id, secret: params.client_secret, method: 'post' };
}

// Compared against when the client is unknown, so unknown and wrong take the same time.
const DUMMY_HASH = 'x'.repeat(43);

/** The client id to look up, or `null` for one no store can hold (too long, control characters, a NUL that would break SQL). */
export function lookupId(credentials: ClientCredentials): string | null {
  return credentials.clientId.length <= 200 && !/[\x00-\x1f\x7f]/.test(credentials.clientId) ? credentials.clientId : null;
}

/**
 * The authenticated client, or `invalid_client` (401), once the store has answered for
 * `lookupId(credentials)`. An unknown client and a wrong secret take the same path and give the
 * same answer (RFC 6749 §5.2, RFC 6819 §4.3.5). A public client is identified by `client_id`
 * alone; its codes are bound to it and protected by PKCE.
 */
export function verifyClient(client: ClientRecord | null, credentials: ClientCredentials): ClientRecord {
  const presented = sha256Base64url(credentials.secret ?? '');
  const expected = client?.secretHash ?? DUMMY_HASH;
  const match = timingSafeEqual(presented, expected);
  if (client && client.secretHash === null) {
    // A public client identifies itself with client_id alone and must not send a secret.
    if (credentials.secret !== undefined) throw clientFailure(credentials);
    return client;
  }
  if (!client || credentials.secret === undefined || !match) throw clientFailure(credentials);
  return client;
}

/** Built only on failure: an Error captures a stack trace, which every request would pay for otherwise (see BENCHMARKS.md). */
function clientFailure(credentials: ClientCredentials): OAuthError {
  return credentials.method === 'basic' ? basicFailure() : new OAuthError('invalid_client', 'Client authentication failed.', 401);
}

/**
 * The client a token, revocation or introspection request authenticates as (RFC 6749 §2.3.1),
 * or `null` when it sends no credentials; `invalid_client` (or `invalid_request`) when it sends
 * wrong or malformed ones. Credentials come from HTTP Basic or the body, never the query string
 * (unless `allowCredentialsInQuery`). Every failed check is reported to `onAudit` with the
 * claimed client id only, so a host can rate limit guessing (RFC 6819 §4.3.5).
 *
 * The store lookup is the only `await`: the credentials are read before it and checked after it
 * synchronously.
 */
export async function authenticateClient(ctx: Context, request: OAuthRequest, params: Partial<Record<'client_id' | 'client_secret', string>>): Promise<ClientRecord | null> {
  if (!ctx.options.allowCredentialsInQuery && request.url.includes('?') && queryParams(request).has('client_secret')) {
    // RFC 6749 §2.3.1: client credentials MUST NOT be included in the request URI.
    throw new OAuthError('invalid_request', 'Client credentials must not be sent in the query string.');
  }
  const credentials = clientCredentials(request, params);
  if (!credentials) return null;
  const id = lookupId(credentials);
  const found = id === null ? null : await ctx.storage.findClient(id);
  try {
    return verifyClient(found, credentials);
  } catch (error) {
    audit(ctx, { type: 'client.authentication_failed', clientId: credentials.clientId.slice(0, 200) });
    throw error;
  }
}

/**
 * Whether a client may use a grant type (RFC 7591 §2 `grant_types`): every type when it was
 * registered without a list, else only those listed.
 */
export function mayUseGrant(client: ClientRecord, grantType: string): boolean {
  return !client.grantTypes || (client.grantTypes as string[]).includes(grantType);
}
