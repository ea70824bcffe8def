import { audit, type Context } from '../context.js';
import { OAuthError } from '../errors.js';
import { MAX_TOKEN_LENGTH } from '../grants/authorization-code.js';
import { isPending, readToken, tokenKey } from '../grants/issue.js';
import { formParamsWithin, jsonTextResponse } from '../http.js';
import { bareAccessToken } from '../tokens/jwt.js';
import type { OAuthRequest, OAuthResponse } from '../types.js';
import { jsonFailure } from './failure.js';
import { authenticatedClient, findClientOf, requestCredentials, requirePost, TOKEN_ABOUT_PARAMS } from './token.js';

/**
 * POST /v1/oauth/revoke (SPEC 4.3, RFC 7009). Holding the token is enough; credentials that are
 * sent must be right and the token must be theirs. Revoking either token of a pair revokes the
 * grant, and so both (RFC 7009 §2.1). An unknown or already revoked token also answers `200 {}`
 * (RFC 7009 §2.2), so the answer tells nothing about which tokens exist.
 */
export async function revoke(ctx: Context, request: OAuthRequest): Promise<OAuthResponse> {
  try {
    requirePost(request);
    const params = formParamsWithin(request, TOKEN_ABOUT_PARAMS);
    const credentials = requestCredentials(ctx, request, params);
    const client = credentials && authenticatedClient(ctx, await findClientOf(ctx, credentials), credentials);
    if (params.token === undefined) throw new OAuthError('invalid_request', 'The token parameter is missing.');
    // token_type_hint is accepted and not needed: one lookup finds either kind (RFC 7009 §2.1).
    if (params.token.length <= MAX_TOKEN_LENGTH) {
      const pending = tokenKey(ctx, params.token);
      const key = typeof pending === 'string' ? pending : await pending; // no microtask for an opaque token
      const read = key === null ? null : readToken(ctx.storage, key);
      const found = isPending(read) ? await read : read;
      // A bare `jti` (or any bare value) names no JWT access token: nothing to revoke.
      if (found && !bareAccessToken(ctx.jwt !== undefined, params.token, found.token.kind)) {
        // Read now: the records may be the store's own (readToken), to be kept past no await.
        const { clientId, grantId } = found.token;
        const accountUuid = found.grant.account.uuid;
        if (client && client.id !== clientId) {
          throw new OAuthError('unauthorized_client', 'The token was not issued to this client.');
        }
        await ctx.storage.revokeGrant(grantId, ctx.clock.now());
        audit(ctx, { type: 'token.revoked', clientId, accountUuid, grantId });
      }
    }
    return jsonTextResponse(200, '{}');
  } catch (error) {
    // A revocation storage could not record is 503, never 200.
    return jsonFailure(ctx, request, error, 503);
  }
}
