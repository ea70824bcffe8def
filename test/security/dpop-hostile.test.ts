/**
 * Hostile DPoP headers (RFC 9449 §4.3, §11): an oversized header is refused before any parsing
 * or cryptography, and no header whatsoever makes checkProof throw or answer anything but a
 * refusal with a specified code and a description fit for `error_description`.
 * CI runs a fixed seed; run more with
 *   FUZZ_RUNS=20000 FUZZ_SEED=$RANDOM npx vitest run test/security/dpop-hostile.test.ts
 */
import fc from 'fast-check';
import { base64url } from 'jose';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { dpopNonces } from '../../src/dpop/nonce.js';
import { proofPolicy } from '../../src/dpop/policy.js';
import { checkProof, type ProofRequest, type ProofResult } from '../../src/dpop/proof.js';
import { IAT, NOW, proofWith, sign, TOKEN_URL, testKey, type TestKey, validParts } from '../dpop-proofs.js';

const runs = Number(process.env.FUZZ_RUNS ?? 2000);
const seed = Number(process.env.FUZZ_SEED ?? 20261122);
const settings = { numRuns: runs, seed, endOnFailure: true };
// RFC 6749 §5.2: the characters of error_description.
const SAFE_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;
const request: ProofRequest = { htm: 'POST', htu: TOKEN_URL, now: NOW, accessToken: 'token' };
const policy = proofPolicy({ nonces: dpopNonces({ secret: 'x'.repeat(32) }) });

function assertRefused(result: ProofResult) {
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(['invalid_dpop_proof', 'use_dpop_nonce']).toContain(result.error);
  expect(result.description).toMatch(SAFE_TEXT);
}

let key: TestKey;
beforeAll(async () => {
  key = await testKey('ES256');
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('an oversized header', () => {
  it('100 KB, though a validly signed proof: refused without parsing JSON or touching Web Crypto', async () => {
    const huge = await proofWith(key, { claims: { padding: 'x'.repeat(100_000) } });
    expect((await checkProof(huge, request, proofPolicy({ maxLength: 65536 }))).ok).toBe(false);
    const parse = vi.spyOn(JSON, 'parse');
    const subtle = [vi.spyOn(crypto.subtle, 'importKey'), vi.spyOn(crypto.subtle, 'verify'), vi.spyOn(crypto.subtle, 'digest')];
    const result = await checkProof(huge, request, policy);
    expect(result).toEqual({ ok: false, error: 'invalid_dpop_proof', description: 'The DPoP header is too long.' });
    expect(parse).not.toHaveBeenCalled();
    for (const spy of subtle) expect(spy).not.toHaveBeenCalled();
    // The same spies do see a proof of ordinary size go through parsing and verification.
    await checkProof(await proofWith(key), request, policy);
    expect(parse).toHaveBeenCalled();
    expect(subtle[0]).toHaveBeenCalled();
    expect(subtle[1]).toHaveBeenCalled();
  });

  it('100 KB without the shape of a JWS, or 100 000 headers: refused', async () => {
    for (const header of ['.'.repeat(100_000), 'a'.repeat(100_000), `${'a'.repeat(50_000)}.${'b'.repeat(50_000)}.c`]) {
      assertRefused(await checkProof(header, request, policy));
    }
    assertRefused(
      await checkProof(
        Array.from({ length: 100_000 }, () => 'a.b.c'),
        request,
        policy,
      ),
    );
  });
});

describe('fuzzing: never a throw, always a specified refusal', () => {
  const b64 = (value: string) => base64url.encode(value);
  const part = fc.string({ unit: fc.constantFrom(...'AZaz09-_.=+/ ,'.split('')), maxLength: 60 });

  it('random strings, arrays and values of any type', async () => {
    const header = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.tuple(part, part, part).map(([a, b, c]) => `${a}.${b}.${c}`),
      fc.array(fc.string({ maxLength: 30 }), { maxLength: 3 }),
      fc.anything(),
    );
    await fc.assert(
      fc.asyncProperty(header, async (value) => assertRefused(await checkProof(value as string, request, policy))),
      settings,
    );
  });

  it('JSON headers and claims of any shape, most headers one change away from valid, with a random signature', async () => {
    const valid = validParts(key).header;
    const jwk = valid.jwk as Record<string, unknown>;
    const member = fc.constantFrom('typ', 'alg', 'jwk', 'crit', 'b64', 'kid');
    const header = fc.oneof(
      fc.constant(valid),
      fc.tuple(member, fc.jsonValue()).map(([name, value]) => ({ ...valid, [name]: value })),
      fc
        .tuple(fc.constantFrom('kty', 'crv', 'x', 'y', 'alg', 'd', 'k', 'key_ops'), fc.jsonValue())
        .map(([name, value]) => ({ ...valid, jwk: { ...jwk, [name]: value } })),
      fc.jsonValue(),
    );
    const signature = fc.string({ unit: fc.constantFrom(...'ABCXYZabcxyz0189-_'.split('')), minLength: 1, maxLength: 100 });
    await fc.assert(
      fc.asyncProperty(header, fc.jsonValue(), signature, async (h, claims, sig) => {
        assertRefused(await checkProof(`${b64(JSON.stringify(h))}.${b64(JSON.stringify(claims))}.${sig}`, request, policy));
      }),
      settings,
    );
  });

  it('validly signed proofs with claims of any shape', async () => {
    const claims = fc.record(
      {
        jti: fc.oneof(fc.string({ maxLength: 300 }), fc.jsonValue()),
        htm: fc.oneof(fc.constantFrom('POST', 'post', 'GET'), fc.jsonValue()),
        htu: fc.oneof(
          fc.constantFrom(TOKEN_URL, `${TOKEN_URL}?a#b`, 'https://as.example:0/', 'https://[::1/'),
          fc.webUrl(),
          fc.jsonValue(),
        ),
        iat: fc.oneof(fc.constant(IAT), fc.double(), fc.jsonValue()),
        ath: fc.oneof(fc.string(), fc.jsonValue()),
        nonce: fc.oneof(fc.string(), fc.jsonValue()),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(claims, async (value) => {
        const result = await checkProof(await sign(validParts(key).header, value, key.privateKey), request, policy);
        assertRefused(result);
      }),
      { ...settings, numRuns: Math.max(1, Math.floor(runs / 5)) },
    );
  });
});
