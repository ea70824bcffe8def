/**
 * `response_mode=form_post` (OAuth 2.0 Form Post Response Mode) in Chromium: authgate behind
 * the node:http adapter with the `openid` option, a client whose callback is another origin (a
 * test server that records what it receives), a signed-in user who approves. The page authgate
 * answers must post `code`, `state` and `iss` to the callback by itself, within its CSP (no
 * violation reported), and, with scripts off, by its button. A callback that answers the post
 * with a redirect to a third origin (a relying party's usual "signed in, now go to the app") must
 * take the browser there: Chromium checks a CSP `form-action` against every redirect after the
 * submission too, so the page must not restrict it to the callback's origin.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOAuthHandler } from '../../adapters/node/index.js';
import { AuthorizationServer, MemoryStorage } from '../../src/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA } from '../fixtures.js';
import { browserAvailable, closeContexts, E2E_TIMEOUT, workerBrowser } from './harness.js';

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe.skipIf(!browserAvailable)('response_mode=form_post in Chromium', { timeout: E2E_TIMEOUT }, () => {
  let browser: Browser;
  const servers: Server[] = [];
  /** What the callback received: method, path and form body of each request. */
  const received: { method: string; url: string; body: string; contentType: string | undefined }[] = [];
  let issuer = '';
  let callback = '';
  let rpOrigin = '';
  /** Another origin, where a callback that redirects sends the browser (the relying party's app). */
  let elsewhere = '';
  let oauth: AuthorizationServer;
  let client: { clientId: string; clientSecret: string };
  /** Clients whose callback answers the post with a 302 or a 303 to `elsewhere`. */
  const redirecting: Record<number, { clientId: string; clientSecret: string }> = {};
  let sid = '';

  beforeAll(async () => {
    const app = createServer();
    const rp = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        received.push({ method: req.method ?? '', url: req.url ?? '', body, contentType: req.headers['content-type'] });
        const away = /^\/cb-(302|303)$/.exec(req.url ?? '');
        if (away) res.writeHead(Number(away[1]), { location: `${elsewhere}/app` }).end();
        else res.writeHead(200, { 'content-type': 'text/plain' }).end(`received ${req.method}`);
      });
    });
    const landing = createServer((req, res) => {
      received.push({ method: req.method ?? '', url: `elsewhere${req.url ?? ''}`, body: '', contentType: undefined });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('the app');
    });
    servers.push(app, rp, landing);
    issuer = await listen(app);
    rpOrigin = await listen(rp);
    elsewhere = await listen(landing);
    callback = `${rpOrigin}/cb`;
    const clock = new FakeClock();
    const sessions = new FakeSessions(clock);
    oauth = new AuthorizationServer({ storage: new MemoryStorage(), sessions, clock, issuer, openid: {} });
    client = await oauth.registerClient({ name: 'Form Post App', redirectUri: callback });
    for (const status of [302, 303])
      redirecting[status] = await oauth.registerClient({ name: `Redirecting App ${status}`, redirectUri: `${rpOrigin}/cb-${status}` });
    sid = sessions.signIn(ADA).replace(/^sid=/, '');
    const handler = createOAuthHandler(oauth, { loginUrl: '/login' });
    app.on('request', (req, res) => handler(req, res));
    browser = await workerBrowser();
  });
  afterAll(async () => {
    if (browser) await closeContexts(browser);
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  /**
   * Approve a form_post request in a fresh browser context: the callback's request, the CSP
   * reports seen, and where the browser ended (`lands`: the callback itself, or where it redirects).
   */
  async function approveInBrowser(
    javaScriptEnabled: boolean,
    app: { clientId: string } = client,
    redirectUri = callback,
    lands: { url: string; body: string } = { url: callback, body: 'received POST' },
  ) {
    const context = await browser.newContext({ javaScriptEnabled });
    try {
      await context.addCookies([{ name: 'sid', value: sid, url: issuer }]);
      const page = await context.newPage();
      const violations: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      });
      const state = `st-${javaScriptEnabled ? 'js' : 'nojs'}`;
      const url = `${issuer}/v1/oauth/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'openid', response_mode: 'form_post', state, nonce: 'n1' })}`;
      await page.goto(url);
      const before = received.length;
      const path = new URL(redirectUri).pathname;
      const formPage = page.waitForResponse((r) => r.url().endsWith('/v1/oauth/authorize/decision'));
      await page.getByRole('button', { name: 'Authorize' }).click();
      const answer = await formPage;
      expect(answer.status()).toBe(200);
      expect(answer.headers()['cache-control']).toBe('no-store');
      if (!javaScriptEnabled) {
        await page.waitForLoadState();
        expect(received.slice(before).filter((r) => r.url === path)).toEqual([]); // nothing sent without the user
        await page.getByRole('button', { name: 'Continue' }).click();
      }
      await page.waitForURL(lands.url);
      expect(await page.textContent('body')).toBe(lands.body);
      // The browser also asks the callback's origin for /favicon.ico.
      const request = received.slice(before).find((r) => r.url === path)!;
      return { request, violations, state, url: page.url(), seen: received.slice(before).map((r) => `${r.method} ${r.url}`) };
    } finally {
      await context.close();
    }
  }

  it('the page posts code, state and iss to the callback by itself, within its CSP; the code is exchanged', async () => {
    const { request, violations, state, url } = await approveInBrowser(true);
    expect(violations).toEqual([]);
    expect(url).toBe(callback); // the code never was in an address
    expect(request).toMatchObject({ method: 'POST', url: '/cb', contentType: 'application/x-www-form-urlencoded' });
    const fields = Object.fromEntries(new URLSearchParams(request.body));
    expect(Object.keys(fields)).toEqual(['code', 'state', 'iss']);
    expect(fields).toMatchObject({ state, iss: issuer });
    const token = await fetch(`${issuer}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: fields.code!,
        redirect_uri: callback,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }),
    });
    expect(token.status).toBe(200);
    expect((await token.json()) as Record<string, unknown>).toHaveProperty('id_token');
  });

  it.each([302, 303])(
    'a callback that answers the post with a %i to another origin takes the browser there, without a CSP violation',
    async (status) => {
      const app = redirecting[status]!;
      const redirectUri = `${rpOrigin}/cb-${status}`;
      const { request, violations, url, seen } = await approveInBrowser(true, app, redirectUri, {
        url: `${elsewhere}/app`,
        body: 'the app',
      });
      expect(violations).toEqual([]);
      expect(url).toBe(`${elsewhere}/app`);
      expect(request).toMatchObject({ method: 'POST', url: `/cb-${status}` });
      expect(seen).toContain('GET elsewhere/app');
      const fields = Object.fromEntries(new URLSearchParams(request.body));
      expect(Object.keys(fields)).toEqual(['code', 'state', 'iss']);
    },
  );

  it('with scripts off, nothing is sent until the user presses the button; then the same fields', async () => {
    const { request, state } = await approveInBrowser(false);
    expect(request.method).toBe('POST');
    const fields = Object.fromEntries(new URLSearchParams(request.body));
    expect(Object.keys(fields)).toEqual(['code', 'state', 'iss']);
    expect(fields.state).toBe(state);
  });
});
