/**
 * DPoP server nonces (RFC 9449 §8, §9), src/dpop/nonce.ts: keyed by a secret every instance
 * shares, rotated by the time window, each nonce accepted for one to two windows; and how
 * checkProof asks for one (`use_dpop_nonce`).
 */
import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { dpopNonces } from '../../src/dpop/nonce.js';
import { proofPolicy } from '../../src/dpop/policy.js';
import { checkProof } from '../../src/dpop/proof.js';
import { IAT, NOW, proofWith, TOKEN_URL, testKey, type TestKey } from '../dpop-proofs.js';

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

describe('checkProof with nonces required', () => {
  let key: TestKey;
  const nonces = dpopNonces({ secret: SECRET });
  const policy = proofPolicy({ nonces });
  beforeAll(async () => {
    key = await testKey('ES256');
  });
  /** A proof of `POST TOKEN_URL` made at `now`, with the nonce given. */
  const proofAt = (now: number, nonce?: unknown) => proofWith(key, { claims: { iat: Math.floor(now / 1000), nonce } });
  const request = (now: number) => ({ htm: 'POST', htu: TOKEN_URL, now });

  it('a client learns the nonce from use_dpop_nonce, retries, and follows the rotation (§8.1, §8.2)', async () => {
    // First request: no nonce; the answer carries one to retry with.
    const first = await checkProof(await proofAt(T0), request(T0), policy);
    expect(first).toEqual({ ok: false, error: 'use_dpop_nonce', description: 'A DPoP nonce is required.', nonce: nonces.issue(T0) });
    const nonce = first.ok ? '' : first.nonce!;
    // The retry passes; no new nonce while the current one is current.
    const retry = await checkProof(await proofAt(T0 + 1000, nonce), request(T0 + 1000), policy);
    expect(retry).toMatchObject({ ok: true });
    expect(retry).not.toHaveProperty('nonce');
    // A window later the nonce still passes, and the answer hands over the current one.
    const next = T0 + WINDOW + 1000;
    const rotated = await checkProof(await proofAt(next, nonce), request(next), policy);
    expect(rotated).toMatchObject({ ok: true, nonce: nonces.issue(next) });
    // Two windows later it is stale: use_dpop_nonce again, with a fresh one that then passes.
    const late = T0 + 2 * WINDOW;
    const stale = await checkProof(await proofAt(late, nonce), request(late), policy);
    expect(stale).toEqual({
      ok: false,
      error: 'use_dpop_nonce',
      description: 'The DPoP nonce is invalid or expired.',
      nonce: nonces.issue(late),
    });
    expect((await checkProof(await proofAt(late, nonces.issue(late)), request(late), policy)).ok).toBe(true);
  });

  it('a nonce from a server with another secret, or not a string: use_dpop_nonce', async () => {
    const foreign = dpopNonces({ secret: `${SECRET}, another` }).issue(T0);
    for (const nonce of [foreign, 42, { n: 1 }]) {
      expect(await checkProof(await proofAt(T0, nonce), request(T0), policy)).toMatchObject({
        ok: false,
        error: 'use_dpop_nonce',
        nonce: nonces.issue(T0),
      });
    }
  });

  it('a proof that fails another check is invalid_dpop_proof, not use_dpop_nonce: a nonce would not save it', async () => {
    const result = await checkProof(await proofWith(key, { claims: { htm: 'GET' } }), request(NOW), policy);
    expect(result).toMatchObject({ ok: false, error: 'invalid_dpop_proof' });
    expect(result).not.toHaveProperty('nonce');
  });

  it('without nonces in the policy, a proof nonce is ignored', async () => {
    const result = await checkProof(await proofWith(key, { claims: { nonce: 'anything' } }), request(IAT * 1000), proofPolicy());
    expect(result).toMatchObject({ ok: true });
    expect(result).not.toHaveProperty('nonce');
  });
});
