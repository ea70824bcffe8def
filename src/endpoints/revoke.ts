import { authenticateClient } from '../checks/client-auth.js';
import { requirePost } from '../checks/require-post.js';
import { audit, type Context } from '../context.js';
import { OAuthError } from '../errors.js';
import { formParamsWithin, jsonTextResponse } from '../http.js';
import { isPending, liveness, lookupPresented, presentedToken, TOKEN_ABOUT_PARAMS } from '../tokens/lookup.js';
import type { OAuthRequest, OAuthResponse } from '../types.js';
import { jsonFailure } from '../failure.js';

/**
 * POST /v1/oauth/revoke (RFC 7009; docs/reference.md#revocation-endpoint). Holding the token is
 * enough; credentials that are sent must be right and the token must be theirs (any client's
 * for a personal access token, which belongs to none). Revoking either
 * token of a pair revokes the grant, and so both (RFC 7009 §2.1). An unknown or already revoked
 * token also answers `200 {}` (RFC 7009 §2.2), so the answer tells nothing about which tokens
 * exist.
 */
export async function revoke(ctx: Context, request: OAuthRequest): Promise<OAuthResponse> {
  try {
    requirePost(request);
    const params = formParamsWithin(request, TOKEN_ABOUT_PARAMS);
    // The token, read with the client where the store can (one round trip on SQL).
    const presented = presentedToken(ctx, params.token);
    const client = await authenticateClient(ctx, request, params, presented);
    if (params.token === undefined) throw new OAuthError('invalid_request', 'The token parameter is missing.');
    // token_type_hint is accepted and not needed: one lookup finds either kind (RFC 7009 §2.1).
    const read = lookupPresented(ctx, params.token, presented);
    const found = isPending(read) ? await read : read;
    if (found) {
      // Read now: the records may be the store's own (readToken), to be kept past no await.
      const { clientId, grantId, kind } = found.token;
      const accountUuid = found.grant.account.uuid;
      const now = ctx.clock.now();
      // A personal access token belongs to no client: whoever holds it may kill it, with or
      // without client credentials, as a secret scanner that found it leaked would
      // (docs/reference.md#personal-access-tokens). Reported as revoked only when this killed
      // it: not when it was dead already (revoked, or expired, as `revokePersonalToken` says).
      if (kind === 'personal') {
        const wasLive = liveness(found, now) === 'live';
        await ctx.storage.revokeGrant(grantId, now);
        if (wasLive) audit(ctx, { type: 'personal_token.revoked', accountUuid, tokenId: grantId, via: 'revocation_endpoint' });
        return jsonTextResponse(200, '{}');
      }
      if (client && client.id !== clientId) {
        throw new OAuthError('unauthorized_client', 'The token was not issued to this client.');
      }
      // Whatever its own state: revoking an expired access token still ends the grant, and so
      // its live refresh token (RFC 7009 §2.1).
      await ctx.storage.revokeGrant(grantId, now);
      audit(ctx, { type: 'token.revoked', clientId, accountUuid, grantId });
    }
    return jsonTextResponse(200, '{}');
  } catch (error) {
    // A revocation storage could not record is 503, never 200.
    return jsonFailure(ctx, request, error, 503);
  }
}
