/**
 * User codes of the device authorization grant (docs/reference.md#device-authorization-grant-rfc-8628):
 * making them, reading what a user typed, and limiting wrong guesses.
 *
 * RFC 8628 §6.1: the 20 upper-case consonants BCDFGHJKLMNPQRSTVWXZ (no vowels, so no words; no
 * digits, so no 0/O or 1/I confusion), shown in two halves with a dash (`WDJB-MJHT`) and accepted
 * in any case, with or without the dash or spaces. Eight characters give 20^8 (about 2^34.6) codes,
 * against which RFC 8628 §5.1 asks for rate-limited guessing: `GuessLimiter` below.
 */
import { BoundedMap } from '../bounded-map.js';
import { sha256Base64url } from '../crypto.js';

/** RFC 8628 §6.1. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';

/**
 * A random user code of `length` characters, unbiased: random bytes at or above 240 (the largest
 * multiple of 20 under 256) are drawn again.
 */
export function newUserCode(length: number): string {
  let code = '';
  const bytes = new Uint8Array(length * 2);
  while (code.length < length) {
    crypto.getRandomValues(bytes);
    for (const byte of bytes) {
      if (byte < 240 && code.length < length) code += USER_CODE_ALPHABET[byte % 20];
    }
  }
  return code;
}

/** The code as shown: two halves joined by a dash (`WDJB-MJHT`). */
export function formatUserCode(code: string): string {
  const half = Math.ceil(code.length / 2);
  return `${code.slice(0, half)}-${code.slice(half)}`;
}

/**
 * What a user typed, normalized (upper case, dashes and spaces removed), or `null` when it cannot
 * be a user code of `length` characters of the alphabet.
 */
export function normalizeUserCode(typed: unknown, length: number): string | null {
  if (typeof typed !== 'string' || typed.length > 64) return null;
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== length) return null;
  for (const c of code) if (!USER_CODE_ALPHABET.includes(c)) return null;
  return code;
}

/** The key a normalized user code is stored under. */
export const userCodeHash = (code: string): string => sha256Base64url(code);

/**
 * Wrong user codes, counted per key (an account, a browser) on one server instance (RFC 8628
 * §5.1): after `max` wrong ones within a lock period the key is locked for `lockMs`, and its count
 * starts again once the lock ends. Memory is bounded: at most `capacity` keys are kept, the
 * least recently failed forgotten first (a Map keeps insertion order; a failing key is moved to
 * the end). Several instances each count their own: a host that runs many should also rate-limit
 * on the `device.user_code_failed` audit event.
 */
export class GuessLimiter {
  private readonly entries: BoundedMap<string, { failures: number; since: number; lockedUntil: number }>;

  constructor(
    private readonly max: number,
    private readonly lockMs: number,
    capacity = 10_000,
  ) {
    this.entries = new BoundedMap(capacity);
  }

  /** Until when `key` is locked at `now`, or 0 when it is not. */
  lockedUntil(key: string, now: number): number {
    const entry = this.entries.get(key);
    return entry && now < entry.lockedUntil ? entry.lockedUntil : 0;
  }

  /** Count a wrong code for `key`: the count since the last lock, and the lock's end when this one locks it (else 0). */
  fail(key: string, now: number): { failures: number; lockedUntil: number } {
    let entry = this.entries.get(key);
    // A count older than a lock period, or one whose lock has passed, starts again.
    if (entry && (now - entry.since >= this.lockMs || (entry.lockedUntil !== 0 && now >= entry.lockedUntil))) entry = undefined;
    entry ??= { failures: 0, since: now, lockedUntil: 0 };
    entry.failures++;
    if (entry.failures >= this.max) entry.lockedUntil = now + this.lockMs;
    // At capacity, the least recently failed key that is not locked is forgotten: forgetting a
    // locked one would lift its lock, which fresh keys (a new browser cookie each) make cheap;
    // only when every key is locked does the oldest go.
    this.entries.set(key, entry, (other) => now >= other.lockedUntil);
    return { failures: entry.failures, lockedUntil: entry.lockedUntil };
  }

  /**
   * Give back a wrong-code count taken by `fail` for a code that turned out right (`enterUserCode`
   * counts every code before looking it up, so that concurrent guesses cannot all pass the lock
   * check); lifts the lock that count set, if the key is now under `max`.
   */
  forgive(key: string): void {
    const entry = this.entries.get(key);
    if (!entry || entry.failures === 0) return;
    entry.failures--;
    if (entry.failures < this.max) entry.lockedUntil = 0;
  }
}
