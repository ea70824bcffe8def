/**
 * DPoP server nonces (RFC 9449 §8, §9), src/dpop/nonce.ts: keyed by a secret every instance
 * shares, rotated by the time window, each nonce accepted for one to two windows.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { dpopNonces } from '../../src/dpop/nonce.js';

/** The fixed time of the proof tests, in milliseconds. */
const NOW = 1_800_000_000_000;
const SECRET = 'a shared secret of at least 32 bytes, for tests';
const WINDOW = 300_000;
/** The start of a window, so that tests can step to its edges. */
const T0 = Math.floor(NOW / WINDOW) * WINDOW;

describe('nonces', () => {
  it('a nonce is valid in its own window and the next one, then never again', () => {
    const nonces = dpopNonces({ secret: SECRET });
    const nonce = nonces.issue(T0);
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(nonces.check(nonce, T0)).toBe('current');
    expect(nonces.check(nonce, T0 + WINDOW - 1)).toBe('current');
    expect(nonces.check(nonce, T0 + WINDOW)).toBe('previous');
    expect(nonces.check(nonce, T0 + 2 * WINDOW - 1)).toBe('previous');
    expect(nonces.check(nonce, T0 + 2 * WINDOW)).toBe('invalid');
    expect(nonces.check(nonce, T0 + 10 * WINDOW)).toBe('invalid');
  });

  it('is the HMAC-SHA-256 of the window number under the secret, base64url (checked with node:crypto)', () => {
    const window = T0 / WINDOW;
    const expected = createHmac('sha256', SECRET).update(`authgate dpop nonce ${window}`).digest('base64url');
    expect(dpopNonces({ secret: SECRET }).issue(T0)).toBe(expected);
  });

  it('rotates with the window: one nonce per window, the same all through it', () => {
    const nonces = dpopNonces({ secret: SECRET });
    expect(nonces.issue(T0 + WINDOW - 1)).toBe(nonces.issue(T0));
    expect(nonces.issue(T0 + WINDOW)).not.toBe(nonces.issue(T0));
  });

  it('another instance with the same secret checks it, without shared state; one with another secret does not', () => {
    const nonce = dpopNonces({ secret: SECRET }).issue(T0);
    expect(dpopNonces({ secret: new TextEncoder().encode(SECRET) }).check(nonce, T0 + WINDOW)).toBe('previous');
    expect(dpopNonces({ secret: `${SECRET}!` }).check(nonce, T0)).toBe('invalid');
  });

  it('answers the same whatever order the clock is read in (instances, or a clock stepping back)', () => {
    const nonces = dpopNonces({ secret: SECRET });
    const later = nonces.issue(T0 + 3 * WINDOW);
    const earlier = nonces.issue(T0);
    expect(nonces.check(earlier, T0)).toBe('current');
    expect(nonces.check(later, T0 + 4 * WINDOW)).toBe('previous');
    expect(nonces.check(earlier, T0 + WINDOW)).toBe('previous');
  });

  it('a tampered, truncated or non-string nonce: invalid', () => {
    const nonces = dpopNonces({ secret: SECRET });
    const nonce = nonces.issue(T0);
    const flipped = (nonce[0] === 'A' ? 'B' : 'A') + nonce.slice(1);
    for (const bad of [flipped, nonce.slice(0, -1), `${nonce}A`, '', undefined, 42, [nonce], nonce.toUpperCase()]) {
      if (bad !== nonce) expect(nonces.check(bad, T0), String(bad)).toBe('invalid');
    }
  });

  it('a window length of its own', () => {
    const nonces = dpopNonces({ secret: SECRET, windowSeconds: 10 });
    const start = Math.floor(NOW / 10_000) * 10_000;
    const nonce = nonces.issue(start);
    expect(nonces.check(nonce, start + 19_999)).toBe('previous');
    expect(nonces.check(nonce, start + 20_000)).toBe('invalid');
  });

  it('a secret shorter than 32 bytes, or a window out of range: a ConfigError at construction', () => {
    expect(() => dpopNonces({ secret: 'x'.repeat(31) })).toThrow(ConfigError);
    expect(() => dpopNonces({ secret: new Uint8Array(31) })).toThrow(/at least 32 bytes/);
    expect(() => dpopNonces({ secret: undefined as unknown as string })).toThrow(ConfigError);
    expect(() => dpopNonces({ secret: new Uint8Array(32) })).not.toThrow();
    for (const windowSeconds of [0, 9, 10.5, 86401]) expect(() => dpopNonces({ secret: SECRET, windowSeconds })).toThrow(ConfigError);
  });

  it('keeps its own copy of a byte secret', () => {
    const bytes = new Uint8Array(32).fill(7);
    const nonces = dpopNonces({ secret: bytes });
    const nonce = nonces.issue(T0);
    bytes.fill(8);
    expect(dpopNonces({ secret: new Uint8Array(32).fill(7) }).check(nonce, T0)).toBe('current');
    expect(nonces.issue(T0 + WINDOW)).toBe(dpopNonces({ secret: new Uint8Array(32).fill(7) }).issue(T0 + WINDOW));
  });
});
