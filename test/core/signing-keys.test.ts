/**
 * The signing key set (src/keys/): what a key set accepts, what it publishes, which key signs,
 * how a JWS is verified against it, rotation over time across instances, `generateSigningKey`,
 * and `JwtAccessTokens` on top of it, byte for byte as before.
 */
import fc from 'fast-check';
import { createLocalJWKSet, exportJWK, generateKeyPair, importJWK, type JWK, jwtVerify, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, generateSigningKey, type SigningAlgorithm, type SigningJwk } from '../../src/index.js';
import { publicJwk } from '../../src/keys/jwk.js';
import { SigningKeys } from '../../src/keys/signing-keys.js';
import { JwtAccessTokens } from '../../src/tokens/jwt.js';
import { ISSUER } from '../fixtures.js';
import { setup } from '../helpers.js';

const NOW = 1_750_000_000_000;
const PUBLIC_MEMBERS = ['use', 'kty', 'crv', 'x', 'y', 'n', 'e', 'kid', 'alg'];
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const claims = (extra: Record<string, unknown> = {}) => ({ iss: ISSUER, sub: 'u1', iat: NOW / 1000, exp: NOW / 1000 + 600, ...extra });

/** A private JWK made with jose alone, with the members a host's exported key often has. */
async function joseKey(alg: SigningAlgorithm, kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg, use: 'sig', key_ops: ['sign'], ext: true };
}

/** Sign `payload` with a JWK directly (not through a key set): a foreign signer, or a crafted header. */
async function signWith(jwk: JWK, header: Record<string, unknown>, payload = claims()): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: jwk.alg!, ...header }).sign(await importJWK(jwk, jwk.alg));
}

let rsaA: SigningJwk;
let rsaB: SigningJwk;
let ecA: SigningJwk;
let edA: SigningJwk;
let edB: SigningJwk;
beforeAll(async () => {
  [rsaA, rsaB, ecA, edA, edB] = await Promise.all([
    generateSigningKey('RS256', 'rsa-a'),
    generateSigningKey('RS256', 'rsa-b'),
    generateSigningKey('ES256', 'ec-a'),
    generateSigningKey('EdDSA', 'ed-a'),
    generateSigningKey('EdDSA', 'ed-b'),
  ]);
});

describe('SigningKeys.from: what a key set accepts', () => {
  const refused = (keys: unknown[], option: string, message: RegExp) => {
    let error: unknown;
    try {
      SigningKeys.from(keys, 'openid.keys');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).option).toBe(option);
    expect((error as ConfigError).message).toMatch(message);
  };

  it('refuses none and HMAC, however they come', () => {
    refused([{ ...ecA, alg: 'none' }], 'openid.keys.0', /"none" algorithm are refused/);
    refused([{ kty: 'oct', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0', kid: 'h', alg: 'HS256' }], 'openid.keys.0', /HMAC/);
    refused([{ kty: 'oct', k: 'c2VjcmV0', kid: 'h', alg: 'RS256' }], 'openid.keys.0', /symmetric/);
    refused([edA, { ...edA, kid: 'x', alg: 'HS512' }], 'openid.keys.1', /HMAC/);
  });

  it('refuses a key without its private part: a public key cannot sign', () => {
    for (const key of [rsaA, ecA, edA]) {
      const { d: _d, ...publicOnly } = key;
      refused([publicOnly], 'openid.keys.0', /"d" is missing/);
    }
    const { p: _p, ...noPrimes } = rsaA;
    refused([noPrimes], 'openid.keys.0', /"p"/);
  });

  it('refuses an alg that does not fit the key type, or that is not one of ours', () => {
    refused([{ ...ecA, alg: 'RS256' }], 'openid.keys.0', /alg RS256 needs kty "RSA".*does not match/);
    refused([{ ...edA, alg: 'ES256' }], 'openid.keys.0', /alg ES256 needs kty "EC" and crv "P-256"/);
    refused([{ ...rsaA, alg: 'EdDSA' }], 'openid.keys.0', /needs kty "OKP" and crv "Ed25519"/);
    refused([{ ...edA, crv: 'Ed448' }], 'openid.keys.0', /does not match/);
    refused([{ ...rsaA, alg: 'PS256' }], 'openid.keys.0', /"alg": "RS256", "ES256" or "EdDSA"/);
    const { alg: _alg, ...noAlg } = ecA;
    refused([noAlg], 'openid.keys.0', /"alg"/);
  });

  it('needs a unique kid on every key', () => {
    const { kid: _kid, ...noKid } = edA;
    refused([noKid], 'openid.keys.0', /"kid"/);
    refused([{ ...edA, kid: '' }], 'openid.keys.0', /"kid"/);
    refused([edA, rsaA, { ...edB, kid: 'ed-a' }], 'openid.keys.2', /duplicate kid "ed-a"/);
  });

  it('refuses malformed members, short RSA moduli, multi-prime keys, use "enc", and what is not a key list', () => {
    refused([{ ...edA, x: `${edA.x!.slice(0, -1)}+` }], 'openid.keys.0', /"x": an unpadded base64url string/);
    refused([{ ...edA, x: edA.x!.slice(0, 40) }], 'openid.keys.0', /"x" of 32 bytes/);
    refused([{ ...ecA, d: `${ecA.d!}AA` }], 'openid.keys.0', /"d" of 32 bytes/);
    refused([{ ...rsaA, n: rsaA.n!.slice(0, 171) }], 'openid.keys.0', /at least 2048 bits/);
    refused([{ ...rsaA, oth: [] }], 'openid.keys.0', /multi-prime/);
    refused([{ ...rsaA, use: 'enc' }], 'openid.keys.0', /"use": "sig"/);
    refused([null], 'openid.keys.0', /object/);
    refused([[edA]], 'openid.keys.0', /object/);
    refused([], 'openid.keys', /at least one/);
  });

  it('imports at first use, not when built: a key pair that does not match is refused then, naming the key', async () => {
    // The public half of another key: every check of its shape passes, only Web Crypto can tell.
    const mismatched = SigningKeys.from([edA, { ...edB, x: edA.x }], 'openid.keys');
    await expect(mismatched.jwks()).rejects.toThrow(/option "openid.keys.1": expected a usable key pair/);
    await expect(mismatched.sign('EdDSA', claims(), 'JWT')).rejects.toBeInstanceOf(ConfigError);
    // A point that is not on the curve.
    const offCurve = SigningKeys.from([{ ...ecA, x: 'A'.repeat(43), y: 'A'.repeat(43) }], 'openid.keys');
    await expect(offCurve.sign('ES256', claims(), 'JWT')).rejects.toThrow(/openid.keys.0/);
  });
});

describe('the JWKS: public members only', () => {
  it('publishes every key in order with use, kty, crv, x, y, n, e, kid and alg, nothing private', async () => {
    const keys = [await joseKey('RS256', 'r'), await joseKey('ES256', 'e'), await joseKey('EdDSA', 'o')];
    const { keys: published } = await SigningKeys.from([...keys, { ...edA, x5c: ['MII'], secret: 's' }]).jwks();
    expect(published.map((k) => Object.keys(k))).toEqual([
      ['use', 'kty', 'n', 'e', 'kid', 'alg'],
      ['use', 'kty', 'crv', 'x', 'y', 'kid', 'alg'],
      ['use', 'kty', 'crv', 'x', 'kid', 'alg'],
      ['use', 'kty', 'crv', 'x', 'kid', 'alg'],
    ]);
    const text = JSON.stringify(published);
    for (const key of [...keys, edA])
      for (const member of PRIVATE_MEMBERS)
        if (typeof key[member as keyof JWK] === 'string') expect(text).not.toContain(key[member as 'd']);
  });

  it('publicJwk never copies a private or unknown member, whatever the input (property)', () => {
    const name = fc.oneof(fc.constantFrom(...PUBLIC_MEMBERS, ...PRIVATE_MEMBERS, 'key_ops', 'ext', 'x5c', '__proto__'), fc.string());
    fc.assert(
      fc.property(fc.dictionary(name, fc.jsonValue()), (input) => {
        const out = publicJwk(input);
        for (const member of Object.keys(out)) expect(PUBLIC_MEMBERS).toContain(member);
        for (const member of PRIVATE_MEMBERS) expect(Object.hasOwn(out, member)).toBe(false);
        expect(out.use).toBe('sig');
      }),
      { numRuns: 1000 },
    );
  });

  it('no private member of any accepted key reaches the JWKS (property over extra members)', async () => {
    const extra = fc.dictionary(fc.constantFrom(...PRIVATE_MEMBERS.filter((m) => m !== 'oth'), 'key_ops', 'ext', 'x5c', 'q2'), fc.string());
    await fc.assert(
      fc.asyncProperty(extra, async (members) => {
        const { keys } = await SigningKeys.from([{ ...members, ...edA }]).jwks();
        expect(Object.keys(keys[0]!).every((m) => PUBLIC_MEMBERS.includes(m))).toBe(true);
        expect(JSON.stringify(keys)).not.toContain(edA.d);
      }),
      { numRuns: 30 },
    );
  });

  it('hands out a copy: changing it changes no later answer', async () => {
    const set = SigningKeys.from([edA]);
    const first = await set.jwks();
    (first.keys[0] as Record<string, unknown>).d = edA.d;
    expect(await set.jwks()).toEqual({ keys: [publicJwk(edA)] });
  });
});

describe('signing: per algorithm the first key signs, every key verifies', () => {
  it('picks the first key of each algorithm, publishes all of them, and says which algorithms it signs', async () => {
    const set = SigningKeys.from([rsaA, ecA, edA, rsaB, edB]);
    expect(set.algorithms).toEqual(['RS256', 'ES256', 'EdDSA']);
    const jwks = createLocalJWKSet(await set.jwks());
    for (const [alg, kid] of [
      ['RS256', 'rsa-a'],
      ['ES256', 'ec-a'],
      ['EdDSA', 'ed-a'],
    ] as const) {
      // As a relying party would: jose against the published JWKS.
      const { protectedHeader, payload } = await jwtVerify(await set.sign(alg, claims(), 'JWT'), jwks, { currentDate: new Date(NOW) });
      expect(protectedHeader).toEqual({ alg, kid, typ: 'JWT' });
      expect(payload).toEqual(claims());
    }
    expect((await set.jwks()).keys.map((k) => k.kid)).toEqual(['rsa-a', 'ec-a', 'ed-a', 'rsa-b', 'ed-b']);
  });

  it('refuses to sign with an algorithm it has no key of', async () => {
    const set = SigningKeys.from([edA]);
    expect(set.signs('RS256')).toBe(false);
    await expect(set.sign('RS256', claims(), 'JWT')).rejects.toThrow(/expected a signing key with alg RS256/);
  });
});

describe('verify: only our keys, our algorithms', () => {
  const set = () => SigningKeys.from([rsaA, rsaB, edA]);
  const at = { now: NOW };

  it('finds the key by kid, or without kid tries the keys of its alg', async () => {
    const byKid = await set().verify(await signWith(rsaB, { kid: 'rsa-b' }), at);
    expect(byKid).toMatchObject({ valid: true, kid: 'rsa-b', expired: false, payload: claims() });
    const noKid = await set().verify(await signWith(rsaB, {}), at);
    expect(noKid).toMatchObject({ valid: true, kid: 'rsa-b' });
  });

  it('refuses an unknown kid, a foreign key, a kid of another algorithm and a tampered token', async () => {
    const foreign = await joseKey('RS256', 'rsa-a');
    expect(await set().verify(await signWith({ ...foreign, kid: 'rsa-z' }, { kid: 'rsa-z' }), at)).toEqual({
      valid: false,
      reason: 'unknown_key',
    });
    expect(await set().verify(await signWith(foreign, { kid: 'rsa-a' }), at)).toEqual({ valid: false, reason: 'signature' });
    expect(await set().verify(await signWith(foreign, {}), at)).toEqual({ valid: false, reason: 'signature' });
    expect(await set().verify(await signWith(ecA, { kid: 'ec-a' }), at)).toEqual({ valid: false, reason: 'algorithm' });
    expect(await set().verify(await signWith(edB, { kid: 'ed-a' }), at)).toEqual({ valid: false, reason: 'signature' });
    expect(await set().verify(await signWith(edA, { alg: 'EdDSA', kid: 'rsa-a' }), at)).toEqual({ valid: false, reason: 'algorithm' });
    const [h, , s] = (await signWith(edA, { kid: 'ed-a' })).split('.');
    expect(await set().verify(`${h}.${b64(claims({ sub: 'admin' }))}.${s}`, at)).toEqual({ valid: false, reason: 'signature' });
  });

  it('refuses alg none and HMAC tokens crafted by hand, the public key used as the HMAC secret included', async () => {
    const none = `${b64({ alg: 'none', kid: 'rsa-a' })}.${b64(claims())}`;
    expect(await set().verify(`${none}.`, at)).toEqual({ valid: false, reason: 'malformed' });
    expect(await set().verify(`${none}.AAAA`, at)).toEqual({ valid: false, reason: 'algorithm' });
    for (const secret of [JSON.stringify(publicJwk(rsaA)), rsaA.n!, edA.x!]) {
      const hs = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', kid: 'rsa-a' }).sign(new TextEncoder().encode(secret));
      expect(await set().verify(hs, at)).toEqual({ valid: false, reason: 'algorithm' });
    }
    const hsNoKid = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(edA.x!));
    expect(await set().verify(hsNoKid, at)).toEqual({ valid: false, reason: 'algorithm' });
  });

  it('checks exp, nbf, iss and typ; accepts an expired token only when asked, and says so', async () => {
    const token = await set().sign('RS256', claims(), 'JWT');
    expect(await set().verify(token, { now: NOW + 600_000 - 1 })).toMatchObject({ valid: true, expired: false });
    expect(await set().verify(token, { now: NOW + 600_000 })).toEqual({ valid: false, reason: 'expired' });
    expect(await set().verify(token, { now: NOW + 86_400_000, acceptExpired: true })).toMatchObject({
      valid: true,
      expired: true,
      kid: 'rsa-a',
    });
    const early = await set().sign('RS256', claims({ nbf: NOW / 1000 + 60 }), 'JWT');
    expect(await set().verify(early, at)).toEqual({ valid: false, reason: 'claims' });
    expect(await set().verify(token, { ...at, issuer: 'https://other.example' })).toEqual({ valid: false, reason: 'claims' });
    expect(await set().verify(token, { ...at, typ: 'at+jwt' })).toEqual({ valid: false, reason: 'claims' });
    // An expired token with a bad issuer is refused for its issuer, even when expiry is accepted.
    expect(await set().verify(token, { now: NOW + 86_400_000, acceptExpired: true, issuer: 'https://x.example' })).toEqual({
      valid: false,
      reason: 'claims',
    });
  });

  it('never throws on garbage', async () => {
    const keys = set();
    await keys.jwks();
    const part = fc.oneof(
      fc.base64String(),
      fc.constantFrom(b64({ alg: 'RS256' }), b64({ alg: 'EdDSA', kid: 'ed-a', crit: ['x'] }), b64('x')),
    );
    const token = fc.oneof(
      fc.string(),
      fc.tuple(part, part, part).map((p) => p.join('.').replace(/=/g, '')),
    );
    await fc.assert(
      fc.asyncProperty(token, async (value) => {
        expect((await keys.verify(value, at)).valid).toBe(false);
      }),
      { numRuns: 300 },
    );
    expect(await keys.verify(undefined as unknown as string, at)).toEqual({ valid: false, reason: 'malformed' });
  });
});

describe('rotation across instances, step by step', () => {
  it('publish at the end everywhere, then sign with it, then retire the old key', async () => {
    const [oldKey, newKey] = [edA, edB];
    // Before: every instance signs with the old key.
    const before = SigningKeys.from([oldKey]);
    const oldToken = await before.sign('EdDSA', claims(), 'JWT');
    // 1. Publish: one instance restarted with the new key at the end; it still signs with the old one.
    const published = SigningKeys.from([oldKey, newKey]);
    expect(JSON.parse(atob((await published.sign('EdDSA', claims(), 'JWT')).split('.')[0]!)).kid).toBe('ed-a');
    const cachedByRp = await published.jwks();
    // 2. Sign: the new key moved first; instances not yet moved, and a relying party's cached JWKS, verify its tokens.
    const moved = SigningKeys.from([newKey, oldKey]);
    const newToken = await moved.sign('EdDSA', claims(), 'JWT');
    expect(await published.verify(newToken, { now: NOW })).toMatchObject({ valid: true, kid: 'ed-b' });
    expect((await jwtVerify(newToken, createLocalJWKSet(cachedByRp), { currentDate: new Date(NOW) })).protectedHeader.kid).toBe('ed-b');
    expect(await moved.verify(oldToken, { now: NOW })).toMatchObject({ valid: true, kid: 'ed-a' });
    // 3. Retire: once the old tokens have expired, the old key goes; its tokens are then unknown.
    const retired = SigningKeys.from([newKey]);
    expect(await retired.verify(oldToken, { now: NOW })).toEqual({ valid: false, reason: 'unknown_key' });
    expect(await retired.verify(newToken, { now: NOW })).toMatchObject({ valid: true });
    expect((await retired.jwks()).keys.map((k) => k.kid)).toEqual(['ed-b']);
  });
});

describe('SigningKeys.generated: per-process keys', () => {
  it('makes one key per algorithm at first use; another process knows none of them', async () => {
    const one = SigningKeys.generated(['RS256', 'EdDSA']);
    const other = SigningKeys.generated(['RS256', 'EdDSA']);
    expect(one.algorithms).toEqual(['RS256', 'EdDSA']);
    const { keys } = await one.jwks();
    expect(keys.map((k) => [k.alg, k.kid!.length])).toEqual([
      ['RS256', 16],
      ['EdDSA', 16],
    ]);
    const token = await one.sign('RS256', claims(), 'JWT');
    expect(await one.verify(token, { now: NOW })).toMatchObject({ valid: true });
    expect(await other.verify(token, { now: NOW })).toEqual({ valid: false, reason: 'unknown_key' });
    expect(() => SigningKeys.generated(['HS256' as SigningAlgorithm])).toThrow(ConfigError);
    expect(() => SigningKeys.generated([])).toThrow(ConfigError);
  });
});

describe('generateSigningKey', () => {
  it('returns a private JWK with kid, alg and use a key set accepts, for every algorithm', async () => {
    expect(rsaA).toMatchObject({ kty: 'RSA', kid: 'rsa-a', alg: 'RS256', use: 'sig' });
    expect(Buffer.from(rsaA.n!, 'base64url').length * 8).toBe(2048);
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(typeof rsaA[member as 'd']).toBe('string');
    expect(ecA).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256' });
    expect(edA).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' });
    expect(edA).not.toHaveProperty('key_ops');
    expect(edA).not.toHaveProperty('ext');
    const fresh = await generateSigningKey();
    expect(fresh).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    expect(fresh.kid).toMatch(/^[A-Za-z0-9_-]{16}$/);
    // Stored as a secret (a JSON string), then given to a key set.
    const set = SigningKeys.from(JSON.parse(JSON.stringify([fresh, ecA, edA])));
    for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
      const token = await set.sign(alg, claims(), 'JWT');
      await expect(jwtVerify(token, createLocalJWKSet(await set.jwks()), { currentDate: new Date(NOW) })).resolves.toBeTruthy();
    }
  });

  it('the jose snippet of its documentation makes a key a set accepts too', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid: '2025-06', alg: 'RS256', use: 'sig' };
    await expect(SigningKeys.from([JSON.parse(JSON.stringify(jwk))]).jwks()).resolves.toMatchObject({ keys: [{ kid: '2025-06' }] });
  });

  it('refuses none, HMAC and an empty kid', async () => {
    await expect(generateSigningKey('none' as SigningAlgorithm)).rejects.toThrow(TypeError);
    await expect(generateSigningKey('HS256' as SigningAlgorithm)).rejects.toThrow(/RS256, ES256 or EdDSA/);
    await expect(generateSigningKey('EdDSA', '')).rejects.toThrow(/kid/);
  });
});

describe('JwtAccessTokens on the key set', () => {
  const options = { algorithm: 'EdDSA' as const, issuer: ISSUER, audience: ISSUER };
  const access = { sub: 'u1', clientId: 'c1', scope: 'read', jti: 'j1', iat: NOW, exp: NOW + 600_000 };

  it('publishes the same JWKS bytes as before the key set: use, kty, crv, x, y, kid, alg', async () => {
    const [ed, ec] = [await joseKey('EdDSA', 'k1'), await joseKey('ES256', 'k2')];
    const jwt = new JwtAccessTokens({ ...options, keys: [ed, ec] });
    const before = `{"keys":[{"use":"sig","kty":"OKP","crv":"Ed25519","x":"${ed.x}","kid":"k1","alg":"EdDSA"},{"use":"sig","kty":"EC","crv":"P-256","x":"${ec.x}","y":"${ec.y}","kid":"k2","alg":"ES256"}]}`;
    expect(JSON.stringify(await jwt.jwks())).toBe(before);
  });

  it('a duplicate kid in jwt.keys is now a ConfigError when the server is built', async () => {
    await expect(setup({ accessTokenFormat: 'jwt', issuer: ISSUER, jwt: { keys: [edA, { ...edB, kid: 'ed-a' }] } })).rejects.toThrow(
      /option "jwt.keys.1": duplicate kid/,
    );
  });

  it('on a shared set, signs with its first EdDSA or ES256 key; an ID token of the set is no access token', async () => {
    const shared = SigningKeys.from([rsaA, ecA, edA]);
    const jwt = new JwtAccessTokens({ ...options, signingKeys: shared });
    const token = await jwt.sign(access);
    expect(JSON.parse(atob(token.split('.')[0]!))).toEqual({ alg: 'ES256', kid: 'ec-a', typ: 'at+jwt' });
    expect(await jwt.jti(token, NOW)).toBe('j1');
    const idToken = await shared.sign('RS256', { iss: ISSUER, aud: ISSUER, sub: 'u1', jti: 'j1', exp: NOW / 1000 + 60 }, 'JWT');
    expect(await jwt.jti(idToken, NOW)).toBeNull();
    expect(() => new JwtAccessTokens({ ...options, signingKeys: SigningKeys.from([rsaA]) })).toThrow(/EdDSA or ES256/);
  });
});
