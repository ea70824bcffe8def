/**
 * The consent form's CSRF protection (SECURITY.md U-08, U-16; docs/reference.md#interaction-routes)
 * and the authorization endpoint's error pages (RFC 6749 §4.1.2.1; docs/reference.md#conventions:
 * HTML, status 400, never a redirect).
 */
import { describe, expect, it } from 'vitest';
import { ADA, BOB, CALLBACK, FORM, expectErrorPage, FRAMEWORKS, useApp } from './app.js';

describe.each(FRAMEWORKS)('%s: CSRF protection of the consent form', (framework) => {
  const app = useApp({ framework });

  it('decision POST without the CSRF cookie → 403 error page, no redirect', async () => {
    const { signIn, openConsent, decide } = app();
    const sid = signIn(ADA);
    const consent = await openConsent({}, sid);
    const reply = await decide(consent, 'approve', sid, { cookie: sid });
    expectErrorPage(reply, 'invalid_request', 403);
  });

  it('decision POST with a wrong csrf value → 403 error page, no redirect', async () => {
    const { signIn, openConsent, decide } = app();
    const sid = signIn(ADA);
    const consent = await openConsent({}, sid);
    const wrong = consent.csrf.slice(0, -1) + (consent.csrf.endsWith('A') ? 'B' : 'A');
    expectErrorPage(await decide(consent, 'approve', sid, { form: { csrf: wrong } }), 'invalid_request', 403);
    // The cookie alone does not help either: the form field must match it.
    expectErrorPage(await decide(consent, 'approve', sid, { form: { csrf: '' } }), 'invalid_request', 403);
    // A well-formed guess is no better.
    const attacker = 'A'.repeat(43);
    expectErrorPage(await decide(consent, 'approve', sid, { form: { csrf: attacker } }), 'invalid_request', 403);
  });

  it('deny is protected the same way', async () => {
    const { signIn, openConsent, decide } = app();
    const sid = signIn(ADA);
    const consent = await openConsent({}, sid);
    expectErrorPage(await decide(consent, 'deny', sid, { cookie: sid }), 'invalid_request', 403);
  });

  it('after a refused CSRF attempt the real user can still decide (nothing was issued meanwhile)', async () => {
    const { signIn, openConsent, decide } = app();
    const sid = signIn(ADA);
    const consent = await openConsent({}, sid);
    expectErrorPage(await decide(consent, 'approve', sid, { cookie: sid }), 'invalid_request', 403);
    const ok = await decide(consent, 'approve', sid);
    expect(ok.status).toBe(303);
    expect(new URL(ok.location!).searchParams.get('code')).toBeTruthy();
  });

  it('approval by a different signed-in user than the one shown → error page, no code; the shown user still can', async () => {
    const { signIn, openConsent, decide } = app();
    const ada = signIn(ADA);
    const bob = signIn(BOB);
    const consent = await openConsent({}, ada);
    expect(consent.page.text).toContain(ADA.name);

    // Bob's session, with a valid CSRF cookie/field pair for this page.
    const reply = await decide(consent, 'approve', bob);
    expectErrorPage(reply, 'invalid_request');
    // Nor without any session at all.
    expectErrorPage(await decide(consent, 'approve', ''), 'invalid_request');

    const ok = await decide(consent, 'approve', ada);
    expect(ok.status).toBe(303);
  });

  it('a malformed decision form (unknown decision, duplicated field) → error page', async () => {
    const { signIn, openConsent, postForm } = app();
    const sid = signIn(ADA);
    const consent = await openConsent({}, sid);
    const cookie = `${sid}; ${consent.csrfCookie}`;
    const bad = await postForm(
      '/v1/oauth/authorize/decision',
      { interaction: consent.interaction, csrf: consent.csrf, decision: 'maybe' },
      { cookie },
    );
    expectErrorPage(bad, 'invalid_request');
    const twice = `interaction=${consent.interaction}&interaction=${consent.interaction}&csrf=${consent.csrf}&decision=approve`;
    expectErrorPage(await postForm('/v1/oauth/authorize/decision', twice, { cookie }), 'invalid_request');
  });

  // Not on workerd: it joins repeated Cookie lines with ", " (as Fetch joins any header), which
  // the core does not split, so the cookies after the first are not read there.
  it.skipIf(framework === 'workerd')(
    'session, CSRF and binding cookies on separate Cookie lines (as HTTP/2 browsers send them) are all read',
    async () => {
      const { signIn, openConsent, rawRequest, defaultBrowser } = app();
      const sid = signIn(ADA);
      const consent = await openConsent({}, sid);
      const form = new URLSearchParams({ interaction: consent.interaction, csrf: consent.csrf, decision: 'approve' }).toString();
      const binding = defaultBrowser.cookieFor('/v1/oauth/authorize/decision')!;
      const reply = await rawRequest(
        'POST',
        '/v1/oauth/authorize/decision',
        [
          ['content-type', FORM],
          ['cookie', sid],
          ['cookie', consent.csrfCookie],
          ['cookie', binding],
        ],
        form,
      );
      expect(reply.status, reply.text).toBe(303);
      expect(new URL(String(reply.headers['location'])).searchParams.get('code')).toBeTruthy();
    },
  );

  it('a second consent page reuses a valid CSRF cookie the browser already holds', async () => {
    const { signIn, openConsent, get, authorizeUrl, readConsent } = app();
    const sid = signIn(ADA);
    const first = await openConsent({}, sid);
    const second = await readConsent(await get(authorizeUrl(), `${sid}; ${first.csrfCookie}`));
    expect(second.csrf).toBe(first.csrf);
    expect(second.interaction).not.toBe(first.interaction);
  });
});

describe.each(FRAMEWORKS)('%s: error pages of the authorization endpoint (400 HTML, no Location)', (framework) => {
  const app = useApp({ framework });

  it('unknown client', async () => {
    const { get, authorizeUrl, signIn } = app();
    expectErrorPage(await get(authorizeUrl({ client_id: 'no-such-client' }), signIn(ADA)), 'invalid_client');
  });

  it('missing client_id', async () => {
    const { get, signIn } = app();
    const reply = await get(`/v1/oauth/authorize?${new URLSearchParams({ redirect_uri: CALLBACK, response_type: 'code' })}`, signIn(ADA));
    expectErrorPage(reply, 'invalid_request');
  });

  it.each([
    ['another host', 'https://evil.example/cb'],
    ['case changed', 'https://client.example/CB'],
    ['trailing slash', 'https://client.example/cb/'],
    ['extra query', 'https://client.example/cb?x=1'],
    ["another client's callback", 'https://other.example/cb'],
  ])('wrong redirect_uri (%s)', async (_name, redirectUri) => {
    const { get, authorizeUrl, signIn } = app();
    const reply = await get(authorizeUrl({ redirect_uri: redirectUri }), signIn(ADA));
    expectErrorPage(reply, 'invalid_redirect_uri');
    expect(reply.text).toMatch(/redirect URI is not valid/i);
  });

  it('missing redirect_uri never falls back to the registered one', async () => {
    const { get, signIn, client } = app();
    const reply = await get(
      `/v1/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, response_type: 'code' })}`,
      signIn(ADA),
    );
    expectErrorPage(reply, 'invalid_redirect_uri');
  });

  it.each(['admin', 'READ', 'read,write', 'read  write', 'write', 'read read'])('bad scope %j', async (scope) => {
    const { get, authorizeUrl, signIn } = app();
    const reply = await get(authorizeUrl({ scope }), signIn(ADA));
    expectErrorPage(reply, 'invalid_scope');
    expect(reply.text).toMatch(/scope is invalid, unknown or malformed/i);
  });

  it('bad scope with prompt=none is still an error page, not a redirect', async () => {
    const { get, authorizeUrl } = app();
    expectErrorPage(await get(authorizeUrl({ scope: 'admin', prompt: 'none' })), 'invalid_scope');
  });

  it('bad redirect_uri with another error (bad response_type) is still an error page', async () => {
    const { get, authorizeUrl, signIn } = app();
    expectErrorPage(
      await get(authorizeUrl({ redirect_uri: 'https://evil.example/cb', response_type: 'id_token' }), signIn(ADA)),
      'invalid_redirect_uri',
    );
  });

  it('reflected values are HTML-escaped on error pages', async () => {
    const { get, authorizeUrl, signIn } = app();
    const reply = await get(authorizeUrl({ client_id: '<script>alert(1)</script>' }), signIn(ADA));
    expectErrorPage(reply, 'invalid_client');
    expect(reply.text).not.toContain('<script>');
  });

  it('after client and redirect_uri are verified, a bad response_type goes back to the callback', async () => {
    const { get, authorizeUrl, signIn } = app();
    const reply = await get(authorizeUrl({ response_type: 'id_token', state: 'rt' }), signIn(ADA));
    expect(reply.status).toBe(302);
    const callback = new URL(reply.location!);
    expect(`${callback.origin}${callback.pathname}`).toBe(CALLBACK);
    expect(callback.searchParams.get('error')).toBe('unsupported_response_type');
    expect(callback.searchParams.get('state')).toBe('rt');
  });
});

/** A brand with a logo and a stylesheet on other origins, and French offered (docs/reference.md#branding-and-languages). */
const BRANDED = {
  pages: {
    brand: {
      name: 'Nimbus',
      logoUrl: 'https://cdn.nimbus.example/logo.svg',
      accentColor: '#0069ff',
      stylesheetUrl: 'https://static.nimbus.example/oauth.css',
    },
    messages: { fr: {} },
    authorizedAppsUrl: '/account/applications',
  },
};
const BRANDED_CSP =
  "default-src 'none'; style-src 'unsafe-inline' https://static.nimbus.example; img-src https://cdn.nimbus.example; frame-ancestors 'none'; base-uri 'none'";

describe.each(FRAMEWORKS)('%s: branded pages in the language the browser asks for', (framework) => {
  const app = useApp({ framework, server: BRANDED });
  const fr = { 'accept-language': 'fr-CA,fr;q=0.9,en;q=0.5' };

  it("Accept-Language: fr → the French consent page, with the brand's CSP and Vary; its form still approves", async () => {
    const { signIn, get, authorizeUrl, readConsent, decide } = app();
    const sid = signIn(ADA);
    const consent = await readConsent(await get(authorizeUrl(), sid, { headers: fr }));
    const { page } = consent;
    expect(page.text).toContain('<html lang="fr">');
    expect(page.text).toContain('Autoriser <strong>Example App</strong> ?');
    expect(page.text).toContain('Après votre choix, vous serez renvoyé·e vers <strong>client.example</strong>.');
    expect(page.text).toContain('<a href="/account/applications">vos applications autorisées</a>');
    expect(page.text).not.toContain('This application asks to');
    expect(page.headers.get('content-security-policy')).toBe(BRANDED_CSP);
    expect(page.headers.get('vary')).toBe('Accept-Language');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    const ok = await decide(consent, 'approve', sid);
    expect(ok.status).toBe(303);
    expect(new URL(ok.location!).searchParams.get('code')).toBeTruthy();
  });

  it('no Accept-Language, or one not offered → the English page, same brand', async () => {
    const { signIn, get, authorizeUrl, readConsent } = app();
    const sid = signIn(ADA);
    for (const headers of [{}, { 'accept-language': 'de-DE, de;q=0.9' }] as Record<string, string>[]) {
      const { page } = await readConsent(await get(authorizeUrl(), sid, { headers }));
      expect(page.text).toContain('<html lang="en">');
      expect(page.text).toContain('Authorize <strong>Example App</strong>?');
      expect(page.text).toContain('<img src="https://cdn.nimbus.example/logo.svg" alt="Nimbus logo">');
      expect(page.headers.get('content-security-policy')).toBe(BRANDED_CSP);
    }
  });

  it('error pages in French: the authorization endpoint, a refused CSRF check; reflected values still escaped', async () => {
    const { signIn, get, authorizeUrl, openConsent, postForm } = app();
    const sid = signIn(ADA);
    const unknown = await get(authorizeUrl({ client_id: '<script>alert(1)</script>' }), sid, { headers: fr });
    expectErrorPage(unknown, 'invalid_client');
    expect(unknown.text).toContain('<html lang="fr">');
    expect(unknown.text).toContain("Cette demande d'autorisation ne peut pas aboutir".replace("'", '&#39;'));
    expect(unknown.text).not.toContain('<script>');
    expect(unknown.headers.get('content-security-policy')).toBe(BRANDED_CSP);
    const consent = await openConsent({}, sid);
    // Without the CSRF cookie: refused, in French.
    const form = { interaction: consent.interaction, csrf: consent.csrf, decision: 'approve' };
    const refused = await postForm('/v1/oauth/authorize/decision', form, { cookie: sid, headers: fr });
    expectErrorPage(refused, 'invalid_request', 403);
    expect(refused.text).toContain('<html lang="fr">');
    expect(refused.headers.get('vary')).toBe('Accept-Language');
  });
});
