/**
 * Opaque token prefixes, JWT access tokens (RFC 9068), the JWKS and key rotation in the core
 * (docs/reference.md#jwt-access-tokens).
 */
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../src/index.js';
import { ISSUER } from '../fixtures.js';
import { json, setup } from '../helpers.js';

async function signingKey(kid: string, alg: 'EdDSA' | 'ES256' = 'EdDSA'): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg };
}

describe('opaque token format', () => {
  it('prefixes per kind, then 43 base64url characters', async () => {
    const t = await setup({ tokenPrefixes: { accessToken: 'doo_v1_', refreshToken: 'dor_v1_', code: 'doc_v1_' } });
    const code = await t.getCode();
    expect(code).toMatch(/^doc_v1_[A-Za-z0-9_-]{43}$/);
    const tokens = json(await t.exchange(code));
    expect(tokens.access_token).toMatch(/^doo_v1_[A-Za-z0-9_-]{43}$/);
    expect(tokens.refresh_token).toMatch(/^dor_v1_[A-Za-z0-9_-]{43}$/);
    expect((await t.api('GET', tokens.access_token as string)).ok).toBe(true);
    const implicit = new URLSearchParams((await t.authorizeAndApprove({ response_type: 'token' })).hash.slice(1)).get('access_token');
    expect(implicit).toMatch(/^doo_v1_/);
  });

  it('a bad prefix is a ConfigError', async () => {
    await expect(setup({ tokenPrefixes: { accessToken: 'bad prefix!' } })).rejects.toThrow(/tokenPrefixes.accessToken/);
  });
});

describe('JWT access tokens (RFC 9068)', () => {
  it('needs an issuer', async () => {
    await expect(setup({ accessTokenFormat: 'jwt' })).rejects.toThrow(/issuer/);
  });

  it('issues signed at+jwt tokens with iss, aud, sub, client_id, scope, jti, iat and exp, verifiable with the JWKS', async () => {
    const t = await setup({ accessTokenFormat: 'jwt', issuer: ISSUER });
    const tokens = await t.tokens({ scope: 'read write' });
    const jwks = JSON.parse((await t.server.jwks()).body) as { keys: JWK[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).not.toHaveProperty('d');
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, createLocalJWKSet(jwks), {
      currentDate: new Date(t.clock.now()),
    });
    expect(protectedHeader).toMatchObject({ typ: 'at+jwt', alg: 'EdDSA', kid: jwks.keys[0]!.kid });
    expect(payload).toMatchObject({ iss: ISSUER, aud: ISSUER, sub: tokens.info.uuid, client_id: t.client.clientId, scope: 'read write' });
    expect(payload.exp! - payload.iat!).toBe(2_592_000);
    expect(typeof payload.jti).toBe('string');
    expect((await t.api('POST', tokens.access_token)).ok).toBe(true);
  });

  it('a revoked JWT is refused like an opaque token, although its signature is still valid', async () => {
    const t = await setup({ accessTokenFormat: 'jwt', issuer: ISSUER });
    const tokens = await t.tokens();
    expect((await t.server.revoke(t.post('/v1/oauth/revoke', { token: tokens.access_token }))).status).toBe(200);
    const result = await t.api('GET', tokens.access_token);
    expect(!result.ok && result.response.status).toBe(401);
  });

  it('the old JWT of a refreshed pair is invalidated; implicit-flow tokens are JWTs too', async () => {
    const t = await setup({ accessTokenFormat: 'jwt', issuer: ISSUER });
    const tokens = await t.tokens();
    const next = json(await t.refresh(tokens.refresh_token));
    expect((await t.api('GET', tokens.access_token)).ok).toBe(false);
    expect((await t.api('GET', next.access_token as string)).ok).toBe(true);
    const implicit = new URLSearchParams((await t.authorizeAndApprove({ response_type: 'token' })).hash.slice(1)).get('access_token')!;
    expect(implicit.split('.')).toHaveLength(3);
    expect((await t.api('GET', implicit)).ok).toBe(true);
  });

  it('a JWT signed by someone else, or tampered with, is invalid_token', async () => {
    const t = await setup({ accessTokenFormat: 'jwt', issuer: ISSUER });
    const tokens = await t.tokens();
    const [h, p, s] = tokens.access_token.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), scope: 'read write' })).toString('base64url')}.${s}`;
    expect((await t.api('POST', forged)).ok).toBe(false);
    const other = await setup({ accessTokenFormat: 'jwt', issuer: ISSUER });
    const foreign = (await other.tokens()).access_token;
    expect((await t.api('GET', foreign)).ok).toBe(false);
  });

  it('expires with the fake clock like opaque tokens', async () => {
    const t = await setup({ accessTokenFormat: 'jwt', issuer: ISSUER });
    const tokens = await t.tokens();
    t.clock.advance(2_592_000_000 - 1000);
    expect((await t.api('GET', tokens.access_token)).ok).toBe(true);
    t.clock.advance(1000);
    expect((await t.api('GET', tokens.access_token)).ok).toBe(false);
  });

  it('key rotation: new tokens use the new key, old tokens verify until the old key is retired', async () => {
    const storage = new MemoryStorage();
    const k1 = await signingKey('k1');
    const k2 = await signingKey('k2', 'ES256');
    const before = await setup({ storage, accessTokenFormat: 'jwt', issuer: ISSUER, jwt: { keys: [k1] } });
    const old = await before.tokens();
    const rotated = await setup({
      storage,
      clock: before.clock,
      sessions: before.sessions,
      accessTokenFormat: 'jwt',
      issuer: ISSUER,
      jwt: { keys: [k2, k1] },
    });
    const jwks = JSON.parse((await rotated.server.jwks()).body) as { keys: JWK[] };
    expect(jwks.keys.map((k) => k.kid)).toEqual(['k2', 'k1']);
    expect((await rotated.api('GET', old.access_token)).ok).toBe(true);
    const fresh = json(await rotated.exchange(await rotated.getCode()));
    const { protectedHeader } = await jwtVerify(fresh.access_token as string, createLocalJWKSet(jwks), {
      currentDate: new Date(rotated.clock.now()),
    });
    expect(protectedHeader).toMatchObject({ kid: 'k2', alg: 'ES256' });
    const retired = await setup({
      storage,
      clock: before.clock,
      sessions: before.sessions,
      accessTokenFormat: 'jwt',
      issuer: ISSUER,
      jwt: { keys: [k2] },
    });
    expect((await retired.api('GET', old.access_token)).ok).toBe(false);
    expect((await retired.api('GET', fresh.access_token as string)).ok).toBe(true);
  });

  it('a key without kid or private part is a ConfigError', async () => {
    const k = await signingKey('k');
    const { d: _d, ...publicOnly } = k;
    await expect(setup({ accessTokenFormat: 'jwt', issuer: ISSUER, jwt: { keys: [publicOnly] } })).rejects.toThrow(/jwt.keys/);
  });

  it('opaque servers publish no JWKS (404)', async () => {
    const t = await setup();
    expect((await t.server.jwks()).status).toBe(404);
  });
});
