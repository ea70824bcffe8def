import { redirectTo } from '../checks/redirect-uri.js';
import type { Context } from '../context.js';
import type { AuthorizationRequestRecord, OAuthGrantRecord } from '../storage/types.js';
import type { AuthorizeDecision } from '../types.js';
import { accessTokenValue, familyEnd } from '../tokens/mint.js';
import { issued, mintTokens, type Issue } from './issue-tokens.js';
import { type PendingApproval, storeGrant } from './store-grant.js';

/**
 * The implicit grant (RFC 6749 §4.2.2): for an approved `response_type=token` request, an access
 * token of a new grant, sent in the callback's fragment with `token_type`, `expires_in`, `scope`,
 * `state` and `iss` (RFC 9207). No refresh token (RFC 6749 §4.2.2: MUST NOT). Off in the strict
 * profile (RFC 9700 §2.1.2).
 */
export async function issueImplicit(
  ctx: Context,
  grant: OAuthGrantRecord,
  req: AuthorizationRequestRecord,
  now: number,
  approval?: PendingApproval,
): Promise<AuthorizeDecision> {
  const issue: Issue = {
    grantType: 'implicit',
    grantId: grant.id,
    clientId: grant.clientId,
    scope: req.scope,
    now,
    end: familyEnd(ctx, now), // lifetimes.grant: the token does not outlive its grant
    audience: req.resources, // RFC 8707 §2: the token is for the resources requested, when any were
    refreshAudience: undefined,
    refreshFamily: null,
  };
  const pair = mintTokens(ctx, issue, null); // an access token only: the implicit flow gets no refresh token
  await storeGrant(ctx, grant, { tokens: pair.records }, approval);
  await issued(ctx, issue, grant, pair);
  return {
    type: 'redirect',
    location: redirectTo(
      req.redirectUri,
      {
        access_token: await accessTokenValue(ctx, pair.access, grant),
        token_type: 'bearer',
        expires_in: String(Math.ceil((pair.access.record.expiresAt - now) / 1000)),
        scope: ctx.scopes.format(req.scope),
        state: req.state,
        iss: ctx.options.issuer,
      },
      'fragment',
    ),
  };
}
