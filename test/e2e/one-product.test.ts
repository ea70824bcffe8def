/**
 * The demo looks like one product (issue 27), in Chromium, in English and French, at 1280 and 375
 * px wide. Walking the flow a user walks, from StatusBoard's "Connect with Nimbus":
 * - the platform's sign-in page speaks the language of authgate's consent page that follows
 *   (`<html lang>`, its heading and button), and both carry the same frame: the header bar with the
 *   same logo at the same place and height, and the same column; so do the device code entry and
 *   Nimbus's own home page (whose header adds the navigation);
 * - a wrong device code is shown as an error (the error colours), not as plain bold text;
 * - after Deny, StatusBoard says its earlier connection is kept, and shows it as such;
 * - the home page has a card for every section of the navigation, API tokens included;
 * - every confirmation page puts Cancel next to its button, on the same line;
 * - the developer page shows each client ID whole (wrapped in its cell, never cut off);
 * - `/favicon.ico` answers on both sites, and no request of any page fails.
 * Screenshots: test-results/e2e/product/<page>-<lang>-<width>.png (git-ignored), to look at.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADA, browserAvailable, E2E_TIMEOUT, navigate, SCREENSHOTS, signIn, text, useBrowserDemo, screenshot } from './harness.js';

const FOLDER = join(SCREENSHOTS, 'product');
const WIDTHS = [1280, 375] as const;
const LANGUAGES = [
  {
    lang: 'en',
    locale: 'en-US',
    signIn: 'Sign in',
    consent: 'Authorize StatusBoard?',
    authorize: 'Authorize',
    deny: 'Deny',
    next: 'Continue',
  },
  {
    lang: 'fr',
    locale: 'fr-FR',
    signIn: 'Connexion',
    consent: 'Autoriser StatusBoard ?',
    authorize: 'Autoriser',
    deny: 'Refuser',
    next: 'Continuer',
  },
] as const;
type Language = (typeof LANGUAGES)[number];

/** Where the frame of a page is: the header bar, the logo in it, the column, the heading. */
interface Frame {
  headerHeight: number;
  headerColour: string;
  logo: { left: number; top: number; width: number; height: number };
  column: { left: number; width: number };
  headingTop: number;
}

const frameOf = (page: Page): Promise<Frame> =>
  page.evaluate(() => {
    const box = (selector: string) => {
      const found = document.querySelector(selector);
      if (!found) throw new Error(`no ${selector} on ${location.pathname}`);
      return found.getBoundingClientRect();
    };
    const header = document.querySelector('body > header')!;
    const logo = box('body > header svg, body > header img');
    const main = box('main');
    const style = getComputedStyle(document.querySelector('main')!);
    return {
      headerHeight: Math.round(header.getBoundingClientRect().height),
      headerColour: getComputedStyle(header).backgroundColor,
      logo: { left: Math.round(logo.left), top: Math.round(logo.top), width: Math.round(logo.width), height: Math.round(logo.height) },
      column: {
        left: Math.round(main.left + Number.parseFloat(style.paddingLeft)),
        width: Math.round(main.width - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight)),
      },
      headingTop: Math.round(box('h1').top),
    };
  });

describe.skipIf(!browserAvailable)('the demo as one product, in Chromium', { timeout: 2 * E2E_TIMEOUT }, () => {
  const h = useBrowserDemo();

  beforeAll(() => {
    mkdirSync(FOLDER, { recursive: true });
  });

  /** A fresh browser speaking `language`; every failed request is recorded. */
  async function open(language: Language): Promise<{ page: Page; failed: string[] }> {
    const context = await h.browser.newContext({ viewport: { width: 1280, height: 800 }, locale: language.locale });
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    const failed: string[] = [];
    page.on('response', (response) => {
      // A wrong device code is answered 400, on purpose: the page says so.
      const expected = response.status() === 400 && response.url().endsWith('/device/verify');
      if (response.status() >= 400 && !expected) failed.push(`${response.status()} ${response.url()}`);
    });
    page.on('requestfailed', (request) => failed.push(`${request.failure()?.errorText} ${request.url()}`));
    return { page, failed };
  }

  /** The page's frame at each width, with its screenshots. */
  async function frames(page: Page, name: string, language: Language): Promise<Record<number, Frame>> {
    const found: Record<number, Frame> = {};
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 800 });
      found[width] = await frameOf(page);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, `${name}: sideways scrolling at ${width} px`).toBeLessThanOrEqual(0);
      await screenshot(page, join(FOLDER, `${name}-${language.lang}-${width}.png`));
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    return found;
  }

  const lang = (page: Page) => page.evaluate(() => document.documentElement.lang);

  it.each(LANGUAGES)('sign-in, consent, device entry and home in one frame and one language ($lang)', async (language) => {
    const { page, failed } = await open(language);

    await page.goto(`${h.appUrl}/`);
    await navigate(page, page.locator('#connect'));
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(await lang(page)).toBe(language.lang);
    expect(await text(page, 'h1')).toBe(language.signIn);
    expect(await text(page, 'form[action="/login"] button')).toBe(language.lang === 'en' ? 'Sign in' : 'Se connecter');
    const signInFrame = await frames(page, 'sign-in', language);

    await signIn(page, ADA);
    expect(await lang(page)).toBe(language.lang);
    expect(await text(page, 'h1')).toBe(language.consent);
    const consentFrame = await frames(page, 'consent', language);
    await navigate(page, page.getByRole('button', { name: language.authorize }));
    expect(page.url().startsWith(h.appUrl)).toBe(true);

    // Connected; a second authorization, denied: StatusBoard keeps the first, and says so.
    await page.goto(`${h.appUrl}/connect`);
    await navigate(page, page.getByRole('button', { name: language.deny }));
    expect(await text(page, '#result .error-code')).toBe('access_denied');
    expect(await text(page, '#result-note')).toBe(
      'Your earlier connection is kept: this answer does not revoke the token StatusBoard already holds (below).',
    );
    expect(await text(page, '#connected')).toBe(
      'Still connected to Nimbus as Ada Lovelace (ada@example.com), scope read write, as before.',
    );
    // StatusBoard is another company's site, with a frame of its own: screenshots only.
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 800 });
      await screenshot(page, join(FOLDER, `statusboard-denied-${language.lang}-${width}.png`));
    }
    await page.setViewportSize({ width: 1280, height: 800 });

    // The device code entry, after a wrong code: the note in the error colours.
    const device = (await (
      await fetch(`${h.platformUrl}/v1/oauth/device`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: h.demo.cli.clientId, scope: 'read' }),
      })
    ).json()) as { verification_uri: string };
    await page.goto(device.verification_uri);
    expect(await lang(page)).toBe(language.lang);
    await page.locator('#user_code').fill('BBBB-BBBB');
    await navigate(page, page.getByRole('button', { name: language.next }));
    const note = page.locator('[role=alert]');
    expect(await note.evaluate((e) => getComputedStyle(e).backgroundColor)).toBe('rgb(255, 235, 233)');
    expect(await note.evaluate((e) => getComputedStyle(e).borderTopColor)).toBe('rgb(255, 129, 130)');
    const deviceFrame = await frames(page, 'device-wrong-code', language);

    await page.goto(`${h.platformUrl}/`);
    const homeFrame = await frames(page, 'home', language);

    for (const width of WIDTHS) {
      const consent = consentFrame[width]!;
      expect(consent.headerColour).toBe('rgb(3, 27, 78)');
      expect(consent.logo.width).toBe(28);
      expect(consent.logo.height).toBe(28);
      // The steps of the flow: the same frame to the pixel.
      for (const [name, frame] of [
        ['sign-in', signInFrame[width]!],
        ['device entry', deviceFrame[width]!],
      ] as const) {
        expect(frame, `${name} at ${width} px`).toEqual(consent);
      }
      // Nimbus's own page: the same bar, logo and column; its header also holds the navigation.
      const home = homeFrame[width]!;
      expect(home.headerColour, `home at ${width} px`).toBe(consent.headerColour);
      expect(home.logo.left, `home at ${width} px`).toBe(consent.logo.left);
      expect(home.logo.width).toBe(consent.logo.width);
      expect(home.column, `home at ${width} px`).toEqual(consent.column);
    }
    expect(failed).toEqual([]);
  });

  it('home cards, confirmation pages, client IDs and favicons', async () => {
    const { page, failed } = await open(LANGUAGES[0]);
    await page.goto(`${h.platformUrl}/login`);
    await signIn(page, ADA);

    // A card for every section of the navigation.
    await page.goto(`${h.platformUrl}/`);
    const nav = await page.locator('header nav a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    const cards = await page.locator('main .box h2 a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    expect(nav).toEqual(['/account/applications', '/account/tokens', '/developer']);
    expect(cards).toEqual(nav);

    // Something to confirm on each page: StatusBoard authorized (the demo), an API token, an app of Ada's own.
    await page.goto(`${h.appUrl}/`);
    await navigate(page, page.locator('#connect'));
    await navigate(page, page.getByRole('button', { name: 'Authorize' }));
    await page.goto(`${h.platformUrl}/account/tokens`);
    await page.getByLabel('Name').fill('CI deploy');
    await navigate(page, page.getByRole('button', { name: 'Create token' }));
    await page.goto(`${h.platformUrl}/developer`);
    await page.getByLabel('Application name').fill('Pocket Deploy');
    await page.getByLabel('Callback URL').fill('https://pocket-deploy.example/oauth/callback');
    await navigate(page, page.getByRole('button', { name: 'Register' }));

    const confirmations: [string, string, string][] = [
      ['/account/applications', 'Revoke access', 'confirm-revoke-access'],
      ['/account/tokens', 'Revoke', 'confirm-revoke-token'],
      ['/developer', 'Delete', 'confirm-delete-app'],
    ];
    const gaps: number[] = [];
    for (const [path, button, name] of confirmations) {
      await page.goto(`${h.platformUrl}${path}`);
      await navigate(page, page.getByRole('button', { name: button, exact: true }).first());
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 800 });
        const place = await page.evaluate(() => {
          const confirm = document.querySelector('#confirm button')!.getBoundingClientRect();
          const cancel = document.querySelector('#confirm a.cancel')!.getBoundingClientRect();
          return {
            middle: Math.abs(confirm.top + confirm.height / 2 - (cancel.top + cancel.height / 2)),
            gap: cancel.left - confirm.right,
          };
        });
        expect(place.middle, `${name} at ${width} px: Cancel on the button's line`).toBeLessThanOrEqual(2);
        gaps.push(Math.round(place.gap));
        await screenshot(page, join(FOLDER, `${name}-en-${width}.png`));
      }
      await page.setViewportSize({ width: 1280, height: 800 });
    }
    expect(new Set(gaps).size, `Cancel at the same distance from its button on every page: ${gaps}`).toBe(1);

    // Every client ID whole, at both widths: inside its cell, not clipped.
    await page.goto(`${h.platformUrl}/developer`);
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 800 });
      const ids = await page.locator('code.id').evaluateAll((codes) =>
        codes.map((code) => {
          const range = document.createRange();
          range.selectNodeContents(code);
          const right = Math.max(...Array.from(range.getClientRects()).map((r) => r.right));
          const cell = code.closest('td, p')!.getBoundingClientRect();
          return { id: code.textContent, inside: right <= cell.right + 1, visible: getComputedStyle(code).overflow === 'visible' };
        }),
      );
      expect(ids).toHaveLength(2);
      for (const id of ids) expect(id, `at ${width} px`).toMatchObject({ inside: true, visible: true });
      await screenshot(page, join(FOLDER, `developer-en-${width}.png`));
    }

    for (const site of [h.platformUrl, h.appUrl]) {
      const icon = await page.request.get(`${site}/favicon.ico`);
      expect(icon.status(), site).toBe(200);
      expect(icon.headers()['content-type']).toBe('image/png');
      expect((await icon.body()).subarray(1, 4).toString()).toBe('PNG');
    }
    expect(failed).toEqual([]);
  });
});
