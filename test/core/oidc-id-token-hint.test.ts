/**
 * `id_token_hint` (src/oidc/id-token-hint.ts; OpenID Connect Core §3.1.2.1, RP-Initiated
 * Logout 1.0 §2): only an ID token signed by one of our keys, with our issuer, is a hint; it may
 * be expired; anything else, garbage included, is refused with a reason and never throws.
 */
import fc from 'fast-check';
import { importJWK, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateSigningKey, type SigningJwk } from '../../src/index.js';
import { publicJwk } from '../../src/keys/jwk.js';
import { SigningKeys } from '../../src/keys/signing-keys.js';
import { checkIdTokenHint, MAX_ID_TOKEN_HINT_LENGTH } from '../../src/oidc/id-token-hint.js';
import { type IdTokenInput, issueIdToken } from '../../src/oidc/id-token.js';
import { JwtAccessTokens } from '../../src/tokens/jwt.js';
import { ISSUER } from '../fixtures.js';

const NOW = 1_750_000_000_000;
const HOUR = 3_600_000;
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const claims = (extra: Record<string, unknown> = {}) => ({
  iss: ISSUER,
  sub: 'u1',
  aud: 'c1',
  iat: NOW / 1000,
  exp: NOW / 1000 + 3600,
  ...extra,
});

let rsa: SigningJwk;
let ed: SigningJwk;
let keys: SigningKeys;
beforeAll(async () => {
  [rsa, ed] = await Promise.all([generateSigningKey('RS256', 'rsa-1'), generateSigningKey('EdDSA', 'ed-1')]);
  keys = SigningKeys.from([rsa, ed]);
});
const check = (hint: unknown, now = NOW) => checkIdTokenHint(keys, hint, { issuer: ISSUER, now });
const keyOf = (jwk: SigningJwk) => importJWK(jwk, jwk.alg);
const idToken = (extra: Partial<IdTokenInput> = {}) =>
  issueIdToken(keys, { issuer: ISSUER, subject: 'u1', clientId: 'c1', now: NOW, lifetime: 3600, authTime: NOW - 60_000, ...extra });

describe('a hint we issued', () => {
  it('answers its sub, audiences and auth_time (in ms), long after it expired', async () => {
    const hint = await idToken({ sid: 's1' });
    expect(await check(hint)).toEqual({ valid: true, sub: 'u1', aud: ['c1'], authTime: NOW - 60_000, sid: 's1' });
    // Core §3.1.2.1: the hint may have expired. A year later, it still names the user.
    expect(await check(hint, NOW + 365 * 24 * HOUR)).toMatchObject({ valid: true, sub: 'u1' });
  });

  it('with several audiences, signed by any of our keys, without kid, typ absent or JWT', async () => {
    expect(await check(await idToken({ alg: 'EdDSA', audiences: ['c1', 'c2'] }))).toMatchObject({ valid: true, aud: ['c1', 'c2'] });
    const plain = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256' }).sign(await keyOf(rsa));
    expect(await check(plain)).toEqual({ valid: true, sub: 'u1', aud: ['c1'] });
    const typed = await new SignJWT(claims())
      .setProtectedHeader({ alg: 'EdDSA', kid: 'ed-1', typ: 'application/JWT' })
      .sign(await keyOf(ed));
    expect(await check(typed)).toMatchObject({ valid: true });
  });

  it('still verifies after a rotation while its key is published, and not once the key is retired', async () => {
    const hint = await idToken();
    const next = await generateSigningKey('RS256', 'rsa-2');
    expect(await checkIdTokenHint(SigningKeys.from([next, rsa]), hint, { issuer: ISSUER, now: NOW + HOUR })).toMatchObject({ valid: true });
    expect(await checkIdTokenHint(SigningKeys.from([next]), hint, { issuer: ISSUER, now: NOW + HOUR })).toEqual({
      valid: false,
      reason: 'unknown_key',
    });
  });
});

describe('refused hints', () => {
  it('a foreign key, with our kid, another kid, or none', async () => {
    const foreign = await generateSigningKey('RS256', 'rsa-1');
    const key = await keyOf(foreign);
    expect(await check(await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' }).sign(key))).toEqual({
      valid: false,
      reason: 'signature',
    });
    expect(await check(await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: 'other' }).sign(key))).toEqual({
      valid: false,
      reason: 'unknown_key',
    });
    expect(await check(await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256' }).sign(key))).toEqual({
      valid: false,
      reason: 'signature',
    });
  });

  it('alg none and HS256 crafted by hand (HS256 keyed with our public key)', async () => {
    expect(await check(`${b64({ alg: 'none' })}.${b64(claims())}.`)).toEqual({ valid: false, reason: 'malformed' });
    expect(await check(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.e30`)).toEqual({ valid: false, reason: 'algorithm' });
    const secret = new TextEncoder().encode(JSON.stringify(publicJwk(rsa)));
    for (const header of [{ alg: 'HS256' }, { alg: 'HS256', kid: 'rsa-1' }])
      expect(await check(await new SignJWT(claims()).setProtectedHeader(header).sign(secret))).toEqual({
        valid: false,
        reason: 'algorithm',
      });
  });

  it('another issuer, another type (our own JWT access token), or claims that are not an ID token', async () => {
    expect(await check(await idToken({ issuer: 'https://other.example' }))).toEqual({ valid: false, reason: 'issuer' });
    const accessTokens = new JwtAccessTokens({ signingKeys: keys, algorithm: 'EdDSA', issuer: ISSUER, audience: 'c1' });
    const accessToken = await accessTokens.sign({ sub: 'u1', clientId: 'c1', scope: 'openid', jti: 'j', iat: NOW, exp: NOW + HOUR });
    expect(await check(accessToken)).toEqual({ valid: false, reason: 'type' });
    const sign = (payload: Record<string, unknown>) => keys.sign('EdDSA', payload, 'JWT');
    for (const bad of [
      claims({ sub: undefined }),
      claims({ sub: '' }),
      claims({ sub: 7 }),
      claims({ aud: [] }),
      claims({ aud: ['c1', 3] }),
      claims({ aud: undefined }),
      claims({ auth_time: 'yesterday' }),
      claims({ sid: {} }),
      claims({ nbf: NOW / 1000 + 600 }),
    ])
      expect(await check(await sign(bad))).toEqual({ valid: false, reason: 'claims' });
  });

  it('anything too long is refused unread; garbage of any kind never throws', async () => {
    const hint = await idToken({ claims: { pad: 'x'.repeat(MAX_ID_TOKEN_HINT_LENGTH) } });
    expect(await check(hint)).toEqual({ valid: false, reason: 'too_long' });
    for (const value of [undefined, null, 42, {}, [], '', 'a.b.c', '...', `${b64({ alg: 'RS256', kid: 'rsa-1' })}.!!.x`])
      expect((await check(value)).valid).toBe(false);
    const segment = fc.oneof(
      fc.base64String().map((s) => s.replace(/=/g, '')),
      fc.constantFrom(b64({ alg: 'RS256', kid: 'rsa-1' }), b64({ alg: 'EdDSA' }), b64(claims()), b64([]), b64(null)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc.tuple(segment, segment, segment).map((p) => p.join('.')),
        ),
        async (value) => {
          expect((await check(value)).valid).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});
