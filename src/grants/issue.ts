import { randomToken, sha256Base64url } from '../crypto.js';
import type { Context } from '../context.js';
import type { GrantRecord, Storage, TokenRead, TokenRecord } from '../storage/types.js';
import { jsonString } from '../http.js';
import { looksLikeJwt } from '../tokens/jwt.js';
import type { Account } from '../types.js';

/** The grant a token belongs to. */
export interface Family {
  grantId: string;
  clientId: string;
}

/** A minted access token: its record, and its clear value (opaque) or the `jti` to sign (JWT). */
export interface MintedAccess {
  record: TokenRecord;
  token?: string;
  jti?: string;
}

/** A freshly minted access/refresh pair: the clear values for the client, records for storage. */
export interface IssuedPair {
  access: MintedAccess;
  refreshToken: string;
  records: TokenRecord[];
  scope: string[];
}

/**
 * A new access token record of a grant. Nothing is stored yet. An opaque token is its own
 * storage key (hashed). A JWT is known to storage by its `jti`, which is the SHA-256 of a secret
 * that is dropped here: a value presented as an opaque token is looked up by its hash, and no
 * one holds a value whose hash is a `jti`, so the `jti` (public, logged by resource servers) is
 * no credential. Only the verified JWT leads to its record (`tokenKey`).
 */
export function mintAccessToken(ctx: Context, family: Family, scope: string[], now: number): MintedAccess {
  const secret = randomToken();
  const token = ctx.jwt ? undefined : `${ctx.options.tokenPrefixes.accessToken}${secret}`;
  const record: TokenRecord = {
    hash: sha256Base64url(token ?? secret),
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
  return token === undefined ? { record, jti: record.hash } : { record, token };
}

/** The value the client receives for a minted access token (a promise only when it is a JWT to sign). */
export function accessTokenValue(ctx: Context, access: MintedAccess, grant: GrantRecord): string | Promise<string> {
  if (access.token !== undefined || !ctx.jwt) return access.token!;
  return ctx.jwt.sign({
    sub: grant.account.uuid,
    clientId: grant.clientId,
    scope: ctx.scopes.format(access.record.scope),
    jti: access.jti!,
    iat: access.record.issuedAt,
    exp: access.record.expiresAt!,
  });
}

/**
 * The storage key of a presented access or refresh token: the hash of an opaque token, or the
 * `jti` of a JWT this server signed and that verifies (`null` for one that does not). With JWT
 * access tokens on, `accessOnly` (the bearer check) also answers `null` for a value that is
 * not a JWT: every access token is then a JWT, so that value names no access token (see
 * `bareAccessToken` for the endpoints that also take refresh tokens).
 */
export function tokenKey(ctx: Context, token: string, accessOnly = false): string | null | Promise<string | null> {
  if (ctx.jwt) {
    if (looksLikeJwt(token)) return ctx.jwt.jti(token, ctx.clock.now());
    if (accessOnly) return null;
  }
  // Synchronous for opaque tokens: the bearer check runs on every API request.
  return sha256Base64url(token);
}

/**
 * A token and its grant by storage key, for a caller that reads them at once and keeps nothing:
 * through the store's `readToken` when it has one (its own records, no copies), else
 * `findToken`. Whatever of it reaches the host must be copied when `storage.readToken` exists.
 */
export function readToken(storage: Storage, key: string): TokenRead | PromiseLike<TokenRead> {
  return storage.readToken ? storage.readToken(key) : storage.findToken(key);
}

/**
 * Whether a store's answer is still to come. A `readToken` that answers at once is read without
 * an `await`: on the bearer check, that one microtask was a tenth of the work.
 */
export function isPending<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
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
 * both tokens' expiry (`familyEnd`).
 */
export function mintPair(ctx: Context, family: Family, scope: string[], now: number, refreshFamily: RefreshFamilyPart | null = null, end: number | null = null): IssuedPair {
  const access = mintAccessToken(ctx, family, scope, now);
  // One fresh value: all of it for a new family, its last 21 characters after a carried family part.
  const fresh = randomToken();
  const refreshToken = `${ctx.options.tokenPrefixes.refreshToken}${refreshFamily === null ? fresh : refreshFamily.part + fresh.slice(FAMILY_CHARS)}`;
  const familyHash = refreshFamily === null ? sha256Base64url(fresh.slice(0, FAMILY_CHARS)) : refreshFamily.hash;
  const refreshLifetime = ctx.options.lifetimes.refreshToken;
  let refreshExpiresAt = refreshLifetime === null ? null : now + refreshLifetime * 1000;
  if (end !== null) {
    if (access.record.expiresAt! > end) access.record.expiresAt = end;
    if (refreshExpiresAt === null || refreshExpiresAt > end) refreshExpiresAt = end;
  }
  const refresh: TokenRecord = {
    hash: sha256Base64url(refreshToken),
    kind: 'refresh',
    grantId: family.grantId,
    clientId: family.clientId,
    scope,
    issuedAt: now,
    expiresAt: refreshExpiresAt,
    pairHash: access.record.hash,
    rotatedAt: null,
    revokedAt: null,
    familyHash,
  };
  return { access, refreshToken, records: [access.record, refresh], scope };
}

/** The `info` object of a token response (SPEC 2.3), with the host's extra fields. */
export function infoOf(ctx: Context, account: Account): Record<string, unknown> {
  const extra = ctx.options.info?.(account) ?? {};
  return { ...extra, name: account.name, email: account.email, uuid: account.uuid };
}

/**
 * The JSON text of a successful token response (SPEC 2.3), written out directly rather than
 * through `JSON.stringify` of an object: half the cost, on the endpoint a refresh storm hits.
 * A promise only when the access token is a JWT still to be signed.
 */
export function tokenResponseJson(ctx: Context, grant: GrantRecord, pair: IssuedPair): string | Promise<string> {
  const accessToken = accessTokenValue(ctx, pair.access, grant);
  return typeof accessToken === 'string' ? tokenJson(ctx, grant, pair, accessToken) : accessToken.then((jwt) => tokenJson(ctx, grant, pair, jwt));
}

function tokenJson(ctx: Context, grant: GrantRecord, pair: IssuedPair, accessToken: string): string {
  const { account } = grant;
  const scope = ctx.scopes.format(pair.scope);
  // The configured lifetime, or less where the family ends sooner (`lifetimes.grant`).
  const expiresIn = Math.ceil((pair.access.record.expiresAt! - pair.access.record.issuedAt) / 1000);
  // Exactly what JSON.stringify writes. A host `info` hook, or an account whose fields are not
  // all strings (a JavaScript host may hand over a null email), takes JSON.stringify itself.
  if (ctx.options.info || typeof account.name !== 'string' || typeof account.email !== 'string' || typeof account.uuid !== 'string') {
    return JSON.stringify({ access_token: accessToken, token_type: 'bearer', expires_in: expiresIn, refresh_token: pair.refreshToken, scope, info: infoOf(ctx, account) });
  }
  return `{"access_token":${jsonString(accessToken)},"token_type":"bearer","expires_in":${expiresIn},` +
    `"refresh_token":${jsonString(pair.refreshToken)},"scope":${jsonString(scope)},` +
    `"info":{"name":${jsonString(account.name)},"email":${jsonString(account.email)},"uuid":${jsonString(account.uuid)}}}`;
}
