import { hashSecret } from '../crypto.js';
import { covers, parseScope } from '../checks/scope.js';
import type { Context } from '../context.js';
import { OAuthError } from '../errors.js';
import type { ClientRecord } from '../storage/types.js';
import { invalidGrant, MAX_TOKEN_LENGTH } from './authorization-code.js';
import { mintPair, tokenResponseBody } from './issue.js';

/**
 * `grant_type=refresh_token` (SPEC 3.2, 4.2; RFC 6749 §6). The refresh token is single use: one
 * atomic storage step marks it rotated, invalidates the access token issued with it and stores
 * the new pair. A second use is a replay and revokes the whole family (RFC 9700 §4.14.2).
 */
export async function refreshTokenGrant(
  ctx: Context,
  params: Partial<Record<'refresh_token' | 'scope', string>>,
  client: ClientRecord | null,
): Promise<Record<string, unknown>> {
  if (!client && ctx.options.requireClientAuthOnRefresh) {
    throw new OAuthError('invalid_client', 'Client authentication failed.', 401);
  }
  if (params.refresh_token === undefined) throw new OAuthError('invalid_request', 'The refresh_token parameter is missing.');
  if (params.refresh_token.length > MAX_TOKEN_LENGTH) throw invalidGrant();

  const hash = await hashSecret(params.refresh_token);
  const found = await ctx.storage.findToken(hash);
  // Credentials that were sent must belong to the token's client (RFC 6749 §6); a mismatch
  // rotates and revokes nothing, or anyone could burn another client's token.
  if (!found || found.token.kind !== 'refresh' || (client && client.id !== found.token.clientId)) throw invalidGrant();
  const now = ctx.clock.now();
  if (found.token.rotatedAt !== null) {
    // A replay is a replay whatever else the request says: revoke the family first.
    await ctx.storage.revokeGrant(found.token.grantId, now);
    throw invalidGrant();
  }

  // A scope parameter may narrow the new pair, never widen it (RFC 6749 §6).
  let scope = found.token.scope;
  if (params.scope !== undefined) {
    const requested = parseScope(params.scope);
    if (!requested || !covers(found.token.scope, requested)) {
      throw new OAuthError('invalid_scope', 'The requested scope is invalid, unknown, malformed, or exceeds the scope granted.');
    }
    scope = requested;
  }

  const pair = await mintPair(ctx, { grantId: found.token.grantId, clientId: found.token.clientId }, scope, now);
  const outcome = await ctx.storage.rotateRefreshToken(hash, now, pair.records);
  if (!outcome.ok) {
    if (outcome.reason === 'used' && outcome.grantId) await ctx.storage.revokeGrant(outcome.grantId, now);
    throw invalidGrant();
  }
  return tokenResponseBody(ctx, outcome.grant, pair);
}
