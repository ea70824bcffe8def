/**
 * OpenID Connect edge cases found by an adversarial review (docs/reference.md#openid-connect):
 * where the token of a userinfo request may be, empty parameters, a `kid` that two key lists
 * give to two different keys, and a pairwise client whose callback moves to another host.
 */
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { AuthorizationServer, ConfigError, generateSigningKey, MemoryStorage } from '../../src/index.js';
import { ADA, json, setup } from '../helpers.js';

const ISSUER = 'https://auth.example.com';
const oidc = (options: Record<string, unknown> = {}) =>
  setup({ issuer: ISSUER, openid: { claims: (a: { email: string }) => ({ email: a.email }) }, ...options });

describe('userinfo: the access token in one place only (RFC 6750 §2)', () => {
  it('a POST with the token in the header and in the body is 400 invalid_request, and answers no claims', async () => {
    const t = await oidc();
    const { access_token: token } = await t.tokens({ scope: 'openid email' });
    const other = (await t.tokens({ scope: 'openid' })).access_token;
    for (const body of [token, other]) {
      const res = await t.server.userinfo(t.post('/v1/oauth/userinfo', { access_token: body }, { authorization: `Bearer ${token}` }));
      expect(res.status).toBe(400);
      expect(json(res).error).toBe('invalid_request');
      expect(res.headers['www-authenticate']).toContain('error="invalid_request"');
      expect(res.body).not.toContain(ADA.email);
    }
    // Either place alone still works.
    expect(json(await t.server.userinfo(t.post('/v1/oauth/userinfo', { access_token: token }))).sub).toBe(ADA.uuid);
    const header = { method: 'POST', url: '/v1/oauth/userinfo', headers: { authorization: `Bearer ${token}` } };
    expect(json(await t.server.userinfo(header)).sub).toBe(ADA.uuid);
  });

  it('an empty access_token in the body is no token (RFC 6749 §3.1): the header token answers', async () => {
    const t = await oidc();
    const { access_token: token } = await t.tokens({ scope: 'openid email' });
    const res = await t.server.userinfo(t.post('/v1/oauth/userinfo', { access_token: '' }, { authorization: `Bearer ${token}` }));
    expect(res.status).toBe(200);
    expect(json(res)).toEqual({ sub: ADA.uuid, email: ADA.email });
    const none = await t.server.userinfo(t.post('/v1/oauth/userinfo', { access_token: '' }));
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="authgate"');
  });
});

describe('an empty id_token_hint is no hint (RFC 6749 §3.1)', () => {
  it('prompt=none with id_token_hint= answers as without it; a non-empty bad hint is still invalid_request', async () => {
    const t = await oidc();
    await t.getCode({ scope: 'openid' }); // a stored consent
    const silent = async (suffix: string) => {
      const d = await t.server.authorize(t.get(`${t.authorizeUrl({ scope: 'openid', prompt: 'none', state: 's' })}${suffix}`, t.ada));
      if (d.type !== 'redirect') throw new Error(`redirect expected: ${JSON.stringify(d)}`);
      return Object.fromEntries(new URL(d.location).searchParams);
    };
    expect((await silent('&id_token_hint=')).code).toBeTypeOf('string');
    expect(await silent('&id_token_hint=x')).toMatchObject({ error: 'invalid_request', state: 's' });
    expect(await silent('&id_token_hint=&id_token_hint=x')).toMatchObject({ error: 'invalid_request' });
  });
});

describe('a kid given to two different keys by jwt.keys and openid.signingKeys', () => {
  it('is a ConfigError: one JWKS cannot publish both, so one kind of token would not verify', async () => {
    const jwtKey = await generateSigningKey('ES256', 'same');
    const idKey = await generateSigningKey('RS256', 'same');
    const build = (jwtKeys: unknown[], idKeys: unknown[]) =>
      new AuthorizationServer({
        storage: new MemoryStorage(),
        sessions: { current: () => null },
        issuer: ISSUER,
        accessTokenFormat: 'jwt',
        jwt: { keys: jwtKeys as never },
        openid: { signingKeys: idKeys as never },
      });
    expect(() => build([jwtKey], [idKey])).toThrow(ConfigError);
    expect(() => build([jwtKey], [idKey])).toThrow(/jwt\.keys\.0.*"same"/);
    // The same key under the same kid in both lists is fine (published once).
    const es = await generateSigningKey('ES256', 'es');
    expect(() => build([es], [idKey, es])).not.toThrow();
    // Public members that differ only in order or private members still make one key.
    const { d: _d, ...publicEs } = es;
    expect(() => build([es], [idKey, { ...publicEs, d: es.d, use: 'sig' }])).not.toThrow();
  });

  it('with distinct kids, both kinds of token verify with the one published JWKS', async () => {
    const es = await generateSigningKey('ES256', 'at-1');
    const rs = await generateSigningKey('RS256', 'id-1');
    const t = await setup({ issuer: ISSUER, accessTokenFormat: 'jwt', jwt: { keys: [es] }, openid: { signingKeys: [rs] } });
    const body = json(await t.exchange(await t.getCode({ scope: 'read openid' })));
    const keys = createLocalJWKSet(json(await t.server.jwks({ method: 'GET' })) as never);
    const at = new Date(t.clock.now());
    expect(decodeProtectedHeader(body.access_token as string).kid).toBe('at-1');
    await jwtVerify(body.access_token as string, keys, { currentDate: at });
    await jwtVerify(body.id_token as string, keys, { currentDate: at });
  });
});

describe("a pairwise client's sector (Core §8.1) over time", () => {
  const SALT = 's'.repeat(32);

  it('moving its callback to another host is refused: every user would get another sub, and a refresh another sub than its sign-in (Core §12.2)', async () => {
    const t = await oidc({ openid: { pairwise: { salt: SALT } } });
    await t.server.updateClient(t.client.clientId, { openid: { subjectType: 'pairwise' } });
    const first = json(await t.exchange(await t.getCode({ scope: 'openid' })));
    const keys = createLocalJWKSet(json(await t.server.jwks({ method: 'GET' })) as never);
    const sub = async (idToken: unknown) =>
      (await jwtVerify(idToken as string, keys, { issuer: ISSUER, currentDate: new Date(t.clock.now()) })).payload.sub;
    const signedIn = await sub(first.id_token);
    await expect(t.server.updateClient(t.client.clientId, { redirectUri: 'https://moved.example/cb' })).rejects.toMatchObject({
      code: 'invalid_request',
      field: 'redirectUri',
    });
    expect((await t.server.getClient(t.client.clientId))?.redirectUri).toBe('https://client.example/cb');
    // A refresh later still names the user as the sign-in did, and so does userinfo.
    t.clock.advance(60_000);
    const refreshed = json(await t.refresh(first.refresh_token as string));
    expect(await sub(refreshed.id_token)).toBe(signedIn);
    const info = await t.server.userinfo({
      method: 'GET',
      url: '/v1/oauth/userinfo',
      headers: { authorization: `Bearer ${refreshed.access_token}` },
    });
    expect(json(info).sub).toBe(signedIn);
  });

  it('a move on the same host, or of a public client, is allowed as before', async () => {
    const t = await oidc({ openid: { pairwise: { salt: SALT } } });
    await t.server.updateClient(t.client.clientId, { openid: { subjectType: 'pairwise' } });
    const before = json(await t.exchange(await t.getCode({ scope: 'openid' })));
    const moved = await t.server.updateClient(t.client.clientId, { redirectUri: 'https://CLIENT.example/new-cb' });
    expect(moved.redirectUri).toBe('https://CLIENT.example/new-cb');
    const keys = createLocalJWKSet(json(await t.server.jwks({ method: 'GET' })) as never);
    const at = new Date(t.clock.now());
    const refreshed = json(await t.refresh(before.refresh_token as string));
    expect((await jwtVerify(refreshed.id_token as string, keys, { currentDate: at })).payload.sub).toBe(
      (await jwtVerify(before.id_token as string, keys, { currentDate: at })).payload.sub,
    );
    // The public client next to it moves freely: its sub is the account's, whatever the host.
    const other = await t.server.updateClient(t.other.clientId, { redirectUri: 'https://elsewhere.example/cb' });
    expect(other.redirectUri).toBe('https://elsewhere.example/cb');
  });
});
