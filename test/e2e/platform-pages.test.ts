/**
 * The platform's own pages in a real browser: "Authorized applications" (revoke, and the app's
 * next API call fails), the developer page (register, secret shown once, reset, revoke all
 * tokens), the error pages, anti-framing, CSRF on the platform's forms, sign-out.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ADA, BOB, browserAvailable, connect, E2E_TIMEOUT, failure, navigate, shot, signIn, text, useBrowserDemo } from './harness.js';

describe.skipIf(!browserAvailable)('Nimbus pages in Chromium', { timeout: E2E_TIMEOUT }, () => {
  const h = useBrowserDemo();

  it('Authorized applications: the user revokes StatusBoard, whose next API call is 401 and next prompt=none consent_required', async () => {
    const page = await h.newPage();
    await connect(page, h.appUrl, ADA);

    await page.goto(`${h.platformUrl}/account/applications`);
    const row = page.locator('tr', { hasText: 'StatusBoard' });
    expect(await row.textContent()).toContain('Read and write');
    expect(await row.textContent()).toMatch(/\d{4}, \d\d:\d\d UTC/);
    await shot(page, 'platform-01-authorized-apps');

    // One click asks first, naming the app; Cancel changes nothing; Confirm revokes.
    await navigate(page, row.getByRole('button', { name: 'Revoke access' }));
    expect(await page.title()).toBe('Revoke access · Nimbus');
    expect(await text(page, '#confirm')).toContain('Revoke the access of StatusBoard to your Nimbus account?');
    await shot(page, 'platform-01b-revoke-access-confirm');
    await navigate(page, page.getByRole('link', { name: 'Cancel' }));
    expect(await text(page, 'main')).toContain('StatusBoard'); // not revoked
    await navigate(page, page.locator('tr', { hasText: 'StatusBoard' }).getByRole('button', { name: 'Revoke access' }));
    await navigate(page, page.locator('#confirm').getByRole('button', { name: 'Revoke access' }));
    expect(await text(page, '.flash')).toBe('StatusBoard can no longer access your account.');
    expect(await text(page, 'main')).toContain('You have not authorized any application.');
    await shot(page, 'platform-02-authorized-apps-revoked');

    await page.goto(`${h.appUrl}/`);
    await navigate(page, page.getByRole('button', { name: 'GET /v2/account' }));
    expect(await text(page, '#result h2')).toBe('GET /v2/account failed');
    expect(await failure(page)).toMatchObject({ code: 'invalid_token' });
    expect((await failure(page)).sentence).toMatch(/^Nimbus answered invalid_token \(HTTP 401\): Nimbus refused the access token/);
    await shot(page, 'platform-03-app-api-401-after-revoke');

    await navigate(page, page.locator('#connect-silent'));
    expect((await failure(page)).code).toBe('consent_required');
  });

  it('Developer: register an app, its secret shown once; reset the secret; bad callback URL explained', async () => {
    const page = await h.newPage();
    await page.goto(`${h.platformUrl}/developer`);
    expect(new URL(page.url()).pathname).toBe('/login'); // sign in first, then back here
    await signIn(page, BOB);
    expect(new URL(page.url()).pathname).toBe('/developer');
    expect(await text(page, 'main')).toContain('You have not registered an application yet.');

    await page.getByLabel('Application name').fill("Bob's deploy bot");
    await page.getByLabel('Callback URL').fill('http://example.com/callback');
    await navigate(page, page.getByRole('button', { name: 'Register' }));
    expect(await text(page, '.error')).toMatch(/The callback URL .*https/);
    await shot(page, 'platform-04-developer-bad-callback');

    await page.getByLabel('Callback URL').fill('http://127.0.0.1:8123/callback');
    await navigate(page, page.getByRole('button', { name: 'Register' }));
    expect(await page.title()).toBe("Bob's deploy bot is registered · Nimbus");
    const clientId = await text(page, 'main code');
    const secret = await text(page, '.secret');
    expect(secret).toMatch(/^[\w-]{43}$/);
    await shot(page, 'platform-05-developer-registered');

    // The token endpoint tells a right secret (then the made-up code is invalid_grant) from a wrong one.
    const exchange = async (clientSecret: string) => {
      const response = await fetch(`${h.platformUrl}/v1/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: 'made-up',
          redirect_uri: 'http://127.0.0.1:8123/callback',
          client_id: clientId,
          client_secret: clientSecret,
        }),
      });
      return ((await response.json()) as { error: string }).error;
    };
    expect(await exchange(secret)).toBe('invalid_grant');

    await page.goto(`${h.platformUrl}/developer`);
    expect(await page.locator('main').textContent()).not.toContain(secret); // shown once only
    const row = page.locator('tr', { hasText: "Bob's deploy bot" });
    expect(await row.textContent()).toContain(clientId);
    await shot(page, 'platform-06-developer-apps');

    await navigate(page, row.getByRole('button', { name: 'Reset client secret' }));
    expect(await text(page, '#confirm')).toContain("Reset the client secret of Bob's deploy bot?");
    expect(await exchange(secret)).toBe('invalid_grant'); // one click did not reset it
    await shot(page, 'platform-06b-developer-reset-confirm');
    await navigate(page, page.getByRole('button', { name: 'Reset the secret' }));
    expect(await page.title()).toBe("New client secret for Bob's deploy bot · Nimbus");
    const newSecret = await text(page, '.secret');
    expect(newSecret).not.toBe(secret);
    expect(await exchange(secret)).toBe('invalid_client');
    expect(await exchange(newSecret)).toBe('invalid_grant');
  });

  it('Developer: "Revoke all tokens" ends every token of StatusBoard; its users stay authorized', async () => {
    const page = await h.newPage();
    await connect(page, h.appUrl, ADA); // StatusBoard is registered on Ada's developer page

    await page.goto(`${h.platformUrl}/developer`);
    const row = page.locator('tr', { hasText: 'StatusBoard' });
    // StatusBoard's secret is the demo's: no reset, edit or delete of it here.
    expect(await row.getByRole('button', { name: 'Reset client secret' }).count()).toBe(0);
    expect(await row.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    expect(await row.getByRole('link', { name: 'Edit' }).count()).toBe(0);
    // The routes refuse it too, even with the session's CSRF token and confirm=yes.
    const csrf = (await page.locator('input[name=csrf]').first().getAttribute('value'))!;
    for (const action of ['reset-secret', 'delete', 'edit']) {
      const forced = await page.context().request.post(`${h.platformUrl}/developer/${action}`, {
        form: { client_id: h.demo.client.clientId, csrf, confirm: 'yes', name: 'Hijacked', redirect_uri: 'https://evil.example/cb' },
        maxRedirects: 0,
      });
      expect([action, forced.status(), forced.headers()['location']]).toEqual([action, 303, '/developer']);
    }
    expect(await h.demo.platform.server.getClient(h.demo.client.clientId)).toMatchObject({ name: 'StatusBoard' });
    await navigate(page, row.getByRole('button', { name: 'Revoke all tokens' }));
    expect(await text(page, '#confirm')).toContain('Revoke every token StatusBoard holds, for every user?');
    await page.goto(`${h.appUrl}/`);
    await navigate(page, page.getByRole('button', { name: 'GET /v2/account' }));
    expect(await text(page, '#result h2')).toBe('GET /v2/account: 200'); // one click did not revoke
    await page.goto(`${h.platformUrl}/developer`);
    await navigate(page, page.locator('tr', { hasText: 'StatusBoard' }).getByRole('button', { name: 'Revoke all tokens' }));
    await navigate(page, page.locator('#confirm').getByRole('button', { name: 'Revoke all tokens' }));
    expect(await text(page, '.flash')).toContain('Every token StatusBoard held is revoked.');
    await shot(page, 'platform-07-developer-tokens-revoked');

    await page.goto(`${h.appUrl}/`);
    await navigate(page, page.getByRole('button', { name: 'GET /v2/account' }));
    expect((await failure(page)).sentence).toContain('invalid_token (HTTP 401)');
    await navigate(page, page.getByRole('button', { name: 'Refresh the token' }));
    expect((await failure(page)).code).toBe('invalid_grant');
    await navigate(page, page.locator('#connect-silent')); // the consent stays: new tokens without a page
    await navigate(page, page.getByRole('button', { name: 'GET /v2/account' }));
    expect(await text(page, '#result h2')).toBe('GET /v2/account: 200');
  });

  it('error pages say in plain words what is wrong with redirect_uri and scope', async () => {
    const page = await h.newPage();
    const { clientId } = h.demo.client;
    const authorize = (params: Record<string, string>) =>
      `${h.platformUrl}/v1/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', ...params })}`;

    const wrongCallback = await page.goto(authorize({ redirect_uri: 'https://evil.example/steal' }));
    expect(wrongCallback?.status()).toBe(400);
    expect(page.url()).toContain(h.platformUrl); // no redirect to the unverified callback
    expect(await text(page, 'body')).toContain(
      'The redirect URI is not valid: it must equal the callback URL registered for this application.',
    );
    await shot(page, 'platform-08-error-redirect-uri');

    await page.goto(authorize({ redirect_uri: `${h.appUrl}/callback`, scope: 'admin' }));
    expect(await text(page, 'body')).toContain('The requested scope is invalid, unknown or malformed.');
    await shot(page, 'platform-09-error-scope');
  });

  it('pages of Nimbus and StatusBoard do not render inside a frame of another origin', async () => {
    // A page of another origin that frames them, next to a frame that allows it (to show the check bites).
    const framer = createServer((req, res) => {
      res.setHeader('content-type', 'text/html');
      if (req.url === '/frameable') return res.end('<p id="frameable">This page may be framed.</p>');
      res.end(`<h1>evil.example</h1>
<iframe name="control" src="/frameable" width="500" height="80"></iframe>
<iframe name="signin" src="${h.platformUrl}/login" width="500" height="200"></iframe>
<iframe name="error" src="${h.platformUrl}/v1/oauth/authorize?client_id=x" width="500" height="200"></iframe>
<iframe name="app" src="${h.appUrl}/" width="500" height="200"></iframe>`);
    }).listen(0, '127.0.0.1');
    await once(framer, 'listening');
    try {
      const page = await h.newPage();
      await page.goto(`http://127.0.0.1:${(framer.address() as AddressInfo).port}/`);
      await page.waitForLoadState('load');
      const frame = (name: string) => page.frame({ name })!;
      expect(await frame('control').locator('#frameable').count()).toBe(1);
      for (const name of ['signin', 'error', 'app']) {
        expect(frame(name).url(), name).toMatch(/^chrome-error:/); // blocked by X-Frame-Options / frame-ancestors
        const shown = (await frame(name).locator('body').textContent()) ?? '';
        expect(shown, name).not.toMatch(/Nimbus|StatusBoard|Sign in|authorization request/);
      }
      await shot(page, 'platform-10-framing-blocked');
    } finally {
      framer.close();
    }
  });

  it("the platform's forms refuse a POST without the session's CSRF token; sign-out ends the session", async () => {
    const page = await h.newPage();
    await connect(page, h.appUrl, BOB);
    const request = page.context().request; // the browser's cookies, but no token from a page
    const forged = await request.post(`${h.platformUrl}/account/applications/revoke`, {
      form: { client_id: h.demo.client.clientId },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    // The confirm steps' forms too: `confirm=yes` without the session's token acts on nothing.
    for (const [path, form] of [
      ['/account/applications/revoke', { client_id: h.demo.client.clientId, confirm: 'yes' }],
      ['/account/applications/revoke-all', { confirm: 'yes' }],
      ['/developer/revoke-tokens', { client_id: h.demo.client.clientId, confirm: 'yes' }],
      ['/developer/delete', { client_id: h.demo.client.clientId, confirm: 'yes' }],
    ] as const) {
      expect([path, (await request.post(`${h.platformUrl}${path}`, { form, maxRedirects: 0 })).status()]).toEqual([path, 403]);
    }
    expect(
      (
        await request.post(`${h.platformUrl}/developer/apps`, { form: { name: 'x', redirect_uri: 'https://x.example/cb', csrf: 'guess' } })
      ).status(),
    ).toBe(403);
    expect((await request.post(`${h.platformUrl}/login`, { form: { email: ADA.email, password: ADA.password } })).status()).toBe(403);
    await page.goto(`${h.platformUrl}/account/applications`);
    expect(await text(page, 'main')).toContain('StatusBoard'); // still authorized

    await page.goto(`${h.platformUrl}/`);
    expect(await text(page, 'h1')).toBe('Welcome, Bob Builder');
    await shot(page, 'platform-11-home');
    await navigate(page, page.getByRole('button', { name: 'Sign out' }));
    await shot(page, 'platform-12-signed-out');
    expect(await page.locator('header').getByRole('link', { name: 'Sign in' }).count()).toBe(1);
    await page.goto(`${h.appUrl}/`);
    await navigate(page, page.locator('#connect-silent'));
    expect((await failure(page)).code).toBe('login_required');
  });
});
