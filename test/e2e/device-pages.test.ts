/**
 * The device verification pages (RFC 8628 §3.3; docs/reference.md#device-authorization-grant-rfc-8628)
 * with the demo's brand (examples/platform/brand.ts), in Chromium, in English and French, at 1280
 * and 375 px wide (docs/reference.md#branding-and-languages): the code entry, the entry after a
 * wrong code, the confirmation for the demo's "Nimbus CLI", the approved and denied outcomes, and
 * the lock after too many wrong codes. The device is the demo's CLI client, started over HTTP as
 * the CLI does (examples/cli/device-login.ts); the user is a browser that follows
 * `verification_uri_complete`, signs in on the platform's page and uses the built-in pages.
 * Each page is checked for its language, its strings (no English phrase of the catalogue on a
 * French page), the accent colour, the logo and the stylesheet loaded under the page's CSP, no
 * console error, and no horizontal scrolling on a phone. Screenshots go to
 * test-results/e2e/branded/ (git-ignored), named `device-<page>-<lang>-<width>.png`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { en } from '../../src/ui/messages/index.js';
import { phrases, showsPhrase, values } from '../catalogue-phrases.js';
import {
  ADA,
  BOB,
  browserAvailable,
  E2E_TIMEOUT,
  navigate,
  SCREENSHOTS,
  signIn,
  text,
  type User,
  useBrowserDemo,
  screenshot,
} from './harness.js';

const FOLDER = join(SCREENSHOTS, 'branded');
const WIDTHS = [1280, 375] as const;
const LANGUAGES = [
  {
    lang: 'en',
    locale: 'en-US',
    entry: 'Connect a device',
    next: 'Continue',
    wrong: 'That code is not valid',
    confirm: /^Connect Nimbus CLI\?$/,
    warning: 'Only continue if you started this on your own device',
    scope: 'See your account and resources (read-only).',
    approve: 'Connect',
    deny: 'Deny',
    approved: 'Device connected',
    denied: 'Device not connected',
    locked: /Too many wrong codes were entered\. Try again after \d\d:\d\d UTC\./,
  },
  {
    lang: 'fr',
    locale: 'fr-FR',
    entry: 'Connecter un appareil',
    next: 'Continuer',
    wrong: "Ce code n'est pas valide",
    confirm: /^Connecter Nimbus CLI \?$/,
    warning: 'Ne continuez que si vous avez lancé cette opération sur votre propre appareil',
    scope: 'Voir votre compte et vos ressources (lecture seule).',
    approve: 'Connecter',
    deny: 'Refuser',
    approved: 'Appareil connecté',
    denied: 'Appareil non connecté',
    locked: /Trop de codes erronés ont été saisis\. Réessayez après \d\d:\d\d UTC\./,
  },
] as const;
type Language = (typeof LANGUAGES)[number];

/** The phrases of the English catalogue, none of which a French page may show. */
const ENGLISH = values(en).flatMap(phrases);

describe.skipIf(!browserAvailable)('device verification pages with the demo brand, in Chromium', { timeout: E2E_TIMEOUT }, () => {
  const h = useBrowserDemo();

  beforeAll(() => {
    mkdirSync(FOLDER, { recursive: true });
  });

  /** What the CLI does first: `POST /v1/oauth/device` as the demo's "Nimbus CLI" (a public client). */
  async function startDevice(): Promise<{ user_code: string; verification_uri: string; verification_uri_complete: string }> {
    const response = await fetch(`${h.platformUrl}/v1/oauth/device`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: h.demo.cli.clientId, scope: 'read' }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as { user_code: string; verification_uri: string; verification_uri_complete: string };
  }

  /**
   * A fresh browser whose Accept-Language is `locale`'s, collecting console errors (a CSP
   * violation is one) and failed subresources. "Failed to load resource" lines are left to the
   * responses: a wrong code is a 400, the lock a 429, and Chromium asks for a favicon.
   */
  async function open(language: Language): Promise<{ page: Page; errors: string[] }> {
    const context = await h.browser.newContext({ viewport: { width: 1280, height: 800 }, locale: language.locale });
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('requestfailed', (request) => errors.push(`${request.url()}: ${request.failure()?.errorText}`));
    page.on('response', (response) => {
      const request = response.request();
      const subresource = request.resourceType() !== 'document' && !request.url().endsWith('/favicon.ico');
      if (subresource && response.status() >= 400) errors.push(`${request.url()}: ${response.status()}`);
    });
    return { page, errors };
  }

  /** From `verification_uri_complete`: the platform's sign-in page, then back on the code entry, the code filled in. */
  async function signInAndEnter(page: Page, uri: string, user: User): Promise<void> {
    await page.goto(uri);
    expect(new URL(page.url()).pathname).toBe('/login');
    await signIn(page, user);
    expect(new URL(page.url()).pathname).toBe('/v1/oauth/device/verify');
  }

  /** What every device page must show (the brand, the language, no English on a French page), then its screenshots. */
  async function checkAndShoot(page: Page, errors: string[], language: Language, name: string, button = true): Promise<void> {
    expect(await page.evaluate(() => document.documentElement.lang)).toBe(language.lang);
    const shown = await text(page, 'body');
    if (language.lang === 'fr') for (const phrase of ENGLISH) expect(showsPhrase(shown, phrase), phrase).toBe(false);
    const logo = page.locator('header.site img');
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
    expect(await page.locator('header.site').evaluate((e) => getComputedStyle(e).backgroundColor)).toBe('rgb(3, 27, 78)');
    expect(await text(page, 'header.site')).toContain('Nimbus');
    if (button) {
      // The accent colour (#0069ff) on the primary button.
      expect(await page.locator('button.primary').evaluate((b) => getComputedStyle(b).backgroundColor)).toBe('rgb(0, 105, 255)');
    }
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 800 });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, `horizontal overflow at ${width}px`).toBeLessThanOrEqual(0);
      await screenshot(page, join(FOLDER, `device-${name}-${language.lang}-${width}.png`));
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(errors).toEqual([]);
  }

  it.each(LANGUAGES)('code entry, wrong code, confirmation, Connect, approved ($lang); then a second device denied', async (language) => {
    const { page, errors } = await open(language);
    const device = await startDevice();
    await signInAndEnter(page, device.verification_uri_complete, ADA);
    expect(await text(page, 'h1')).toBe(language.entry);
    expect(await page.locator('#user_code').inputValue()).toBe(device.user_code);
    await checkAndShoot(page, errors, language, 'entry');

    // A wrong code: the form again (400), with the note.
    await page.locator('#user_code').fill('BBBB-BBBB');
    await navigate(page, page.getByRole('button', { name: language.next }));
    expect(await text(page, '[role=alert]')).toContain(language.wrong);
    await checkAndShoot(page, errors, language, 'entry-wrong-code');

    await page.locator('#user_code').fill(device.user_code);
    await navigate(page, page.getByRole('button', { name: language.next }));
    expect(await text(page, 'h1')).toMatch(language.confirm);
    const body = await text(page, 'body');
    expect(body).toContain(device.user_code);
    expect(body).toContain(language.warning);
    expect(body).toContain(language.scope);
    expect(body).toContain(ADA.email);
    await checkAndShoot(page, errors, language, 'confirm');

    await navigate(page, page.getByRole('button', { name: language.approve, exact: true }));
    expect(new URL(page.url()).search).toBe('?result=approved');
    expect(await text(page, 'h1')).toBe(language.approved);
    await checkAndShoot(page, errors, language, 'approved', false);

    // Another device, the same browser (signed in already): straight to the code entry, then Deny.
    const second = await startDevice();
    await page.goto(second.verification_uri_complete);
    await navigate(page, page.getByRole('button', { name: language.next }));
    await navigate(page, page.getByRole('button', { name: language.deny }));
    expect(new URL(page.url()).search).toBe('?result=denied');
    expect(await text(page, 'h1')).toBe(language.denied);
    await checkAndShoot(page, errors, language, 'denied', false);
  });

  it.each(LANGUAGES)('too many wrong codes: the lock page, 429 ($lang)', async (language) => {
    const { page, errors } = await open(language);
    const device = await startDevice();
    // Each language locks its own account out (the lock is per account and per browser, for 15
    // minutes); Ada's wrong codes of the test above count too, so she is locked out sooner.
    await signInAndEnter(page, device.verification_uri_complete, language.lang === 'en' ? BOB : ADA);
    let status = 0;
    for (let attempt = 0; attempt < 5 && status !== 429; attempt++) {
      await page.locator('#user_code').fill(`BBBB-BBB${'BCDFG'[attempt]}`);
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.getByRole('button', { name: language.next }).click(),
      ]);
      await page.waitForLoadState('load');
      status = response.status();
    }
    expect(status).toBe(429);
    expect(await text(page, 'body')).toMatch(language.locked);
    await checkAndShoot(page, errors, language, 'locked', false);
  });
});
