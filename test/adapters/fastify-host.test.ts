/**
 * Fastify-only host setups around `oauthPlugin` (the shared cases are in the other files):
 * a host that registered `@fastify/formbody` or its own parsers, hooks and error handler at the
 * root, a `prefix`, and `fastify.inject()` instead of a socket. The plugin is encapsulated: it
 * always reads raw bodies with its own parser and limit, and none of its parsers, hooks or its
 * error handler reach the host's routes.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { oauthPlugin, requireToken } from '../../adapters/fastify/index.js';
import { AuthorizationServer, MemoryStorage } from '../../src/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA, CALLBACK, FORM, expectJsonError, expectNoStoreJson, setCookieValue, useApp, type TokenBody } from './app.js';

describe('Fastify: a host that registered @fastify/formbody at the root', () => {
  const app = useApp({ framework: 'fastify', hostParsers: true });

  it('the full code flow works: the plugin reads the decision form and the token form itself', async () => {
    const { getCode, exchange } = app();
    const reply = await exchange(await getCode({ scope: 'read write' }));
    expect(reply.status, reply.text).toBe(200);
    expectNoStoreJson(reply);
    expect(reply.json<TokenBody>().scope).toBe('read write');
  });

  it('parameters in the query string of the POST still work', async () => {
    const { getCode, exchangeInQuery } = app();
    expect((await exchangeInQuery(await getCode())).status).toBe(200);
  });

  it('the CSRF check still holds', async () => {
    const { signIn, openConsent, decide } = app();
    const sid = signIn();
    const reply = await decide(await openConsent({}, sid), 'approve', sid, { cookie: sid });
    expect(reply.status).toBe(403);
    expect(reply.location).toBeNull();
  });

  it('a JSON body (which Fastify would parse for the host) → 400 invalid_request, and the code is not used up', async () => {
    const { getCode, request, codeParams, exchange } = app();
    const code = await getCode();
    const reply = await request('POST', '/v1/oauth/token', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(codeParams(code)),
    });
    expectJsonError(reply, 400, 'invalid_request');
    expect((await exchange(code)).status).toBe(200);
  });

  it('a parameter twice in the body, or in query and body → 400 invalid_request', async () => {
    const { getCode, postForm, request, codeParams } = app();
    const code = await getCode();
    expectJsonError(await postForm('/v1/oauth/token', `${new URLSearchParams(codeParams(code))}&code=${code}`), 400, 'invalid_request');
    const reply = await request('POST', '/v1/oauth/token?grant_type=authorization_code', {
      headers: { 'content-type': FORM },
      body: new URLSearchParams(codeParams(code)).toString(),
    });
    expectJsonError(reply, 400, 'invalid_request');
  });

  it("the plugin's 64 KiB limit applies to its routes (formbody would take 1 MiB)", async () => {
    const { postForm } = app();
    const reply = await postForm('/v1/oauth/token', `grant_type=authorization_code&x=${'a'.repeat(64 * 1024)}`);
    expect(reply.status).toBe(413);
    expect(reply.json<{ error: string }>().error).toBe('invalid_request');
  });

  it("the host's own routes still get formbody's and Fastify's parsed bodies", async () => {
    const { postForm, request } = app();
    expect((await postForm('/host/echo', 'a=1&b=2')).json()).toEqual({ body: { a: '1', b: '2' } });
    const json = await request('POST', '/host/echo', { headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(json.json()).toEqual({ body: { a: 1 } });
  });
});

describe("Fastify: the plugin's parsers, hooks and error handler stay inside it", () => {
  const hostParsed: string[] = [];
  const hostSawContentType: Array<string | undefined> = [];
  const app = useApp({
    framework: 'fastify',
    fastifyHost(host) {
      // The host's own parsers: they must never run for the plugin's routes.
      host.addContentTypeParser(FORM, { parseAs: 'string' }, (request, body, done) => {
        hostParsed.push(request.url);
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
      host.addContentTypeParser('application/xml', { parseAs: 'string' }, (request, body, done) => {
        hostParsed.push(request.url);
        done(null, { xml: body });
      });
      host.addHook('preHandler', async (request) => {
        if (request.method === 'POST' && request.url.startsWith('/v1/oauth/')) hostSawContentType.push(request.headers['content-type']);
      });
      host.setErrorHandler((error: { code?: string }, _request, reply) => reply.code(418).send({ host: true, code: error.code }));
      host.post('/host/echo', async (request) => ({ body: request.body }));
      host.post('/host/fail', async () => {
        throw Object.assign(new Error('host failure'), { code: 'HOST_FAILURE' });
      });
    },
  });

  it("the host's parsers never run for the plugin's routes; the host's hooks see the real content type", async () => {
    hostParsed.length = 0;
    hostSawContentType.length = 0;
    const { tokens, postForm, request } = app();
    const { access_token } = await tokens();
    expect((await postForm('/v1/oauth/revoke', { token: access_token })).status).toBe(200);
    const xml = await request('POST', '/v1/oauth/revoke', { headers: { 'content-type': 'application/xml' }, body: '<token>x</token>' });
    expectJsonError(xml, 400, 'invalid_request');
    expect(hostParsed).toEqual([]);
    expect(hostSawContentType).toEqual([FORM, FORM, FORM, 'application/xml']);
  });

  it("the host's routes keep the host's parsers; the plugin's catch-all parser does not leak to them", async () => {
    hostParsed.length = 0;
    const { postForm, request } = app();
    expect((await postForm('/host/echo', 'a=1')).json()).toEqual({ body: { a: '1' } });
    expect((await request('POST', '/host/echo', { headers: { 'content-type': 'application/xml' }, body: '<a/>' })).json()).toEqual({
      body: { xml: '<a/>' },
    });
    expect(hostParsed).toEqual(['/host/echo', '/host/echo']);
    // No parser for this type on the host: Fastify refuses it (the plugin's '*' parser is not there).
    const unknown = await request('POST', '/host/echo', { headers: { 'content-type': 'application/x-unknown' }, body: 'x' });
    expect(unknown.status).toBe(418);
    expect(unknown.json()).toEqual({ host: true, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' });
  });

  it("the host's errors go to the host's error handler; the plugin's body errors stay the plugin's 413 JSON", async () => {
    const { request, postForm } = app();
    expect((await request('POST', '/host/fail')).json()).toEqual({ host: true, code: 'HOST_FAILURE' });
    const tooLarge = await request('POST', '/host/echo', { headers: { 'content-type': FORM }, body: `a=${'x'.repeat(2 * 1024 * 1024)}` });
    expect(tooLarge.json()).toEqual({ host: true, code: 'FST_ERR_CTP_BODY_TOO_LARGE' });
    const ours = await postForm('/v1/oauth/token', `x=${'a'.repeat(64 * 1024)}`);
    expect(ours.status).toBe(413);
    expect(ours.json<{ error: string }>().error).toBe('invalid_request');
  });
});

describe('Fastify: registered with a prefix', () => {
  const app = useApp({ framework: 'fastify', fastifyPrefix: '/auth' });

  it("the routes, the consent form's action and its cookie path all carry the prefix; the flow works", async () => {
    const { paths, signIn, openConsent, decide, exchange, api, get } = app();
    expect(paths).toBe('/auth/v1/oauth');
    const sid = signIn(ADA);
    const consent = await openConsent({}, sid);
    expect(consent.page.text).toContain('action="/auth/v1/oauth/authorize/decision"');
    expect(setCookieValue(consent.page.headers, 'authgate_csrf')?.attributes).toMatch(/Path=\/auth\/v1\/oauth\/authorize(;|$)/);
    const decided = await decide(consent, 'approve', sid);
    expect(decided.status).toBe(303);
    const reply = await exchange(new URL(decided.location!).searchParams.get('code')!);
    expect(reply.status, reply.text).toBe(200);
    expect((await api('GET', '/v2/account', reply.json<TokenBody>().access_token)).status).toBe(200);
    expect((await get('/v1/oauth/authorize')).status).toBe(404);
  });
});

describe("Fastify: fastify.inject() (no socket), and requireToken as a route's preHandler", () => {
  it('serves the flow and protects a route', async () => {
    const clock = new FakeClock();
    const sessions = new FakeSessions(clock);
    const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions, clock });
    const client = await server.registerClient({ name: 'Inject App', redirectUri: CALLBACK });
    const app = Fastify();
    await app.register(oauthPlugin, { server });
    app.get('/v2/me', { preHandler: requireToken(server) }, async (request) => ({ uuid: request.oauth?.account.uuid }));

    const sid = sessions.signIn(ADA);
    const query = new URLSearchParams({ client_id: client.clientId, redirect_uri: CALLBACK, response_type: 'code', prompt: 'none' });
    const silent = await app.inject({ method: 'GET', url: `/v1/oauth/authorize?${query}`, headers: { cookie: sid } });
    expect(silent.statusCode).toBe(302);
    expect(new URL(silent.headers.location as string).searchParams.get('error')).toBe('consent_required');

    const page = await app.inject({
      method: 'GET',
      url: `/v1/oauth/authorize?${query}`.replace('&prompt=none', ''),
      headers: { cookie: sid },
    });
    expect(page.statusCode).toBe(200);
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(page.body)![1]!;
    const csrf = field('csrf');
    // The browser-binding cookie the consent page set goes back, as a browser would send it.
    const binding = ([] as string[])
      .concat(page.headers['set-cookie'] ?? [])
      .find((line) => line.startsWith('authgate_browser='))!
      .split(';')[0];
    const decided = await app.inject({
      method: 'POST',
      url: '/v1/oauth/authorize/decision',
      headers: { cookie: `${sid}; authgate_csrf=${csrf}; ${binding}`, 'content-type': FORM },
      payload: new URLSearchParams({ interaction: field('interaction'), csrf, decision: 'approve' }).toString(),
    });
    expect(decided.statusCode).toBe(303);
    const code = new URL(decided.headers.location as string).searchParams.get('code')!;
    const token = await app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { 'content-type': FORM },
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uri: CALLBACK,
      }).toString(),
    });
    expect(token.statusCode, token.body).toBe(200);
    const accessToken = token.json<TokenBody>().access_token;
    expect((await app.inject({ method: 'GET', url: '/v2/me', headers: { authorization: `Bearer ${accessToken}` } })).json()).toEqual({
      uuid: ADA.uuid,
    });
    const denied = await app.inject({ method: 'GET', url: '/v2/me' });
    expect(denied.statusCode).toBe(401);
    expect(denied.headers['www-authenticate']).toMatch(/^Bearer realm=/);
    await app.close();
  });
});
