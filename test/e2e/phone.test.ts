/**
 * Every page of the demo on a phone (375 CSS px wide, Chromium): Nimbus's home, sign-in,
 * authorized applications, API tokens, developer (with a registered app, its edit page and a
 * confirm step), the consent page and an error page; StatusBoard's dashboard before and after
 * connecting, with an error, and its implicit-flow callback. On each: nothing wider than the
 * screen (no sideways scrolling of the page), the account name and "Sign out" fully on screen,
 * and every client ID shown whole (it wraps inside its cell; it used to scroll inside a box that
 * gave no sign of scrolling, cutting the ID off, issue 27).
 * Screenshots: test-results/e2e/phone/.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ADA, browserAvailable, E2E_TIMEOUT, navigate, SCREENSHOTS, signIn, text, useBrowserDemo, screenshot } from './harness.js';

const WIDTH = 375;
const PHONE_SHOTS = join(SCREENSHOTS, 'phone');

/** What is wrong with the layout of the page on screen; empty when nothing is. */
async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate((width) => {
    const problems: string[] = [];
    const root = document.scrollingElement!;
    const all = (selector: string) => Array.from(document.querySelectorAll(selector));
    if (root.scrollWidth > root.clientWidth) problems.push(`the page is ${root.scrollWidth}px wide on a ${root.clientWidth}px screen`);
    const onScreen = (el: Element, what: string) => {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) problems.push(`${what} is not shown`);
      if (box.left < 0 || box.right > width) problems.push(`${what} is cut at the edge (${box.left}-${box.right})`);
      if (el.scrollWidth > el.clientWidth + 1) problems.push(`${what} is clipped (${el.scrollWidth} > ${el.clientWidth})`);
    };
    const who = document.querySelector('header .who');
    if (who) {
      onScreen(who, 'the account name');
      const signOut = all('header button').find((b) => b.textContent === 'Sign out');
      if (signOut) onScreen(signOut, '"Sign out"');
      else problems.push('"Sign out" is missing');
    }
    for (const id of all('code.id')) {
      const range = document.createRange();
      range.selectNodeContents(id);
      const right = Math.max(...Array.from(range.getClientRects()).map((r) => r.right));
      if (right > width) problems.push(`client ID ${id.textContent} runs off the screen`);
      const cell = id.parentElement!;
      if (right > cell.getBoundingClientRect().right + 1 || id.scrollWidth > id.clientWidth + 1)
        problems.push(`client ID ${id.textContent} is cut off`);
    }
    return problems;
  }, WIDTH);
}

describe.skipIf(!browserAvailable)(`Every demo page at ${WIDTH} px`, { timeout: E2E_TIMEOUT }, () => {
  const h = useBrowserDemo();

  it('Nimbus and StatusBoard pages fit a phone: no sideways scrolling, account name and Sign out shown, client IDs whole', async () => {
    mkdirSync(PHONE_SHOTS, { recursive: true });
    const context = await h.browser.newContext({
      viewport: { width: WIDTH, height: 740 },
      isMobile: true,
      hasTouch: true,
      deviceScaleFactor: 2,
    });
    context.setDefaultTimeout(20_000);
    try {
      const page = await context.newPage();
      const seen: string[] = [];
      const check = async (name: string) => {
        await screenshot(page, join(PHONE_SHOTS, `${name}.png`));
        seen.push(name);
        expect(await layoutProblems(page), name).toEqual([]);
      };

      await page.goto(`${h.platformUrl}/`);
      await check('nimbus-01-home-signed-out');
      await page.goto(`${h.platformUrl}/login`);
      await check('nimbus-02-sign-in');
      await signIn(page, ADA);
      await check('nimbus-03-home');

      // StatusBoard: connect through Nimbus's consent page.
      await page.goto(`${h.appUrl}/`);
      await check('statusboard-01-dashboard');
      await navigate(page, page.locator('#connect'));
      expect(await page.title()).toBe('Authorize StatusBoard · Nimbus');
      await check('nimbus-04-consent');
      await navigate(page, page.getByRole('button', { name: 'Authorize' }));
      await check('statusboard-02-connected');
      await navigate(page, page.getByRole('button', { name: 'GET /v2/account' }));
      await check('statusboard-03-api-call');

      await page.goto(`${h.platformUrl}/account/applications`);
      expect(await text(page, 'main')).toContain('StatusBoard');
      await check('nimbus-05-authorized-apps');
      await navigate(page, page.getByRole('button', { name: 'Revoke access' }));
      await check('nimbus-06-revoke-confirm');

      await page.goto(`${h.platformUrl}/account/tokens`);
      await page.getByLabel('Name').fill('Phone backup script');
      await navigate(page, page.getByRole('button', { name: 'Create token' }));
      await check('nimbus-07-api-token-created');
      await page.goto(`${h.platformUrl}/account/tokens`);
      await check('nimbus-08-api-tokens');

      await page.goto(`${h.platformUrl}/developer`);
      await page.getByLabel('Application name').fill('Pocket Deploy');
      await page.getByLabel('Callback URL').fill('https://pocket-deploy.example/oauth/callback');
      await navigate(page, page.getByRole('button', { name: 'Register' }));
      await check('nimbus-09-developer-registered');
      await page.goto(`${h.platformUrl}/developer`);
      expect(await page.locator('code.id').count()).toBe(2); // StatusBoard and Pocket Deploy
      await check('nimbus-10-developer');
      await navigate(page, page.locator('tr', { hasText: 'Pocket Deploy' }).getByRole('link', { name: 'Edit' }));
      await check('nimbus-11-developer-edit');
      await page.goto(`${h.platformUrl}/v1/oauth/authorize?client_id=unknown`);
      await check('nimbus-12-error-page');

      // StatusBoard with an error (the token was revoked), and the implicit flow's callback.
      await page.goto(`${h.platformUrl}/account/applications`);
      await navigate(page, page.getByRole('button', { name: 'Revoke access' }));
      await navigate(page, page.locator('#confirm').getByRole('button', { name: 'Revoke access' }));
      await page.goto(`${h.appUrl}/`);
      await navigate(page, page.getByRole('button', { name: 'GET /v2/account' }));
      await check('statusboard-04-error');
      await navigate(page, page.locator('#connect-silent'));
      await check('statusboard-05-silent-failed');
      await navigate(page, page.getByRole('button', { name: 'Disconnect (revoke the token)' }));
      await navigate(page, page.locator('#implicit-connect'));
      await navigate(page, page.getByRole('button', { name: 'Authorize' }));
      await page
        .locator('#implicit-status', { hasText: 'Signed in' })
        .or(page.locator('#implicit-actions:not([hidden])'))
        .first()
        .waitFor();
      await check('statusboard-06-implicit-callback');
      expect(seen).toHaveLength(18);
    } finally {
      await context.close();
    }
  });
});
