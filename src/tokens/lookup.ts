import type { PresentedToken } from '../checks/clients.js';
import type { Context } from '../context.js';
import { sha256Base64url } from '../crypto.js';
import { formBounds } from '../http.js';
import type { Storage, TokenRead } from '../storage/types.js';
import { looksLikeJwt } from './jwt.js';

/**
 * Looking up a presented access, refresh or personal access token: for the bearer check,
 * revocation and introspection, each through `lookupToken`, and whether what it found is live
 * (`liveness`), the one rule each of them applies.
 */

/** Longest code or token looked up: opaque ones are 43 characters plus a prefix, JWTs longer. */
export const MAX_TOKEN_LENGTH = 4096;

/** The revocation and introspection parameters (RFC 7009 §2.1, RFC 7662 §2.1). */
export const TOKEN_ABOUT_PARAMS = formBounds({
  // In this order: a request with several over-long values names the first of them.
  client_id: 512,
  client_secret: 512,
  token: Infinity, // RFC 7009 §2.2: any unknown or malformed token is still 200 {}
  token_type_hint: 100,
});

/**
 * The storage key of a presented token: the hash of an opaque token, or the `jti` of a JWT this
 * server signed and that verifies (`null` for one that does not). With JWT access tokens on, a
 * value that is not a JWT names no access token (every access token is then a JWT), only a
 * refresh or personal access token (see `lookupToken`).
 */
export function tokenKey(ctx: Context, token: string): string | null | Promise<string | null> {
  if (ctx.jwt && looksLikeJwt(token)) return ctx.jwt.jti(token, ctx.clock.now());
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
 * an `await`: the bearer check is short enough that one microtask shows (see BENCHMARKS.md).
 */
export function isPending<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * The stored token a presented value names, with its grant, or `null`: nothing longer than
 * `MAX_TOKEN_LENGTH` is looked up, a JWT only once it verifies, and (with JWT access tokens on)
 * a bare value never names an access token (`refreshOnly`). `accessOnly` is for the bearer
 * check, which takes no refresh tokens (with JWT access tokens on, a bare value then names only
 * a personal access token: `personalOnly`). Whether the record is live (expired, revoked, rotated)
 * is the caller's question.
 *
 * The answer comes at once when it can (an opaque token and a store whose `readToken` answers
 * synchronously): read it as `isPending(found) ? await found : found`, with no microtask then.
 * The records may be the store's own (`readToken`): read them before any `await`, and copy
 * whatever reaches the host.
 */
export function lookupToken(ctx: Context, token: string, accessOnly = false): TokenRead | PromiseLike<TokenRead> {
  if (token.length > MAX_TOKEN_LENGTH) return null;
  const key = tokenKey(ctx, token);
  if (key === null) return null;
  if (typeof key !== 'string') return key.then((jti) => (jti === null ? null : readToken(ctx.storage, jti)));
  const read = readToken(ctx.storage, key);
  // With JWT access tokens on, a value that is no JWT (and so was hashed) names only a refresh
  // token or a personal access token (opaque, whatever the format of access tokens); the bearer
  // check takes only the latter.
  if (!ctx.jwt) return read;
  const keep = accessOnly ? personalOnly : refreshOnly;
  return isPending(read) ? read.then(keep) : keep(read);
}

/**
 * The token a revocation or introspection request presents, for the store to read together with
 * the client (`findClientWith`): an opaque value's hash, when the store has the `combinedReads`
 * group and no `readToken` (a store that answers a read at once, as `MemoryStorage` does, gains
 * nothing by combining it). `undefined` otherwise, and for a JWT (looked up by its `jti` once it
 * verifies) or a value too long to be a token.
 */
export function presentedToken(ctx: Context, token: string | undefined): PresentedToken | undefined {
  if (ctx.combined === undefined || ctx.storage.readToken !== undefined) return undefined;
  if (token === undefined || token.length > MAX_TOKEN_LENGTH || (ctx.jwt && looksLikeJwt(token))) return undefined;
  return { kind: 'token', hash: sha256Base64url(token) };
}

/**
 * `lookupToken(ctx, token)`, answered from what was read with the client (`presentedToken`,
 * `findClientWith`) when it was: the same rule applies to it.
 */
export function lookupPresented(ctx: Context, token: string, presented: PresentedToken | undefined): TokenRead | PromiseLike<TokenRead> {
  if (presented?.found === undefined) return lookupToken(ctx, token);
  return ctx.jwt ? refreshOnly(presented.found) : presented.found;
}

/**
 * A found token, unless it is an access token: with JWT access tokens on, an access token is
 * found only through its verified JWT, never through a bare value (a `jti`, by whose hash
 * earlier versions keyed their records, or an opaque access token from before the switch to
 * JWTs). Revocation and introspection take refresh tokens (opaque) as well.
 */
const refreshOnly = (found: TokenRead): TokenRead => (found && found.token.kind === 'access' ? null : found);

/** A found token, if it is a personal access token: what a bare value may name at the bearer check with JWT access tokens on. */
const personalOnly = (found: TokenRead): TokenRead => (found && found.token.kind === 'personal' ? found : null);

/**
 * Whether a found token is usable at `now` (docs/reference.md#revocation-semantics), the one rule
 * of the bearer check, introspection, revocation and personal tokens:
 * - `revoked`: the token or its grant is revoked, the token was rotated (a used refresh token),
 *   or its kind does not match its grant's (a personal token is the one token of a personal
 *   grant; a store that answers otherwise is broken, and what it answers is not trusted);
 * - else `expired` once `now >= expiresAt` (a token without `expiresAt` never expires);
 * - else `live`.
 *
 * Revoked comes first: an expired token that was also revoked is revoked, so a caller that
 * reports uses after expiry (`personal_token.used_after_expiry`) does not report it. Whether the
 * account is still active is not part of it: `isAccountActive` is asked where a grant is used to
 * issue, never per request (docs/reference.md#personal-access-tokens); disabling an account means
 * revoking its tokens. Who may use the token (its client, its audience) is the caller's question.
 *
 * On the bearer check's path: no allocation, a few field reads.
 */
export function liveness(found: NonNullable<TokenRead>, now: number): 'live' | 'expired' | 'revoked' {
  const { token, grant } = found;
  if (token.revokedAt !== null || token.rotatedAt !== null || grant.revokedAt !== null) return 'revoked';
  if ((token.kind === 'personal') !== (grant.kind === 'personal')) return 'revoked';
  return token.expiresAt !== null && now >= token.expiresAt ? 'expired' : 'live';
}
