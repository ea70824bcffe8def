import { clientCredentials, lookupId, verifyClient, type ClientCredentials } from '../checks/client-auth.js';
import { audit, type Context } from '../context.js';
import { OAuthError } from '../errors.js';
import { authorizationCodeGrant } from '../grants/authorization-code.js';
import { refreshTokenGrant } from '../grants/refresh-token.js';
import { formParamsWithin, jsonTextResponse, queryParams } from '../http.js';
import type { ClientRecord } from '../storage/types.js';
import type { OAuthRequest, OAuthResponse } from '../types.js';
import { jsonFailure } from './failure.js';

/**
 * Every parameter the token endpoint defines, each of which may appear once (RFC 6749 §3.2),
 * with an upper bound on its length, so nothing unbounded reaches hashing or storage.
 */
const TOKEN_PARAMS = {
  grant_type: 100,
  code: 4096,
  redirect_uri: 4096,
  code_verifier: 4096,
  refresh_token: 4096,
  scope: 200,
  client_id: 512,
  client_secret: 512,
} as const;
type TokenParams = Partial<Record<keyof typeof TOKEN_PARAMS, string>>;

/** The revocation and introspection parameters (RFC 7009 §2.1, RFC 7662 §2.1). */
export const TOKEN_ABOUT_PARAMS = {
  // In this order: a request with several over-long values names the first of them.
  client_id: 512,
  client_secret: 512,
  token: Infinity, // RFC 7009 §2.2: any unknown or malformed token is still 200 {}
  token_type_hint: 100,
} as const;

/** A grant answers with the JSON text of its token response. */
type Grant = (ctx: Context, params: TokenParams, client: ClientRecord | null) => Promise<string>;

/** The grants, by `grant_type`. */
const GRANTS: Record<string, Grant> = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
};

/** Reject a non-POST request before reading anything (RFC 6749 §3.2). */
export function requirePost(request: OAuthRequest): void {
  if (request.method !== 'POST' && request.method.toUpperCase() !== 'POST') {
    throw new OAuthError('invalid_request', 'This endpoint only accepts POST requests.', 405);
  }
}

/**
 * The client credentials a request carries (HTTP Basic or the body), or `null` when it carries
 * none. Synchronous: the store lookup (`findClientOf`) and the check (`authenticatedClient`)
 * follow, with one `await` between them in the endpoint itself.
 */
export function requestCredentials(ctx: Context, request: OAuthRequest, params: TokenParams): ClientCredentials | null {
  if (!ctx.options.allowCredentialsInQuery && request.url.includes('?') && queryParams(request).has('client_secret')) {
    // RFC 6749 §2.3.1: client credentials MUST NOT be included in the request URI.
    throw new OAuthError('invalid_request', 'Client credentials must not be sent in the query string.');
  }
  return clientCredentials(request, params);
}

/** The stored client the credentials name: the store's answer, or `null` for an id no store can hold. */
export function findClientOf(ctx: Context, credentials: ClientCredentials): Promise<ClientRecord | null> | null {
  const id = lookupId(credentials);
  return id === null ? null : ctx.storage.findClient(id);
}

/**
 * The client the credentials authenticate, or `invalid_client`. Every failure is reported to
 * `onAudit` (with the claimed client id only), so a host can rate limit guessing
 * (RFC 6819 §4.3.5).
 */
export function authenticatedClient(ctx: Context, found: ClientRecord | null, credentials: ClientCredentials): ClientRecord {
  try {
    return verifyClient(found, credentials);
  } catch (error) {
    audit(ctx, { type: 'client.authentication_failed', clientId: credentials.clientId.slice(0, 200) });
    throw error;
  }
}

/**
 * POST /v1/oauth/token. Order (DESIGN): POST only; parse (a parameter twice is
 * `invalid_request`); client credentials, when sent, checked first; `grant_type`; then the
 * grant's own checks.
 */
export async function token(ctx: Context, request: OAuthRequest): Promise<OAuthResponse> {
  try {
    requirePost(request);
    const params: TokenParams = formParamsWithin(request, TOKEN_PARAMS);
    const credentials = requestCredentials(ctx, request, params);
    const client = credentials && authenticatedClient(ctx, await findClientOf(ctx, credentials), credentials);
    if (params.grant_type === undefined) throw new OAuthError('invalid_request', 'The grant_type parameter is missing.');
    const grant = Object.hasOwn(GRANTS, params.grant_type) ? GRANTS[params.grant_type] : undefined;
    if (!grant) {
      throw new OAuthError('unsupported_grant_type', "The grant_type must be 'authorization_code' or 'refresh_token'.");
    }
    // RFC 6749 §5.2: the authenticated client may not use this grant type (RFC 7591 `grant_types`).
    if (client?.grantTypes && !(client.grantTypes as string[]).includes(params.grant_type)) {
      throw new OAuthError('unauthorized_client', `This application may not use grant_type=${params.grant_type}.`);
    }
    return jsonTextResponse(200, await grant(ctx, params, client));
  } catch (error) {
    return jsonFailure(ctx, request, error, 500);
  }
}
