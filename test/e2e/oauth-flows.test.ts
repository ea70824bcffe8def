/**
 * The OAuth flows in a real browser, as a user of StatusBoard (the third-party app) and Nimbus
 * (the platform with authgate) lives them: code flow, implicit flow, deny, prompt=none,
 * prompt=login / max_auth_age, and "Use another account".
 */
import { describe, expect, it } from 'vitest';
import {
  ADA,
  BOB,
  browserAvailable,
  connect,
  E2E_TIMEOUT,
  failure,
  json,
  navigate,
  pagesShown,
  shot,
  signIn,
  text,
  useBrowserDemo,
  type ShownFragment,
  type ShownTokens,
} from './harness.js';

describe.skipIf(!browserAvailable)('OAuth flows in Chromium', { timeout: E2E_TIMEOUT }, () => {
  const h = useBrowserDemo();
  const apiAccount = (token: string) => fetch(`${h.platformUrl}/v2/account`, { headers: { authorization: `Bearer ${token}` } });

  it('code flow: sign in, consent, token, API call, write, refresh, revoke', async () => {
    const page = await h.newPage();
    await page.goto(`${h.appUrl}/`);
    await shot(page, 'flows-01-app-home');

    await navigate(page, page.locator('#connect'));
    expect(page.url()).toMatch(new RegExp(`^${h.platformUrl}/login\\?interaction=`));
    expect(await text(page, 'main')).toContain('StatusBoard asks for access to your Nimbus account');
    expect(await text(page, 'main')).toContain('ada@example.com');
    await shot(page, 'flows-02-platform-sign-in');

    await signIn(page, { ...ADA, password: 'wrong' });
    expect(await text(page, '.error')).toBe('Wrong e-mail or password.');
    expect(await page.getByLabel('E-mail').inputValue()).toBe('ada@example.com');
    await signIn(page, ADA); // still in the same authorization request
    const cookie = (await page.context().cookies(h.platformUrl)).find((c) => c.name === 'nimbus_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    expect(await page.title()).toBe('Authorize StatusBoard · Nimbus');
    const consent = await text(page, 'body');
    expect(consent).toContain('Signed in as Ada Lovelace (ada@example.com)');
    expect(consent).toContain('See your account and resources (read-only).');
    expect(consent).toContain('Create, change and delete resources in your account.');
    await shot(page, 'flows-03-consent');

    await navigate(page, page.getByRole('button', { name: 'Authorize' }));
    expect(page.url()).toBe(`${h.appUrl}/`); // the code left the address bar
    expect(await text(page, '#result')).toContain('Connected');
    const tokens = await json<ShownTokens>(page, '#token-response');
    expect(tokens).toMatchObject({
      token_type: 'bearer',
      expires_in: 2592000,
      scope: 'read write',
      info: { name: 'Ada Lovelace', email: 'ada@example.com', uuid: ADA.uuid },
    });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(await text(page, '#connected')).toContain('Connected to Nimbus as Ada Lovelace');
    await shot(page, 'flows-04-app-connected');

    await navigate(page, page.getByRole('button', { name: 'GET /v2/account' }));
    expect(await text(page, '#result h2')).toBe('GET /v2/account: 200');
    expect(await json(page, '#result pre')).toMatchObject({ account: { email: 'ada@example.com', uuid: ADA.uuid }, scope: 'read write' });
    await shot(page, 'flows-05-app-api-account');

    await navigate(page, page.getByRole('button', { name: 'POST /v2/droplets' }));
    expect(await text(page, '#result h2')).toBe('POST /v2/droplets: 201');
    expect((await json(page, '#result pre')).droplet).toMatchObject({ name: expect.stringMatching(/^statusboard-/), status: 'new' });

    await navigate(page, page.getByRole('button', { name: 'Refresh the token' }));
    expect(await text(page, '#result h2')).toContain('Refreshed');
    const refreshed = await json<ShownTokens>(page, '#token-response');
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await apiAccount(tokens.access_token)).status).toBe(401); // the old pair is gone
    expect((await apiAccount(refreshed.access_token)).status).toBe(200);
    await shot(page, 'flows-06-app-refreshed');

    await navigate(page, page.getByRole('button', { name: 'Disconnect (revoke the token)' }));
    expect(await text(page, '#result h2')).toContain('Nimbus revoked the token');
    expect(await page.locator('#connect').count()).toBe(1);
    expect((await apiAccount(refreshed.access_token)).status).toBe(401);
  });

  it('implicit flow: the browser reads the token from the fragment, checks state, calls the API and revokes', async () => {
    const page = await h.newPage();
    await page.goto(`${h.appUrl}/`);
    await navigate(page, page.locator('#implicit-connect'));
    await signIn(page, ADA);
    const consent = await text(page, 'body');
    expect(consent).toContain('See your account and resources (read-only).');
    expect(consent).not.toContain('Create, change and delete');

    await navigate(page, page.getByRole('button', { name: 'Authorize' }));
    await page.locator('#implicit-status', { hasText: 'Connected in the browser' }).waitFor();
    expect(page.url()).toBe(`${h.appUrl}/callback`); // the script removed the token from the address bar
    const fragment = await json<ShownFragment>(page, '#implicit-output');
    expect(fragment).toMatchObject({ token_type: 'bearer', expires_in: '2592000', scope: 'read', state: expect.any(String) });
    expect(fragment.refresh_token).toBeUndefined();
    await shot(page, 'flows-07-implicit-callback');

    await page.locator('#implicit-call').click();
    await page.locator('#implicit-api', { hasText: 'GET /v2/account: 200' }).waitFor();
    expect(await text(page, '#implicit-api')).toContain('ada@example.com');
    await shot(page, 'flows-08-implicit-api-account');

    await page.locator('#implicit-revoke').click();
    await page.locator('#implicit-api', { hasText: 'POST /v1/oauth/revoke: 200' }).waitFor();
    await page.locator('#implicit-call').click();
    await page.locator('#implicit-api', { hasText: 'GET /v2/account: 401' }).waitFor();
    expect(await text(page, '#implicit-api')).toContain('invalid_token');
    expect((await apiAccount(fragment.access_token)).status).toBe(401);

    // A callback this browser did not ask for (a forged or replayed link): nothing of it is used.
    await page.goto('about:blank');
    await page.goto(`${h.appUrl}/callback#access_token=planted&token_type=bearer&state=guessed&scope=read`);
    await page.locator('#implicit-status', { hasText: 'State mismatch' }).waitFor();
    expect(await page.locator('#implicit-actions').isHidden()).toBe(true);
    await shot(page, 'flows-09-implicit-state-mismatch');
  });

  it('deny: the app is told access_denied, in the code flow and in the implicit flow', async () => {
    const page = await h.newPage();
    await page.goto(`${h.appUrl}/`);
    await navigate(page, page.locator('#connect'));
    await signIn(page, BOB);
    await navigate(page, page.getByRole('button', { name: 'Deny' }));
    expect(page.url()).toBe(`${h.appUrl}/`);
    expect(await text(page, '#result h2')).toBe('The authorization did not succeed');
    expect(await failure(page)).toEqual({
      code: 'access_denied',
      description: 'The user denied the authorization request.',
      sentence: 'Nimbus answered access_denied: You declined on Nimbus: StatusBoard got no access.',
    });
    expect(await page.locator('#result pre').count()).toBe(0); // words, not raw JSON
    await shot(page, 'flows-10-app-access-denied');

    await navigate(page, page.locator('#implicit-connect'));
    await navigate(page, page.getByRole('button', { name: 'Deny' }));
    await page.locator('#implicit-status', { hasText: 'did not succeed' }).waitFor();
    expect(await text(page, '#implicit-status')).toBe(
      'The authorization did not succeed: Nimbus answered access_denied. The user denied the authorization request.',
    );
    expect((await json(page, '#implicit-output')).error).toBe('access_denied');
  });

  it('prompt=none: login_required when signed out, consent_required before any consent, and silent re-authorization after one', async () => {
    const page = await h.newPage();
    const shown = pagesShown(page);
    await page.goto(`${h.appUrl}/`);
    await navigate(page, page.locator('#connect-silent'));
    expect(await text(page, '#result h2')).toBe('The silent reconnect did not succeed: no page was shown');
    expect((await failure(page)).code).toBe('login_required');
    expect(await text(page, '#result-note')).toContain('instead of asking you it sent the browser straight back with an error');
    await shot(page, 'flows-11a-app-silent-login-required');

    await page.goto(`${h.platformUrl}/login`);
    await signIn(page, BOB);
    await page.goto(`${h.appUrl}/`);
    await navigate(page, page.locator('#connect-silent'));
    expect((await failure(page)).code).toBe('consent_required');

    const first = await connect(page, h.appUrl, BOB); // Bob authorizes once…
    shown.length = 0;
    await navigate(page, page.locator('#connect-silent')); // …then StatusBoard gets a new token without showing anything
    expect(await text(page, '#result h2')).toBe('Reconnected silently: no page was shown');
    expect(await text(page, '#result-note')).toContain('showing no sign-in or consent page');
    const second = await json<ShownTokens>(page, '#token-response');
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.info.email).toBe('bob@example.com');
    expect(shown.filter((url) => url.startsWith(h.platformUrl))).toEqual([]);
    expect(shown).toEqual([`${h.appUrl}/`]);
    await shot(page, 'flows-11-app-silent-reauthorization');
  });

  it('prompt=login and max_auth_age: a signed-in user signs in again before the consent page', async () => {
    const page = await h.newPage();
    await connect(page, h.appUrl, ADA);

    await navigate(page, page.locator('#connect-login'));
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(await text(page, 'main')).toContain('You are signed in as Ada Lovelace. To continue to StatusBoard, sign in again');
    await shot(page, 'flows-12-sign-in-again');
    await signIn(page, ADA);
    expect(await page.title()).toBe('Authorize StatusBoard · Nimbus');
    await navigate(page, page.getByRole('button', { name: 'Authorize' }));
    expect(await text(page, '#result h2')).toContain('Connected');

    // Signed in seconds ago: max_auth_age=60 goes straight to the consent page; max_auth_age=0 does not.
    await navigate(page, page.locator('#connect-max-age'));
    expect(await page.title()).toBe('Authorize StatusBoard · Nimbus');
    await page.goto(`${h.appUrl}/connect?max_auth_age=0`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await signIn(page, ADA);
    expect(await page.title()).toBe('Authorize StatusBoard · Nimbus');
  });

  it('select_account: "Use another account" on the consent page signs in someone else, who is asked anew', async () => {
    const page = await h.newPage();
    await page.goto(`${h.appUrl}/`);
    await navigate(page, page.locator('#connect'));
    await signIn(page, ADA);
    await navigate(page, page.getByRole('link', { name: 'Use another account' }));
    expect(new URL(page.url()).pathname).toBe('/login');
    await signIn(page, BOB);
    expect(await text(page, 'body')).toContain('Signed in as Bob Builder (bob@example.com)');
    await shot(page, 'flows-13-consent-other-account');
    await navigate(page, page.getByRole('button', { name: 'Authorize' }));
    expect((await json<ShownTokens>(page, '#token-response')).info).toMatchObject({ name: 'Bob Builder', email: 'bob@example.com' });
  });
});
