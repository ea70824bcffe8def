/**
 * Express hosts that mount the router under a path, or that parse bodies before it with their
 * own (larger) limits or parsers: the pages, the metadata and the limits must still hold.
 */
import type { AddressInfo } from 'node:net';
import express, { type Express, type Router } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createOAuthRouter } from '../../adapters/express/index.js';
import { setup } from '../helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function listen(app: Express): Promise<string> {
  const listener = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => listener.once('listening', resolve));
  close = () =>
    new Promise((resolve) => {
      listener.closeAllConnections();
      listener.close(() => resolve());
    });
  return `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
}

describe('Express: router mounted under a path', () => {
  it('the consent form, its CSRF cookie and the metadata point under the mount path', async () => {
    const t = await setup({ issuer: 'https://as.example' });
    const app = express();
    app.use('/auth', createOAuthRouter(t.server));
    const base = await listen(app);
    const page = await fetch(`${base}/auth${t.authorizeUrl()}`, { headers: { cookie: t.ada } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('action="/auth/v1/oauth/authorize/decision"');
    expect(page.headers.getSetCookie().find((line) => line.startsWith('authgate_csrf='))).toContain('Path=/auth/v1/oauth/authorize');
    // The browser-binding cookie is scoped like the CSRF cookie, under the mount path.
    const binding = page.headers.getSetCookie().find((line) => line.startsWith('authgate_browser='));
    expect(binding).toMatch(/^authgate_browser=[A-Za-z0-9_-]{43}; Path=\/auth\/v1\/oauth\/authorize;/);
    const interaction = /name="interaction" value="([^"]+)"/.exec(html)![1]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const post = (cookie: string) =>
      fetch(`${base}/auth/v1/oauth/authorize/decision`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ interaction, csrf, decision: 'approve' }).toString(),
      });
    // Without it, the form is from another browser.
    expect((await post(`${t.ada}; authgate_csrf=${csrf}`)).status).toBe(400);
    const decided = await post(`${t.ada}; authgate_csrf=${csrf}; ${binding!.split(';')[0]}`);
    expect(decided.status).toBe(303);
    expect(decided.headers.get('location')).toMatch(/^https:\/\/client\.example\/cb\?code=/);
    const doc = (await (await fetch(`${base}/auth/.well-known/oauth-authorization-server`)).json()) as Record<string, string>;
    expect(doc.token_endpoint).toBe('https://as.example/auth/v1/oauth/token');
  });
});

describe('Express: host parsers with their own limits', () => {
  it("the router's 64 KiB limit holds even when a host parser with a 10 MB limit read the body", async () => {
    const t = await setup();
    const app = express();
    app.use(express.urlencoded({ extended: false, limit: '10mb' }));
    app.use(createOAuthRouter(t.server));
    const base = await listen(app);
    const res = await fetch(`${base}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&refresh_token=x&pad=${'a'.repeat(500_000)}`,
    });
    expect(res.status).toBe(413);
  });

  it('express.json() before the router: dynamic registration still reads the JSON body', async () => {
    const t = await setup({ allowDynamicRegistration: true });
    const app = express();
    app.use(express.json());
    app.use(createOAuthRouter(t.server));
    const base = await listen(app);
    const res = await fetch(`${base}/v1/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'CLI', redirect_uris: ['http://127.0.0.1/cb'] }),
    });
    expect(res.status).toBe(201);
  });

  it('express.raw() before the router: a form token request still parses', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    const app = express();
    app.use(express.raw({ type: '*/*' }));
    app.use(createOAuthRouter(t.server));
    const base = await listen(app);
    const res = await fetch(`${base}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&refresh_token=${tokens.refresh_token}`,
    });
    expect(res.status).toBe(200);
  });
});

describe("Express: the router in front of the host's own routes", () => {
  // Requests for other paths leave the router at its first layer; the paths it serves must
  // still reach it in every form Express itself matches (any case, a trailing slash).
  async function app(basePath?: string, mount?: string, extend?: (router: Router) => void): Promise<string> {
    const t = await setup({ issuer: 'https://as.example' });
    const host = express();
    const router = createOAuthRouter(t.server, basePath === undefined ? {} : { basePath });
    extend?.(router);
    if (mount) host.use(mount, router);
    else host.use(router);
    host.use((req, res) => {
      res.status(299).type('text/plain').send(`host ${req.method} ${req.originalUrl}`);
    });
    return listen(host);
  }
  const post = (base: string, path: string) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=nope' });

  it.each([
    ['/v1/oauth/token', 400],
    ['/V1/OAuth/Token', 400],
    ['/v1/oauth/token/', 400],
    ['/v1/oauthx/token', 299],
    ['/v1/oauth', 299],
    ['/ping', 299],
    ['/x/v1/oauth/token', 299],
    ['/v1/oauth/%74oken', 299],
    ['/v1/oauth/token//', 299],
    ['/v1//oauth/token', 299],
    ['/v1/oauth/token;x', 299],
    ['/v1/oauth/token?x=/v1/oauth/token/', 400],
    ['/v1/oauth/REVOKE/', 400],
  ])('POST %s is answered by %s (400: the OAuth endpoint; 299: the host)', async (path, status) => {
    const res = await post(await app(), path);
    expect(res.status).toBe(status);
    if (status === 400)
      expect(await res.json()).toMatchObject({
        error: path.toLowerCase().includes('revoke') ? 'invalid_request' : 'unsupported_grant_type',
      });
    else expect(await res.text()).toBe(`host POST ${path}`);
  });

  it('the metadata in any case; other well-known documents belong to the host', async () => {
    const base = await app();
    expect((await fetch(`${base}/.Well-Known/OAuth-Authorization-Server`)).status).toBe(200);
    expect((await fetch(`${base}/.well-known/security.txt`)).status).toBe(299);
  });

  it('mounted under a path, and with a basePath holding regex characters', async () => {
    const mounted = await app(undefined, '/auth');
    expect((await post(mounted, '/auth/v1/oauth/token')).status).toBe(400);
    expect((await post(mounted, '/auth/other')).status).toBe(299);
    await close?.();
    await close?.();
    const tenant = await app('/t/:tenant/oauth'); // route syntax in basePath: Express matches it
    expect((await post(tenant, '/t/acme/oauth/token')).status).toBe(400);
    expect((await post(tenant, '/t/acme/other')).status).toBe(299);
    await close?.();
    const odd = await app('/api/o.auth');
    expect((await post(odd, '/api/o.auth/token')).status).toBe(400);
    expect((await post(odd, '/api/oXauth/token')).status).toBe(299);
  });

  it('routes a host adds to the returned router still answer, on its own paths and under basePath', async () => {
    const base = await app(undefined, undefined, (router) => {
      router.post('/login', (_req, res) => {
        res.status(298).send('login');
      });
      router.get('/v1/oauth/help', (_req, res) => {
        res.status(297).send('help');
      });
    });
    expect((await post(base, '/login')).status).toBe(298);
    expect((await fetch(`${base}/v1/oauth/help`)).status).toBe(297);
    expect((await post(base, '/v1/oauth/token')).status).toBe(400);
    expect((await post(base, '/elsewhere')).status).toBe(299);
  });

  it('the OAuth routes are Express routes: req.route is set for them (hosts label metrics with it)', async () => {
    const t = await setup();
    const host = express();
    host.use(
      createOAuthRouter(t.server, {
        onConsent: (req, res) => {
          res.status(200).send(`route ${(req.route as { path?: string } | undefined)?.path}`);
        },
      }),
    );
    const base = await listen(host);
    const res = await fetch(`${base}${t.authorizeUrl()}`, { headers: { cookie: t.ada } });
    expect(await res.text()).toBe('route /v1/oauth/authorize');
  });

  it('only A-Z fold, as in Express: a Kelvin sign (U+212A) is no k, even after a host decodes the path', async () => {
    const t = await setup();
    const host = express();
    host.use((req, _res, next) => {
      req.url = decodeURIComponent(req.url);
      next();
    });
    host.use(createOAuthRouter(t.server));
    host.use((_req, res) => {
      res.status(299).send('host');
    });
    const base = await listen(host);
    expect((await post(base, '/v1/oauth/to%E2%84%AAen')).status).toBe(299);
    expect((await post(base, '/v1/oauth/TOKEN')).status).toBe(400);
  });
});
