/**
 * The developer page on authgate's client management (docs/reference.md#managing-clients), as a
 * sequence in Chromium: Bob registers an app, gets tokens for it, edits its callback URL (a code
 * issued to the old one dies, the old one is refused, tokens stay), deletes it after a confirm
 * step (its tokens are then refused); and Ada's "Sign out of every app" (others keep theirs).
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADA, BOB, browserAvailable, connect, E2E_TIMEOUT, failure, navigate, shot, signIn, text, useBrowserDemo } from './harness.js';

describe.skipIf(!browserAvailable)('Managing applications in Chromium', { timeout: E2E_TIMEOUT }, () => {
  const h = useBrowserDemo();
  // The app's two callbacks, before and after the edit: servers that just say they got the request.
  let OLD_CALLBACK = '';
  let NEW_CALLBACK = '';
  const callbacks: Server[] = [];
  beforeAll(async () => {
    for (const path of ['/callback', '/cb']) {
      const server = createServer((_req, res) => res.setHeader('content-type', 'text/html').end('<p>callback</p>')).listen(0, '127.0.0.1');
      await once(server, 'listening');
      callbacks.push(server);
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
      if (path === '/callback') OLD_CALLBACK = url;
      else NEW_CALLBACK = url;
    }
  });
  afterAll(() => {
    for (const server of callbacks) server.close();
  });

  /** Authorize the app in the browser (consent if asked); the code its callback received. */
  async function authorize(page: Page, clientId: string, redirectUri: string): Promise<string> {
    const params = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'read' });
    await page.goto(`${h.platformUrl}/v1/oauth/authorize?${params}`);
    if (page.url().startsWith(h.platformUrl)) await navigate(page, page.getByRole('button', { name: 'Authorize' }));
    const code = new URL(page.url()).searchParams.get('code');
    if (!page.url().startsWith(redirectUri) || !code) throw new Error(`expected a code at ${redirectUri}, at ${page.url()}`);
    return code;
  }
  const token = async (params: Record<string, string>) => {
    const response = await fetch(`${h.platformUrl}/v1/oauth/token`, { method: 'POST', body: new URLSearchParams(params) });
    return (await response.json()) as { access_token?: string; error?: string };
  };
  const apiStatus = async (accessToken: string) =>
    (await fetch(`${h.platformUrl}/v2/account`, { headers: { authorization: `Bearer ${accessToken}` } })).status;

  it('register, get a token, edit the callback (old code and old callback dead), delete after confirming: its tokens are refused', async () => {
    const page = await h.newPage();
    await page.goto(`${h.platformUrl}/developer`);
    await signIn(page, BOB);
    await page.getByLabel('Application name').fill("Bob's CLI");
    await page.getByLabel('Callback URL').fill(OLD_CALLBACK);
    await navigate(page, page.getByRole('button', { name: 'Register' }));
    const clientId = await text(page, 'main code');
    const clientSecret = await text(page, '.secret');
    const credentials = { client_id: clientId, client_secret: clientSecret };
    expect(await h.demo.platform.server.listClients({ owner: BOB.uuid })).toMatchObject([{ clientId, name: "Bob's CLI" }]);

    const first = await token({
      grant_type: 'authorization_code',
      code: await authorize(page, clientId, OLD_CALLBACK),
      redirect_uri: OLD_CALLBACK,
      ...credentials,
    });
    expect(await apiStatus(first.access_token!)).toBe(200);
    const pendingCode = await authorize(page, clientId, OLD_CALLBACK); // issued, not yet exchanged

    // Edit: a new name and callback URL.
    await page.goto(`${h.platformUrl}/developer`);
    await navigate(page, page.locator('tr', { hasText: "Bob's CLI" }).getByRole('link', { name: 'Edit' }));
    expect(await page.title()).toBe("Edit Bob's CLI · Nimbus");
    await page.getByLabel('Application name').fill("Bob's CLI v2");
    await page.getByLabel('Callback URL').fill('ftp://nope');
    await navigate(page, page.getByRole('button', { name: 'Save' }));
    expect(await text(page, '.error')).toMatch(/callback URL/i); // refused, explained, nothing saved
    await page.getByLabel('Callback URL').fill(NEW_CALLBACK);
    await shot(page, 'manage-01-edit');
    await navigate(page, page.getByRole('button', { name: 'Save' }));
    expect(await text(page, '.flash')).toBe("Bob's CLI v2 is saved. Its old callback URL no longer works.");
    expect(await text(page, 'main')).toContain(NEW_CALLBACK);
    await shot(page, 'manage-02-edited');
    // The long client ID scrolls in its own box: the table stays inside the page's column.
    const [table, main] = await Promise.all([page.locator('table').boundingBox(), page.locator('main').boundingBox()]);
    expect(table!.x + table!.width).toBeLessThanOrEqual(main!.x + main!.width);

    expect((await token({ grant_type: 'authorization_code', code: pendingCode, redirect_uri: OLD_CALLBACK, ...credentials })).error).toBe(
      'invalid_grant',
    );
    const refused = await page.goto(
      `${h.platformUrl}/v1/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: OLD_CALLBACK, response_type: 'code' })}`,
    );
    expect(refused?.status()).toBe(400);
    const second = await token({
      grant_type: 'authorization_code',
      code: await authorize(page, clientId, NEW_CALLBACK),
      redirect_uri: NEW_CALLBACK,
      ...credentials,
    });
    expect(await apiStatus(second.access_token!)).toBe(200);
    expect(await apiStatus(first.access_token!)).toBe(200); // tokens already issued stay valid

    // Delete: one click asks, naming the app; only Confirm deletes.
    await page.goto(`${h.platformUrl}/developer`);
    await navigate(page, page.locator('tr', { hasText: "Bob's CLI v2" }).getByRole('button', { name: 'Delete' }));
    expect(await text(page, '#confirm')).toContain("Delete Bob's CLI v2? Every token it holds stops working at once");
    await shot(page, 'manage-03-delete-confirm');
    expect(await apiStatus(first.access_token!)).toBe(200);
    await navigate(page, page.getByRole('button', { name: 'Delete the application' }));
    expect(await text(page, '.flash')).toBe("Bob's CLI v2 is deleted.");
    expect(await text(page, 'main')).toContain('You have not registered an application yet.');
    expect(await apiStatus(first.access_token!)).toBe(401);
    expect(await apiStatus(second.access_token!)).toBe(401);
    expect((await token({ grant_type: 'refresh_token', refresh_token: 'x', ...credentials })).error).toBe('invalid_client');
  });

  it('"Sign out of every app" asks first, naming the apps; then every app of that account is refused, and other accounts keep theirs', async () => {
    const bob = await h.newPage();
    await connect(bob, h.appUrl, BOB);
    const page = await h.newPage();
    await connect(page, h.appUrl, ADA);

    await page.goto(`${h.platformUrl}/account/applications`);
    await navigate(page, page.getByRole('button', { name: 'Sign out of every app' }));
    expect(await text(page, '#confirm')).toContain('End the access of every application to your Nimbus account (StatusBoard)?');
    await shot(page, 'manage-04-sign-out-everywhere-confirm');
    await navigate(page, page.getByRole('link', { name: 'Cancel' }));
    expect(await text(page, 'main')).toContain('StatusBoard'); // one click did nothing

    await navigate(page, page.getByRole('button', { name: 'Sign out of every app' }));
    await navigate(page, page.locator('#confirm').getByRole('button', { name: 'Sign out of every app' }));
    expect(await text(page, '.flash')).toBe('Every application is signed out: none can access your account any more.');
    expect(await text(page, 'main')).toContain('You have not authorized any application.');

    await page.goto(`${h.appUrl}/`);
    await navigate(page, page.getByRole('button', { name: 'GET /v2/account' }));
    expect((await failure(page)).code).toBe('invalid_token');
    await navigate(page, page.locator('#connect-silent'));
    expect((await failure(page)).code).toBe('consent_required');

    await bob.goto(`${h.appUrl}/`);
    await navigate(bob, bob.getByRole('button', { name: 'GET /v2/account' }));
    expect(await text(bob, '#result h2')).toBe('GET /v2/account: 200');
  });

  it('StatusBoard shows an error from the callback as text: a planted code and description are escaped', async () => {
    const page = await h.newPage();
    const started = await page.context().request.get(`${h.appUrl}/connect`, { maxRedirects: 0 });
    const state = new URL(started.headers()['location']!).searchParams.get('state')!;
    const callback = new URLSearchParams({ error: '<b>bold</b>', error_description: '<img src=x id=planted>', state, iss: h.platformUrl });
    await page.goto(`${h.appUrl}/callback?${callback}`);
    expect(await failure(page)).toMatchObject({ code: '<b>bold</b>', description: '<img src=x id=planted>' });
    expect(await page.locator('#result b, #planted').count()).toBe(0);
    await shot(page, 'manage-05-app-error-escaped');
  });
});
