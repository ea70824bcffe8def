/**
 * authgate's built-in pages with the demo's brand (examples/platform/brand.ts), in Chromium, in
 * English and French, at 1280 and 375 px wide (docs/reference.md#branding-and-languages): the
 * consent page, the consent page of a client nobody reviewed, the error page, and where "Use
 * another account" leads (the host's own sign-in page: authgate has no page of its own for it).
 * Each page is checked for its language, its strings (no English on a French page), the accent
 * colour on the primary button, the logo and the stylesheet loaded under the page's CSP, no
 * console error (a CSP violation is one), and no horizontal scrolling on a phone. Screenshots go
 * to test-results/e2e/branded/ (git-ignored).
 */
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import express from 'express';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { brandRoutes } from '../../examples/platform/brand.js';
import { en } from '../../src/ui/messages/index.js';
import { phrases, showsPhrase, values } from '../catalogue-phrases.js';
import { interactionResponse, type Interaction, type OAuthRequest } from '../../src/index.js';
import { ADA, browserAvailable, E2E_TIMEOUT, navigate, SCREENSHOTS, signIn, text, useBrowserDemo, screenshot } from './harness.js';

const FOLDER = join(SCREENSHOTS, 'branded');
const WIDTHS = [1280, 375] as const;
const LANGUAGES = [
  { lang: 'en', locale: 'en-US', authorize: 'Authorize', heading: /^Authorize StatusBoard\?$/ },
  { lang: 'fr', locale: 'fr-FR', authorize: 'Autoriser', heading: /^Autoriser StatusBoard \?$/ },
] as const;
type Language = (typeof LANGUAGES)[number];

/** The phrases of the English catalogue (outside placeholders), none of which a French page may show. */
const ENGLISH = values(en).flatMap(phrases);

describe.skipIf(!browserAvailable)('built-in pages with the demo brand, in Chromium', { timeout: E2E_TIMEOUT }, () => {
  const h = useBrowserDemo();
  const contexts: BrowserContext[] = [];
  /** The unverified client's consent page, rendered by interactionResponse with the demo's own `pages`, and the brand's files: the demo has no dynamic registration. */
  let fixture: Server;
  let fixtureUrl: string;

  beforeAll(async () => {
    mkdirSync(FOLDER, { recursive: true });
    const app = express();
    app.use(brandRoutes());
    app.get('/unverified', (req, res) => {
      const request: OAuthRequest = { method: 'GET', url: `${fixtureUrl}${req.url}`, headers: req.headers as Record<string, string> };
      const interaction: Interaction = {
        id: 'fixture-interaction',
        client: {
          id: 'https://tools.example/client.json',
          name: 'Handy CLI',
          verified: false,
          idHost: 'tools.example',
          uri: 'https://tools.example/',
        },
        scope: ['read', 'write'],
        scopeDescriptions: { read: en.scopes.read!, write: en.scopes.write! },
        account: ADA,
        redirectHost: 'localhost:8090',
        expiresAt: Date.now() + 600_000,
      };
      const page = interactionResponse(
        { type: 'consent', interaction },
        request,
        { loginUrl: '/login' },
        h.demo.platform.server.options.pages,
      );
      res.status(page.status).set(page.headers).send(page.body);
    });
    fixture = app.listen(0, '127.0.0.1');
    await once(fixture, 'listening');
    fixtureUrl = `http://127.0.0.1:${(fixture.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    fixture?.closeAllConnections();
    await new Promise((resolve) => fixture?.close(resolve));
  });

  /**
   * A page in a fresh browser whose Accept-Language is `locale`'s, collecting its console errors
   * (a CSP violation is one: "Refused to load ...") and its failed subresources. "Failed to load
   * resource" lines are left to the responses: the error page itself is a 400, and Chromium asks
   * for a favicon the platform does not have.
   */
  async function open(language: Language): Promise<{ page: Page; errors: string[] }> {
    const context = await h.browser.newContext({ viewport: { width: 1280, height: 800 }, locale: language.locale });
    context.setDefaultTimeout(20_000);
    contexts.push(context);
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

  /** What every built-in page must show, then its screenshots at each width. */
  async function checkAndShoot(page: Page, errors: string[], language: Language, name: string): Promise<void> {
    expect(await page.evaluate(() => document.documentElement.lang)).toBe(language.lang);
    const shown = await text(page, 'body');
    if (language.lang === 'fr') for (const phrase of ENGLISH) expect(showsPhrase(shown, phrase), phrase).toBe(false);
    // The brand: the logo loaded (allowed by img-src), the stylesheet applied (allowed by style-src: Nimbus's dark bar).
    const logo = page.locator('header.site img');
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
    expect(await page.locator('header.site').evaluate((e) => getComputedStyle(e).backgroundColor)).toBe('rgb(3, 27, 78)');
    expect(await text(page, 'header.site')).toContain('Nimbus');
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 800 });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, `horizontal overflow at ${width}px`).toBeLessThanOrEqual(0);
      await screenshot(page, join(FOLDER, `${name}-${language.lang}-${width}.png`));
    }
    expect(errors).toEqual([]);
  }

  /** The accent colour (#0069ff) on the primary button. */
  const accentOn = (page: Page) => page.locator('button.primary').evaluate((b) => getComputedStyle(b).backgroundColor);

  it.each(LANGUAGES)(
    'consent page ($lang): StatusBoard, the callback host, the authorized-apps link, "Use another account"',
    async (language) => {
      const { page, errors } = await open(language);
      await page.goto(`${h.appUrl}/`);
      await navigate(page, page.locator('#connect'));
      await signIn(page, ADA);
      expect(await text(page, 'h1')).toMatch(language.heading);
      expect(await accentOn(page)).toBe('rgb(0, 105, 255)');
      const body = await text(page, 'body');
      expect(body).toContain(new URL(h.appUrl).host);
      if (language.lang === 'fr') {
        expect(body).toContain('Voir votre compte et vos ressources (lecture seule).');
        expect(body).toContain('Après votre choix, vous serez renvoyé·e vers');
        expect(await page.getByRole('link', { name: 'vos applications autorisées' }).getAttribute('href')).toBe('/account/applications');
      } else {
        expect(body).toContain('See your account and resources (read-only).');
        expect(await page.getByRole('link', { name: 'your authorized applications' }).getAttribute('href')).toBe('/account/applications');
      }
      await checkAndShoot(page, errors, language, 'consent');

      // "Use another account": the host's sign-in page, with the interaction (authgate has no page of its own for it).
      await page.setViewportSize({ width: 1280, height: 800 });
      await navigate(page, page.getByRole('link', { name: language.lang === 'fr' ? 'Utiliser un autre compte' : 'Use another account' }));
      expect(new URL(page.url()).pathname).toBe('/login');
      expect(new URL(page.url()).searchParams.get('interaction')).toMatch(/^[\w-]{43}$/);
      // In the language of the consent page it came from (the host asks authgate which: issue 27).
      expect(await page.evaluate(() => document.documentElement.lang)).toBe(language.lang);
      expect(await text(page, 'main')).toContain(language.lang === 'fr' ? 'Pour continuer vers StatusBoard' : 'To continue to StatusBoard');
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 800 });
        await screenshot(page, join(FOLDER, `use-another-account-${language.lang}-${width}.png`));
      }
    },
  );

  it.each(LANGUAGES)('consent page of a client nobody reviewed ($lang)', async (language) => {
    const { page, errors } = await open(language);
    await page.goto(`${fixtureUrl}/unverified`);
    expect(await accentOn(page)).toBe('rgb(0, 105, 255)');
    const body = await text(page, 'body');
    expect(body).toContain('localhost:8090');
    expect(body).toContain('tools.example');
    expect(body).toContain(
      language.lang === 'fr' ? 'Nimbus n’a pas vérifié'.replace('’', "'") : 'Nimbus has not verified this application',
    );
    await checkAndShoot(page, errors, language, 'consent-unverified');
  });

  it.each(LANGUAGES)('error page ($lang): an unknown client', async (language) => {
    const { page, errors } = await open(language);
    const response = await page.goto(`${h.platformUrl}/v1/oauth/authorize?client_id=no-such-app&response_type=code`);
    expect(response?.status()).toBe(400);
    const body = await text(page, 'body');
    expect(body).toContain('invalid_client');
    expect(body).toContain(
      language.lang === 'fr' ? "L'application est inconnue ou n'existe plus." : 'This authorization request cannot be completed',
    );
    expect(await page.locator('a, button').count()).toBe(0);
    await checkAndShoot(page, errors, language, 'error');
    // The listener does catch a CSP violation: an image from an origin the policy does not name.
    await page.evaluate(() => {
      const img = document.createElement('img');
      img.src = 'https://images.example/x.png';
      document.body.append(img);
    });
    await expect.poll(() => errors.some((e) => e.includes('Content Security Policy'))).toBe(true);
  });
});
