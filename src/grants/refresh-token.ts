import { sha256Base64url } from '../crypto.js';
import { covers } from '../checks/scope.js';
import { mayUseGrant } from '../checks/client-auth.js';
import { findClient, isDocumentClientId, type Presented } from '../checks/clients.js';
import { accessAudience } from '../checks/resource.js';
import { audit, type Context } from '../context.js';
import { invalidClient, OAuthError } from '../errors.js';
import type { ClientRecord, GrantRecord, TokenRecord } from '../storage/types.js';
import { MAX_TOKEN_LENGTH } from '../tokens/lookup.js';
import { familyEnd, familyOf, familyPart, type IssuedTokens } from '../tokens/mint.js';
import { invalidGrant } from './invalid-grant.js';
import { issued, mintTokens, type Issue } from './issue-tokens.js';
import { boundTo } from '../dpop/binding.js';
import { proofRequired } from '../dpop/token-request.js';
import { checkIdTokenKey } from '../oidc/provider.js';

/**
 * `grant_type=refresh_token` (RFC 6749 §6; docs/reference.md#refresh-token-grant). The refresh
 * token is single use: one atomic storage step marks it rotated, invalidates the access token
 * issued with it and stores the new pair. A second use is a replay and revokes the whole family
 * (RFC 9700 §4.14.2), unless it is a retry (`refreshRetryWindowSeconds`): presented again soon,
 * before anything minted from it was used, it gets a sibling pair.
 */
export async function refreshTokenGrant(
  ctx: Context,
  params: Partial<Record<'refresh_token' | 'scope', string>>,
  client: ClientRecord | null,
  resources?: readonly string[],
  jkt?: string,
  presented?: Presented,
): Promise<IssuedTokens> {
  if (!client && ctx.options.requireClientAuthOnRefresh) {
    throw invalidClient();
  }
  if (params.refresh_token === undefined) throw new OAuthError('invalid_request', 'The refresh_token parameter is missing.');
  if (params.refresh_token.length > MAX_TOKEN_LENGTH) throw invalidGrant();

  // Read with the client already, where the store could (`findClientWith`).
  const read = presented?.kind === 'token' ? presented : undefined;
  const hash = read?.hash ?? sha256Base64url(params.refresh_token);
  const found = read?.found !== undefined ? read.found : await ctx.storage.findToken(hash);
  const now = ctx.clock.now();
  if (!found) {
    // Not stored: unknown, or a rotated token pruned since. Its family tells a replay apart, for
    // as long as the family lives: prune never switches off reuse detection
    // (docs/reference.md#refresh-token-rotation-and-families).
    const family = familyOf(params.refresh_token);
    const known = family === null ? null : await ctx.storage.findRefreshFamily(sha256Base64url(family));
    if (known && (!client || client.id === known.clientId)) return replay(ctx, known.grantId, known.clientId, null, now);
    throw invalidGrant();
  }
  // Credentials that were sent must belong to the token's client (RFC 6749 §6); a mismatch
  // rotates and revokes nothing, or anyone could burn another client's token.
  if (found.token.kind !== 'refresh' || (client && client.id !== found.token.clientId)) throw invalidGrant();
  // RFC 9449 §5: a bound refresh token is used with a proof of its key only; refused, it rotates
  // nothing. Checked before replay detection: whoever lacks the key cannot use the token, so
  // presenting it proves no theft and must not revoke the holder's family (SECURITY.md).
  const bound = found.token.dpop;
  if (bound !== undefined && (jkt === undefined || !boundTo(bound, jkt)))
    throw jkt === undefined ? proofRequired('the refresh token is bound to a DPoP key') : invalidGrant();
  // A replay is a replay whatever else the request says: handle it before any other check. A
  // retry is not one: the token was rotated less than refreshRetryWindowSeconds ago and nothing
  // minted from it was used since (a lost response, parallel refreshes); the storage step decides.
  const retry = found.token.rotatedAt !== null && (await mayRetry(ctx, found.token, found.token.rotatedAt, client, now));
  if (found.token.rotatedAt !== null && !retry) return replay(ctx, found.token.grantId, found.token.clientId, found.token.rotatedAt, now);
  // A sibling revoked when another one was used: an invalidated token presented again (RFC 9700 §4.14.2).
  if (superseded(found.token, found.grant)) return replay(ctx, found.token.grantId, found.token.clientId, null, now);
  let owner = client;
  if (!client) {
    // Without credentials the token endpoint could not check the client's grant types: check
    // them for the client the token belongs to (RFC 6749 §5.2 `unauthorized_client`).
    // A client ID metadata document client is asked again (its document, the host's `allow`).
    const documentClient = isDocumentClientId(ctx, found.token.clientId);
    owner = await (documentClient ? findClient(ctx, found.token.clientId) : ctx.storage.findClient(found.token.clientId));
    if (!owner && documentClient) throw invalidClient();
    if (owner && !mayUseGrant(owner, 'refresh_token')) {
      throw new OAuthError('unauthorized_client', 'This application may not use grant_type=refresh_token.');
    }
    // RFC 9449 §5.2: a client registered as using DPoP always is refused a request without a
    // proof; the token endpoint checks it for authenticated clients, this is the one it could not.
    if (owner?.dpopBoundAccessTokens && jkt === undefined && ctx.dpop) throw proofRequired('this application uses DPoP-bound tokens only');
  }
  const end = familyEnd(ctx, found.grant.createdAt);
  if (end !== null && now >= end) throw invalidGrant(); // lifetimes.grant: the family has ended

  // A scope parameter may narrow the new pair, never widen it (RFC 6749 §6).
  let scope = found.token.scope;
  if (params.scope !== undefined) {
    const requested = ctx.scopes.parse(params.scope);
    if (!requested || !covers(found.token.scope, requested)) {
      throw new OAuthError('invalid_scope', 'The requested scope is invalid, unknown, malformed, or exceeds the scope granted.');
    }
    scope = requested;
  }
  // So may `resource` narrow the new access token to some of the resources the refresh token
  // carries (RFC 8707 §2.2); the new refresh token keeps them all.
  const granted = found.token.audience;
  const audience = resources === undefined ? granted : accessAudience(ctx, resources, granted);
  // OpenID Connect (Core §12.2): a new ID token this instance cannot sign is a 500 that rotates
  // nothing, so the token is no replay when presented again once the key is back. A client gone
  // gets no ID token (`idTokenResponse`), so needs no key.
  if (owner && ctx.openid && found.grant.kind === 'oauth' && found.grant.openid && scope.includes('openid'))
    checkIdTokenKey(ctx.openid, owner);

  // The family carries over (a token found by its hash was minted here, with a family part that
  // needs no checking); a token from before families existed starts one.
  const carried = found.token.familyHash ? { part: familyPart(params.refresh_token), hash: found.token.familyHash } : null;
  const issue: Issue = {
    grantType: 'refresh_token',
    grantId: found.token.grantId,
    clientId: found.token.clientId,
    scope,
    now,
    end,
    audience,
    refreshAudience: granted,
    refreshFamily: carried,
    refreshParent: hash,
    // A bound refresh token stays bound; an unbound one is bound now unless a confidential client sent it.
    dpop: jkt === undefined ? undefined : { jkt, refresh: bound !== undefined || client === null || client.secretHash === null },
  };
  const pair = mintTokens(ctx, issue, client);
  const retries = ctx.refreshRetry;
  let retried = retry && retries !== undefined;
  let outcome =
    retried && retries
      ? await retries.store.retryRefreshToken(hash, now, retries.windowMs, pair.records)
      : await ctx.storage.rotateRefreshToken(hash, now, pair.records);
  if (!outcome.ok && outcome.reason === 'used' && !retried && retries && (await mayRetry(ctx, found.token, outcome.usedAt, client, now))) {
    // Lost a race against a parallel refresh with the same token: a retry, the pair is a sibling.
    retried = true;
    outcome = await retries.store.retryRefreshToken(hash, now, retries.windowMs, pair.records);
  }
  if (!outcome.ok) {
    // Lost a race against another use of the same token, or a retry against the use of a child:
    // that is a replay too.
    if (outcome.reason === 'used') return replay(ctx, outcome.grantId, found.token.clientId, outcome.usedAt, now);
    // Lost a race against a sibling's rotation, which revoked this one: an invalidated token too.
    if (outcome.reason === 'revoked' && found.token.parentHash != null) {
      const again = await ctx.storage.findToken(hash);
      if (again && superseded(again.token, again.grant)) return replay(ctx, found.token.grantId, found.token.clientId, null, now);
    }
    throw invalidGrant();
  }
  if (retried) audit(ctx, { type: 'refresh_token.retried', clientId: found.token.clientId, grantId: found.token.grantId });
  return issued(ctx, issue, outcome.grant, pair);
}

/**
 * Whether a rotated refresh token presented again is a retry: retries are on for its client (by
 * default only public clients have them), it was rotated no more than `refreshRetryWindowSeconds`
 * ago, it has not expired, and no refresh token minted from it was rotated (the storage step
 * checks these again).
 * Awaits only for a token in the window whose client sent no credentials (its record says
 * whether it is public).
 */
async function mayRetry(ctx: Context, token: TokenRecord, rotatedAt: number, client: ClientRecord | null, now: number): Promise<boolean> {
  const retries = ctx.refreshRetry;
  if (!retries || token.kind !== 'refresh' || token.childRotatedAt != null || now - rotatedAt > retries.windowMs) return false;
  if (token.expiresAt !== null && now >= token.expiresAt) return false; // expired: a replay, as without retries
  if (!retries.publicOnly) return true;
  if (client) return client.secretHash === null;
  if (isDocumentClientId(ctx, token.clientId)) return true; // a metadata-document client is public
  const owner = await ctx.storage.findClient(token.clientId);
  return owner !== null && owner.secretHash === null;
}

/**
 * A refresh token minted by a refresh, revoked while its grant lives: only the rotation of a
 * sibling revokes one that way (a grant's revocation revokes the grant).
 */
function superseded(token: TokenRecord, grant: GrantRecord): boolean {
  return token.kind === 'refresh' && token.parentHash != null && token.revokedAt !== null && grant.revokedAt === null;
}

/**
 * A rotated refresh token presented again, and no retry (RFC 9700 §4.14.2): revoke the whole
 * family, unless it was rotated within `refreshReuseGraceSeconds` (two tabs refreshing at once),
 * which is refused without revoking. Always `invalid_grant`. `rotatedAt` is `null` when the
 * token is known only by its family (its record was pruned) or was a sibling revoked when
 * another was used: no grace then.
 */
async function replay(ctx: Context, grantId: string, clientId: string, rotatedAt: number | null, now: number): Promise<never> {
  const grace = ctx.options.refreshReuseGraceSeconds;
  const inGrace = rotatedAt !== null && grace > 0 && now - rotatedAt <= grace * 1000;
  if (!inGrace) await ctx.storage.revokeGrant(grantId, now);
  audit(ctx, { type: 'refresh_token.reused', clientId, grantId, familyRevoked: !inGrace });
  throw invalidGrant();
}
