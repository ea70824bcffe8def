/**
 * The end-session endpoint's pages (RP-initiated logout; docs/reference.md#rp-initiated-logout)
 * with the demo's brand (examples/platform/brand.ts), in Chromium, in English and French, at
 * 1280 and 375 px wide: the confirmation (no `id_token_hint`, so the user is asked) and, after
 * "Sign out", the "signed out" page. The host is a small Express app of its own (the Express
 * adapter, the brand's logo and stylesheet, a session cookie, `openid.signOut` ending the session):
 * the demo's own OpenID Connect setup is another branch's. Each page is checked for its language,
 * its heading, the accent colour, the logo and stylesheet loaded under the page's CSP, no console
 * error, no horizontal scrolling on a phone, and that the session is really gone after. Screenshots
 * go to test-results/e2e/branded/ (git-ignored), named `logout-<page>-<lang>-<width>.png`.
 */
import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import express from 'express';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOAuthRouter } from '../../adapters/express/index.js';
import { brandRoutes, NIMBUS_PAGES } from '../../examples/platform/brand.js';
import { AuthorizationServer, MemoryStorage, type UserSession } from '../../src/index.js';
import { ADA } from '../fixtures.js';
import { browserAvailable, closeContexts, E2E_TIMEOUT, SCREENSHOTS, screenshot, workerBrowser } from './harness.js';

const FOLDER = join(SCREENSHOTS, 'branded');
const WIDTHS = [1280, 375] as const;
const LANGUAGES = [
  {
    lang: 'en',
    locale: 'en-US',
    heading: 'Sign out of Nimbus?',
    asks: 'Nimbus Notes asks to sign you out.',
    button: 'Sign out',
    done: 'Signed out',
  },
  {
    lang: 'fr',
    locale: 'fr-FR',
    heading: 'Se déconnecter de Nimbus ?',
    asks: 'Nimbus Notes demande à vous déconnecter.',
    button: 'Se déconnecter',
    done: 'Déconnecté·e',
  },
] as const;

describe.skipIf(!browserAvailable)('the logout pages with the demo brand, in Chromium', { timeout: E2E_TIMEOUT }, () => {
  const sessions = new Map<string, UserSession>();
  let listener: Server;
  let base: string;
  let clientId: string;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(FOLDER, { recursive: true });
    const app = express();
    listener = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    const sid = (cookie: unknown) => /(?:^|; )sid=([^;]+)/.exec(String(cookie ?? ''))?.[1] ?? '';
    const server = new AuthorizationServer({
      storage: new MemoryStorage(),
      issuer: base,
      sessions: { current: (request) => sessions.get(sid(request.headers.cookie)) ?? null },
      pages: NIMBUS_PAGES,
      openid: {
        signOut: (request) => {
          sessions.delete(sid(request.headers.cookie));
          return { headers: { 'set-cookie': 'sid=; Max-Age=0; Path=/' } };
        },
      },
    });
    ({ clientId } = await server.registerClient({
      name: 'Nimbus Notes',
      redirectUri: `${base}/callback`,
      openid: { postLogoutRedirectUris: [`${base}/bye`] },
    }));
    app.use(brandRoutes());
    app.use(createOAuthRouter(server));
    browser = await workerBrowser();
  });
  afterAll(async () => {
    if (browser) await closeContexts(browser);
    await new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve()));
  });

  for (const language of LANGUAGES) {
    for (const width of WIDTHS) {
      it(`${language.lang} at ${width} px: the confirmation, then the "signed out" page; the session is gone`, async () => {
        const id = `${language.lang}-${width}`;
        sessions.set(id, { account: ADA, authenticatedAt: Date.now() });
        const context = await browser.newContext({ viewport: { width, height: 760 }, locale: language.locale });
        try {
          await context.addCookies([{ name: 'sid', value: id, url: base }]);
          const page = await context.newPage();
          const errors: string[] = [];
          page.on('console', (m) => {
            if (m.type() === 'error') errors.push(m.text());
          });
          const failed: string[] = [];
          page.on('requestfailed', (r) => failed.push(r.url()));

          await page.goto(`${base}/v1/oauth/logout?${new URLSearchParams({ client_id: clientId })}`);
          expect(await page.getAttribute('html', 'lang')).toBe(language.lang);
          expect((await page.locator('h1').textContent())?.trim()).toBe(language.heading);
          expect(await page.locator('main').textContent()).toContain(language.asks);
          // The brand: its logo loaded (allowed by the CSP), its stylesheet applied, the accent on the button.
          expect(await page.locator('header.site img').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0);
          expect(await page.locator('header.site').evaluate((e) => getComputedStyle(e).backgroundColor)).toBe('rgb(3, 27, 78)');
          const button = page.locator('button.primary');
          expect((await button.textContent())?.trim()).toBe(language.button);
          expect(await button.evaluate((e) => getComputedStyle(e).backgroundColor)).toBe('rgb(0, 105, 255)');
          expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
          await screenshot(page, join(FOLDER, `logout-confirm-${id}.png`));

          await Promise.all([page.waitForEvent('load'), button.click()]);
          expect((await page.locator('h1').textContent())?.trim()).toBe(language.done);
          expect(await page.getAttribute('html', 'lang')).toBe(language.lang);
          expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
          await screenshot(page, join(FOLDER, `logout-signed-out-${id}.png`));

          expect(sessions.has(id)).toBe(false);
          expect((await context.cookies(base)).find((c) => c.name === 'sid')).toBeUndefined();
          expect(errors).toEqual([]);
          expect(failed).toEqual([]);
        } finally {
          await context.close();
        }
      });
    }
  }
});
