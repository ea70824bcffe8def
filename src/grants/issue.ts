import { hashSecret, randomToken } from '../crypto.js';
import type { Context } from '../context.js';
import type { GrantRecord, TokenRecord } from '../storage/types.js';

/** The grant a token belongs to. */
export interface Family {
  grantId: string;
  clientId: string;
}

/** A freshly minted access/refresh pair: the clear values for the client, records for storage. */
export interface IssuedPair {
  accessToken: string;
  refreshToken: string;
  records: TokenRecord[];
  scope: string[];
}

/** A new access token record (and its clear value) of a grant. Nothing is stored yet. */
export async function mintAccessToken(ctx: Context, family: Family, scope: string[], now: number): Promise<{ token: string; record: TokenRecord }> {
  const token = randomToken();
  const record: TokenRecord = {
    hash: await hashSecret(token),
    kind: 'access',
    grantId: family.grantId,
    clientId: family.clientId,
    scope,
    issuedAt: now,
    expiresAt: now + ctx.options.lifetimes.accessToken * 1000,
    pairHash: null,
    rotatedAt: null,
    revokedAt: null,
  };
  return { token, record };
}

/** A new access + refresh pair of a grant. Nothing is stored yet. */
export async function mintPair(ctx: Context, family: Family, scope: string[], now: number): Promise<IssuedPair> {
  const access = await mintAccessToken(ctx, family, scope, now);
  const refreshToken = randomToken();
  const refreshLifetime = ctx.options.lifetimes.refreshToken;
  const refresh: TokenRecord = {
    hash: await hashSecret(refreshToken),
    kind: 'refresh',
    grantId: family.grantId,
    clientId: family.clientId,
    scope,
    issuedAt: now,
    expiresAt: refreshLifetime === null ? null : now + refreshLifetime * 1000,
    pairHash: access.record.hash,
    rotatedAt: null,
    revokedAt: null,
  };
  return { accessToken: access.token, refreshToken, records: [access.record, refresh], scope };
}

/** The JSON body of a successful token response (SPEC 2.3). */
export function tokenResponseBody(ctx: Context, grant: GrantRecord, pair: IssuedPair): Record<string, unknown> {
  return {
    access_token: pair.accessToken,
    token_type: 'bearer',
    expires_in: ctx.options.lifetimes.accessToken,
    refresh_token: pair.refreshToken,
    scope: ctx.scopes.format(pair.scope),
    info: { name: grant.account.name, email: grant.account.email, uuid: grant.account.uuid },
  };
}
