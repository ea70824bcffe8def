/**
 * The ID token (src/oidc/id-token.ts; OpenID Connect Core §2, §3.1.3.6): its claims and header,
 * `at_hash` against an independent computation, the protocol's claims winning over a host's,
 * the algorithm per client, and round trips checked as relying parties check them (jose against
 * the published JWKS, and oauth4webapi's own ID token validation).
 */
import { createHash } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, generateSigningKey, type SigningAlgorithm, type SigningJwk } from '../../src/index.js';
import { SigningKeys } from '../../src/keys/signing-keys.js';
import { atHash, type IdTokenInput, issueIdToken, PROTOCOL_CLAIMS } from '../../src/oidc/id-token.js';
import { ISSUER } from '../fixtures.js';

const NOW = 1_750_000_000_500;
const CLIENT = 'client-1';
const input = (extra: Partial<IdTokenInput> = {}): IdTokenInput => ({
  issuer: ISSUER,
  subject: 'a1b2c3d4',
  clientId: CLIENT,
  now: NOW,
  lifetime: 3600,
  authTime: NOW - 120_999,
  ...extra,
});
const decode = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

/** Core §3.1.3.6, computed here with node:crypto, independently of the code under test. */
function expectedAtHash(accessToken: string, hash: 'sha256' | 'sha512'): string {
  const digest = createHash(hash).update(Buffer.from(accessToken, 'ascii')).digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

let keys: SigningKeys;
let rsa: SigningJwk;
beforeAll(async () => {
  rsa = await generateSigningKey('RS256', 'rsa-1');
  keys = SigningKeys.from([rsa, await generateSigningKey('ES256', 'ec-1'), await generateSigningKey('EdDSA', 'ed-1')]);
});

describe('the ID token', () => {
  it('has iss, sub, aud, exp, iat and auth_time in seconds, header typ JWT, kid and RS256 by default', async () => {
    const token = await issueIdToken(keys, input());
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', kid: 'rsa-1', typ: 'JWT' });
    expect(decode(token)).toEqual({
      iss: ISSUER,
      sub: 'a1b2c3d4',
      aud: CLIENT,
      exp: 1_750_000_000 + 3600,
      iat: 1_750_000_000,
      auth_time: 1_749_999_879,
    });
  });

  it('carries the nonce unchanged, at_hash with an access token, acr, amr and sid when given', async () => {
    const nonce = 'n-0S6_WzA2Mj';
    const payload = decode(await issueIdToken(keys, input({ nonce, accessToken: 'doo_v1_abc', acr: '1', amr: ['pwd', 'otp'], sid: 's1' })));
    expect(payload).toMatchObject({ nonce, at_hash: expectedAtHash('doo_v1_abc', 'sha256'), acr: '1', amr: ['pwd', 'otp'], sid: 's1' });
    expect(payload).not.toHaveProperty('azp');
  });

  it('has azp only with audiences besides the client (Core §2), and the client first in aud', async () => {
    expect(decode(await issueIdToken(keys, input({ audiences: [CLIENT] })))).not.toHaveProperty('azp');
    expect(decode(await issueIdToken(keys, input({ audiences: ['https://api.example', CLIENT] })))).toMatchObject({
      aud: [CLIENT, 'https://api.example'],
      azp: CLIENT,
    });
  });

  it("adds the host's claims, but never lets them set a claim of the protocol", async () => {
    const hostile = Object.fromEntries([...PROTOCOL_CLAIMS].map((name) => [name, `host-${name}`]));
    const payload = decode(await issueIdToken(keys, input({ nonce: 'n', claims: { ...hostile, name: 'Ada', email_verified: true } })));
    expect(payload).toEqual({
      iss: ISSUER,
      sub: 'a1b2c3d4',
      aud: CLIENT,
      exp: 1_750_003_600,
      iat: 1_750_000_000,
      auth_time: 1_749_999_879,
      nonce: 'n',
      name: 'Ada',
      email_verified: true,
    });
  });

  it('a claim named __proto__ is only a claim: no prototype is touched', async () => {
    const claims = JSON.parse('{"__proto__": {"iss": "evil"}, "name": "Ada"}') as Record<string, unknown>;
    const payload = decode(await issueIdToken(keys, input({ claims })));
    expect(payload.iss).toBe(ISSUER);
    expect(payload.name).toBe('Ada');
    expect(({} as Record<string, unknown>).iss).toBeUndefined();
  });

  it("is signed with the client's algorithm; one the set has no key of is an error, not a token", async () => {
    for (const [alg, kid] of [
      ['ES256', 'ec-1'],
      ['EdDSA', 'ed-1'],
    ] as const)
      expect(decodeProtectedHeader(await issueIdToken(keys, input({ alg })))).toMatchObject({ alg, kid });
    const rsaOnly = SigningKeys.from([rsa]);
    await expect(issueIdToken(rsaOnly, input({ alg: 'EdDSA' }))).rejects.toBeInstanceOf(ConfigError);
  });
});

describe('at_hash (Core §3.1.3.6)', () => {
  const tokens = ['doo_v1_7N5hHn3QXKQWn0cQvnpwWyv2kCTLGH9qsUpUzDMuFJo', 'a', 'eyJhbGciOiJFZERTQSJ9.e30.sig', 'x'.repeat(4096)];

  it('is the left half of SHA-256 for RS256 and ES256, of SHA-512 for EdDSA (Ed25519), base64url', () => {
    for (const token of tokens) {
      expect(atHash(token, 'RS256')).toBe(expectedAtHash(token, 'sha256'));
      expect(atHash(token, 'ES256')).toBe(expectedAtHash(token, 'sha256'));
      expect(atHash(token, 'EdDSA')).toBe(expectedAtHash(token, 'sha512'));
    }
    expect(atHash(tokens[0]!, 'RS256')).toHaveLength(22);
    expect(atHash(tokens[0]!, 'EdDSA')).toHaveLength(43);
  });

  it('is in the signed token for each algorithm', async () => {
    for (const [alg, hash] of [
      ['RS256', 'sha256'],
      ['ES256', 'sha256'],
      ['EdDSA', 'sha512'],
    ] as const) {
      const payload = decode(await issueIdToken(keys, input({ alg, accessToken: tokens[0] })));
      expect(payload.at_hash).toBe(expectedAtHash(tokens[0]!, hash));
    }
  });
});

describe('as relying parties check it', () => {
  it('verifies with jose against the published JWKS, for RS256, ES256 and EdDSA', async () => {
    const jwks = createLocalJWKSet(await keys.jwks());
    for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
      const { payload, protectedHeader } = await jwtVerify(await issueIdToken(keys, input({ alg, nonce: 'n' })), jwks, {
        issuer: ISSUER,
        audience: CLIENT,
        typ: 'JWT',
        algorithms: [alg],
        currentDate: new Date(NOW + 1000),
        requiredClaims: ['sub', 'exp', 'iat', 'auth_time', 'nonce'],
      });
      expect(protectedHeader.alg).toBe(alg);
      expect(payload.sub).toBe('a1b2c3d4');
    }
  });

  it("passes oauth4webapi's ID token validation and signature check, for each algorithm", async () => {
    const jwksUri = `${ISSUER}/.well-known/jwks.json`;
    const published = JSON.stringify(await keys.jwks());
    for (const alg of ['RS256', 'ES256', 'EdDSA'] as SigningAlgorithm[]) {
      // oauth4webapi checks exp and iat against the real clock.
      const now = Date.now();
      const accessToken = `doo_v1_${alg}`;
      const idToken = await issueIdToken(keys, input({ alg, now, authTime: now - 5000, nonce: 'nonce-1', accessToken }));
      const as: oauth.AuthorizationServer = { issuer: ISSUER, jwks_uri: jwksUri, id_token_signing_alg_values_supported: [alg] };
      const client: oauth.Client = { client_id: CLIENT, id_token_signed_response_alg: alg };
      const response = Response.json({ access_token: accessToken, token_type: 'bearer', expires_in: 60, id_token: idToken });
      const result = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: 'nonce-1', requireIdToken: true });
      await oauth.validateApplicationLevelSignature(as, response, {
        [oauth.customFetch]: async (url: string) => {
          expect(url).toBe(jwksUri);
          return new Response(published, { headers: { 'content-type': 'application/json' } });
        },
      });
      expect(oauth.getValidatedIdTokenClaims(result)).toMatchObject({ sub: 'a1b2c3d4', aud: CLIENT, nonce: 'nonce-1' });
    }
  });
});
