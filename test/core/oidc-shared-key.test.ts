/**
 * One key for JWT access tokens and ID tokens (README "Sign in with <platform>"): a key given in
 * both `jwt.keys` and `openid.signingKeys` is published once in the JWKS, with the other keys of
 * both lists, so a relying party and a resource server read one key set.
 */
import { describe, expect, it } from 'vitest';
import { AuthorizationServer, generateSigningKey, MemoryStorage } from '../../src/index.js';

describe('a key shared by JWT access tokens and ID tokens', () => {
  it('is published once, beside the keys only one of them has', async () => {
    const shared = await generateSigningKey('EdDSA', 'shared');
    const rs = await generateSigningKey('RS256', 'id-only');
    const es = await generateSigningKey('ES256', 'jwt-only');
    const server = new AuthorizationServer({
      storage: new MemoryStorage(),
      sessions: { current: () => null },
      issuer: 'http://127.0.0.1:8080',
      accessTokenFormat: 'jwt',
      jwt: { keys: [shared, es] },
      openid: { signingKeys: [rs, shared] },
    });
    const response = await server.jwks();
    expect(response.status).toBe(200);
    const kids = (JSON.parse(response.body) as { keys: { kid: string; d?: string }[] }).keys.map((k) => k.kid).sort();
    expect(kids).toEqual(['id-only', 'jwt-only', 'shared']);
    expect(response.body).not.toContain('"d"');
  });
});
