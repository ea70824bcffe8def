import { randomToken, sha256Base64url } from '../crypto.js';
import { errorDecision, reusedChallenge } from '../checks/authorization-request.js';
import { challengeSeen } from '../checks/pkce.js';
import { formPost, redirectTo } from '../checks/redirect-uri.js';
import type { Context } from '../context.js';
import type { AuthorizationRequestRecord, CodeRecord, OAuthGrantRecord } from '../storage/types.js';
import type { AuthorizeDecision } from '../types.js';
import { type PendingApproval, storeGrant } from './store-grant.js';

/**
 * The authorization code of an approved `response_type=code` request (RFC 6749 §4.1.2): stored
 * with its new grant, bound to the client, the `redirect_uri` and the PKCE challenge, and sent
 * to the callback in the query with `state` and `iss` (RFC 9207). `grant_type=authorization_code`
 * then exchanges it at the token endpoint.
 */
export async function issueCode(
  ctx: Context,
  grant: OAuthGrantRecord,
  req: AuthorizationRequestRecord,
  now: number,
  approval?: PendingApproval,
): Promise<AuthorizeDecision> {
  // Looked up and remembered in one synchronous step, so approvals that run side by side with
  // the same challenge cannot both pass unnoticed; forgotten again if no code comes of it.
  const challenge = req.codeChallenge;
  let remembered: string | undefined; // the challenge this call remembered, to forget if no code comes of it
  if (challenge) {
    if (!challengeSeen(ctx, grant.clientId, challenge, true)) remembered = challenge;
    else if (ctx.options.rejectReusedPkceChallenge) return errorDecision(ctx, reusedChallenge(req));
  }
  const code = `${ctx.options.tokenPrefixes.code}${randomToken()}`;
  const record: CodeRecord = {
    hash: sha256Base64url(code),
    grantId: grant.id,
    clientId: grant.clientId,
    redirectUri: req.redirectUri,
    scope: req.scope,
    codeChallenge: challenge ?? null,
    codeChallengeMethod: req.codeChallengeMethod ?? null,
    expiresAt: now + ctx.options.lifetimes.code * 1000,
    usedAt: null,
  };
  // The resources granted (RFC 8707 §2): the exchange issues for these or some of them.
  if (req.resources !== undefined) record.resources = req.resources;
  // RFC 9449 §10: the exchange must prove the key the request named.
  if (req.dpopJkt !== undefined) record.dpop = { jkt: req.dpopJkt };
  // OpenID Connect: what the code's ID token says besides the grant (Core §3.1.3.3).
  if (grant.openid) record.openid = req.openid?.nonce === undefined ? { ...grant.openid } : { ...grant.openid, nonce: req.openid.nonce };
  try {
    await storeGrant(ctx, grant, { code: record }, approval);
  } catch (error) {
    if (remembered !== undefined) ctx.challenges.delete(grant.clientId, remembered); // no code: a retry is no reuse
    throw error;
  }
  // The OpenID Connect request's response mode (OAuth 2.0 Multiple Response Types §2.1, Form Post
  // Response Mode §2); the query otherwise (RFC 6749 §4.1.2).
  const mode = req.openid?.responseMode;
  if (mode === 'form_post') return formPost(req.redirectUri, { code, state: req.state, iss: ctx.options.issuer });
  const where = mode === 'fragment' ? 'fragment' : 'query';
  return { type: 'redirect', location: redirectTo(req.redirectUri, { code, state: req.state, iss: ctx.options.issuer }, where) };
}
