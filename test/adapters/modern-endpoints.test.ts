/**
 * The endpoints of issue 7 over real HTTP through every adapter: authorization server metadata
 * (RFC 8414), token introspection (RFC 7662), dynamic client registration (RFC 7591) followed by
 * a PKCE flow for the new public client, and JWT access tokens (RFC 9068) with their JWKS,
 * accepted by `requireToken` and refused after revocation. The core's own tests
 * (test/modern) cover each rule; these check that every framework routes, reads and answers them
 * alike.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { ADA, FRAMEWORKS, expectJsonError, expectNoStoreJson, useApp, type TokenBody } from './app.js';

const ISSUER = 'https://auth.example';
const METADATA = '/.well-known/oauth-authorization-server';
const JWKS = '/.well-known/jwks.json';
const JSON_TYPE = 'application/json';

const pkcePair = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

describe.each(FRAMEWORKS)('%s: authorization server metadata (RFC 8414)', (framework) => {
  describe('with an issuer', () => {
    const app = useApp({ framework, server: { issuer: ISSUER } });

    it('GET /.well-known/oauth-authorization-server → 200 JSON, cacheable, exactly the core\'s document', async () => {
      const { get, request, server } = app();
      const reply = await get(METADATA);
      expect(reply.status, reply.text).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      expect(reply.headers.get('cache-control')).toBe('public, max-age=3600');
      const doc = reply.json();
      expect(doc).toEqual(server.metadataDocument());
      expect(doc).toMatchObject({
        issuer: ISSUER,
        authorization_endpoint: `${ISSUER}/v1/oauth/authorize`,
        token_endpoint: `${ISSUER}/v1/oauth/token`,
        revocation_endpoint: `${ISSUER}/v1/oauth/revoke`,
        introspection_endpoint: `${ISSUER}/v1/oauth/introspect`,
      });
      // The Host header does not move the issuer.
      expect((await request('GET', METADATA, { headers: { 'x-forwarded-host': 'evil.example' } })).json().issuer).toBe(ISSUER);
      // HEAD: the same headers, no body.
      const head = await request('HEAD', METADATA);
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toMatch(/^application\/json/);
      expect(head.text).toBe('');
    });

    it('every endpoint it advertises is served by this adapter at that path', async () => {
      const { get, request } = app();
      const doc = (await get(METADATA)).json<Record<string, unknown>>();
      const endpoints = Object.entries(doc).filter(([key]) => key.endsWith('_endpoint'));
      expect(endpoints.map(([key]) => key).sort()).toEqual(['authorization_endpoint', 'introspection_endpoint', 'revocation_endpoint', 'token_endpoint']);
      for (const [key, url] of endpoints) {
        const path = new URL(url as string).pathname;
        const reply = await request(key === 'authorization_endpoint' ? 'GET' : 'POST', path);
        expect(reply.status, `${key} ${path}`).not.toBe(404);
        expect(reply.status, `${key} ${path}`).toBeLessThan(500);
      }
    });
  });

  describe('with the routes moved by basePath', () => {
    const app = useApp({ framework, router: { basePath: '/oauth' }, server: { issuer: ISSUER } });

    // Pinned: the core builds the document from its fixed PATHS, and the adapters' basePath (or a
    // Fastify prefix, or an Express mount path) never reaches it, so the metadata advertises
    // /v1/oauth/... where this app answers 404. Needs the core to know where the routes are.
    it('the advertised endpoints are where the routes are', async () => {
      const { get, request } = app();
      expect((await request('POST', '/oauth/token')).status).toBe(400);
      const doc = (await get(METADATA)).json<Record<string, string>>();
      expect(new URL(doc.token_endpoint!).pathname).toBe('/oauth/token');
    });
  });

  describe('without an issuer', () => {
    const app = useApp({ framework });

    it('404 with a JSON error (metadata needs an issuer); no JWKS for opaque tokens either', async () => {
      const { get } = app();
      expectJsonError(await get(METADATA), 404, 'not_found');
      expectJsonError(await get(JWKS), 404, 'not_found');
    });
  });
});

describe.each(FRAMEWORKS)('%s: token introspection (RFC 7662)', (framework) => {
  const app = useApp({ framework, server: { issuer: ISSUER } });

  it('an active access token, client authenticated by form parameters or HTTP Basic', async () => {
    const { tokens, postForm, client, clock } = app();
    const { access_token, refresh_token } = await tokens({ scope: 'read write' });
    const now = Math.floor(clock.now() / 1000);

    const reply = await postForm('/v1/oauth/introspect', { token: access_token, client_id: client.clientId, client_secret: client.clientSecret });
    expect(reply.status, reply.text).toBe(200);
    expectNoStoreJson(reply);
    expect(reply.json()).toEqual({
      active: true, scope: 'read write', client_id: client.clientId, username: ADA.email, sub: ADA.uuid,
      token_type: 'bearer', iat: now, exp: now + 2_592_000, iss: ISSUER,
    });

    const basic = `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64')}`;
    const viaBasic = await postForm('/v1/oauth/introspect', { token: refresh_token, token_type_hint: 'refresh_token' }, { headers: { authorization: basic } });
    expect(viaBasic.status, viaBasic.text).toBe(200);
    expect(viaBasic.json()).toMatchObject({ active: true, client_id: client.clientId, sub: ADA.uuid });
  });

  it('inactive: unknown, revoked, another client\'s token → 200 { active: false }', async () => {
    const { tokens, postForm, client, other } = app();
    const revoked = await tokens();
    expect((await postForm('/v1/oauth/revoke', { token: revoked.access_token })).status).toBe(200);
    const live = await tokens();
    const ask = (token: string, as = client) => postForm('/v1/oauth/introspect', { token, client_id: as.clientId, client_secret: as.clientSecret });
    for (const token of ['unknown', revoked.access_token, revoked.refresh_token]) {
      const reply = await ask(token);
      expect(reply.status).toBe(200);
      expect(reply.json()).toEqual({ active: false });
    }
    expect((await ask(live.access_token, other)).json()).toEqual({ active: false });
    expect((await ask(live.access_token)).json().active).toBe(true);
  });

  it('401 invalid_client without client authentication or with a wrong secret (Basic: with a Basic challenge); GET is 405', async () => {
    const { tokens, postForm, get, client } = app();
    const { access_token } = await tokens();
    expectJsonError(await postForm('/v1/oauth/introspect', { token: access_token }), 401, 'invalid_client');
    expectJsonError(await postForm('/v1/oauth/introspect', { token: access_token, client_id: client.clientId, client_secret: 'wrong' }), 401, 'invalid_client');
    const wrongBasic = await postForm('/v1/oauth/introspect', { token: access_token }, { headers: { authorization: `Basic ${Buffer.from(`${client.clientId}:wrong`).toString('base64')}` } });
    expectJsonError(wrongBasic, 401, 'invalid_client');
    expect(wrongBasic.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    const viaGet = await get(`/v1/oauth/introspect?${new URLSearchParams({ token: access_token, client_id: client.clientId, client_secret: client.clientSecret })}`);
    expectJsonError(viaGet, 405, 'invalid_request');
    expect(viaGet.headers.get('allow')).toBe('POST');
  });
});

describe.each(FRAMEWORKS)('%s: dynamic client registration (RFC 7591)', (framework) => {
  const register = (app: ReturnType<ReturnType<typeof useApp>>, body: unknown, type = JSON_TYPE) =>
    app.request('POST', '/v1/oauth/register', { headers: { 'content-type': type }, body: typeof body === 'string' ? body : JSON.stringify(body) });

  describe('off (the default)', () => {
    const app = useApp({ framework, server: { issuer: ISSUER } });

    it('POST /v1/oauth/register → 404 JSON, and the metadata advertises no registration_endpoint', async () => {
      expectJsonError(await register(app(), { redirect_uris: ['http://127.0.0.1/cb'] }), 404, 'not_found');
      expect((await app().get(METADATA)).json()).not.toHaveProperty('registration_endpoint');
    });
  });

  describe('on', () => {
    const app = useApp({ framework, server: { issuer: ISSUER, allowDynamicRegistration: true } });

    it('201 JSON for a public client; then a PKCE code flow for it works end to end (loopback callback on any port)', async () => {
      const { authorizeAndApprove, postForm, api, get } = app();
      expect((await get(METADATA)).json().registration_endpoint).toBe(`${ISSUER}/v1/oauth/register`);

      const reply = await register(app(), { client_name: 'My CLI', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' });
      expect(reply.status, reply.text).toBe(201);
      expectNoStoreJson(reply);
      const registered = reply.json<{ client_id: string }>();
      expect(registered).toMatchObject({ client_name: 'My CLI', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' });
      expect(registered).not.toHaveProperty('client_secret');

      const { verifier, challenge } = pkcePair();
      const redirectUri = 'http://127.0.0.1:4567/callback';
      const callback = await authorizeAndApprove({ client_id: registered.client_id, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', scope: 'read' });
      expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri);
      expect(callback.searchParams.get('iss')).toBe(ISSUER);
      const code = callback.searchParams.get('code')!;

      // No verifier: refused, and the code is not used up.
      expectJsonError(await postForm('/v1/oauth/token', { grant_type: 'authorization_code', code, client_id: registered.client_id, redirect_uri: redirectUri }), 400, 'invalid_grant');
      const exchanged = await postForm('/v1/oauth/token', { grant_type: 'authorization_code', code, client_id: registered.client_id, redirect_uri: redirectUri, code_verifier: verifier });
      expect(exchanged.status, exchanged.text).toBe(200);
      const tokens = exchanged.json<TokenBody>();
      expect(tokens.scope).toBe('read');
      const account = await api('GET', '/v2/account', tokens.access_token);
      expect(account.status).toBe(200);
      expect(account.json<{ oauth: { clientId: string } }>().oauth.clientId).toBe(registered.client_id);
    });

    it('the body reaches the core raw whatever its Content-Type: JSON under another type, or broken JSON, is invalid_client_metadata', async () => {
      const body = { redirect_uris: ['http://127.0.0.1/cb'] };
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data']) {
        expectJsonError(await register(app(), body, type), 400, 'invalid_client_metadata');
      }
      expectJsonError(await register(app(), '{"redirect_uris":', JSON_TYPE), 400, 'invalid_client_metadata');
      expectJsonError(await register(app(), { redirect_uris: ['javascript:alert(1)'] }), 400, 'invalid_redirect_uri');
      expect((await register(app(), body, 'Application/JSON; charset=utf-8')).status).toBe(201);
    });

    it('a body over the limit → 413 JSON', async () => {
      const reply = await register(app(), { client_name: 'x'.repeat(70 * 1024), redirect_uris: ['http://127.0.0.1/cb'] });
      expectJsonError(reply, 413, 'invalid_request');
    });
  });
});

describe.each(FRAMEWORKS)('%s: JWT access tokens (RFC 9068) and the JWKS', (framework) => {
  const app = useApp({ framework, server: { issuer: ISSUER, accessTokenFormat: 'jwt' } });

  it('the JWKS is served and advertised; the access token verifies with it; requireToken accepts it until it is revoked', async () => {
    const { get, request, tokens, api, postForm, client, clock } = app();
    const reply = await get(JWKS);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.headers.get('cache-control')).toBe('public, max-age=300');
    const jwks = reply.json<{ keys: JWK[] }>();
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).not.toHaveProperty('d');
    expect((await request('HEAD', JWKS)).status).toBe(200);
    expect((await get(METADATA)).json().jwks_uri).toBe(`${ISSUER}${JWKS}`);

    const { access_token, refresh_token } = await tokens({ scope: 'read write' });
    const { payload, protectedHeader } = await jwtVerify(access_token, createLocalJWKSet(jwks), { currentDate: new Date(clock.now()) });
    expect(protectedHeader).toMatchObject({ typ: 'at+jwt', kid: jwks.keys[0]!.kid });
    expect(payload).toMatchObject({ iss: ISSUER, aud: ISSUER, sub: ADA.uuid, client_id: client.clientId, scope: 'read write' });

    const account = await api('GET', '/v2/account', access_token);
    expect(account.status, account.text).toBe(200);
    expect(account.json<{ oauth: { account: { uuid: string }; scope: string[] } }>().oauth).toMatchObject({ account: { uuid: ADA.uuid }, scope: ['read', 'write'] });
    expect((await api('POST', '/v2/things', access_token)).status).toBe(201);

    expect((await postForm('/v1/oauth/revoke', { token: access_token })).status).toBe(200);
    // The signature still verifies; the server refuses the token all the same.
    await jwtVerify(access_token, createLocalJWKSet(jwks), { currentDate: new Date(clock.now()) });
    const refused = await api('GET', '/v2/account', access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // Revoking one token of the pair revoked both.
    expectJsonError(await postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token }), 400, 'invalid_grant');
  });

  it('a tampered JWT (scope widened, same signature) is invalid_token', async () => {
    const { tokens, api } = app();
    const { access_token } = await tokens({ scope: 'read' });
    const [h, p, s] = access_token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, scope: 'read write' })).toString('base64url')}.${s}`;
    const reply = await api('POST', '/v2/things', forged);
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});
