import { BoundedMap } from '../bounded-map.js';
import { audit, type Context } from '../context.js';
import { sha256Base64url, timingSafeEqual } from '../crypto.js';
import { OAuthError } from '../errors.js';

/**
 * PKCE (RFC 7636). The challenge and its method are fixed at the authorization request; the
 * token endpoint only ever compares the verifier against what was stored, so a method sent to
 * the token endpoint changes nothing (no downgrade, RFC 9700 §4.8.2).
 */

const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/**
 * The challenge of an authorization request, or `null` when none was sent.
 * @throws OAuthError `invalid_request` for a malformed or refused challenge.
 */
export function parseChallenge(
  challenge: string | undefined,
  method: string | undefined,
  allowPlain: boolean,
): { codeChallenge: string; codeChallengeMethod: 'S256' | 'plain' } | null {
  if (challenge === undefined) {
    if (method !== undefined) throw new OAuthError('invalid_request', 'code_challenge_method was sent without code_challenge.');
    return null;
  }
  // RFC 7636 §4.3: no method means plain. Method names are case-sensitive.
  const chosen = method ?? 'plain';
  if (chosen === 'S256') {
    if (!S256_CHALLENGE.test(challenge)) throw new OAuthError('invalid_request', 'code_challenge must be 43 base64url characters (S256).');
    return { codeChallenge: challenge, codeChallengeMethod: 'S256' };
  }
  if (chosen === 'plain') {
    if (!allowPlain) throw new OAuthError('invalid_request', 'code_challenge_method must be S256.');
    if (!VERIFIER.test(challenge)) throw new OAuthError('invalid_request', 'code_challenge is malformed.');
    return { codeChallenge: challenge, codeChallengeMethod: 'plain' };
  }
  throw new OAuthError('invalid_request', 'code_challenge_method must be S256.');
}

/**
 * Check a `code_verifier` against the stored challenge (RFC 7636 §4.6).
 * @throws OAuthError `invalid_request` for a verifier without a challenge (downgrade) or a
 *   malformed verifier, `invalid_grant` for a missing or wrong one.
 */
export function checkVerifier(
  stored: { codeChallenge: string | null; codeChallengeMethod: 'S256' | 'plain' | null },
  verifier: string | undefined,
  invalidGrant: () => OAuthError,
): void {
  if (stored.codeChallenge === null) {
    // RFC 9700 §4.8.2: a verifier for a code issued without a challenge is a downgrade attempt.
    if (verifier !== undefined)
      throw new OAuthError('invalid_request', 'code_verifier was sent for a code issued without a code_challenge.');
    return;
  }
  if (verifier === undefined) throw invalidGrant();
  if (!VERIFIER.test(verifier)) throw new OAuthError('invalid_request', 'code_verifier must be 43 to 128 unreserved characters.');
  const computed = stored.codeChallengeMethod === 'plain' ? verifier : sha256Base64url(verifier);
  if (!timingSafeEqual(computed, stored.codeChallenge)) throw invalidGrant();
}

/**
 * The (client, challenge) pairs codes were issued (or refused) for lately, to notice a client
 * that sends the same challenge again (SECURITY.md P-10; docs/reference.md#pkce; RFC 9700 §2.1.1
 * asks for "a reasonable effort at detecting" constant challenges, which make PKCE worthless). A
 * bounded memory of this process: at `capacity` the oldest pair is forgotten, and several server
 * instances each see their own.
 */
export class RecentPairs {
  private readonly seen: BoundedMap<string, true>;

  constructor(capacity: number) {
    this.seen = new BoundedMap(capacity);
  }

  get size(): number {
    return this.seen.size;
  }

  has(clientId: string, value: string): boolean {
    return this.seen.has(RecentPairs.key(clientId, value));
  }

  /** Remember the pair; one seen again is the newest now. */
  add(clientId: string, value: string): void {
    this.seen.set(RecentPairs.key(clientId, value), true);
  }

  delete(clientId: string, value: string): void {
    this.seen.delete(RecentPairs.key(clientId, value));
  }

  // Length-prefixed, so no client id and value can join into another pair's key.
  private static key(clientId: string, value: string): string {
    return `${clientId.length}:${clientId}${value}`;
  }
}

/**
 * Whether `clientId` sent `challenge` for a code before (P-10, `ctx.challenges`): a known one is
 * remembered afresh (still in use) and reported as `pkce.challenge_reused`; a new one is
 * remembered only when `remember` says a code is being issued for it. The one place of that
 * bookkeeping, for the authorization request (refusing early) and `issueCode` (for flows
 * started side by side), each in one synchronous step with its check.
 */
export function challengeSeen(ctx: Context, clientId: string, challenge: string, remember: boolean): boolean {
  const seen = ctx.challenges.has(clientId, challenge);
  if (seen || remember) ctx.challenges.add(clientId, challenge);
  if (seen) audit(ctx, { type: 'pkce.challenge_reused', clientId });
  return seen;
}
