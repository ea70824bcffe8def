/**
 * Hono-only host setups around `createOAuthApp` (the shared cases are in the other files): a host
 * middleware that reads the body before the OAuth routes (Hono keeps a copy, which the adapter
 * then uses), and the app used with no server at all, through `app.request()` and `app.fetch()`,
 * as on a Web-standard runtime.
 */
import { describe, expect, it } from 'vitest';
import { createOAuthApp, requireToken, type OAuthVariables } from '../../adapters/hono/index.js';
import { AuthorizationServer, MemoryStorage } from '../../src/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { Hono } from 'hono';
import { ADA, CALLBACK, FORM, expectJsonError, useApp, type TokenBody } from './app.js';

describe.each([
  ['c.req.text()', async (c: { req: { text(): Promise<string> } }) => void (await c.req.text())],
  ['c.req.parseBody()', async (c: { req: { parseBody(): Promise<unknown> } }) => void (await c.req.parseBody())],
] as const)('Hono: a host middleware that already read the body with %s', (_name, read) => {
  const app = useApp({
    framework: 'hono',
    honoHost(host) {
      host.use('*', async (c, next) => {
        if (c.req.method === 'POST') await read(c);
        await next();
      });
    },
  });

  it("the full code flow works: the adapter gets the raw body from Hono's copy", async () => {
    const { getCode, exchange, postForm } = app();
    const reply = await exchange(await getCode({ scope: 'read write' }));
    expect(reply.status, reply.text).toBe(200);
    const { access_token } = reply.json<TokenBody>();
    expect((await postForm('/v1/oauth/revoke', { token: access_token })).json()).toEqual({});
  });

  it('a parameter twice is still seen twice; a JSON body is still invalid_request', async () => {
    const { getCode, postForm, request, codeParams } = app();
    const code = await getCode();
    expectJsonError(await postForm('/v1/oauth/token', `${new URLSearchParams(codeParams(code))}&code=${code}`), 400, 'invalid_request');
    const json = await request('POST', '/v1/oauth/token', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(codeParams(code)),
    });
    expectJsonError(json, 400, 'invalid_request');
  });

  it('the size limit still holds for a body that came without Content-Length', async () => {
    const { request } = app();
    const chunk = new TextEncoder().encode('a'.repeat(16 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ >= 5) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const reply = await request('POST', '/v1/oauth/token', { headers: { 'content-type': FORM }, body });
    expect(reply.status).toBe(413);
    expect(reply.json<{ error: string }>().error).toBe('invalid_request');
  });
});

describe('Hono: no server at all (app.request / app.fetch, as on Workers, Deno or Bun)', () => {
  it('serves the flow and protects a route with Web-standard Request and Response only', async () => {
    const clock = new FakeClock();
    const sessions = new FakeSessions(clock);
    const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions, clock });
    const client = await server.registerClient({ name: 'Edge App', redirectUri: CALLBACK });
    const app = new Hono<{ Variables: OAuthVariables }>();
    app.route('/', createOAuthApp(server));
    app.get('/v2/me', requireToken(server), (c) => c.json({ uuid: c.get('oauth').account.uuid }));

    const sid = sessions.signIn(ADA);
    const query = new URLSearchParams({ client_id: client.clientId, redirect_uri: CALLBACK, response_type: 'code' });
    const page = await app.request(`https://auth.example/v1/oauth/authorize?${query}`, { headers: { cookie: sid } });
    expect(page.status).toBe(200);
    // An https URL: the CSRF and browser-binding cookies are Secure.
    const cookies = page.headers.getSetCookie();
    expect(cookies.map((line) => line.split('=')[0])).toEqual(expect.arrayContaining(['authgate_csrf', 'authgate_browser']));
    for (const line of cookies) expect(line).toMatch(/; Secure/);
    const binding = cookies.find((line) => line.startsWith('authgate_browser='))!.split(';')[0];
    const html = await page.text();
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)![1]!;
    const csrf = field('csrf');
    const decided = await app.fetch(
      new Request('https://auth.example/v1/oauth/authorize/decision', {
        method: 'POST',
        headers: { cookie: `${sid}; authgate_csrf=${csrf}; ${binding}`, 'content-type': FORM },
        body: new URLSearchParams({ interaction: field('interaction'), csrf, decision: 'approve' }),
      }),
    );
    expect(decided.status).toBe(303);
    const code = new URL(decided.headers.get('location')!).searchParams.get('code')!;
    const token = await app.request('/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': FORM },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uri: CALLBACK,
      }),
    });
    expect(token.status).toBe(200);
    const { access_token } = (await token.json()) as TokenBody;
    expect(await (await app.request('/v2/me', { headers: { authorization: `Bearer ${access_token}` } })).json()).toEqual({
      uuid: ADA.uuid,
    });
    const denied = await app.request('/v2/me');
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
  });
});
