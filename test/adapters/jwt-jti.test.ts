/**
 * With `accessTokenFormat: 'jwt'` (docs/reference.md#jwt-access-tokens), nothing readable from an
 * access token (its `jti`, any other claim) is by itself a credential. Resource servers log claims;
 * a bare `jti` must not authenticate, introspect as active, revoke, or refresh anything.
 */
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { ISSUER } from '../fixtures.js';
import { expectJsonError, FRAMEWORKS, useApp, type TestApp } from './app.js';

/** Every claim value of a JWT as a string, the `jti` first. */
function claimValues(jwt: string): string[] {
  const payload = decodeJwt(jwt) as Record<string, unknown>;
  const values = [String(payload.jti)];
  for (const value of Object.values(payload)) if (!values.includes(String(value))) values.push(String(value));
  return values;
}

describe.each(FRAMEWORKS)('%s: JWT access tokens: the jti and the other claims are no credentials', (framework) => {
  const app = useApp({ framework, server: { issuer: ISSUER, accessTokenFormat: 'jwt' } });

  const introspect = (t: TestApp, token: string) =>
    t.postForm('/v1/oauth/introspect', { token, client_id: t.client.clientId, client_secret: t.client.clientSecret });

  it('the bare jti (or any claim) as a bearer token → 401 invalid_token; the JWT itself works', async () => {
    const t = app();
    const { access_token } = await t.tokens();
    const jti = decodeJwt(access_token).jti!;
    expect(jti).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    for (const value of [...claimValues(access_token), `${jti}.${jti}.${jti}`]) {
      if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(value)) continue; // not a b64token: not a bearer token at all
      const reply = await t.api('GET', '/v2/account', value);
      expect(reply.status, value).toBe(401);
      expect(reply.headers.get('www-authenticate'), value).toContain('error="invalid_token"');
    }
    expect((await t.api('GET', '/v2/account', access_token)).status).toBe(200);
  });

  it('introspecting the jti (or any claim) → { active: false }; the JWT → active', async () => {
    const t = app();
    const { access_token } = await t.tokens();
    const jti = decodeJwt(access_token).jti!;
    for (const value of [...claimValues(access_token), `${jti}.${jti}.${jti}`]) {
      const reply = await introspect(t, value);
      expect(reply.status, value).toBe(200);
      expect(reply.json(), value).toEqual({ active: false });
    }
    expect((await introspect(t, access_token)).json()).toMatchObject({ active: true, client_id: t.client.clientId });
  });

  it('revoking the jti (or any claim) revokes nothing; revoking the JWT revokes it', async () => {
    const t = app();
    const { access_token, refresh_token } = await t.tokens();
    for (const value of claimValues(access_token)) {
      const reply = await t.postForm('/v1/oauth/revoke', { token: value });
      expect(reply.status, value).toBe(200);
      expect(reply.json()).toEqual({});
    }
    expect((await t.api('GET', '/v2/account', access_token)).status).toBe(200);
    expect((await introspect(t, refresh_token)).json()).toMatchObject({ active: true });

    expect((await t.postForm('/v1/oauth/revoke', { token: access_token })).status).toBe(200);
    expect((await t.api('GET', '/v2/account', access_token)).status).toBe(401);
    expect((await introspect(t, access_token)).json()).toEqual({ active: false });
  });

  it('the jti as a refresh token → invalid_grant, and the real refresh token still works', async () => {
    const t = app();
    const { access_token, refresh_token } = await t.tokens();
    const jti = decodeJwt(access_token).jti!;
    expectJsonError(await t.postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: jti }), 400, 'invalid_grant');
    const next = await t.postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token });
    expect(next.status, next.text).toBe(200);
    const fresh = next.json<{ access_token: string }>().access_token;
    expect((await t.api('GET', '/v2/account', fresh)).status).toBe(200);
    // The refreshed JWT's jti is no credential either.
    expect((await t.api('GET', '/v2/account', decodeJwt(fresh).jti!)).status).toBe(401);
  });

  it('an implicit-flow JWT: its jti is no credential either', async () => {
    const t = app();
    const url = await t.authorizeAndApprove({ response_type: 'token' });
    const access = new URLSearchParams(url.hash.slice(1)).get('access_token')!;
    expect((await t.api('GET', '/v2/account', access)).status).toBe(200);
    expect((await t.api('GET', '/v2/account', decodeJwt(access).jti!)).status).toBe(401);
    expect((await introspect(t, decodeJwt(access).jti!)).json()).toEqual({ active: false });
  });
});
