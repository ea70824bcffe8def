/**
 * "Sign in with Nimbus" in Chromium: StatusBoard signs its user in with OpenID Connect
 * (openid-client: discovery, code + PKCE + nonce, the ID token validated by the library, userinfo),
 * beside "Connect with Nimbus". Walked at 1280 px in English and at 375 px in French: StatusBoard →
 * Sign in with Nimbus → Nimbus's sign-in → consent (openid profile email) → back on StatusBoard,
 * signed in with the right name → sign out; then again, over time: a second sign-in, a replayed
 * callback, a denied consent; sign-out goes through Nimbus's end_session_endpoint (RP-initiated
 * logout) and signs out of Nimbus too. Against a stand-in in front of Nimbus: the parameters of that
 * sign-out as the OP receives them, and an ID token with a forged signature refused. Screenshots: test-results/e2e/oidc-*.png.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { decodeJwt } from 'jose';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusBoardClient } from '../../examples/platform/demo-clients.js';
import { createPlatform } from '../../examples/platform/platform.js';
import { createThirdPartyApp } from '../../examples/third-party-app/app.js';
import { MemoryStorage } from '../../src/index.js';
import { ADA, BOB, browserAvailable, E2E_TIMEOUT, json, navigate, shot, signIn, text, useBrowserDemo, type User } from './harness.js';

const LANGUAGES = {
  en: {
    locale: 'en-US',
    signInTitle: 'Sign in',
    asks: 'StatusBoard asks for access to your Nimbus account',
    authorize: 'Authorize',
    deny: 'Deny',
    consentTitle: 'Authorize StatusBoard · Nimbus',
    scopes: [
      'Sign you in with your account (your account identifier).',
      'See your profile: name, picture and other public details.',
      'See your email address.',
    ],
  },
  fr: {
    locale: 'fr-FR',
    signInTitle: 'Connexion',
    asks: "StatusBoard demande l'accès à votre compte Nimbus",
    authorize: 'Autoriser',
    deny: 'Refuser',
    consentTitle: 'Autoriser StatusBoard · Nimbus',
    scopes: [
      'Vous connecter avec votre compte (son identifiant).',
      'Voir votre profil : nom, photo et autres informations publiques.',
      'Voir votre adresse e-mail.',
    ],
  },
} as const;
type Language = (typeof LANGUAGES)[keyof typeof LANGUAGES];

describe.skipIf(!browserAvailable)('Sign in with Nimbus (OpenID Connect) in Chromium', { timeout: E2E_TIMEOUT }, () => {
  const h = useBrowserDemo();

  /** A fresh browser (cookie jar) of the given width and language, recording every request the page makes. */
  async function browser(width: number, language: Language) {
    const context = await h.browser.newContext({
      viewport: { width, height: width < 600 ? 740 : 800 },
      ...(width < 600 && { isMobile: true, hasTouch: true, deviceScaleFactor: 2 }),
      locale: language.locale,
    });
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    const requests: URL[] = [];
    page.on('request', (request) => requests.push(new URL(request.url())));
    const consoleErrors: string[] = [];
    page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
    return { context, page, requests, consoleErrors };
  }

  const discovery = async () =>
    (await (await fetch(`${h.platformUrl}/.well-known/openid-configuration`)).json()) as { end_session_endpoint?: string; issuer: string };

  /** Nothing wider than the screen: no sideways scrolling. */
  const pageWidth = (page: Page) => page.evaluate(() => document.scrollingElement!.scrollWidth);

  /** StatusBoard → Sign in with Nimbus → (sign-in page) → consent, checked in `language`; stays on the consent page. */
  async function toConsent(page: Page, language: Language, user: User | null, name: string) {
    await page.goto(`${h.appUrl}/`);
    await navigate(page, page.locator('#sign-in'));
    if (user) {
      expect(page.url()).toMatch(new RegExp(`^${h.platformUrl}/login\\?interaction=`));
      expect(await page.title()).toContain(language.signInTitle);
      expect(await text(page, 'main')).toContain(language.asks);
      await shot(page, `${name}-02-nimbus-sign-in`);
      await signIn(page, user);
    }
    expect(await page.title()).toBe(language.consentTitle);
    const consent = await text(page, 'main');
    for (const scope of language.scopes) expect(consent).toContain(scope);
    // A sign-in only: nothing of the API's `read` / `write`.
    expect(consent).not.toMatch(/resources|ressources/);
  }

  for (const [lang, width] of [
    ['en', 1280],
    ['fr', 375],
  ] as const) {
    const language = LANGUAGES[lang];
    const name = `oidc-${lang}-${width}`;

    it(`${lang} at ${width} px: sign in with Nimbus (code + PKCE + nonce), signed in as Ada, sign out; again; a replayed callback`, async () => {
      const { page, requests, consoleErrors } = await browser(width, language);
      await page.goto(`${h.appUrl}/`);
      // "Sign in with Nimbus" beside "Connect with Nimbus".
      const row = page.locator('.row').filter({ has: page.locator('#connect') });
      await expect(row.locator('#sign-in').textContent()).resolves.toBe('Sign in with Nimbus');
      expect(await pageWidth(page)).toBeLessThanOrEqual(width);
      await shot(page, `${name}-01-statusboard`);

      await toConsent(page, language, ADA, name);
      const authorize = requests.find((u) => u.pathname === '/v1/oauth/authorize')!;
      const sent = Object.fromEntries(authorize.searchParams);
      expect(sent).toMatchObject({
        response_type: 'code',
        scope: 'openid profile email',
        redirect_uri: `${h.appUrl}/callback`,
        code_challenge_method: 'S256',
        client_id: h.demo.client.clientId,
      });
      expect(sent.nonce).toMatch(/^[\w-]{43}$/);
      expect(sent.code_challenge).toMatch(/^[\w-]{43}$/);
      expect(sent.state).toMatch(/^[\w-]{43}$/);
      expect(await pageWidth(page)).toBeLessThanOrEqual(width);
      await shot(page, `${name}-03-nimbus-consent`);

      const before = (await page.context().cookies(h.appUrl)).find((c) => c.name === 'statusboard_session')!.value;
      await navigate(page, page.getByRole('button', { name: language.authorize, exact: true }));
      expect(page.url()).toBe(`${h.appUrl}/`); // the code left the address bar
      const callback = requests.find((u) => u.origin === h.appUrl && u.pathname === '/callback')!;
      expect(callback.searchParams.get('state')).toBe(sent.state);
      expect(await text(page, '#result h2')).toBe('Signed in with Nimbus (OpenID Connect)');
      expect(await text(page, '#signed-in-as')).toBe('Signed in as Ada Lovelace (ada@example.com, verified by Nimbus)');
      // A sign-in, not a connection: StatusBoard holds no API token, "Connect with Nimbus" is still offered.
      expect(await page.locator('#connected').count()).toBe(0);
      expect(await page.locator('#connect').count()).toBe(1);
      expect(await page.locator('#sign-in').count()).toBe(0);
      // The ID token the library validated (iss, aud, nonce, exp) and userinfo, whose sub is the ID token's.
      const claims = await json(page, '#id-token-claims');
      expect(claims).toMatchObject({ iss: h.platformUrl, aud: h.demo.client.clientId, sub: ADA.uuid, nonce: sent.nonce });
      expect(claims.auth_time).toEqual(expect.any(Number));
      expect(claims).not.toHaveProperty('email'); // the profile claims are at userinfo (claimsInIdToken: false)
      expect(await json(page, '#userinfo')).toEqual({
        sub: ADA.uuid,
        name: 'Ada Lovelace',
        given_name: 'Ada',
        family_name: 'Lovelace',
        email: 'ada@example.com',
        email_verified: true,
      });
      // A new session id at sign-in.
      const after = (await page.context().cookies(h.appUrl)).find((c) => c.name === 'statusboard_session')!.value;
      expect(after).not.toBe(before);
      expect(await pageWidth(page)).toBeLessThanOrEqual(width);
      await shot(page, `${name}-04-statusboard-signed-in`);

      // The callback again (back button, a leaked URL): the code and the state are used up.
      await page.goto(callback.href);
      expect(page.url()).toBe(`${h.appUrl}/`);
      expect(await text(page, '#result h2')).toBe('The authorization did not succeed');
      expect(await text(page, '#signed-in-as')).toBe('Signed in as Ada Lovelace (ada@example.com, verified by Nimbus)'); // still, as before

      // Sign out.
      const endSession = (await discovery()).end_session_endpoint;
      const rpLogout = endSession !== undefined;
      await navigate(page, page.locator('#sign-out'));
      expect(page.url()).toBe(`${h.appUrl}/`);
      expect(await page.locator('#signed-in').count()).toBe(0);
      expect(await page.locator('#sign-in').count()).toBe(1);
      await shot(page, `${name}-05-statusboard-signed-out`);
      const nimbusHome = await page.context().newPage();
      await nimbusHome.goto(`${h.platformUrl}/`);
      if (rpLogout) {
        // RP-initiated logout: through Nimbus's end_session_endpoint and back, signed out of both.
        expect(requests.some((u) => u.href.startsWith(`${endSession}?`))).toBe(true);
        expect(await text(page, '#result h2')).toBe('Signed out of StatusBoard and Nimbus');
        expect(await nimbusHome.title()).toContain('Welcome to Nimbus');
      } else {
        // No end_session_endpoint: StatusBoard's session ends, Nimbus's stays, and StatusBoard says so.
        expect(await text(page, '#result h2')).toBe('Signed out of StatusBoard');
        expect(await text(page, '#result-note')).toContain('no end_session_endpoint');
        expect(await nimbusHome.title()).toContain('Welcome, Ada Lovelace');
      }
      await nimbusHome.close();

      // Later, signing in again: a new ID token with a new nonce (Nimbus asks for the password again only after a logout).
      await toConsent(page, language, rpLogout ? ADA : null, `${name}-again`);
      const second = Object.fromEntries(requests.filter((u) => u.pathname === '/v1/oauth/authorize').at(-1)!.searchParams);
      expect(second.nonce).not.toBe(sent.nonce);
      await navigate(page, page.getByRole('button', { name: language.authorize, exact: true }));
      expect(await text(page, '#signed-in-as')).toContain('Signed in as Ada Lovelace');
      expect((await json(page, '#id-token-claims')).nonce).toBe(second.nonce);
      await navigate(page, page.locator('#sign-out'));
      expect(await page.locator('#signed-in').count()).toBe(0);

      expect(consoleErrors).toEqual([]); // no CSP violation on the way
    });
  }

  /**
   * StatusBoard's side of RP-initiated logout, seen from the OP: a Nimbus whose discovery
   * document names another end_session_endpoint, served in front of the demo's platform by a stand-in
   * that records the request, forgets Nimbus's session cookie and sends the browser back to the
   * post-logout redirect URI with the `state`, as OpenID Connect RP-Initiated Logout 1.0 §2-3 has
   * an OP do. StatusBoard is started with its `postLogoutRedirectUri`, as start-demo.ts does.
   */
  describe('with an end_session_endpoint (a stand-in for RP-initiated logout)', () => {
    const servers: Server[] = [];
    const logouts: URLSearchParams[] = [];
    /** When set, the stand-in changes one character of the ID token's signature in the token response. */
    let forgeSignature = false;
    /** Every token response the stand-in passed on, as Nimbus sent it. */
    const tokenResponses: { access_token: string; id_token?: string }[] = [];
    let nimbusUrl = '';
    let appUrl = '';
    let clientId = '';
    const listen = async (handler: express.Express) => {
      const http = createServer(handler);
      servers.push(http);
      http.listen(0, '127.0.0.1');
      await once(http, 'listening');
      return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    };

    beforeAll(async () => {
      const front = express();
      const inner = express();
      nimbusUrl = await listen(front);
      const innerUrl = await listen(inner);
      const platform = createPlatform({ url: nimbusUrl, storage: new MemoryStorage() });
      inner.use(platform.app);
      front.get('/.well-known/openid-configuration', async (_req, res) => {
        const document = await (await fetch(`${innerUrl}/.well-known/openid-configuration`)).json();
        res.json({ ...document, end_session_endpoint: `${nimbusUrl}/stand-in/logout` });
      });
      front.get('/stand-in/logout', (req, res) => {
        const query = new URLSearchParams(req.url.split('?')[1]);
        logouts.push(query);
        res.clearCookie('nimbus_session', { path: '/' });
        res.redirect(302, `${query.get('post_logout_redirect_uri')}?${new URLSearchParams({ state: query.get('state') ?? '' })}`);
      });
      // The token endpoint through the stand-in: recorded, and with forgeSignature an ID token altered on the way.
      front.post('/v1/oauth/token', async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const answer = await fetch(`${innerUrl}/v1/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': req.headers['content-type'] ?? '' },
          body: Buffer.concat(chunks),
        });
        const body = (await answer.json()) as { access_token: string; id_token?: string };
        tokenResponses.push({ ...body });
        if (forgeSignature && body.id_token) {
          const [header, payload, signature] = body.id_token.split('.') as [string, string, string];
          const forged = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
          body.id_token = `${header}.${payload}.${forged}`;
        }
        res.status(answer.status).set('cache-control', 'no-store').json(body);
      });
      front.use(platform.app);
      const app = express();
      appUrl = await listen(app);
      const client = await statusBoardClient(platform.server, ADA.uuid, `${appUrl}/callback`, `${appUrl}/signed-out`);
      clientId = client.clientId;
      app.use(
        await createThirdPartyApp({
          url: appUrl,
          platformUrl: nimbusUrl,
          clientId,
          clientSecret: client.clientSecret,
          postLogoutRedirectUri: `${appUrl}/signed-out`,
        }),
      );
    });
    afterAll(() => {
      for (const http of servers) {
        http.closeAllConnections();
        http.close();
      }
    });

    it('sign-out goes to the end_session_endpoint with id_token_hint and comes back signed out of both', async () => {
      const { page, consoleErrors } = await browser(1280, LANGUAGES.en);
      await page.goto(`${appUrl}/`);
      await navigate(page, page.locator('#sign-in'));
      await signIn(page, ADA);
      await navigate(page, page.getByRole('button', { name: 'Authorize', exact: true }));
      expect(await text(page, '#signed-in-as')).toContain('Signed in as Ada Lovelace');
      const nonce = (await json(page, '#id-token-claims')).nonce;
      const issued = tokenResponses.at(-1)!;
      const userinfo = () =>
        fetch(`${nimbusUrl}/v1/oauth/userinfo`, { headers: { authorization: `Bearer ${issued.access_token}` } }).then((r) => r.status);
      expect(await userinfo()).toBe(200);

      await navigate(page, page.locator('#sign-out')); // a form posted to StatusBoard, redirected to Nimbus (CSP form-action allows it)
      expect(page.url()).toBe(`${appUrl}/`);
      expect(await text(page, '#result h2')).toBe('Signed out of StatusBoard and Nimbus');
      expect(await page.locator('#signed-in').count()).toBe(0);
      expect(await userinfo()).toBe(401); // StatusBoard revoked the sign-in's tokens
      await shot(page, 'oidc-rp-logout-signed-out');
      expect(logouts).toHaveLength(1);
      const logout = logouts[0]!;
      expect(logout.get('client_id')).toBe(clientId);
      expect(logout.get('post_logout_redirect_uri')).toBe(`${appUrl}/signed-out`);
      expect(logout.get('state')).toMatch(/^[\w-]{43}$/);
      expect(decodeJwt(logout.get('id_token_hint')!)).toMatchObject({ iss: nimbusUrl, aud: clientId, sub: ADA.uuid, nonce });
      // Signed out of Nimbus too: the next sign-in asks for the password.
      await navigate(page, page.locator('#sign-in'));
      expect(new URL(page.url()).pathname).toBe('/login');

      // Back at /signed-out with another state (a forged or replayed link): nothing more is claimed.
      await page.goto(`${appUrl}/signed-out?state=${logout.get('state')}`);
      expect(await text(page, '#result h2')).toBe('Signed out of StatusBoard');
      expect(consoleErrors).toEqual([]);
    });

    it('an ID token whose signature does not verify against the JWKS signs nobody in', async () => {
      const { page } = await browser(1280, LANGUAGES.en);
      await page.goto(`${appUrl}/`);
      await navigate(page, page.locator('#sign-in'));
      if (new URL(page.url()).pathname === '/login') await signIn(page, ADA);
      forgeSignature = true;
      try {
        await navigate(page, page.getByRole('button', { name: 'Authorize', exact: true }));
      } finally {
        forgeSignature = false;
      }
      expect(page.url()).toBe(`${appUrl}/`);
      expect(await text(page, '#result h2')).toBe('The sign-in did not succeed');
      expect(await text(page, '#result .failure')).toContain('signature');
      expect(await page.locator('#signed-in').count()).toBe(0);
    });
  });

  it('"Use another account" signs Bob in; a denied consent signs nobody in', async () => {
    const { page } = await browser(1280, LANGUAGES.en);
    await toConsent(page, LANGUAGES.en, ADA, 'oidc-bob');
    await navigate(page, page.getByRole('link', { name: 'Use another account' }));
    await signIn(page, BOB);
    await navigate(page, page.getByRole('button', { name: 'Authorize', exact: true }));
    expect(await text(page, '#signed-in-as')).toBe('Signed in as Bob Builder (bob@example.com, verified by Nimbus)');
    expect((await json(page, '#id-token-claims')).sub).toBe(BOB.uuid);
    await navigate(page, page.locator('#sign-out'));

    await navigate(page, page.locator('#sign-in'));
    if (new URL(page.url()).pathname === '/login') await signIn(page, BOB); // after an RP-initiated logout
    await navigate(page, page.getByRole('button', { name: 'Deny' }));
    expect(page.url()).toBe(`${h.appUrl}/`);
    expect(await text(page, '#result h2')).toBe('The sign-in did not succeed');
    expect(await text(page, '#result .error-code')).toBe('access_denied');
    expect(await page.locator('#signed-in').count()).toBe(0);
    await shot(page, 'oidc-denied');
  });
});
