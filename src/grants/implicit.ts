import { redirectTo } from '../checks/redirect-uri.js';
import { audit, type Context } from '../context.js';
import type { AuthorizationRequestRecord, GrantRecord } from '../storage/types.js';
import type { AuthorizeDecision } from '../types.js';
import { accessTokenValue, familyEnd, mintAccessToken } from '../tokens/mint.js';

/**
 * The implicit grant (RFC 6749 §4.2.2): for an approved `response_type=token` request, an access
 * token of a new grant, sent in the callback's fragment with `token_type`, `expires_in`, `scope`,
 * `state` and `iss` (RFC 9207). No refresh token (RFC 6749 §4.2.2: MUST NOT). Off in the strict
 * profile (RFC 9700 §2.1.2).
 */
export async function issueImplicit(
  ctx: Context,
  grant: GrantRecord,
  req: AuthorizationRequestRecord,
  now: number,
): Promise<AuthorizeDecision> {
  // RFC 8707 §2: the token is for the resources requested, when any were.
  const access = mintAccessToken(ctx, { grantId: grant.id, clientId: grant.clientId }, req.scope, now, req.resources);
  const end = familyEnd(ctx, now); // lifetimes.grant: the token does not outlive its grant
  if (end !== null && access.record.expiresAt! > end) access.record.expiresAt = end;
  await ctx.storage.createGrant(grant, { tokens: [access.record] });
  audit(ctx, {
    type: 'token.issued',
    grantType: 'implicit',
    clientId: grant.clientId,
    accountUuid: grant.account.uuid,
    grantId: grant.id,
    scope: req.scope,
  });
  return {
    type: 'redirect',
    location: redirectTo(
      req.redirectUri,
      {
        access_token: await accessTokenValue(ctx, access, grant),
        token_type: 'bearer',
        expires_in: String(Math.ceil((access.record.expiresAt! - now) / 1000)),
        scope: ctx.scopes.format(req.scope),
        state: req.state,
        iss: ctx.options.issuer,
      },
      'fragment',
    ),
  };
}
