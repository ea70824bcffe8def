import { sha256Base64url } from '../crypto.js';
import { checkVerifier } from '../checks/pkce.js';
import type { Presented } from '../checks/clients.js';
import { clientRedirectUriMatches } from '../checks/redirect-uri.js';
import { audit, type Context } from '../context.js';
import { invalidClient, OAuthError } from '../errors.js';
import type { ClientRecord } from '../storage/types.js';
import { MAX_TOKEN_LENGTH } from '../tokens/lookup.js';
import { familyEnd, type IssuedTokens } from '../tokens/mint.js';
import { accessAudience } from '../checks/resource.js';
import { invalidGrant } from './invalid-grant.js';
import { issued, keyBinding, mintTokens, type Issue } from './issue-tokens.js';
import { boundTo } from '../dpop/binding.js';
import { proofRequired } from '../dpop/token-request.js';
import { checkIdTokenKey } from '../oidc/provider.js';

/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3; docs/reference.md#authorization-code-grant).
 * Checks that can fail without using the code come first (a failed exchange does not use up the
 * code); the code is then redeemed in one atomic storage step together with the new tokens.
 */
export async function authorizationCodeGrant(
  ctx: Context,
  params: Partial<Record<'code' | 'redirect_uri' | 'code_verifier', string>>,
  client: ClientRecord | null,
  resources?: readonly string[],
  jkt?: string,
  presented?: Presented,
): Promise<IssuedTokens> {
  // RFC 6749 §4.1.3: the client authenticates (a public client with client_id alone).
  if (!client) throw invalidClient();
  if (params.code === undefined) throw new OAuthError('invalid_request', 'The code parameter is missing.');
  if (params.redirect_uri === undefined) throw new OAuthError('invalid_request', 'The redirect_uri parameter is missing.');
  if (params.code.length > MAX_TOKEN_LENGTH) throw invalidGrant();

  // Read with the client already, where the store could (`findClientWith`).
  const read = presented?.kind === 'code' ? presented : undefined;
  const hash = read?.hash ?? sha256Base64url(params.code);
  const code = read?.found !== undefined ? read.found : await ctx.storage.findCode(hash);
  // Bound to its client and its redirect URI (RFC 6749 §4.1.3); a mismatch uses nothing up.
  if (!code || code.clientId !== client.id || code.redirectUri !== params.redirect_uri) throw invalidGrant();
  // A code issued to a callback URL the client no longer has (`updateClient`) is dead.
  if (!clientRedirectUriMatches(client, code.redirectUri, client.secretHash === null)) throw invalidGrant();
  // PKCE (RFC 7636 §4.6): a wrong or missing verifier uses nothing up either.
  checkVerifier(code, params.code_verifier, invalidGrant);
  // RFC 9449 §10: a code bound with `dpop_jkt` is exchanged with a proof of that key only.
  if (code.dpop !== undefined && (jkt === undefined || !boundTo(code.dpop, jkt)))
    throw jkt === undefined ? proofRequired('the code is bound to a DPoP key') : invalidGrant();
  // RFC 8707 §2.2: `resource` narrows the access token to some of the code's resources; the
  // refresh token keeps them all. A resource not granted is `invalid_target`, and uses nothing up.
  const audience = resources === undefined ? code.resources : accessAudience(ctx, resources, code.resources);
  // OpenID Connect: an ID token this instance cannot sign (the key of the client's algorithm is
  // gone) is a 500 that leaves the code as it was, to be exchanged once the key is back.
  if (code.openid !== undefined && ctx.openid && code.scope.includes('openid')) checkIdTokenKey(ctx.openid, client);

  const now = ctx.clock.now();
  const issue: Issue = {
    grantType: 'authorization_code',
    grantId: code.grantId,
    clientId: code.clientId,
    scope: code.scope,
    now,
    // The grant was created with the code, one code lifetime before the code expires.
    end: familyEnd(ctx, code.expiresAt - ctx.options.lifetimes.code * 1000),
    audience,
    refreshAudience: code.resources,
    refreshFamily: null, // a new family starts
    dpop: keyBinding(jkt, client),
  };
  const pair = mintTokens(ctx, issue, client);
  const outcome = await ctx.storage.redeemCode(hash, now, pair.records);
  if (!outcome.ok) {
    // RFC 6749 §4.1.2: a code used twice SHOULD revoke every token issued from it.
    if (outcome.reason === 'used') {
      await ctx.storage.revokeGrant(outcome.grantId, now);
      audit(ctx, { type: 'code.reused', clientId: client.id, grantId: outcome.grantId });
    }
    throw invalidGrant();
  }
  return issued(ctx, issue, outcome.grant, pair, code.openid);
}
