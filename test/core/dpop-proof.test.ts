/**
 * DPoP proof validation (RFC 9449 §4.3), src/dpop/proof.ts. Valid proofs come from the `dpop`
 * client package; every refusal is a proof that differs from a valid one in one respect, and the
 * test pins the check that refused it by its description, so removing that check fails the test.
 */
import { calculateThumbprint, generateKeyPair as clientKeyPair, generateProof, type JWSAlgorithm } from 'dpop';
import { base64url, generateSecret } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Base64url } from '../../src/crypto.js';
import { ConfigError } from '../../src/errors.js';
import { normalizeHtu } from '../../src/dpop/htu.js';
import { checkProof, MAX_JTI_LENGTH, type ProofRequest, type ProofResult } from '../../src/dpop/proof.js';
import { DEFAULT_DPOP_ALGORITHMS, dpopSigningAlgValuesSupported, proofPolicy } from '../../src/dpop/policy.js';
import { IAT, NOW, proofWith, sign, signText, TOKEN_URL, testKey, type TestKey, validParts } from '../dpop-proofs.js';

const policy = proofPolicy();
const at = (change: Partial<ProofRequest> = {}): ProofRequest => ({ htm: 'POST', htu: TOKEN_URL, now: NOW, ...change });

function refused(result: ProofResult, description: RegExp) {
  expect(result).toMatchObject({ ok: false, error: 'invalid_dpop_proof' });
  expect(result.ok ? '' : result.description).toMatch(description);
}

let es256: TestKey;
beforeAll(async () => {
  es256 = await testKey('ES256');
});

describe('valid proofs from a DPoP client (the dpop package)', () => {
  it.each(['ES256', 'Ed25519', 'RS256', 'PS256'] as JWSAlgorithm[])(
    '%s: accepted, with the RFC 7638 thumbprint of its key',
    async (alg) => {
      const pair = await clientKeyPair(alg);
      const proof = await generateProof(pair, TOKEN_URL, 'POST');
      const result = await checkProof(proof, { htm: 'POST', htu: TOKEN_URL, now: Date.now() }, policy);
      expect(result).toMatchObject({ ok: true, jkt: await calculateThumbprint(pair.publicKey) });
    },
  );

  it('EdDSA (the older name of Ed25519): accepted', async () => {
    const key = await testKey('Ed25519');
    expect((await checkProof(await proofWith(key, { alg: 'EdDSA' }), at(), policy)).ok).toBe(true);
  });

  it('at a resource: with ath, the hash of the access token (§4.3 point 10)', async () => {
    const pair = await clientKeyPair('ES256');
    const url = 'https://api.example/things';
    const proof = await generateProof(pair, url, 'GET', undefined, 'token-value');
    const request = { htm: 'GET', htu: url, now: Date.now() };
    expect((await checkProof(proof, { ...request, accessToken: 'token-value' }, policy)).ok).toBe(true);
    refused(await checkProof(proof, { ...request, accessToken: 'another-token' }, policy), /ath does not match/);
  });

  it('answers what the replay check needs: jti, iat, a replay key per key and jti, and until when the proof passes', async () => {
    const result = await checkProof(await proofWith(es256), at(), policy);
    expect(result).toEqual({
      ok: true,
      jkt: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      jti: 'e1j3V_bKic8-LAEB',
      iat: IAT,
      replayKey: expect.any(String),
      expiresAt: NOW + 60_000,
    });
    const other = await testKey('ES256');
    const same = await checkProof(await proofWith(es256, { claims: { iat: IAT + 1 } }), at(), policy);
    const otherKey = await checkProof(await proofWith(other), at(), policy);
    expect(same.ok && result.ok && same.replayKey === result.replayKey).toBe(true);
    expect(otherKey.ok && result.ok && otherKey.replayKey !== result.replayKey).toBe(true);
  });

  it('a proof passes while now < expiresAt, and from then on never again (the replay record may go)', async () => {
    const proof = await proofWith(es256);
    const first = await checkProof(proof, at(), policy);
    if (!first.ok) throw new Error(first.description);
    expect((await checkProof(proof, at({ now: first.expiresAt - 1 }), policy)).ok).toBe(true);
    refused(await checkProof(proof, at({ now: first.expiresAt }), policy), /too old/);
  });

  // Making an RSA 4096 key is a random prime search: seconds, and past the default 20 s on a
  // loaded 2-core machine (seen once), so this case has two minutes.
  it('an RSA 4096 proof fits the default length bound', { timeout: 120_000 }, async () => {
    const key = await testKey('PS256', { modulusLength: 4096 });
    const proof = await proofWith(key, { alg: 'PS256' });
    expect(proof.length).toBeLessThan(2048);
    expect((await checkProof(proof, at(), policy)).ok).toBe(true);
  });
});

describe('the DPoP header (§4.3 points 1, 2)', () => {
  it('none, or an empty one: refused', async () => {
    refused(await checkProof(undefined, at(), policy), /required/);
    refused(await checkProof([], at(), policy), /required/);
    refused(await checkProof('', at(), policy), /required/);
  });

  it('two headers: refused, whether as two values or joined by the HTTP stack with ", "', async () => {
    const proof = await proofWith(es256);
    expect((await checkProof([proof], at(), policy)).ok).toBe(true);
    refused(await checkProof([proof, proof], at(), policy), /more than one/);
    refused(await checkProof(`${proof}, ${proof}`, at(), policy), /more than one/);
  });

  it('longer than the bound: refused, though valid', async () => {
    const proof = await proofWith(es256, { claims: { padding: 'x'.repeat(2000) } });
    expect((await checkProof(proof, at(), policy)).ok).toBe(true);
    refused(await checkProof(proof, at(), proofPolicy({ maxLength: 1024 })), /too long/);
  });

  it('not one compact JWS: refused', async () => {
    const proof = await proofWith(es256);
    for (const bad of [
      `${proof}.x`,
      proof.slice(0, proof.lastIndexOf('.')),
      `${proof}=`,
      `${proof.slice(0, -1)}+`,
      'a..b',
      ' '.repeat(5),
    ]) {
      refused(await checkProof(bad, at(), policy), /not a compact JWS/);
    }
  });
});

describe('the JOSE header (§4.3 points 3 to 7)', () => {
  it('a header that is not a JSON object: refused', async () => {
    const [, claims, signature] = (await proofWith(es256)).split('.');
    for (const header of ['not json', '[1]', 'null', '"dpop+jwt"']) {
      refused(await checkProof(`${base64url.encode(header)}.${claims}.${signature}`, at(), policy), /not a JSON object/);
    }
  });

  it.each([undefined, 'JWT', 'DPOP+JWT', 'application/dpop+jwt', 'dpop+jwt '])('typ %j: refused', async (typ) => {
    refused(await checkProof(await proofWith(es256, { header: { typ } }), at(), policy), /typ is not dpop\+jwt/);
  });

  it('an algorithm the server does not allow: refused', async () => {
    const key = await testKey('PS256');
    const proof = await proofWith(key, { alg: 'PS256' });
    expect((await checkProof(proof, at(), policy)).ok).toBe(true);
    refused(await checkProof(proof, at(), proofPolicy({ algorithms: ['ES256'] })), /alg is not supported/);
  });

  it('none: refused, even by a policy built by hand that lists it', async () => {
    const handMade = { ...policy, algorithms: ['none', 'ES256'] };
    refused(await checkProof(await proofWith(es256, { alg: 'none', signer: 'AAAA' }), at(), handMade), /alg is not supported/);
  });

  it('HS256, signed with the symmetric key in its jwk: refused, even by a policy built by hand that lists it', async () => {
    const secret = (await generateSecret('HS256', { extractable: true })) as CryptoKey;
    const k = base64url.encode(new Uint8Array(await crypto.subtle.exportKey('raw', secret)));
    const proof = await proofWith(es256, { alg: 'HS256', header: { jwk: { kty: 'oct', k } }, signer: secret });
    refused(await checkProof(proof, at(), { ...policy, algorithms: ['HS256', 'ES256'] }), /alg is not supported/);
  });

  it('crit or b64 (extensions the server does not understand): refused', async () => {
    refused(await checkProof(await proofWith(es256, { header: { crit: ['exp'], exp: 1 } }), at(), policy), /unsupported parameters/);
    refused(await checkProof(await proofWith(es256, { header: { b64: true } }), at(), policy), /unsupported parameters/);
  });

  it('JWS JSON serialization (RFC 7515 §7.2), general or flattened: refused, never parsed', async () => {
    const [protectedHeader, payload, signature] = (await proofWith(es256)).split('.');
    const flattened = JSON.stringify({ protected: protectedHeader, payload, signature });
    const general = JSON.stringify({ payload, signatures: [{ protected: protectedHeader, signature }] });
    // Its commas already make it look like two headers joined; without them it is still no compact JWS.
    for (const bad of [flattened, general]) refused(await checkProof(bad, at(), policy), /more than one DPoP header/);
    for (const bad of [flattened.replaceAll(',', ' '), base64url.encode(flattened)]) {
      refused(await checkProof(bad, at(), policy), /not a compact JWS/);
    }
  });

  it('a key named by x5c, jku, x5u or kid instead of jwk: refused (§4.2: the key is in jwk)', async () => {
    const { exportSPKI } = await import('jose');
    const spki = (await exportSPKI(es256.publicKey)).replace(/-----[A-Z ]+-----|\s/g, '');
    for (const header of [{ x5c: [spki] }, { jku: 'https://client.example/jwks' }, { x5u: 'https://client.example/cert' }, { kid: 'k1' }]) {
      refused(await checkProof(await proofWith(es256, { header: { jwk: undefined, ...header } }), at(), policy), /has no jwk/);
    }
  });

  it('no jwk, or a jwk that is no object: refused', async () => {
    for (const jwk of [undefined, 'key', [1], null]) {
      refused(await checkProof(await proofWith(es256, { header: { jwk } }), at(), policy), /has no jwk/);
    }
  });

  it.each(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'])('a jwk with the private member %s: refused', async (member) => {
    const proof = await proofWith(es256, { header: { jwk: { ...es256.jwk, [member]: 'AQAB' } } });
    refused(await checkProof(proof, at(), policy), /not a public key/);
  });

  it('the private key itself as jwk: refused', async () => {
    const { exportJWK } = await import('jose');
    const proof = await proofWith(es256, { header: { jwk: await exportJWK(es256.privateKey) } });
    refused(await checkProof(proof, at(), policy), /not a public key/);
  });

  it('a symmetric (oct) or unknown key type: refused', async () => {
    for (const jwk of [{ kty: 'oct' }, { ...es256.jwk, kty: 'oct' }, { ...es256.jwk, kty: 'AKP' }, { ...es256.jwk, kty: undefined }]) {
      refused(await checkProof(await proofWith(es256, { header: { jwk } }), at(), policy), /not an asymmetric public key/);
    }
  });

  it('a jwk whose own alg is another one: refused', async () => {
    refused(
      await checkProof(await proofWith(es256, { header: { jwk: { ...es256.jwk, alg: 'ES384' } } }), at(), policy),
      /another algorithm/,
    );
  });
});

describe('the signature (§4.3 point 6)', () => {
  it('signed by another key than its jwk: refused', async () => {
    const other = await testKey('ES256');
    refused(await checkProof(await proofWith(es256, { signer: other.privateKey }), at(), policy), /signature does not verify/);
  });

  it('an RSA key under 2048 bits (RFC 7518 §3.3, §3.5): refused, RS256 and PS256, saying so', async () => {
    for (const [alg, name] of [
      ['RS256', 'RSASSA-PKCS1-v1_5'],
      ['PS256', 'RSA-PSS'],
    ] as const) {
      const params = { name, modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' };
      const pair = (await crypto.subtle.generateKey(params, true, ['sign', 'verify'])) as CryptoKeyPair;
      const { exportJWK } = await import('jose');
      const weak: TestKey = { ...pair, jwk: await exportJWK(pair.publicKey) };
      // The key's size is what is wrong, not the signature (which is good): the description says so.
      const proof = await proofWith(weak, { alg });
      refused(await checkProof(proof, at(), policy), /^The DPoP proof's RSA key is shorter than 2048 bits\.$/);
      // A key seen before (its import remembered) is refused the same way.
      refused(await checkProof(await proofWith(weak, { alg }), at(), policy), /RSA key is shorter than 2048 bits/);
    }
  });

  it('an alg that does not fit the key (ES384 with a P-256 key): refused', async () => {
    const proof = await proofWith(es256, { alg: 'ES384' });
    refused(await checkProof(proof, at(), proofPolicy({ algorithms: ['ES256', 'ES384'] })), /signature does not verify/);
  });

  it('a changed claim after signing: refused', async () => {
    const [header, , signature] = (await proofWith(es256)).split('.');
    const claims = base64url.encode(JSON.stringify({ ...validParts(es256).claims, htm: 'GET' }));
    refused(await checkProof(`${header}.${claims}.${signature}`, at({ htm: 'GET' }), policy), /signature does not verify/);
  });

  it('claims that are not a JSON object, properly signed: refused', async () => {
    for (const claims of [[1], 'text', null]) {
      refused(
        await checkProof(await sign(validParts(es256).header, claims, es256.privateKey), at(), policy),
        /claims are not a JSON object/,
      );
    }
  });
});

describe('the claims (§4.3 points 8 to 11)', () => {
  it.each([undefined, '', 42, 'x'.repeat(MAX_JTI_LENGTH + 1)])('jti %j: refused', async (jti) => {
    refused(await checkProof(await proofWith(es256, { claims: { jti } }), at(), policy), /jti is missing or malformed/);
  });

  it('htm: the request method exactly (RFC 9110 §9.1: methods are case-sensitive)', async () => {
    for (const htm of ['GET', 'post', undefined, ['POST']]) {
      refused(await checkProof(await proofWith(es256, { claims: { htm } }), at(), policy), /htm does not match/);
    }
  });

  it('htu: another path, host, port or scheme, user information, no URL: refused', async () => {
    const htus = [
      'https://as.example/v1/oauth/revoke',
      'https://as.example/v1/oauth/token/',
      'https://other.example/v1/oauth/token',
      'https://as.example:8443/v1/oauth/token',
      'http://as.example/v1/oauth/token',
      'https://client@as.example/v1/oauth/token',
      'wss://as.example/v1/oauth/token',
      '/v1/oauth/token',
      42,
    ];
    for (const htu of htus) refused(await checkProof(await proofWith(es256, { claims: { htu } }), at(), policy), /htu does not match/);
  });

  it('htu: equal after RFC 3986 §6.2.2 and §6.2.3 normalisation, query and fragment ignored (§4.3 point 9)', async () => {
    const htus = [
      'https://as.example/v1/oauth/token?x=1',
      'https://as.example/v1/oauth/token#frag',
      'HTTPS://AS.Example/v1/oauth/token',
      'https://as.example:443/v1/oauth/token',
      'https://as.example/v1/%6Fauth/token',
      'https://as.example/v1/x/../oauth/./token',
    ];
    for (const htu of htus) expect((await checkProof(await proofWith(es256, { claims: { htu } }), at(), policy)).ok, htu).toBe(true);
    // The request side is normalised too.
    const root = await proofWith(es256, { claims: { htu: 'http://as.example:80/a%2fb' } });
    expect((await checkProof(root, at({ htu: 'http://AS.example/a%2Fb?q' }), policy)).ok).toBe(true);
    const empty = await proofWith(es256, { claims: { htu: 'https://as.example' } });
    expect((await checkProof(empty, at({ htu: 'https://as.example/' }), policy)).ok).toBe(true);
  });

  it('normalizeHtu: the comparison form, and no form at all for what is no http(s) URL of a resource', () => {
    expect(normalizeHtu('HTTPS://Example.COM:443?q#f')).toBe('https://example.com/');
    expect(normalizeHtu('http://example.com:8080/%7e%2f%41/../b')).toBe('http://example.com:8080/b');
    expect(normalizeHtu('http://example.com/a/%7e%2f%41')).toBe('http://example.com/a/~%2FA');
    for (const value of ['wss://example.com/', 'file:///etc/passwd', 'urn:x:y', 'https://u:p@example.com/', 'example.com/a', '']) {
      expect(normalizeHtu(value), value).toBeUndefined();
    }
  });

  it('iat: at most 60 s old and 5 s ahead by default, each bound configurable', async () => {
    const proof = async (iat: unknown) => checkProof(await proofWith(es256, { claims: { iat } }), at(), policy);
    expect((await proof(IAT - 59.999)).ok).toBe(true);
    refused(await proof(IAT - 60), /too old/);
    expect((await proof(IAT + 5)).ok).toBe(true);
    refused(await proof(IAT + 5.001), /in the future/);
    for (const iat of [undefined, String(IAT), null]) refused(await proof(iat), /iat is missing or malformed/);
    const infinite = await signText(
      JSON.stringify(validParts(es256).header),
      `{"jti":"a","htm":"POST","htu":"${TOKEN_URL}","iat":1e400}`,
      es256.privateKey,
    );
    refused(await checkProof(infinite, at(), policy), /iat is missing or malformed/);
    // Far out either way, negative, or past what a millisecond count holds: refused, never accepted by overflow.
    for (const iat of [0, -1, -IAT, Number.MIN_SAFE_INTEGER, -1e308]) refused(await proof(iat), /too old/);
    for (const iat of [IAT + 3600, 1e20, Number.MAX_SAFE_INTEGER, 1e308]) refused(await proof(iat), /in the future/);
    // A NumericDate may have a fraction (RFC 7519 §2).
    expect((await proof(IAT + 0.5)).ok).toBe(true);
    const wide = proofPolicy({ maxAgeSeconds: 300, clockSkewSeconds: 30 });
    expect((await checkProof(await proofWith(es256, { claims: { iat: IAT - 299 } }), at(), wide)).ok).toBe(true);
    expect((await checkProof(await proofWith(es256, { claims: { iat: IAT + 30 } }), at(), wide)).ok).toBe(true);
  });

  it('ath: required with an access token, and its SHA-256', async () => {
    const token = 'access-token-value';
    const ath = sha256Base64url(token);
    expect((await checkProof(await proofWith(es256, { claims: { ath } }), at({ accessToken: token }), policy)).ok).toBe(true);
    refused(await checkProof(await proofWith(es256), at({ accessToken: token }), policy), /no ath/);
    refused(
      await checkProof(await proofWith(es256, { claims: { ath: sha256Base64url('other') } }), at({ accessToken: token }), policy),
      /ath does not match/,
    );
    refused(await checkProof(await proofWith(es256, { claims: { ath: 7 } }), at({ accessToken: token }), policy), /no ath/);
  });

  it('ath without an access token (the token endpoint): ignored, as RFC 9449 §4.3 point 10 and RFC 7519 §4 say', async () => {
    expect((await checkProof(await proofWith(es256, { claims: { ath: sha256Base64url('t') } }), at(), policy)).ok).toBe(true);
  });
});

describe('the policy', () => {
  it('defaults: ES256, EdDSA, Ed25519, RS256, PS256; 60 s; 5 s; 8 KiB; no nonces', () => {
    expect(policy).toEqual({
      algorithms: DEFAULT_DPOP_ALGORITHMS,
      maxAgeSeconds: 60,
      clockSkewSeconds: 5,
      maxLength: 8192,
      nonces: undefined,
    });
    expect(DEFAULT_DPOP_ALGORITHMS).toEqual(['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256']);
    expect(Object.isFrozen(policy) && Object.isFrozen(policy.algorithms)).toBe(true);
  });

  it('none, HMAC, unknown or no algorithms: a ConfigError at construction', () => {
    for (const algorithms of [['none'], ['ES256', 'HS256'], ['HS512'], ['ES256K'], ['es256'], []]) {
      expect(() => proofPolicy({ algorithms }), JSON.stringify(algorithms)).toThrow(ConfigError);
    }
    expect(() => proofPolicy({ algorithms: ['ES256', 'none'] })).toThrow(/asymmetric algorithms only/);
  });

  it('bounds out of range: a ConfigError at construction', () => {
    for (const options of [
      { maxAgeSeconds: 0 },
      { maxAgeSeconds: 1.5 },
      { clockSkewSeconds: -1 },
      { maxLength: 100 },
      { maxLength: 1e6 },
    ]) {
      expect(() => proofPolicy(options), JSON.stringify(options)).toThrow(ConfigError);
    }
  });

  it('dpop_signing_alg_values_supported: the allowed algorithms, a copy', () => {
    const list = dpopSigningAlgValuesSupported(proofPolicy({ algorithms: ['ES256', 'PS256', 'ES256'] }));
    expect(list).toEqual(['ES256', 'PS256']);
    list.push('none');
    expect(dpopSigningAlgValuesSupported(policy)).not.toContain('none');
  });
});

describe('a key seen before (its import and thumbprint are remembered)', () => {
  it('still checks every signature: a second proof by the key passes, one signed by another key with its jwk does not', async () => {
    const first = await checkProof(await proofWith(es256), at(), policy);
    const again = await checkProof(await proofWith(es256, { claims: { jti: 'another-jti-0001' } }), at(), policy);
    expect(again).toMatchObject({ ok: true, jkt: first.ok ? first.jkt : 'first refused' });
    const thief = await testKey('ES256');
    // The header names es256's public key (remembered by now); the signature is the thief's.
    refused(await checkProof(await proofWith(es256, { signer: thief.privateKey }), at(), policy), /signature does not verify/);
  });

  it('is remembered per algorithm: the same RSA jwk under PS256 is imported for PS256, and verifies only PS256 signatures', async () => {
    const rsa = await testKey('RS256');
    expect((await checkProof(await proofWith(rsa, { alg: 'RS256' }), at(), policy)).ok).toBe(true);
    // The same public key named with PS256 but signed RS256: refused, not verified with the RS256 import.
    refused(await checkProof(await proofWith(rsa, { alg: 'PS256' }), at(), policy), /signature does not verify/);
  });
});
