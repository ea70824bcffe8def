/**
 * What every adapter takes as options (docs/reference.md#adapters-over-http; the interaction UI of
 * `InteractionUiOptions`): `basePath`, `loginUrl`, `bodyLimit`, and `onLogin` / `onConsent`
 * replacing the default interaction handling; and the methods that reach the core besides GET and
 * POST.
 */
import { describe, expect, it } from 'vitest';
import {
  ADA,
  CALLBACK,
  FORM,
  FRAMEWORKS,
  expectErrorPage,
  expectJsonError,
  expectNoStoreJson,
  setCookieValue,
  useApp,
  type TokenBody,
} from './app.js';

describe.each(FRAMEWORKS)('%s: basePath', (framework) => {
  const app = useApp({ framework, router: { basePath: '/auth/oauth2' } });

  it('moves every route; the consent form, its cookie and the resume link follow; the full flow works', async () => {
    const { get, authorizeUrl, signIn, readConsent, decide, exchange, api } = app();
    expect(authorizeUrl()).toMatch(/^\/auth\/oauth2\/authorize\?/);
    const login = await get(authorizeUrl());
    expect(login.status).toBe(302);
    const interaction = new URL(login.location!, 'http://h.invalid').searchParams.get('interaction')!;

    const sid = signIn(ADA);
    const page = await get(`/auth/oauth2/authorize/resume?interaction=${encodeURIComponent(interaction)}`, sid);
    const consent = await readConsent(page);
    expect(page.text).toContain('action="/auth/oauth2/authorize/decision"');
    expect(setCookieValue(page.headers, 'authgate_csrf')?.attributes).toMatch(/Path=\/auth\/oauth2\/authorize(;|$)/);

    const decided = await decide(consent, 'approve', sid);
    expect(decided.status).toBe(303);
    const reply = await exchange(new URL(decided.location!).searchParams.get('code')!);
    expect(reply.status, reply.text).toBe(200);
    expect((await api('GET', '/v2/account', reply.json<TokenBody>().access_token)).status).toBe(200);
  });

  it('revocation answers at the new path; the default paths are not served', async () => {
    const { postForm, get } = app();
    const moved = await postForm('/auth/oauth2/revoke', { token: 'x' });
    expect(moved.status).toBe(200);
    expectNoStoreJson(moved);
    for (const path of ['/v1/oauth/token', '/v1/oauth/revoke']) expect((await postForm(path, { token: 'x' })).status).toBe(404);
    expect((await get('/v1/oauth/authorize')).status).toBe(404);
  });
});

describe.each(FRAMEWORKS)('%s: loginUrl', (framework) => {
  const app = useApp({ framework, router: { loginUrl: 'https://accounts.example/signin?next=oauth' } });

  it('the sign-in redirect goes to loginUrl, adding the interaction to a query it already has', async () => {
    const { get, authorizeUrl } = app();
    const reply = await get(authorizeUrl());
    expect(reply.status).toBe(302);
    const login = new URL(reply.location!);
    expect(`${login.origin}${login.pathname}`).toBe('https://accounts.example/signin');
    expect(login.searchParams.get('next')).toBe('oauth');
    expect(login.searchParams.get('interaction')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('the consent page\'s "Use another account" link goes there too', async () => {
    const { openConsent, signIn } = app();
    const { page, interaction } = await openConsent({}, signIn(ADA));
    expect(page.text).toContain(`href="https://accounts.example/signin?next=oauth&#38;interaction=${interaction}"`);
  });
});

describe.each(FRAMEWORKS)('%s: bodyLimit', (framework) => {
  const app = useApp({ framework, router: { bodyLimit: 100 } });

  it('a body of bodyLimit bytes reaches the core; one byte more → 413 JSON', async () => {
    const { postForm } = app();
    const exact = `x=${'a'.repeat(98)}`;
    expectJsonError(await postForm('/v1/oauth/token', exact), 400, 'invalid_request');
    const over = await postForm('/v1/oauth/token', `${exact}a`);
    expect(over.status).toBe(413);
    expect(over.headers.get('content-type')).toMatch(/^application\/json/);
    expect(over.headers.get('cache-control')).toBe('no-store');
    expect(over.json<{ error: string; error_description: string }>()).toEqual({
      error: 'invalid_request',
      error_description: 'The request body is larger than 100 bytes.',
    });
  });

  it('the limit holds for the revocation endpoint and the consent decision too', async () => {
    const { postForm } = app();
    expect((await postForm('/v1/oauth/revoke', `token=${'a'.repeat(200)}`)).status).toBe(413);
    expect((await postForm('/v1/oauth/authorize/decision', `interaction=${'a'.repeat(200)}`)).status).toBe(413);
  });

  it('routes that read no body ignore it, whatever its size', async () => {
    const { request } = app();
    const reply = await request('POST', '/v1/oauth/authorize', { headers: { 'content-type': FORM }, body: 'x'.repeat(1000) });
    expectErrorPage(reply, 'invalid_request');
  });
});

describe.each(FRAMEWORKS)('%s: onLogin and onConsent replace the default interaction handling', (framework) => {
  const app = useApp({ framework, customInteractions: true });

  it('onLogin gets the interaction; after sign-in the host resumes; onConsent gets it with the scope; approve gives a code', async () => {
    const { get, authorizeUrl, signIn, server, exchange } = app();
    const login = await get(authorizeUrl({ scope: 'read write' }));
    expect(login.status).toBe(200);
    expect(login.headers.get('content-type')).toMatch(/^text\/plain/);
    const [, loginId] = /^custom login (\S+)$/.exec(login.text) ?? [];
    expect(loginId).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const sid = signIn(ADA);
    const consent = await get(`/v1/oauth/authorize/resume?interaction=${encodeURIComponent(loginId!)}`, sid);
    expect(consent.status).toBe(200);
    const [, consentId, scope] = /^custom consent (\S+) (.+)$/.exec(consent.text) ?? [];
    expect(scope).toBe('read write');
    expect(consent.headers.getSetCookie()).toEqual([]);

    // The host's own consent page then calls the core itself.
    const decision = await server.approve(consentId!, { method: 'POST', url: '/consent', headers: { cookie: sid } });
    expect(decision.type).toBe('redirect');
    const callback = new URL((decision as { location: string }).location);
    expect(`${callback.origin}${callback.pathname}`).toBe(CALLBACK);
    expect((await exchange(callback.searchParams.get('code')!)).status).toBe(200);
  });

  it('a signed-in user goes straight to onConsent', async () => {
    const { get, authorizeUrl, signIn } = app();
    const reply = await get(authorizeUrl(), signIn(ADA));
    expect(reply.text).toMatch(/^custom consent \S+ read$/);
  });

  it("redirects and error pages are still the adapter's", async () => {
    const { get, authorizeUrl, signIn } = app();
    expectErrorPage(await get(authorizeUrl({ scope: 'admin' }), signIn(ADA)), 'invalid_scope');
    const silent = await get(authorizeUrl({ prompt: 'none' }));
    expect(silent.status).toBe(302);
    expect(new URL(silent.location!).searchParams.get('error')).toBe('login_required');
  });
});

describe.each(FRAMEWORKS)('%s: methods other than GET and POST reach the core', (framework) => {
  const app = useApp({ framework });

  it.each(['PUT', 'PATCH', 'DELETE', 'OPTIONS'])('%s on the token and revocation endpoints → 405 JSON with Allow: POST', async (method) => {
    const { request } = app();
    for (const path of ['/v1/oauth/token', '/v1/oauth/revoke']) {
      const reply = await request(method, path, { headers: { 'content-type': FORM }, body: 'grant_type=refresh_token&token=x' });
      expectJsonError(reply, 405, 'invalid_request');
      expectNoStoreJson(reply);
      expect(reply.headers.get('allow')).toBe('POST');
    }
  });

  it('HEAD on the token endpoint → 405 without a body', async () => {
    const reply = await app().request('HEAD', '/v1/oauth/token');
    expect(reply.status).toBe(405);
    expect(reply.headers.get('allow')).toBe('POST');
    expect(reply.text).toBe('');
  });

  it('HEAD and POST on the authorization endpoint start nothing: error page, no redirect, no cookie', async () => {
    const { request, authorizeUrl, signIn } = app();
    const sid = signIn(ADA);
    const head = await request('HEAD', authorizeUrl(), { cookie: sid });
    expect(head.status).toBe(400);
    expect(head.location).toBeNull();
    expect(head.text).toBe('');
    expectErrorPage(await request('POST', authorizeUrl(), { cookie: sid }), 'invalid_request');
    expect((await request('POST', authorizeUrl(), { cookie: sid })).headers.getSetCookie()).toEqual([]);
  });

  it('PUT on the decision route never approves', async () => {
    const { signIn, openConsent, request } = app();
    const sid = signIn(ADA);
    const consent = await openConsent({}, sid);
    const form = new URLSearchParams({ interaction: consent.interaction, csrf: consent.csrf, decision: 'approve' }).toString();
    const reply = await request('PUT', '/v1/oauth/authorize/decision', {
      headers: { 'content-type': FORM },
      body: form,
      cookie: `${sid}; ${consent.csrfCookie}`,
    });
    expectErrorPage(reply, 'invalid_request');
  });

  it('HEAD on the resource API needs read; with a read token → 200 and no body', async () => {
    const { tokens, api } = app();
    const { access_token } = await tokens({ scope: 'read' });
    const ok = await api('HEAD', '/v2/account', access_token);
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('');
    const none = await api('HEAD', '/v2/account');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
  });
});
