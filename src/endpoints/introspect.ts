import { authenticateClient } from '../checks/client-auth.js';
import { requirePost } from '../checks/require-post.js';
import type { Context } from '../context.js';
import { invalidClient, OAuthError } from '../errors.js';
import { formParamsWithin, jsonResponse } from '../http.js';
import { isPending, liveness, lookupPresented, presentedToken, TOKEN_ABOUT_PARAMS } from '../tokens/lookup.js';
import type { OAuthRequest, OAuthResponse } from '../types.js';
import { jsonFailure } from '../failure.js';
import { confirmation, DPOP_TOKEN_TYPE } from '../dpop/binding.js';

/**
 * POST /v1/oauth/introspect (RFC 7662). The caller must authenticate as a confidential client,
 * and learns only about its own tokens: anything unknown, expired, revoked, rotated or another
 * client's is `{ "active": false }`, so introspection cannot be used to probe for tokens.
 */
export async function introspect(ctx: Context, request: OAuthRequest): Promise<OAuthResponse> {
  try {
    requirePost(request);
    const params = formParamsWithin(request, TOKEN_ABOUT_PARAMS);
    // The token, read with the client where the store can (one round trip on SQL).
    const presented = presentedToken(ctx, params.token);
    const client = await authenticateClient(ctx, request, params, presented);
    if (!client || client.secretHash === null) throw invalidClient();
    if (params.token === undefined) throw new OAuthError('invalid_request', 'The token parameter is missing.');
    const read = lookupPresented(ctx, params.token, presented);
    const found = isPending(read) ? await read : read;
    const now = ctx.clock.now();
    // Live as at the bearer check (`liveness`), and the caller's own.
    if (!found || found.token.clientId !== client.id || liveness(found, now) !== 'live') {
      return jsonResponse(200, { active: false });
    }
    const { token, grant } = found;
    return jsonResponse(200, {
      active: true,
      scope: ctx.scopes.format(token.scope),
      client_id: token.clientId,
      username: grant.account.email,
      sub: grant.account.uuid,
      ...(token.kind === 'access' && { token_type: token.dpop === undefined ? 'bearer' : DPOP_TOKEN_TYPE }),
      iat: Math.floor(token.issuedAt / 1000),
      ...(token.expiresAt !== null && { exp: Math.floor(token.expiresAt / 1000) }),
      ...(ctx.options.issuer && { iss: ctx.options.issuer }),
      // RFC 7662 §2.2: the resources the token is for (RFC 8707), only for a token issued with them.
      ...(token.audience !== undefined && { aud: token.audience.length === 1 ? token.audience[0] : [...token.audience] }),
      // RFC 9449 §6.2: the key a DPoP-bound token is bound to.
      ...(token.dpop !== undefined && { cnf: confirmation(token.dpop.jkt) }),
    });
  } catch (error) {
    return jsonFailure(ctx, request, error, 500);
  }
}
