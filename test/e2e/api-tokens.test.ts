/**
 * The platform's "API tokens" page in a real browser (docs/reference.md#personal-access-tokens):
 * create a token (a bad name explained), see it once, call the API with it, see its last use,
 * revoke it after the confirm step, and its next API call is 401.
 */
import { describe, expect, it } from 'vitest';
import { BOB, browserAvailable, E2E_TIMEOUT, navigate, shot, signIn, text, useBrowserDemo } from './harness.js';

describe.skipIf(!browserAvailable)('Nimbus "API tokens" in Chromium', { timeout: E2E_TIMEOUT }, () => {
  const h = useBrowserDemo();

  it('create (shown once) → use → last used listed → revoke with a confirm step → the API answers 401', async () => {
    const page = await h.newPage();
    await page.goto(`${h.platformUrl}/account/tokens`);
    expect(new URL(page.url()).pathname).toBe('/login'); // sign in first, then back here
    await signIn(page, BOB);
    expect(new URL(page.url()).pathname).toBe('/account/tokens');
    expect(await page.locator('nav a', { hasText: 'API tokens' }).count()).toBe(1);
    expect(await text(page, 'main')).toContain('You have no API tokens.');

    await page.getByLabel('Name').fill('   ');
    await navigate(page, page.getByRole('button', { name: 'Create token' }));
    expect(await text(page, '.error')).toMatch(/token name must be 1 to 100 characters/);

    await page.getByLabel('Name').fill('CI deploy');
    await page.getByLabel('Read and write').check();
    await page.getByLabel('Expires after').selectOption({ label: '7 days' });
    await navigate(page, page.getByRole('button', { name: 'Create token' }));
    expect(await page.title()).toBe('Your new API token · Nimbus');
    const token = await text(page, '.secret');
    expect(token).toMatch(/^nmp_v1_[\w-]{43}$/);
    expect(await text(page, 'main')).toContain('It expires on');
    await shot(page, 'api-tokens-01-created');

    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${h.platformUrl}/v2${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    const account = await api('GET', '/account');
    expect(account.status).toBe(200);
    expect(((await account.json()) as { account: { email: string } }).account.email).toBe(BOB.email);
    expect((await api('POST', '/droplets', { name: 'ci-runner' })).status).toBe(201);

    await page.goto(`${h.platformUrl}/account/tokens`);
    const row = page.locator('tr', { hasText: 'CI deploy' });
    expect(await row.textContent()).toContain('Read and write');
    expect(await row.textContent()).not.toContain('Never used');
    expect(await row.textContent()).toMatch(/\d{4}, \d\d:\d\d UTC[\s\S]*\d{4}, \d\d:\d\d UTC[\s\S]*\d{4}, \d\d:\d\d UTC/);
    expect(await text(page, 'main')).not.toContain(token);
    await shot(page, 'api-tokens-02-listed');

    await navigate(page, row.getByRole('button', { name: 'Revoke' }));
    expect(await text(page, 'main')).toContain('Revoke CI deploy? Every script that uses it stops working at once.');
    expect((await api('GET', '/account')).status).toBe(200); // nothing revoked before the confirmation
    await shot(page, 'api-tokens-03-confirm');
    await navigate(page, page.getByRole('button', { name: 'Revoke token' }));
    expect(await text(page, '.flash')).toBe('CI deploy is revoked.');
    expect(await text(page, 'main')).toContain('You have no API tokens.');

    const refused = await api('GET', '/account');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});
