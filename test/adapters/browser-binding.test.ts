/**
 * An interaction belongs to the browser that started it (docs/reference.md#browser-binding;
 * SECURITY.md U-10). The interaction id travels in URLs (the sign-in redirect, the resume link,
 * "Use another account"); whoever learns one must not be able to finish the flow in their own
 * browser, signed in as themselves, and so hand the victim's client a code for the attacker's
 * account with the victim's valid `state`.
 */
import { describe, expect, it } from 'vitest';
import { ADA, BOB, BROWSER_COOKIE, FRAMEWORKS, expectErrorPage, setCookieValue, useApp, type Reply } from './app.js';

const interactionOf = (reply: Reply) => new URL(reply.location!, 'http://h.invalid').searchParams.get('interaction')!;
const resumePath = (id: string, paths = '/v1/oauth') => `${paths}/authorize/resume?interaction=${encodeURIComponent(id)}`;

/** The error page a browser other than the one that started the interaction gets. */
function expectAnotherBrowser(reply: Reply): void {
  expectErrorPage(reply, 'invalid_request');
  expect(reply.text).toContain('This authorization was started in another browser');
}

describe.each(FRAMEWORKS)('%s: an interaction is bound to the browser that started it', (framework) => {
  const app = useApp({ framework });

  it('the sign-in redirect sets a binding cookie: HttpOnly, SameSite=Lax, scoped to the authorize routes, in no URL', async () => {
    const { get, authorizeUrl } = app();
    const reply = await get(authorizeUrl());
    expect(reply.status).toBe(302);
    const cookie = setCookieValue(reply.headers, BROWSER_COOKIE);
    expect(cookie?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookie?.attributes).toMatch(/HttpOnly/i);
    expect(cookie?.attributes).toMatch(/SameSite=Lax/i);
    expect(cookie?.attributes).toMatch(/Path=\/v1\/oauth\/authorize(;|$)/);
    // Plain http here: a Secure cookie would never come back.
    expect(cookie?.attributes).not.toMatch(/Secure/i);
    // A secret of its own: not the interaction id, nowhere in the redirect.
    expect(cookie!.value).not.toBe(interactionOf(reply));
    expect(reply.location).not.toContain(cookie!.value);
  });

  it('same browser: sign-in redirect → resume → consent → approve gives a code', async () => {
    const { get, authorizeUrl, signIn, readConsent, decide, exchange } = app();
    const start = await get(authorizeUrl({ state: 'victim-state' }));
    const sid = signIn(ADA);
    const consent = await readConsent(await get(resumePath(interactionOf(start)), sid));
    const decided = await decide(consent, 'approve', sid);
    expect(decided.status, decided.text).toBe(303);
    const callback = new URL(decided.location!);
    expect(callback.searchParams.get('state')).toBe('victim-state');
    expect((await exchange(callback.searchParams.get('code')!)).status).toBe(200);
  });

  it('another browser that learnt the interaction id gets an error page at resume, whatever its cookies; no code', async () => {
    const { get, authorizeUrl, signIn, browser, readConsent, decide } = app();
    const victim = await get(authorizeUrl({ state: 'victim-state' }));
    const id = interactionOf(victim);
    const bob = signIn(BOB);

    // Without any binding cookie.
    expectAnotherBrowser(await get(resumePath(id), bob, { browser: null }));
    // With a binding cookie of its own (the attacker started a flow of their own first).
    const attacker = browser();
    expect((await get(authorizeUrl(), bob, { browser: attacker })).status).toBe(200);
    expect(attacker.binding).toBeDefined();
    expectAnotherBrowser(await get(resumePath(id), bob, { browser: attacker }));
    // With a forged one.
    expectAnotherBrowser(await get(resumePath(id), `${bob}; ${BROWSER_COOKIE}=${'A'.repeat(43)}`, { browser: null }));
    expectAnotherBrowser(await get(resumePath(id), `${bob}; ${BROWSER_COOKIE}=${id}`, { browser: null }));

    // The refusal does not use the interaction up: the victim's own browser still finishes it.
    const ada = signIn(ADA);
    const consent = await readConsent(await get(resumePath(id), ada));
    const decided = await decide(consent, 'approve', ada);
    expect(decided.status).toBe(303);
    expect(new URL(decided.location!).searchParams.get('state')).toBe('victim-state');
  });

  it('another browser gets an error page at the decision (consent reached through resume or directly); no code', async () => {
    const { get, authorizeUrl, signIn, browser, readConsent, openConsent, decide, replies } = app();
    const sid = signIn(ADA);
    const viaResume = await readConsent(await get(resumePath(interactionOf(await get(authorizeUrl()))), sid));
    const direct = await openConsent({}, sid);

    for (const consent of [viaResume, direct]) {
      // Same account, same CSRF pair, but not the browser that started the request.
      expectAnotherBrowser(await decide(consent, 'approve', sid, { browser: null }));
      expectAnotherBrowser(await decide(consent, 'approve', sid, { browser: browser() }));
      expectAnotherBrowser(
        await decide(consent, 'deny', sid, { cookie: `${sid}; ${consent.csrfCookie}; ${BROWSER_COOKIE}=${'B'.repeat(43)}`, browser: null }),
      );
    }
    expect(replies.some((r) => /[?&]code=/.test(r.reply.location ?? ''))).toBe(false);

    // Still pending for the browser that started it.
    for (const consent of [viaResume, direct]) expect((await decide(consent, 'approve', sid)).status).toBe(303);
  });

  it('several tabs of one browser: interactions in flight at once all complete, with one binding cookie', async () => {
    const { get, authorizeUrl, signIn, readConsent, decide, defaultBrowser } = app();
    const starts = [];
    for (const state of ['tab-1', 'tab-2', 'tab-3']) starts.push(await get(authorizeUrl({ state })));
    const bindings = starts.map((reply) => setCookieValue(reply.headers, BROWSER_COOKIE)?.value).filter(Boolean);
    // Set once, then sent back and reused.
    expect(bindings).toEqual([defaultBrowser.binding]);

    const sid = signIn(ADA);
    const consents = [];
    for (const start of starts.reverse()) consents.push(await readConsent(await get(resumePath(interactionOf(start)), sid)));
    const states = [];
    for (const consent of consents.reverse()) {
      const decided = await decide(consent, 'approve', sid);
      expect(decided.status).toBe(303);
      states.push(new URL(decided.location!).searchParams.get('state'));
    }
    expect(states).toEqual(['tab-1', 'tab-2', 'tab-3']);
  });

  it('a signed-in browser without the cookie gets it with the consent page, beside the CSRF cookie', async () => {
    const { get, authorizeUrl, signIn, readConsent } = app();
    const page = await get(authorizeUrl(), signIn(ADA));
    await readConsent(page);
    expect(setCookieValue(page.headers, BROWSER_COOKIE)?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(setCookieValue(page.headers, 'authgate_csrf')?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('redirects and error pages set no binding cookie (nothing was stored)', async () => {
    const { get, authorizeUrl, signIn } = app();
    const silent = await get(authorizeUrl({ prompt: 'none' }), signIn(ADA));
    expect(silent.status).toBe(302);
    expect(setCookieValue(silent.headers, BROWSER_COOKIE)).toBeUndefined();
    const bad = await get(authorizeUrl({ scope: 'admin' }));
    expectErrorPage(bad, 'invalid_scope');
    expect(setCookieValue(bad.headers, BROWSER_COOKIE)).toBeUndefined();
  });

  it("a direct-core flow (no binding) still works, also through the adapter's resume route", async () => {
    const { server, signIn, authorizeUrl, get, readConsent, decide } = app();
    const url = authorizeUrl({ state: 'direct' });
    // Called directly, as a host with its own authorization page would.
    const login = await server.authorize({ method: 'GET', url, headers: {} });
    expect(login.type).toBe('login');
    const sid = signIn(ADA);
    const consent = await server.resume((login as { interaction: { id: string } }).interaction.id, {
      method: 'GET',
      url: '/x',
      headers: { cookie: sid },
    });
    expect(consent.type).toBe('consent');
    const approved = await server.approve((consent as { interaction: { id: string } }).interaction.id, {
      method: 'POST',
      url: '/x',
      headers: { cookie: sid },
    });
    expect(approved.type).toBe('redirect');
    expect(new URL((approved as { location: string }).location).searchParams.get('code')).toBeTruthy();

    // An unbound interaction, sent to the adapter's resume route from a browser without the cookie.
    const again = await server.authorize({ method: 'GET', url, headers: {} });
    const page = await readConsent(
      await get(resumePath((again as { interaction: { id: string } }).interaction.id), sid, { browser: null }),
    );
    expect((await decide(page, 'approve', sid, { browser: null })).status).toBe(303);
  });
});

describe.each(FRAMEWORKS)('%s: the binding cookie follows basePath', (framework) => {
  const app = useApp({ framework, router: { basePath: '/auth/oauth2' } });

  it('Path is {basePath}/authorize, and the flow works there', async () => {
    const { get, authorizeUrl, signIn, readConsent, decide } = app();
    const start = await get(authorizeUrl());
    expect(setCookieValue(start.headers, BROWSER_COOKIE)?.attributes).toMatch(/Path=\/auth\/oauth2\/authorize(;|$)/);
    const sid = signIn(ADA);
    const consent = await readConsent(await get(resumePath(interactionOf(start), '/auth/oauth2'), sid));
    expect((await decide(consent, 'approve', sid)).status).toBe(303);
    expectAnotherBrowser(await get(resumePath(interactionOf(await get(authorizeUrl())), '/auth/oauth2'), sid, { browser: null }));
  });
});

describe.each(FRAMEWORKS)('%s: with onLogin replacing the sign-in redirect', (framework) => {
  const app = useApp({ framework, customInteractions: true });

  it("the host's response carries the binding cookie; resume is bound to that browser", async () => {
    const { get, authorizeUrl, signIn } = app();
    const login = await get(authorizeUrl());
    expect(login.status).toBe(200);
    expect(setCookieValue(login.headers, BROWSER_COOKIE)?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [, id] = /^custom login (\S+)$/.exec(login.text) ?? [];
    const sid = signIn(ADA);
    expectAnotherBrowser(await get(resumePath(id!), sid, { browser: null }));
    expect((await get(resumePath(id!), sid)).text).toMatch(/^custom consent /);
  });
});

describe.each(FRAMEWORKS)('%s: an anonymous flood stores at most maxPendingAnonymousInteractions', (framework) => {
  const app = useApp({ framework, server: { maxPendingAnonymousInteractions: 2 } });

  it('the oldest anonymous interaction is forgotten first: its resume link answers "expired"; the newest still work', async () => {
    const { get, authorizeUrl, signIn, readConsent } = app();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(interactionOf(await get(authorizeUrl())));
    const sid = signIn(ADA);
    const forgotten = await get(resumePath(ids[0]!), sid);
    expectErrorPage(forgotten, 'invalid_request');
    expect(forgotten.text).toContain('expired');
    for (const id of ids.slice(1)) await readConsent(await get(resumePath(id), sid));
  });
});
