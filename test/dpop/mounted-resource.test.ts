import type { AddressInfo } from 'node:net';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { serve } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { requireToken as expressRequireToken } from '../../adapters/express/index.js';
import { requireToken as honoRequireToken, type OAuthVariables } from '../../adapters/hono/index.js';
import { requireToken as nodeRequireToken } from '../../adapters/node/index.js';
import { json, setup } from '../helpers.js';
import { exchangeRequest, proof, proofKey } from './fixtures.js';

/**
 * The `htu` of a proof at a resource whose `requireToken` is mounted under a path (RFC 9449 §4.3
 * point 9, §7.1): the URL the client sent the request to, mount path included. Connect-style
 * hosts (connect, polka, Express, the `router` package) strip the mount path from `req.url` and
 * keep the URL as received in `req.originalUrl`; the node:http `requireToken` is documented to
 * fit them. Compared with the stripped path, a real client's proof would be refused, and a proof
 * made for another URL of the host (the path without the mount) accepted. Hono's `app.mount()`
 * does the same to the request it hands the mounted app (`app.route()` does not): on Node the
 * Hono `requireToken` takes the path from the request as received (`c.env.incoming`).
 */
const ISSUER = 'https://as.example';
const TOKEN_URL = `${ISSUER}/v1/oauth/token`;

let servers: Server[] = [];
afterEach(async () => {
  for (const server of servers) await new Promise((done) => server.close(done));
  servers = [];
});

const MOUNTS = {
  // authgate/node's requireToken in a connect-style host (Express is one: `app.use(path, fn)`).
  'node:http requireToken': nodeRequireToken,
  'Express requireToken': expressRequireToken,
} as const;

describe.each(Object.keys(MOUNTS) as (keyof typeof MOUNTS)[])('%s mounted under /api', (name) => {
  it('the proof names the URL as sent, /api included; a proof of the path without the mount is refused', async () => {
    const t = await setup({ issuer: ISSUER, dpop: {} });
    const key = await proofKey();
    const res = await t.server.token(exchangeRequest(t, await t.getCode(), await proof(key, 'POST', TOKEN_URL, t.clock.now())));
    const token = json(res).access_token as string;

    const app = express();
    app.use('/api', MOUNTS[name](t.server) as express.RequestHandler, (_req, res) => void res.json({ ok: true }));
    const http = createServer(app);
    servers.push(http);
    await new Promise<void>((listening) => http.listen(0, '127.0.0.1', listening));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

    const call = async (htu: string) => {
      const response = await fetch(`${base}/api/things?page=2`, {
        headers: { authorization: `DPoP ${token}`, dpop: await proof(key, 'GET', htu, t.clock.now(), { accessToken: token }) },
      });
      return { status: response.status, challenge: response.headers.get('www-authenticate') };
    };
    expect((await call(`${base}/api/things`)).status).toBe(200);
    const elsewhere = await call(`${base}/things`);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.challenge).toContain('error="invalid_dpop_proof"');
  });
});

/** A bound token of `setup`'s confidential client, and its key. */
async function boundToken(options: Record<string, unknown> = {}) {
  const t = await setup({ issuer: ISSUER, dpop: {}, ...options });
  const key = await proofKey();
  const res = await t.server.token(exchangeRequest(t, await t.getCode(), await proof(key, 'POST', TOKEN_URL, t.clock.now())));
  return { t, key, token: json(res).access_token as string };
}

const RESOURCE = 'https://api.example';
const HONO_WAYS = ['app.mount', 'app.route'] as const;

describe.each(HONO_WAYS)('Hono requireToken in a sub-app under %s("/api", …) on @hono/node-server', (way) => {
  it.each([false, true])(
    'the proof names the URL as sent, /api included; a proof of the path without it is refused (named resource: %s)',
    async (named) => {
      const { t, key, token } = await boundToken(named ? { protectedResources: [{ resource: RESOURCE }] } : {});
      const sub = new Hono<{ Variables: OAuthVariables }>();
      sub.use('/*', honoRequireToken(t.server, named ? { resource: RESOURCE } : {}));
      sub.get('/things', (c) => c.json({ client: c.get('oauth').kind }));
      const app = new Hono();
      if (way === 'app.mount') app.mount('/api', sub.fetch);
      else app.route('/api', sub);
      const http = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
      servers.push(http);
      await new Promise<void>((listening) => http.once('listening', listening));
      const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
      // A named resource's proofs name its configured origin (test/dpop/resource-origin.test.ts), else the app's.
      const origin = named ? RESOURCE : base;

      const call = async (htu: string) => {
        const response = await fetch(`${base}/api/things?page=2`, {
          headers: { authorization: `DPoP ${token}`, dpop: await proof(key, 'GET', htu, t.clock.now(), { accessToken: token }) },
        });
        return { status: response.status, challenge: response.headers.get('www-authenticate') };
      };
      expect((await call(`${origin}/api/things`)).status).toBe(200);
      const elsewhere = await call(`${origin}/things`);
      expect(elsewhere.status).toBe(401);
      expect(elsewhere.challenge).toContain('error="invalid_dpop_proof"');
    },
  );
});

describe('Hono requireToken where no request as received is at hand (app.fetch, as on edge runtimes)', () => {
  it('in the parent app, before app.mount("/api", …), it sees the whole URL', async () => {
    const { t, key, token } = await boundToken();
    const sub = new Hono();
    sub.get('/things', (c) => c.json({ ok: true }));
    const app = new Hono<{ Variables: OAuthVariables }>();
    app.use('/api/*', honoRequireToken(t.server));
    app.mount('/api', sub.fetch);
    const call = async (htu: string) =>
      (
        await app.request('http://api.example/api/things', {
          headers: { authorization: `DPoP ${token}`, dpop: await proof(key, 'GET', htu, t.clock.now(), { accessToken: token }) },
        })
      ).status;
    expect(await call('http://api.example/api/things')).toBe(200);
    expect(await call('http://api.example/things')).toBe(401);
  });
});

describe('Hono requireToken on @hono/node-server: the URL a resource’s requiredScope is given', () => {
  it('is the one the client sent, a mount path included, with dot segments resolved as the router resolved them', async () => {
    const seen: string[] = [];
    const requiredScope = (request: { url: string }) => {
      seen.push(request.url);
      return ['read'];
    };
    const t = await setup({ issuer: ISSUER, protectedResources: [{ resource: RESOURCE, requiredScope }] });
    const token = (await t.tokens()).access_token;
    const sub = new Hono<{ Variables: OAuthVariables }>();
    sub.use('/*', honoRequireToken(t.server, { resource: RESOURCE }));
    sub.get('/things', (c) => c.json({ ok: true }));
    const app = new Hono<{ Variables: OAuthVariables }>();
    app.mount('/api', sub.fetch);
    app.use('/plain/*', honoRequireToken(t.server, { resource: RESOURCE }));
    app.get('/plain/things', (c) => c.json({ ok: true }));
    const http = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    servers.push(http);
    await new Promise<void>((listening) => http.once('listening', listening));
    const { port } = http.address() as AddressInfo;
    // node:http sends the path as written (fetch would resolve the dot segments itself).
    const get = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${token}` } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
    expect(await get('/api/things?page=2')).toBe(200);
    expect(await get('/zzz/../plain/things')).toBe(200);
    expect(seen).toEqual([`http://127.0.0.1:${port}/api/things?page=2`, `http://127.0.0.1:${port}/plain/things`]);
  });
});
