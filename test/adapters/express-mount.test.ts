/**
 * Express hosts that mount the router under a path, or that parse bodies before it with their
 * own (larger) limits or parsers: the pages, the metadata and the limits must still hold.
 */
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createOAuthRouter } from '../../adapters/express/index.js';
import { setup } from '../helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => { await close?.(); close = undefined; });

async function listen(app: Express): Promise<string> {
  const listener = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => listener.once('listening', resolve));
  close = () => new Promise((resolve) => { listener.closeAllConnections(); listener.close(() => resolve()); });
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
    expect(page.headers.get('set-cookie')).toContain('Path=/auth/v1/oauth/authorize');
    const interaction = /name="interaction" value="([^"]+)"/.exec(html)![1]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const decided = await fetch(`${base}/auth/v1/oauth/authorize/decision`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${t.ada}; authgate_csrf=${csrf}` },
      body: new URLSearchParams({ interaction, csrf, decision: 'approve' }).toString(),
    });
    expect(decided.status).toBe(303);
    expect(decided.headers.get('location')).toMatch(/^https:\/\/client\.example\/cb\?code=/);
    const doc = await (await fetch(`${base}/auth/.well-known/oauth-authorization-server`)).json() as Record<string, string>;
    expect(doc.token_endpoint).toBe('https://as.example/auth/v1/oauth/token');
  });
});

describe('Express: host parsers with their own limits', () => {
  it('the router\'s 64 KiB limit holds even when a host parser with a 10 MB limit read the body', async () => {
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
