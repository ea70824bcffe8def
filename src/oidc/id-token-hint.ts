/**
 * `id_token_hint` (OpenID Connect Core §3.1.2.1; RP-Initiated Logout 1.0 §2): an ID token this
 * provider issued, sent back by a client to say which user it means. Only the provider's own
 * signature makes it one: its `kid` must be one of ours (or, without `kid`, one of our keys of
 * its `alg` must verify it), `none` and HMAC are refused, its `iss` must be ours. Its expiry is
 * not checked: Core §3.1.2.1 expects the hint to be possibly expired ("the ID Token ... MAY
 * have expired").
 */
import type { JwsRefusal, SigningKeys } from '../keys/signing-keys.js';

/**
 * The longest hint read, in characters. An ID token is a few hundred characters, a few KiB
 * with profile claims; anything longer is refused before a byte of it is decoded.
 */
export const MAX_ID_TOKEN_HINT_LENGTH = 16_384;

/** Why a hint is refused: `SigningKeys.verify`'s reasons, and what is specific to ID tokens. */
export type IdTokenHintRefusal = Exclude<JwsRefusal, 'expired'> | 'too_long' | 'type' | 'issuer';

/** A verified hint, or why it is refused. `authTime`: ms since epoch, when the hint has `auth_time`. */
export type IdTokenHintCheck =
  | { valid: true; sub: string; aud: readonly string[]; authTime?: number; sid?: string }
  | { valid: false; reason: IdTokenHintRefusal };

/**
 * `typ` of an ID token: absent, or `JWT` (RFC 7519 §5.1; `application/jwt` is the same media
 * type, RFC 7515 §4.1.9, compared without case). Anything else is another kind of token signed
 * by the same keys (an RFC 9068 access token, `at+jwt`), which must not pass as an ID token.
 */
function idTokenType(typ: unknown): boolean {
  if (typ === undefined) return true;
  if (typeof typ !== 'string') return false;
  const type = typ.toLowerCase();
  return type === 'jwt' || type === 'application/jwt';
}

/**
 * Check a presented `id_token_hint`. Never throws on any input (a string of any length, or
 * anything else a parser let through): every defect is a `reason`.
 */
export async function checkIdTokenHint(
  keys: SigningKeys,
  hint: unknown,
  options: { issuer: string; now: number },
): Promise<IdTokenHintCheck> {
  if (typeof hint !== 'string' || hint.length === 0) return { valid: false, reason: 'malformed' };
  if (hint.length > MAX_ID_TOKEN_HINT_LENGTH) return { valid: false, reason: 'too_long' };
  const verified = await keys.verify(hint, { now: options.now, acceptExpired: true });
  if (!verified.valid) return { valid: false, reason: verified.reason === 'expired' ? 'claims' : verified.reason };
  if (!idTokenType(verified.header.typ)) return { valid: false, reason: 'type' };
  const { iss, sub, aud, auth_time: authTime, sid } = verified.payload as Record<string, unknown>;
  if (iss !== options.issuer) return { valid: false, reason: 'issuer' };
  const audiences = typeof aud === 'string' ? [aud] : aud;
  if (
    typeof sub !== 'string' ||
    sub.length === 0 ||
    !Array.isArray(audiences) ||
    audiences.length === 0 ||
    !audiences.every((a) => typeof a === 'string' && a.length > 0) ||
    (authTime !== undefined && (typeof authTime !== 'number' || !Number.isFinite(authTime) || authTime < 0)) ||
    (sid !== undefined && typeof sid !== 'string')
  )
    return { valid: false, reason: 'claims' };
  return {
    valid: true,
    sub,
    aud: Object.freeze([...(audiences as string[])]),
    ...(authTime !== undefined && { authTime: (authTime as number) * 1000 }),
    ...(sid !== undefined && { sid: sid as string }),
  };
}
