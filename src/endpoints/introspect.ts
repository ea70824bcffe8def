import type { Context } from '../context.js';
import { OAuthError } from '../errors.js';
import { isPending, readToken, tokenKey } from '../grants/issue.js';
import { MAX_TOKEN_LENGTH } from '../grants/authorization-code.js';
import { formParamsWithin, jsonResponse } from '../http.js';
import { bareAccessToken } from '../tokens/jwt.js';
import type { OAuthRequest, OAuthResponse } from '../types.js';
import { jsonFailure } from './failure.js';
import { authenticatedClient, findClientOf, requestCredentials, requirePost, TOKEN_ABOUT_PARAMS } from './token.js';

/**
 * POST /v1/oauth/introspect (RFC 7662). The caller must authenticate as a confidential client,
 * and learns only about its own tokens: anything unknown, expired, revoked, rotated or another
 * client's is `{ "active": false }`, so introspection cannot be used to probe for tokens.
 */
export async function introspect(ctx: Context, request: OAuthRequest): Promise<OAuthResponse> {
  try {
    requirePost(request);
    const params = formParamsWithin(request, TOKEN_ABOUT_PARAMS);
    const credentials = requestCredentials(ctx, request, params);
    const client = credentials && authenticatedClient(ctx, await findClientOf(ctx, credentials), credentials);
    if (!client || client.secretHash === null) throw new OAuthError('invalid_client', 'Client authentication failed.', 401);
    if (params.token === undefined) throw new OAuthError('invalid_request', 'The token parameter is missing.');
    const inactive = jsonResponse(200, { active: false });
    if (params.token.length > MAX_TOKEN_LENGTH) return inactive;
    const pending = tokenKey(ctx, params.token);
    const key = typeof pending === 'string' ? pending : await pending; // no microtask for an opaque token
    const read = key === null ? null : readToken(ctx.storage, key);
    const found = isPending(read) ? await read : read;
    const now = ctx.clock.now();
    if (
      !found ||
      bareAccessToken(ctx.jwt !== undefined, params.token, found.token.kind) ||
      found.token.clientId !== client.id ||
      found.token.revokedAt !== null ||
      found.token.rotatedAt !== null ||
      found.grant.revokedAt !== null ||
      (found.token.expiresAt !== null && now >= found.token.expiresAt)
    ) {
      return inactive;
    }
    const { token, grant } = found;
    return jsonResponse(200, {
      active: true,
      scope: ctx.scopes.format(token.scope),
      client_id: token.clientId,
      username: grant.account.email,
      sub: grant.account.uuid,
      ...(token.kind === 'access' && { token_type: 'bearer' }),
      iat: Math.floor(token.issuedAt / 1000),
      ...(token.expiresAt !== null && { exp: Math.floor(token.expiresAt / 1000) }),
      ...(ctx.options.issuer && { iss: ctx.options.issuer }),
    });
  } catch (error) {
    return jsonFailure(ctx, request, error, 500);
  }
}
