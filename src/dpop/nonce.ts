/**
 * DPoP server nonces (RFC 9449 §8 at the token endpoint, §9 at resources) that every instance
 * can issue and check without shared state: a nonce is the HMAC-SHA-256, under a secret every
 * instance is configured with, of the number of the time window it was issued in. A nonce is
 * accepted in its own window and the next one, so it lives between one and two windows, and
 * rotates by itself when the window turns. Synchronous (`@noble/hashes`), and computed only
 * once per window: between turns, checking a nonce is two constant-time comparisons.
 */
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64url, timingSafeEqual } from '../crypto.js';
import { ConfigError } from '../errors.js';

/**
 * What a nonce is worth now: issued in the current window, in the previous one (still
 * accepted, but the client should be handed the current one: RFC 9449 §8.2), or not at all.
 */
export type NonceVerdict = 'current' | 'previous' | 'invalid';

/** Issues and checks server nonces; {@link dpopNonces} makes one. `now` is in milliseconds (`Clock.now()`). */
export interface NonceCheck {
  /** The nonce to send in `DPoP-Nonce` (RFC 9449 §8.1): the current window's. */
  issue(now: number): string;
  /** Whether `nonce` (a proof's `nonce` claim, any value) was issued by a server sharing the secret, recently enough. */
  check(nonce: unknown, now: number): NonceVerdict;
}

/** The secret and the window length of {@link dpopNonces}. */
export interface NonceOptions {
  /**
   * The key shared by every instance: at least 32 bytes (a string counts as its UTF-8 bytes),
   * best 32 random bytes. Changing it voids every nonce issued before, which costs each client
   * one `use_dpop_nonce` round trip.
   */
  secret: string | Uint8Array;
  /** Length of a window in seconds, 10 to 86400; a nonce lives one to two windows. Default 300. */
  windowSeconds?: number;
}

/** The length of every nonce: base64url of a SHA-256 MAC. */
const NONCE_LENGTH = 43;
const encoder = new TextEncoder();

/**
 * Stateless server nonces shared by every instance configured with the same secret.
 *
 * @throws ConfigError for a secret shorter than 32 bytes or a window out of range.
 * @example
 * ```ts
 * const nonces = dpopNonces({ secret: process.env.DPOP_NONCE_SECRET! });
 * response.headers['dpop-nonce'] = nonces.issue(clock.now());
 * nonces.check(claims.nonce, clock.now()); // 'current' | 'previous' | 'invalid'
 * ```
 */
export function dpopNonces(options: NonceOptions): NonceCheck {
  const secret = options.secret;
  const key = typeof secret === 'string' ? encoder.encode(secret) : secret instanceof Uint8Array ? secret.slice() : undefined;
  // A MAC key below 256 bits would let nonces be forged offline by brute force (RFC 2104 §3
  // asks for at least the hash length).
  if (!key || key.length < 32)
    throw new ConfigError('dpop.nonceSecret', 'expected at least 32 bytes (256 bits): a random secret shared by every instance');
  const windowSeconds = options.windowSeconds ?? 300;
  if (!Number.isInteger(windowSeconds) || windowSeconds < 10 || windowSeconds > 86400) {
    throw new ConfigError('dpop.nonceWindowSeconds', 'expected an integer from 10 to 86400');
  }
  const windowMs = windowSeconds * 1000;
  // The prefix keeps these MACs apart from anything else the host might sign with the same secret.
  const mac = (window: number) => base64url(hmac(sha256, key, encoder.encode(`authgate dpop nonce ${window}`)));

  let cached = Number.NaN;
  let current = '';
  let previous = '';
  /** Brings the two accepted nonces up to the window of `now` (the clock may also step back). */
  const turn = (now: number) => {
    const window = Math.floor(now / windowMs);
    if (window === cached) return;
    previous = window - 1 === cached ? current : mac(window - 1);
    current = mac(window);
    cached = window;
  };

  return {
    issue(now) {
      turn(now);
      return current;
    },
    check(nonce, now) {
      if (typeof nonce !== 'string' || nonce.length !== NONCE_LENGTH) return 'invalid';
      turn(now);
      if (timingSafeEqual(nonce, current)) return 'current';
      return timingSafeEqual(nonce, previous) ? 'previous' : 'invalid';
    },
  };
}
