import type { Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { requireToken as honoRequireToken, type OAuthVariables } from '../../adapters/hono/index.js';
import { IN_PROCESS, startApp, type TestApp } from '../adapters/app.js';
import { AuthorizationServer } from '../../src/index.js';
import { ADA, CALLBACK, json, setup } from '../helpers.js';
import { boundTokenAnswer, exchangeRequest, proof, proofKey, type ProofKey } from './fixtures.js';

/**
 * Review of this morning's DPoP fixes (test/dpop/resource-origin.test.ts, mounted-resource.test.ts,
 * implicit.test.ts): what they left open. Each case failed on the code before its fix.
 */
const ISSUER = 'https://as.example';
const RESOURCE = 'https://api.example';

let apps: TestApp[] = [];
let servers: Server[] = [];
afterEach(async () => {
  for (const app of apps) await app.close();
  for (const server of servers) await new Promise((closed) => server.close(closed));
  apps = [];
  servers = [];
});

/**
 * A GET of `target` sent as written, with `Host: host` (fetch and node:http both refuse or fix up
 * what a client on the raw socket may send): the status line's code.
 */
function rawGet(base: string, target: string, host: string, headers: Record<string, string>): Promise<number> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let reply = '';
    socket.on('data', (chunk) => {
      reply += String(chunk);
    });
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1] ?? 0)));
    socket.on('error', reject);
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.write(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\n${lines.join('')}Connection: close\r\n\r\n`);
  });
}

/** An app with `requireToken(server, { resource: RESOURCE })` on `/r` (test/adapters/app.ts), and a token bound to a key. */
async function boundApp(framework: (typeof IN_PROCESS)[number]) {
  const app = await startApp({
    framework,
    resource: RESOURCE,
    server: { issuer: ISSUER, dpop: {}, protectedResources: [{ resource: RESOURCE }] },
  });
  apps.push(app);
  app.clock.set(Date.now());
  const key = await proofKey();
  const tokenRes = await boundTokenAnswer(app, key, ISSUER);
  expect(tokenRes.status).toBe(200);
  const token = ((await tokenRes.json()) as { access_token: string }).access_token;
  /** GET `target` with `Host: host` and a fresh proof for `htu`: the status. */
  const call = async (target: string, host: string, htu: string, signer: ProofKey = key) =>
    rawGet(app.base, target, host, {
      authorization: `DPoP ${token}`,
      dpop: await proof(signer, 'GET', htu, Date.now(), { accessToken: token }),
    });
  return { app, call };
}

describe('a request URL that does not parse (a Host header no host can be) names no path: no htu matches it', () => {
  it('core: resourceCheck and the token endpoint refuse the proof for the origin’s root, the fallback path', async () => {
    const t = await setup({ issuer: ISSUER, dpop: {}, protectedResources: [{ resource: RESOURCE }] });
    const key = await proofKey();
    // What the Node adapters build from `Host: api.example:99999` (a port out of range): no URL.
    const unparsable = 'http://api.example:99999/r/account';
    expect(URL.canParse(unparsable)).toBe(false);
    const exchange = await t.server.token({
      ...exchangeRequest(t, await t.getCode(), await proof(key, 'POST', `${ISSUER}/`, t.clock.now())),
      url: 'http://as.example:99999/v1/oauth/token',
    });
    expect(exchange.status).toBe(400);
    expect(json(exchange).error).toBe('invalid_dpop_proof');
    const res = await t.server.token(
      exchangeRequest(t, await t.getCode(), await proof(key, 'POST', `${ISSUER}/v1/oauth/token`, t.clock.now())),
    );
    const token = json(res).access_token as string;
    const check = t.server.resourceCheck(RESOURCE);
    const at = async (url: string, htu: string) =>
      (
        await check({
          method: 'GET',
          url,
          headers: { authorization: `DPoP ${token}`, dpop: await proof(key, 'GET', htu, t.clock.now(), { accessToken: token }) },
        })
      ).ok;
    expect(await at(unparsable, `${RESOURCE}/`)).toBe(false);
    expect(await at(unparsable, `${RESOURCE}/r/account`)).toBe(false);
    expect(await at('http://api.example/r/account', `${RESOURCE}/r/account`)).toBe(true);
  });

  it.each(IN_PROCESS)('%s: Host api.example:99999 with a proof for the resource’s root is refused at /r/account', async (framework) => {
    const { call } = await boundApp(framework);
    expect(await call('/r/account', 'api.example', `${RESOURCE}/r/account`)).toBe(200);
    expect(await call('/r/account', 'api.example:99999', `${RESOURCE}/`)).not.toBe(200);
  });
});

/**
 * The Node adapters build the request URL from the `Host` header as sent, and Node passes any
 * value: one with `/`, `?` or `#` (or none at all) moved the path the core read, so the proof's
 * `htu` at a named resource (its origin, then that path) and the URL a resource's
 * `requiredScope` rule is given were not the path the request was routed to.
 */
describe.each(IN_PROCESS)('%s: a Host header cannot move the path the core reads', (framework) => {
  const SHIFTING_HOSTS = ['api.example/other?', 'api.example/other#', 'api.example/other'];

  it('a proof for another path of the resource is refused at /r/account, whatever the Host', async () => {
    const { call } = await boundApp(framework);
    for (const host of SHIFTING_HOSTS) {
      expect(await call('/r/account', host, `${RESOURCE}/other`), host).not.toBe(200);
      expect(await call('/r/account', host, `${RESOURCE}/other/r/account`), host).not.toBe(200);
    }
    // An empty Host: `http://` + `/r/account` reads as host `r`, path `/account`.
    expect(await call('/r/account', '', `${RESOURCE}/account`)).not.toBe(200);
  });

  it('a resource’s requiredScope rule is given the path that was routed, so a Host cannot lower the scope it asks', async () => {
    const seen: string[] = [];
    // Writing to /r/account needs `write`: a rule by path, as the reference invites.
    const requiredScope = ({ url }: { url: string }) => {
      seen.push(new URL(url).pathname);
      return new URL(url).pathname === '/r/account' ? ['read', 'write'] : ['read'];
    };
    const app = await startApp({
      framework,
      resource: RESOURCE,
      server: { issuer: ISSUER, protectedResources: [{ resource: RESOURCE, requiredScope }] },
    });
    apps.push(app);
    const reply = await app.exchange(await app.getCode({ scope: 'read' }));
    const token = reply.json<{ access_token: string }>().access_token;
    const get = (host: string) => rawGet(app.base, '/r/account', host, { authorization: `Bearer ${token}` });
    expect(await get('api.example')).toBe(403);
    for (const host of [...SHIFTING_HOSTS, '']) expect(await get(host), host).not.toBe(200);
    expect(seen.every((path) => path === '/r/account')).toBe(true);
  });
});

/**
 * Hono's `requireToken` inside an app under `app.mount('/api', …)` takes the path of the request as
 * received (`sentUrl`, adapters/hono/sent-url.ts). A request target in absolute form
 * (`GET http://host/api/admin/x HTTP/1.1`, RFC 9112 §3.2.2, which a server must accept) reaches
 * `c.env.incoming.url` as that absolute URL, which `@hono/node-server` routes by its path: it was
 * passed over as "not a path", and the URL without the mount decided again.
 */
describe('Hono requireToken under app.mount("/api", …): a request target in absolute form', () => {
  async function mounted(options: Record<string, unknown>, requiredScope?: (request: { url: string }) => string[]) {
    const t = await setup({
      issuer: ISSUER,
      ...options,
      protectedResources: [{ resource: RESOURCE, ...(requiredScope && { requiredScope }) }],
    });
    const sub = new Hono<{ Variables: OAuthVariables }>();
    sub.use('/*', honoRequireToken(t.server, { resource: RESOURCE }));
    sub.get('/admin/x', (c) => c.json({ ok: true }));
    const app = new Hono();
    app.mount('/api', sub.fetch);
    const http = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    servers.push(http);
    await new Promise<void>((listening) => http.once('listening', listening));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    return { t, base, host: new URL(base).host };
  }

  it('a requiredScope rule is given the URL with the mount, so the path cannot lose it to lower the scope', async () => {
    const seen: string[] = [];
    const requiredScope = ({ url }: { url: string }) => {
      seen.push(new URL(url).pathname);
      return new URL(url).pathname.startsWith('/api/admin/') ? ['read', 'write'] : ['read'];
    };
    const { t, base, host } = await mounted({}, requiredScope);
    const token = (await t.tokens({ scope: 'read' })).access_token;
    const get = (target: string) => rawGet(base, target, host, { authorization: `Bearer ${token}` });
    expect(await get('/api/admin/x')).toBe(403);
    expect(await get(`${base}/api/admin/x`)).toBe(403);
    expect(seen).toEqual(['/api/admin/x', '/api/admin/x']);
  });

  it('a DPoP proof names the URL with the mount; one for the path without it is refused', async () => {
    const { t, base, host } = await mounted({ dpop: {} });
    const key = await proofKey();
    const res = await t.server.token(
      exchangeRequest(t, await t.getCode(), await proof(key, 'POST', `${ISSUER}/v1/oauth/token`, t.clock.now())),
    );
    const token = json(res).access_token as string;
    const get = async (target: string, htu: string) =>
      rawGet(base, target, host, {
        authorization: `DPoP ${token}`,
        dpop: await proof(key, 'GET', htu, t.clock.now(), { accessToken: token }),
      });
    expect(await get(`${base}/api/admin/x`, `${RESOURCE}/api/admin/x`)).toBe(200);
    expect(await get(`${base}/api/admin/x`, `${RESOURCE}/admin/x`)).toBe(401);
    expect(await get('/api/admin/x', `${RESOURCE}/admin/x`)).toBe(401);
  });
});

/**
 * A client registered with `dpopBoundAccessTokens` is refused `response_type=token` at the
 * authorization endpoint (test/dpop/implicit.test.ts). The flag is ignored while DPoP is off, so an
 * instance without DPoP (a configuration rolled out to some instances, or rolled back) stores the
 * request and its sign-in or consent step; the step then continued on an instance with DPoP on
 * issued the client a bearer token all the same. `resume` and `approve` check the client as it
 * is now (`currentClient`, `unsignableRequest`): the same check belongs there.
 */
describe('the implicit flow of a DPoP-only client, started where DPoP is off and continued where it is on', () => {
  async function twoInstances() {
    const t = await setup({ issuer: ISSUER, dpop: {}, allowImplicit: true });
    const agent = await t.server.registerClient({ name: 'Agent', redirectUri: CALLBACK, dpopBoundAccessTokens: true });
    const off = new AuthorizationServer({ issuer: ISSUER, storage: t.storage, sessions: t.sessions, clock: t.clock, allowImplicit: true });
    const url = `/v1/oauth/authorize?${new URLSearchParams({ client_id: agent.clientId, redirect_uri: CALLBACK, response_type: 'token', state: 's-9' })}`;
    return { t, off, url };
  }

  /** The callback URL's fragment of a redirect decision. */
  function fragmentOf(decision: { type: string; location?: string }): URLSearchParams {
    expect(decision.type).toBe('redirect');
    const location = new URL(decision.location!);
    expect(`${location.origin}${location.pathname}`).toBe(CALLBACK);
    return new URLSearchParams(location.hash.slice(1));
  }

  it('approve: unauthorized_client in the fragment, no token, no grant', async () => {
    const { t, off, url } = await twoInstances();
    const consent = await off.authorize(t.get(url, t.ada));
    if (consent.type !== 'consent') throw new Error(`consent expected: ${JSON.stringify(consent)}`);
    const fragment = fragmentOf(await t.server.approve(consent.interaction.id, t.get('/', t.ada)));
    expect(fragment.get('access_token')).toBeNull();
    expect(fragment.get('error')).toBe('unauthorized_client');
    expect(fragment.get('state')).toBe('s-9');
    expect(await t.server.listAuthorizations(ADA.uuid)).toEqual([]);
  });

  it('resume after the sign-in: refused the same way, before any consent is asked', async () => {
    const { t, off, url } = await twoInstances();
    const login = await off.authorize(t.get(url));
    if (login.type !== 'login') throw new Error(`login expected: ${JSON.stringify(login)}`);
    const fragment = fragmentOf(await t.server.resume(login.interaction.id, t.get('/', t.ada)));
    expect(fragment.get('error')).toBe('unauthorized_client');
    expect(fragment.get('state')).toBe('s-9');
  });
});
