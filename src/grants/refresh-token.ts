import { sha256Base64url } from '../crypto.js';
import { covers } from '../checks/scope.js';
import { mayUseGrant } from '../checks/client-auth.js';
import { findClient, isDocumentClientId } from '../checks/clients.js';
import { accessAudience } from '../checks/resource.js';
import { audit, type Context } from '../context.js';
import { invalidClient, OAuthError } from '../errors.js';
import type { ClientRecord } from '../storage/types.js';
import { MAX_TOKEN_LENGTH } from '../tokens/lookup.js';
import { familyEnd, familyOf, familyPart, type IssuedTokens } from '../tokens/mint.js';
import { invalidGrant } from './invalid-grant.js';
import { issued, mintTokens, type Issue } from './issue-tokens.js';
import { boundTo } from '../dpop/binding.js';
import { proofRequired } from '../dpop/token-request.js';

/**
 * `grant_type=refresh_token` (RFC 6749 §6; docs/reference.md#refresh-token-grant). The refresh
 * token is single use: one atomic storage step marks it rotated, invalidates the access token
 * issued with it and stores the new pair. A second use is a replay and revokes the whole family
 * (RFC 9700 §4.14.2).
 */
export async function refreshTokenGrant(
  ctx: Context,
  params: Partial<Record<'refresh_token' | 'scope', string>>,
  client: ClientRecord | null,
  resources?: readonly string[],
  jkt?: string,
): Promise<IssuedTokens> {
  if (!client && ctx.options.requireClientAuthOnRefresh) {
    throw invalidClient();
  }
  if (params.refresh_token === undefined) throw new OAuthError('invalid_request', 'The refresh_token parameter is missing.');
  if (params.refresh_token.length > MAX_TOKEN_LENGTH) throw invalidGrant();

  const hash = sha256Base64url(params.refresh_token);
  const found = await ctx.storage.findToken(hash);
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
  // A replay is a replay whatever else the request says: handle it before any other check.
  if (found.token.rotatedAt !== null) return replay(ctx, found.token.grantId, found.token.clientId, found.token.rotatedAt, now);
  // RFC 9449 §5: a bound refresh token is used with a proof of its key only; refused, it rotates nothing.
  const bound = found.token.dpop;
  if (bound !== undefined && (jkt === undefined || !boundTo(bound, jkt)))
    throw jkt === undefined ? proofRequired('the refresh token is bound to a DPoP key') : invalidGrant();
  if (!client) {
    // Without credentials the token endpoint could not check the client's grant types: check
    // them for the client the token belongs to (RFC 6749 §5.2 `unauthorized_client`).
    // A client ID metadata document client is asked again (its document, the host's `allow`).
    const documentClient = isDocumentClientId(ctx, found.token.clientId);
    const owner = await (documentClient ? findClient(ctx, found.token.clientId) : ctx.storage.findClient(found.token.clientId));
    if (!owner && documentClient) throw invalidClient();
    if (owner && !mayUseGrant(owner, 'refresh_token')) {
      throw new OAuthError('unauthorized_client', 'This application may not use grant_type=refresh_token.');
    }
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
    // A bound refresh token stays bound; an unbound one is bound now unless a confidential client sent it.
    dpop: jkt === undefined ? undefined : { jkt, refresh: bound !== undefined || client === null || client.secretHash === null },
  };
  const pair = mintTokens(ctx, issue, client);
  const outcome = await ctx.storage.rotateRefreshToken(hash, now, pair.records);
  if (!outcome.ok) {
    // Lost a race against another use of the same token: that is a replay too.
    if (outcome.reason === 'used') return replay(ctx, outcome.grantId, found.token.clientId, outcome.usedAt, now);
    throw invalidGrant();
  }
  return issued(ctx, issue, outcome.grant, pair);
}

/**
 * A rotated refresh token presented again (RFC 9700 §4.14.2): revoke the whole family, unless it
 * was rotated within `refreshReuseGraceSeconds` (two tabs refreshing at once), which is refused
 * without revoking. Always `invalid_grant`: never two live refresh tokens in one family.
 * `rotatedAt` is `null` when the rotated token is known only by its family (its record was
 * pruned): no grace then.
 */
async function replay(ctx: Context, grantId: string, clientId: string, rotatedAt: number | null, now: number): Promise<never> {
  const grace = ctx.options.refreshReuseGraceSeconds;
  const inGrace = rotatedAt !== null && grace > 0 && now - rotatedAt <= grace * 1000;
  if (!inGrace) await ctx.storage.revokeGrant(grantId, now);
  audit(ctx, { type: 'refresh_token.reused', clientId, grantId, familyRevoked: !inGrace });
  throw invalidGrant();
}
