import { randomToken, sha256Base64url } from '../crypto.js';
import type { Context, JwtSigner } from '../context.js';
import type { GrantRecord, OAuthGrantRecord, OAuthTokenRecord } from '../storage/types.js';

/**
 * Minting: new access and refresh tokens as records for storage and values for the client.
 * Nothing here stores anything; the grant or endpoint that mints stores the records itself, in
 * the same atomic step that uses up its code or refresh token.
 */

/** The grant a token belongs to. */
export interface Family {
  grantId: string;
  clientId: string;
}

/** What an access token is minted for (`mintAccessToken`, `mintAccessOnly`). */
export interface MintOptions extends Family {
  scope: string[];
  now: number;
  /** When the grant's family ends (`familyEnd`): no token is minted to outlive it. `null` or absent: no cap. */
  end?: number | null;
  /** The resources the access token is for (RFC 8707); absent: issued without resource indicators. */
  audience?: string[] | undefined;
}

/** What a pair is minted for (`mintPair`): the access token's options, and the refresh token's. */
export interface PairOptions extends MintOptions {
  /** The family of the refresh token being rotated; absent or `null` at the code exchange: a new family starts. */
  refreshFamily?: RefreshFamilyPart | null;
  /** The resources the refresh token may be exchanged for (RFC 8707 §2.2); absent: issued without resource indicators. */
  refreshAudience?: string[] | undefined;
  /** The hash of the refresh token presented for the pair (its `parentHash`); absent at the code exchange. */
  refreshParent?: string | undefined;
}

/** An access token's record as minted: an access token always has an expiry. */
export type AccessRecord = OAuthTokenRecord & { expiresAt: number };

/**
 * A minted access token: its record, and either its clear value (`opaque`) or the `jti` to sign
 * into a JWT with the instance's `signer` (`jwt`, when `accessTokenFormat` is `jwt`).
 */
export type MintedAccess =
  | { format: 'opaque'; record: AccessRecord; token: string }
  | { format: 'jwt'; record: AccessRecord; jti: string; signer: JwtSigner };

/**
 * A freshly minted access/refresh pair: the clear values for the client, records for storage.
 * `refreshToken` is `null` for a client not allowed the refresh_token grant (`mintAccessOnly`).
 */
export interface IssuedPair {
  access: MintedAccess;
  refreshToken: string | null;
  records: OAuthTokenRecord[];
  scope: string[];
}

/** What a grant of the token endpoint answers: the new pair, and the grant it belongs to (its account). */
export interface IssuedTokens {
  grant: OAuthGrantRecord;
  pair: IssuedPair;
  /** OpenID Connect: what the ID token of the response says besides the grant (`auth_time`, the code's `nonce`). */
  openid?: { authTime: number; nonce?: string };
}

/**
 * A new access token record of a grant, its expiry capped at `end`. Nothing is stored yet. An
 * opaque token is its own storage key (hashed). A JWT is known to storage by its `jti`, which is
 * the SHA-256 of a secret that is dropped here: a value presented as an opaque token is looked up
 * by its hash, and no one holds a value whose hash is a `jti`, so the `jti` (public, logged by
 * resource servers) is no credential. Only the verified JWT leads to its record (`tokenKey` in
 * `tokens/lookup.ts`).
 */
export function mintAccessToken(ctx: Context, options: MintOptions): MintedAccess {
  const secret = randomToken();
  const signer = ctx.jwt;
  if (signer) {
    const record = accessRecord(ctx, options, sha256Base64url(secret));
    return { format: 'jwt', record, jti: record.hash, signer };
  }
  const token = `${ctx.options.tokenPrefixes.accessToken}${secret}`;
  return { format: 'opaque', record: accessRecord(ctx, options, sha256Base64url(token)), token };
}

/** The record of a new access token known to storage by `hash`, its expiry capped at `options.end`. */
function accessRecord(ctx: Context, options: MintOptions, hash: string): AccessRecord {
  const { now, end } = options;
  const expiresAt = now + ctx.options.lifetimes.accessToken * 1000;
  const record: AccessRecord = {
    hash,
    kind: 'access',
    grantId: options.grantId,
    clientId: options.clientId,
    scope: options.scope,
    issuedAt: now,
    expiresAt: end != null && expiresAt > end ? end : expiresAt,
    pairHash: null,
    rotatedAt: null,
    revokedAt: null,
  };
  if (options.audience !== undefined) record.audience = options.audience; // RFC 8707: only for the resources requested
  return record;
}

/** The value the client receives for a minted access token (a promise only when it is a JWT to sign). */
export function accessTokenValue(ctx: Context, access: MintedAccess, grant: GrantRecord): string | Promise<string> {
  if (access.format === 'opaque') return access.token;
  return access.signer.sign({
    sub: grant.account.uuid,
    clientId: access.record.clientId,
    scope: ctx.scopes.format(access.record.scope),
    jti: access.jti,
    iat: access.record.issuedAt,
    exp: access.record.expiresAt,
    aud: access.record.audience,
    cnf: access.record.dpop,
  });
}

/**
 * Refresh tokens of one grant form a family (RFC 9700 §4.14.2): each is 43 base64url characters
 * after the prefix, of which the first 22 (132 random bits) are the family's, fixed at the code
 * exchange, and the last 21 (124 random bits) are new with every rotation. The store keeps the
 * SHA-256 of the family part (`familyHash`), so a rotated token whose record was pruned is still
 * known as a replay of a live family, with one record per family however long the chain.
 * Knowing the family part takes holding a token of the family: it revokes nothing a holder could
 * not revoke anyway, and it is no credential (the new part is).
 */
const FAMILY_CHARS = 22;
const TOKEN_CHARS = 43;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The family part of a refresh token being rotated, and its hash as stored. */
export interface RefreshFamilyPart {
  part: string;
  hash: string;
}

/** The family part of a refresh token minted here: its 43-character tail's first 22. */
export const familyPart = (refreshToken: string): string => refreshToken.slice(-TOKEN_CHARS, FAMILY_CHARS - TOKEN_CHARS);

/** The family part of a presented refresh token, or `null` when it cannot have one. */
export function familyOf(refreshToken: string): string | null {
  if (refreshToken.length < TOKEN_CHARS) return null;
  const family = familyPart(refreshToken);
  return BASE64URL.test(family) ? family : null;
}

/**
 * When a grant's family ends (`lifetimes.grant`, counted from the authorization), or `null`:
 * no token of it is issued to outlive that, and no refresh happens after it.
 */
export function familyEnd(ctx: Context, grantCreatedAt: number): number | null {
  const lifetime = ctx.options.lifetimes.grant;
  return lifetime === null ? null : grantCreatedAt + lifetime * 1000;
}

/**
 * A new access + refresh pair of a grant. Nothing is stored yet. `refreshFamily` is the family of
 * the refresh token being rotated (none at the code exchange: a new family starts); `end` caps
 * both tokens' expiry (`familyEnd`). `audience` is the resources the access token is for, and
 * `refreshAudience` those the refresh token may be exchanged for (RFC 8707 §2.2).
 */
export function mintPair(ctx: Context, options: PairOptions): IssuedPair {
  const { now, end, refreshFamily } = options;
  const access = mintAccessToken(ctx, options);
  // One fresh value: all of it for a new family, its last 21 characters after a carried family part.
  const fresh = randomToken();
  const carried = refreshFamily != null;
  const refreshToken = `${ctx.options.tokenPrefixes.refreshToken}${carried ? refreshFamily.part + fresh.slice(FAMILY_CHARS) : fresh}`;
  const familyHash = carried ? refreshFamily.hash : sha256Base64url(fresh.slice(0, FAMILY_CHARS));
  const refreshLifetime = ctx.options.lifetimes.refreshToken;
  let refreshExpiresAt = refreshLifetime === null ? null : now + refreshLifetime * 1000;
  if (end != null && (refreshExpiresAt === null || refreshExpiresAt > end)) refreshExpiresAt = end;
  const refresh: OAuthTokenRecord = {
    hash: sha256Base64url(refreshToken),
    kind: 'refresh',
    grantId: options.grantId,
    clientId: options.clientId,
    scope: options.scope,
    issuedAt: now,
    expiresAt: refreshExpiresAt,
    pairHash: access.record.hash,
    rotatedAt: null,
    revokedAt: null,
    familyHash,
  };
  if (options.refreshAudience !== undefined) refresh.audience = options.refreshAudience;
  if (options.refreshParent !== undefined) refresh.parentHash = options.refreshParent;
  return { access, refreshToken, records: [access.record, refresh], scope: options.scope };
}

/**
 * An access token without a refresh token, for a client not allowed the refresh_token grant
 * (RFC 6749 §5.1: a refresh token is optional; RFC 7591 §2 `grant_types`) and for the implicit
 * flow, for the resources in `audience` when set (RFC 8707). Nothing is stored yet.
 */
export function mintAccessOnly(ctx: Context, options: MintOptions): IssuedPair {
  const access = mintAccessToken(ctx, options);
  return { access, refreshToken: null, records: [access.record], scope: options.scope };
}
