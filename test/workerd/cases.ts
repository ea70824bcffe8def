/**
 * The Hono adapter's HTTP conformance cases, written against test/workerd/worker.ts over real
 * HTTP only (no access to the server object), so they run unchanged wherever the worker runs:
 * code flow with the consent page and its decision POST, sign-in redirect and resume, deny,
 * prompt=none, token exchange (form and SPEC query), refresh and reuse detection, revocation,
 * requireToken for read and write, the error shapes of every endpoint (JSON errors, error pages,
 * 405, 413), metadata, introspection, dynamic registration with PKCE, and JWT access tokens with
 * the JWKS. They mirror test/adapters, which runs the same behaviour in Express, Fastify and Hono
 * on Node with more cases.
 *
 * After each case: no reply was 5xx or leaked a stack trace, and the core reported no error.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectErrorPage, expectJsonError, expectNoStoreJson, FORM, formValue, setCookieValue, type Reply, type TokenBody } from '../adapters/app.js';
import type { VerifiedToken } from '../../src/index.js';
import type { Running } from './runtimes.js';
import { ACCOUNTS, CALLBACK, LOGIN_URL } from './fixtures.js';
import type { WorldInfo, WorldOptions } from './worker.js';

const ADA = ACCOUNTS.ada;
const BOB = ACCOUNTS.bob;
const ACCESS_TOKEN_SECONDS = 2_592_000;
const ISSUER = 'https://auth.example';
const STACK = /\n\s+at\s|\bat\s\S+\s\(|node_modules|\.ts:\d+:\d+|\.js:\d+:\d+/;

type Who = keyof typeof ACCOUNTS;
interface Options {
  headers?: Record<string, string>;
  body?: string;
  /** The signed-in account (the worker's fake sign-in reads `x-test-account`). */
  as?: Who;
  cookie?: string;
}

const target = (url: URL) => `${url.origin}${url.pathname}`;
const bearerError = (reply: Reply) => /error="([^"]+)"/.exec(reply.headers.get('www-authenticate') ?? '')?.[1];

/**
 * Register the cases for one runtime. `start` launches the worker and is called once; every case
 * starts from a fresh server, storage and clock (`POST /__test/reset`).
 */
export function describeWorkerCases(runtime: string, start: () => Promise<Running>, userAgent: (value: string | null) => void): void {
  describe(`${runtime}: the Hono adapter's HTTP cases`, () => {
    let running: Running | undefined;
    let world: WorldInfo;
    const replies: { method: string; path: string; reply: Reply }[] = [];

    beforeAll(async () => {
      running = await start();
    });
    afterAll(async () => {
      await running?.stop();
    });

    /**
     * The browser-binding cookie, kept as the one simulated browser keeps it: set by the
     * authorization route, sent back to the routes under its Path (`/v1/oauth/authorize`).
     */
    let binding: string | undefined;

    async function raw(method: string, path: string, options: Options = {}): Promise<Reply> {
      const headers: Record<string, string> = { ...options.headers };
      if (options.as) headers['x-test-account'] = options.as;
      if (options.cookie !== undefined) headers['cookie'] = options.cookie;
      if (binding && /^\/v1\/oauth\/authorize(\/|\?|$)/.test(path)) {
        headers['cookie'] = headers['cookie'] ? `${headers['cookie']}; ${binding}` : binding;
      }
      const res = await fetch(running!.base + path, { method, headers, redirect: 'manual', ...(options.body !== undefined && { body: options.body }) });
      binding = res.headers.getSetCookie().find((line) => line.startsWith('authgate_browser='))?.split(';')[0] ?? binding;
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, location: res.headers.get('location'), json: <T>() => JSON.parse(text) as T };
    }
    async function request(method: string, path: string, options: Options = {}): Promise<Reply> {
      const reply = await raw(method, path, options);
      replies.push({ method, path, reply });
      return reply;
    }
    async function reset(options: WorldOptions = {}): Promise<WorldInfo> {
      const reply = await raw('POST', '/__test/reset', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(options) });
      expect(reply.status, `${reply.text}\n${running!.logs()}`).toBe(200);
      world = reply.json<WorldInfo>();
      return world;
    }
    const advance = async (ms: number) => expect((await raw('POST', '/__test/clock', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance: ms }) })).status).toBe(200);

    beforeEach(async () => {
      replies.length = 0;
      binding = undefined;
      await reset();
    });
    afterEach(async () => {
      expect(replies.filter((r) => r.reply.status >= 500).map((r) => `${r.method} ${r.path} → ${r.reply.status} ${r.reply.text.slice(0, 200)}`), running!.logs()).toEqual([]);
      expect(replies.filter((r) => STACK.test(r.reply.text)).map((r) => `${r.method} ${r.path}: ${r.reply.text.slice(0, 200)}`)).toEqual([]);
      expect((await raw('GET', '/__test/errors')).json()).toEqual([]);
    });

    const get = (path: string, as?: Who) => request('GET', path, as ? { as } : {});
    const postForm = (path: string, form: Record<string, string> | string, options: Omit<Options, 'body'> = {}) =>
      request('POST', path, { ...options, headers: { 'content-type': FORM, ...options.headers }, body: typeof form === 'string' ? form : new URLSearchParams(form).toString() });
    const authorizeUrl = (params: Record<string, string> = {}) =>
      `/v1/oauth/authorize?${new URLSearchParams({ client_id: world.client.clientId, redirect_uri: CALLBACK, response_type: 'code', state: 'st-123', ...params })}`;

    async function readConsent(page: Reply) {
      expect(page.status, page.text).toBe(200);
      const interaction = formValue(page.text, 'interaction');
      const csrf = formValue(page.text, 'csrf');
      expect(interaction).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(setCookieValue(page.headers, 'authgate_csrf')?.value).toBe(csrf);
      return { page, interaction: interaction!, csrf: csrf! };
    }
    type Consent = Awaited<ReturnType<typeof readConsent>>;
    const openConsent = async (params: Record<string, string> = {}, as: Who = 'ada') => readConsent(await get(authorizeUrl(params), as));
    const decide = (consent: Consent, decision: 'approve' | 'deny', as: Who = 'ada') =>
      postForm('/v1/oauth/authorize/decision', { interaction: consent.interaction, csrf: consent.csrf, decision }, { as, cookie: `authgate_csrf=${consent.csrf}` });
    async function authorizeAndApprove(params: Record<string, string> = {}, as: Who = 'ada'): Promise<URL> {
      const reply = await decide(await openConsent(params, as), 'approve', as);
      expect(reply.status, reply.text).toBe(303);
      return new URL(reply.location!);
    }
    const getCode = async (params: Record<string, string> = {}) => (await authorizeAndApprove(params)).searchParams.get('code')!;
    const codeParams = (code: string, extra: Record<string, string> = {}) => ({
      grant_type: 'authorization_code', code, client_id: world.client.clientId, client_secret: world.client.clientSecret, redirect_uri: CALLBACK, ...extra,
    });
    const exchange = (code: string, extra: Record<string, string> = {}) => postForm('/v1/oauth/token', codeParams(code, extra));
    async function tokens(params: Record<string, string> = {}): Promise<TokenBody> {
      const reply = await exchange(await getCode(params));
      expect(reply.status, reply.text).toBe(200);
      return reply.json<TokenBody>();
    }
    const api = (method: string, path: string, token?: string) => request(method, path, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });

    it('runs in the runtime it claims to', async () => {
      userAgent((await raw('GET', '/__test/runtime')).json<{ userAgent: string | null }>().userAgent);
    });

    describe('authorization code flow', () => {
      it('consent page (anti-framing, CSRF cookie) → approve → 303 with code and state → token exchange → resource API', async () => {
        const page = await get(authorizeUrl({ scope: 'read write', state: 'xyz' }), 'ada');
        const consent = await readConsent(page);
        expect(page.headers.get('content-type')).toMatch(/^text\/html/);
        expect(page.headers.get('x-frame-options')).toBe('DENY');
        expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
        expect(page.headers.get('cache-control')).toBe('no-store');
        expect(setCookieValue(page.headers, 'authgate_csrf')?.attributes).toMatch(/HttpOnly/i);
        expect(page.text).toContain('Example App');
        expect(page.text).toContain(ADA.name);
        expect(page.text).toContain('<form method="post" action="/v1/oauth/authorize/decision">');

        const decided = await decide(consent, 'approve');
        expect(decided.status).toBe(303);
        const callback = new URL(decided.location!);
        expect(target(callback)).toBe(CALLBACK);
        expect(callback.searchParams.get('state')).toBe('xyz');
        const code = callback.searchParams.get('code');
        expect(code).toMatch(/^[A-Za-z0-9_-]{43,}$/);

        const reply = await exchange(code!);
        expect(reply.status, reply.text).toBe(200);
        expectNoStoreJson(reply);
        const body = reply.json<TokenBody>();
        expect(body).toMatchObject({ token_type: 'bearer', expires_in: ACCESS_TOKEN_SECONDS, scope: 'read write', info: { name: ADA.name, email: ADA.email, uuid: ADA.uuid } });
        expect(body.access_token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
        expect(body.refresh_token).toMatch(/^[A-Za-z0-9_-]{43,}$/);

        const account = await api('GET', '/v2/account', body.access_token);
        expect(account.status, account.text).toBe(200);
        expect(account.json<{ oauth: VerifiedToken }>().oauth).toEqual({
          clientId: world.client.clientId, account: ADA, scope: ['read', 'write'], expiresAt: world.now + ACCESS_TOKEN_SECONDS * 1000,
        });
      });

      it('the SPEC 4.2 exchange: parameters in the query string of a POST with no body', async () => {
        const code = await getCode({ scope: 'read' });
        const reply = await request('POST', `/v1/oauth/token?${new URLSearchParams(codeParams(code))}`);
        expect(reply.status, reply.text).toBe(200);
        expect(reply.json<TokenBody>().scope).toBe('read');
      });

      it('not signed in → 302 to the login URL with an interaction; after sign-in, resume shows the consent page', async () => {
        const first = await get(authorizeUrl({ state: 'login-state' }));
        expect(first.status).toBe(302);
        const login = new URL(first.location!, 'http://h.invalid');
        expect(login.pathname).toBe(LOGIN_URL);
        const interaction = login.searchParams.get('interaction')!;
        expect(interaction).toMatch(/^[A-Za-z0-9_-]{43}$/);
        const consent = await readConsent(await get(`/v1/oauth/authorize/resume?interaction=${encodeURIComponent(interaction)}`, 'ada'));
        const decided = await decide(consent, 'approve');
        expect(new URL(decided.location!).searchParams.get('state')).toBe('login-state');
        expectErrorPage(await get(`/v1/oauth/authorize/resume?interaction=${encodeURIComponent(interaction)}`, 'ada'), 'invalid_request');
      });

      it('deny → 303 with error=access_denied and state, no code; a decided form cannot be used again', async () => {
        const consent = await openConsent({ state: 'deny-state' });
        const reply = await decide(consent, 'deny');
        expect(reply.status).toBe(303);
        const callback = new URL(reply.location!);
        expect(callback.searchParams.get('error')).toBe('access_denied');
        expect(callback.searchParams.get('state')).toBe('deny-state');
        expect(callback.searchParams.has('code')).toBe(false);
        expectErrorPage(await decide(consent, 'approve'), 'invalid_request');
      });

      it('the decision is refused without the CSRF cookie, and from another signed-in user', async () => {
        const consent = await openConsent();
        const noCookie = await postForm('/v1/oauth/authorize/decision', { interaction: consent.interaction, csrf: consent.csrf, decision: 'approve' }, { as: 'ada' });
        expect(noCookie.status).toBe(403);
        expect(noCookie.location).toBeNull();
        const otherUser = await decide(consent, 'approve', 'bob');
        expect(otherUser.status).toBeGreaterThanOrEqual(400);
        expect(otherUser.location).toBeNull();
        expect((await decide(consent, 'approve', 'ada')).status).toBe(303);
      });

      it('implicit flow: the token in the fragment', async () => {
        const callback = await authorizeAndApprove({ response_type: 'token', state: 'imp' });
        const fragment = new URLSearchParams(callback.hash.slice(1));
        expect(callback.search).toBe('');
        expect(fragment.get('token_type')).toBe('bearer');
        expect(fragment.get('state')).toBe('imp');
        expect((await api('GET', '/v2/account', fragment.get('access_token')!)).status).toBe(200);
      });

      it('prompt=none: login_required when signed out, consent_required before any approval, a code after one', async () => {
        expect(new URL((await get(authorizeUrl({ prompt: 'none' }))).location!).searchParams.get('error')).toBe('login_required');
        expect(new URL((await get(authorizeUrl({ prompt: 'none' }), 'bob')).location!).searchParams.get('error')).toBe('consent_required');
        await authorizeAndApprove({}, 'ada');
        const silent = await get(authorizeUrl({ prompt: 'none', state: 'pn' }), 'ada');
        expect(silent.status).toBe(302);
        const callback = new URL(silent.location!);
        expect(callback.searchParams.get('state')).toBe('pn');
        expect((await exchange(callback.searchParams.get('code')!)).json<TokenBody>().info.uuid).toBe(ADA.uuid);
      });
    });

    describe('refresh and revocation', () => {
      it('refresh rotates the pair; the old access token stops working; reusing the old refresh token revokes the family', async () => {
        const first = await tokens({ scope: 'read write' });
        const reply = await postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: first.refresh_token });
        expect(reply.status, reply.text).toBe(200);
        expectNoStoreJson(reply);
        const second = reply.json<TokenBody>();
        expect(second).toMatchObject({ token_type: 'bearer', scope: 'read write', expires_in: ACCESS_TOKEN_SECONDS });
        expect(second.refresh_token).not.toBe(first.refresh_token);
        expect((await api('GET', '/v2/account', first.access_token)).status).toBe(401);
        expect((await api('GET', '/v2/account', second.access_token)).status).toBe(200);

        expectJsonError(await postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: first.refresh_token }), 400, 'invalid_grant');
        expect((await api('GET', '/v2/account', second.access_token)).status).toBe(401);
      });

      it('refresh works after the access token expired', async () => {
        const first = await tokens();
        await advance(ACCESS_TOKEN_SECONDS * 1000);
        expect(bearerError(await api('GET', '/v2/account', first.access_token))).toBe('invalid_token');
        const reply = await postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: first.refresh_token });
        expect(reply.status, reply.text).toBe(200);
        expect((await api('GET', '/v2/account', reply.json<TokenBody>().access_token)).status).toBe(200);
      });

      it('revoke → 200 {} no-store; the token, and its refresh token, stop working; an unknown token is 200 {} too', async () => {
        const { access_token, refresh_token } = await tokens();
        expect((await api('GET', '/v2/account', access_token)).status).toBe(200);
        const reply = await postForm('/v1/oauth/revoke', { token: access_token });
        expect(reply.status).toBe(200);
        expectNoStoreJson(reply);
        expect(reply.json()).toEqual({});
        const after = await api('GET', '/v2/account', access_token);
        expect(after.status).toBe(401);
        expect(bearerError(after)).toBe('invalid_token');
        expectJsonError(await postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token }), 400, 'invalid_grant');
        expect((await postForm('/v1/oauth/revoke', { token: 'unknown' })).json()).toEqual({});
      });

      it('the SPEC 4.3 example: token in the query of a POST and as a Bearer header', async () => {
        const { access_token } = await tokens();
        const reply = await request('POST', `/v1/oauth/revoke?token=${encodeURIComponent(access_token)}`, { headers: { authorization: `Bearer ${access_token}` } });
        expect(reply.status, reply.text).toBe(200);
        expect((await api('GET', '/v2/account', access_token)).status).toBe(401);
      });
    });

    describe('requireToken', () => {
      it('no token → 401 Bearer challenge with a realm and no error; the route does not run', async () => {
        for (const [method, path] of [['GET', '/v2/account'], ['POST', '/v2/things']] as const) {
          const reply = await api(method, path);
          expect(reply.status).toBe(401);
          expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer realm="[^"]+"/);
          expect(bearerError(reply)).toBeUndefined();
          expect(reply.text).not.toContain('created');
        }
      });

      it('read: GET works, POST is 403 insufficient_scope; read write: POST works', async () => {
        const read = await tokens({ scope: 'read' });
        expect((await api('GET', '/v2/account', read.access_token)).status).toBe(200);
        const denied = await api('POST', '/v2/things', read.access_token);
        expect(denied.status).toBe(403);
        expect(bearerError(denied)).toBe('insufficient_scope');
        expect(denied.headers.get('www-authenticate')).toContain('scope="read write"');
        const write = await tokens({ scope: 'read write' });
        const created = await api('POST', '/v2/things', write.access_token);
        expect(created.status, created.text).toBe(201);
        expect(created.json<{ created: boolean; oauth: VerifiedToken }>()).toMatchObject({ created: true, oauth: { scope: ['read', 'write'] } });
      });

      it('unknown, malformed, refresh and expired tokens are refused with the right challenge', async () => {
        expect(bearerError(await api('GET', '/v2/account', 'A'.repeat(43)))).toBe('invalid_token');
        const malformed = await request('GET', '/v2/account', { headers: { authorization: 'Bearer abc def' } });
        expect(malformed.status).toBe(400);
        expect(bearerError(malformed)).toBe('invalid_request');
        const { access_token, refresh_token } = await tokens();
        expect(bearerError(await api('GET', '/v2/account', refresh_token))).toBe('invalid_token');
        await advance(ACCESS_TOKEN_SECONDS * 1000 - 1);
        expect((await api('GET', '/v2/account', access_token)).status).toBe(200);
        await advance(1);
        expect(bearerError(await api('GET', '/v2/account', access_token))).toBe('invalid_token');
      });
    });

    describe('error shapes', () => {
      it('token endpoint: 405 with Allow, invalid_request, unsupported_grant_type, duplicated parameters, a JSON body', async () => {
        const viaGet = await get('/v1/oauth/token?grant_type=refresh_token');
        expectJsonError(viaGet, 405, 'invalid_request');
        expect(viaGet.headers.get('allow')).toBe('POST');
        expectJsonError(await postForm('/v1/oauth/token', {}), 400, 'invalid_request');
        expectJsonError(await postForm('/v1/oauth/token', { grant_type: 'password' }), 400, 'unsupported_grant_type');
        const code = await getCode();
        expectJsonError(await request('POST', `/v1/oauth/token?code=${code}`, { headers: { 'content-type': FORM }, body: new URLSearchParams(codeParams(code)).toString() }), 400, 'invalid_request');
        expectJsonError(await request('POST', '/v1/oauth/token', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(codeParams(code)) }), 400, 'invalid_request');
        // None of these used the code up.
        expect((await exchange(code)).status).toBe(200);
      });

      it('token endpoint: invalid_client 401 (with a Basic challenge only when Basic was tried); a reused code is invalid_grant', async () => {
        const code = await getCode();
        const wrong = await exchange(code, { client_secret: 'wrong' });
        expectJsonError(wrong, 401, 'invalid_client');
        expect(wrong.headers.get('www-authenticate')).toBeNull();
        const { client_secret: _secret, client_id: _id, ...rest } = codeParams(code);
        const basic = await postForm('/v1/oauth/token', rest, { headers: { authorization: `Basic ${btoa(`${world.client.clientId}:wrong`)}` } });
        expectJsonError(basic, 401, 'invalid_client');
        expect(basic.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
        expect((await exchange(code)).status).toBe(200);
        expectJsonError(await exchange(code), 400, 'invalid_grant');
      });

      it('a body over 64 KiB → 413 JSON', async () => {
        expectJsonError(await postForm('/v1/oauth/token', `grant_type=refresh_token&x=${'a'.repeat(70 * 1024)}`), 413, 'invalid_request');
      });

      it('authorization errors before the client is trusted are HTML error pages, never redirects; after, they go to the callback', async () => {
        expectErrorPage(await get(authorizeUrl({ client_id: 'nope' }), 'ada'), 'invalid_client');
        expectErrorPage(await get(authorizeUrl({ redirect_uri: 'https://evil.example/cb' }), 'ada'), 'invalid_redirect_uri');
        expectErrorPage(await get(authorizeUrl({ scope: 'admin' }), 'ada'), 'invalid_scope');
        const badType = await get(authorizeUrl({ response_type: 'nope', state: 's' }), 'ada');
        expect(badType.status).toBe(302);
        expect(new URL(badType.location!).searchParams.get('error')).toBe('unsupported_response_type');
      });
    });

    describe('issue 7 endpoints', () => {
      it('metadata: 404 without an issuer; with one, the document, whose endpoints are all served here', async () => {
        expectJsonError(await get('/.well-known/oauth-authorization-server'), 404, 'not_found');
        await reset({ issuer: ISSUER, allowDynamicRegistration: true });
        const reply = await get('/.well-known/oauth-authorization-server');
        expect(reply.status).toBe(200);
        expect(reply.headers.get('cache-control')).toBe('public, max-age=3600');
        const doc = reply.json<Record<string, string>>();
        expect(doc).toMatchObject({ issuer: ISSUER, token_endpoint: `${ISSUER}/v1/oauth/token`, introspection_endpoint: `${ISSUER}/v1/oauth/introspect`, registration_endpoint: `${ISSUER}/v1/oauth/register` });
        for (const [key, url] of Object.entries(doc).filter(([key]) => key.endsWith('_endpoint'))) {
          const answer = await request(key === 'authorization_endpoint' ? 'GET' : 'POST', new URL(url).pathname);
          expect(answer.status, key).not.toBe(404);
        }
        // The issuer's iss parameter on authorization responses (RFC 9207).
        expect((await authorizeAndApprove()).searchParams.get('iss')).toBe(ISSUER);
      });

      it('introspection: active, inactive after revocation, 401 without client authentication', async () => {
        const { access_token } = await tokens({ scope: 'read write' });
        const ask = (form: Record<string, string>) => postForm('/v1/oauth/introspect', form);
        const creds = { client_id: world.client.clientId, client_secret: world.client.clientSecret };
        const active = await ask({ token: access_token, ...creds });
        expect(active.status, active.text).toBe(200);
        expect(active.json()).toMatchObject({ active: true, scope: 'read write', client_id: world.client.clientId, sub: ADA.uuid, token_type: 'bearer' });
        expectJsonError(await ask({ token: access_token }), 401, 'invalid_client');
        await postForm('/v1/oauth/revoke', { token: access_token });
        expect((await ask({ token: access_token, ...creds })).json()).toEqual({ active: false });
      });

      it('dynamic registration: off → 404; on → 201, then a PKCE flow for the new public client', async () => {
        const registration = JSON.stringify({ client_name: 'My CLI', redirect_uris: ['http://127.0.0.1/callback'] });
        const register = () => request('POST', '/v1/oauth/register', { headers: { 'content-type': 'application/json' }, body: registration });
        expectJsonError(await register(), 404, 'not_found');
        await reset({ allowDynamicRegistration: true });
        const reply = await register();
        expect(reply.status, reply.text).toBe(201);
        const { client_id } = reply.json<{ client_id: string }>();
        expect(reply.json()).not.toHaveProperty('client_secret');

        const verifier = randomBytes(32).toString('base64url');
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        const redirectUri = 'http://127.0.0.1:8765/callback';
        const callback = await authorizeAndApprove({ client_id, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256' });
        const code = callback.searchParams.get('code')!;
        const form = { grant_type: 'authorization_code', code, client_id, redirect_uri: redirectUri };
        expectJsonError(await postForm('/v1/oauth/token', { ...form, code_verifier: randomBytes(32).toString('base64url') }), 400, 'invalid_grant');
        const exchanged = await postForm('/v1/oauth/token', { ...form, code_verifier: verifier });
        expect(exchanged.status, exchanged.text).toBe(200);
        expect((await api('GET', '/v2/account', exchanged.json<TokenBody>().access_token)).json<{ oauth: VerifiedToken }>().oauth.clientId).toBe(client_id);
      });

      it('JWT access tokens: the JWKS verifies them (EdDSA on the runtime\'s Web Crypto); requireToken accepts one until it is revoked', async () => {
        expectJsonError(await get('/.well-known/jwks.json'), 404, 'not_found');
        await reset({ issuer: ISSUER, accessTokenFormat: 'jwt' });
        const jwks = (await get('/.well-known/jwks.json')).json<{ keys: JWK[] }>();
        expect(jwks.keys).toHaveLength(1);
        expect(jwks.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' });
        expect(jwks.keys[0]).not.toHaveProperty('d');
        const { access_token } = await tokens({ scope: 'read write' });
        const { payload } = await jwtVerify(access_token, createLocalJWKSet(jwks), { currentDate: new Date(world.now) });
        expect(payload).toMatchObject({ iss: ISSUER, sub: ADA.uuid, client_id: world.client.clientId, scope: 'read write' });
        expect((await api('POST', '/v2/things', access_token)).status).toBe(201);
        expect((await postForm('/v1/oauth/revoke', { token: access_token })).status).toBe(200);
        expect(bearerError(await api('GET', '/v2/account', access_token))).toBe('invalid_token');
      });
    });

    it('a second user gets their own tokens (the fake sign-in is per request)', async () => {
      const callback = await authorizeAndApprove({}, 'bob');
      const reply = await exchange(callback.searchParams.get('code')!);
      expect(reply.json<TokenBody>().info).toEqual({ name: BOB.name, email: BOB.email, uuid: BOB.uuid });
    });
  });
}
