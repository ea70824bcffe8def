/**
 * The wire pieces of DPoP-bound tokens (src/dpop/binding.ts): the resource challenge (RFC 9449
 * §7.1), the `cnf` confirmation (§6), the token type (§5) and `dpop_jkt` values (§10).
 */
import { calculateThumbprint, generateKeyPair, generateProof } from 'dpop';
import { describe, expect, it } from 'vitest';
import { boundTo, confirmation, DPOP_TOKEN_TYPE, dpopChallenge, isThumbprint } from '../../src/dpop/binding.js';
import { dpopSigningAlgValuesSupported, proofPolicy } from '../../src/dpop/policy.js';
import { checkProof } from '../../src/dpop/proof.js';

const algorithms = dpopSigningAlgValuesSupported(proofPolicy());

describe('the DPoP challenge (§7.1)', () => {
  it('without credentials: the scheme and algs only', () => {
    expect(dpopChallenge({ algorithms })).toBe('DPoP algs="ES256 EdDSA Ed25519 RS256 PS256"');
  });

  it('with an error, its description, a realm and a scope, each a quoted-string', () => {
    expect(dpopChallenge({ algorithms: ['ES256'], realm: 'api', error: 'use_dpop_nonce', description: 'A DPoP nonce is required.' })).toBe(
      'DPoP realm="api", error="use_dpop_nonce", error_description="A DPoP nonce is required.", algs="ES256"',
    );
    expect(dpopChallenge({ algorithms: ['ES256', 'PS256'], error: 'insufficient_scope', scope: 'read write' })).toBe(
      'DPoP error="insufficient_scope", scope="read write", algs="ES256 PS256"',
    );
    for (const error of ['invalid_token', 'invalid_dpop_proof', 'invalid_request'] as const) {
      expect(dpopChallenge({ algorithms, error })).toContain(`error="${error}"`);
    }
  });

  it('quotes and backslashes escaped, control and non-ASCII characters replaced: no header splitting (RFC 9110 §5.6.4)', () => {
    const value = dpopChallenge({ algorithms: ['ES256'], realm: 'a"b\\c', description: 'x\r\nSet-Cookie: y\u00e9' });
    expect(value).toBe('DPoP realm="a\\"b\\\\c", error_description="x??Set-Cookie: y?", algs="ES256"');
    expect(value).toMatch(/^[\x20-\x7e]+$/);
  });
});

describe('binding a token to a key (§5, §6, §10)', () => {
  it('the token type is DPoP and cnf carries the thumbprint of the proof key', async () => {
    const pair = await generateKeyPair('ES256');
    const url = 'https://as.example/v1/oauth/token';
    const proof = await checkProof(await generateProof(pair, url, 'POST'), { htm: 'POST', htu: url, now: Date.now() }, proofPolicy());
    if (!proof.ok) throw new Error(proof.description);
    expect(DPOP_TOKEN_TYPE).toBe('DPoP');
    expect(confirmation(proof.jkt)).toEqual({ jkt: await calculateThumbprint(pair.publicKey) });
  });

  it('a proof key matches the token bound to it only, and nothing matches an unbound token', async () => {
    const cnf = confirmation('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
    expect(boundTo(cnf, 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs')).toBe(true);
    expect(boundTo(cnf, 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xt')).toBe(false);
    expect(boundTo(cnf, '')).toBe(false);
    expect(boundTo(undefined, 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs')).toBe(false);
    expect(boundTo(undefined, '')).toBe(false);
  });

  it('a dpop_jkt value is 43 base64url characters', () => {
    expect(isThumbprint('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs')).toBe(true);
    for (const bad of ['NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9X', 'NzbLsXh8uDCcd+6MNwXF4W/7noWXFZAfHkxZsRGC9Xs', '', undefined, 43]) {
      expect(isThumbprint(bad), String(bad)).toBe(false);
    }
  });
});
