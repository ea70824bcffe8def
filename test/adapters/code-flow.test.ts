/**
 * The authorization flows over real HTTP through every adapter (RFC 6749 §4.1, §4.2;
 * docs/reference.md#authorization-endpoint): code flow with the built-in consent page, deny,
 * implicit flow, sign-in redirect and resume, and prompt=none.
 */
import { describe, expect, it } from 'vitest';
import {
  ACCESS_TOKEN_SECONDS,
  ADA,
  BOB,
  FRAMEWORKS,
  CALLBACK,
  LOGIN_URL,
  expectErrorPage,
  expectNoStoreJson,
  fragmentParams,
  setCookieValue,
  useApp,
  type TokenBody,
} from './app.js';

/** The callback URL without its query or fragment: where the browser is actually sent. */
const target = (url: URL) => `${url.origin}${url.pathname}`;

describe.each(FRAMEWORKS)('%s: authorization code flow over HTTP', (framework) => {
  const app = useApp({ framework });

  it('serves the built-in consent page to a signed-in user, with anti-framing headers and a CSRF cookie', async () => {
    const { get, authorizeUrl, signIn, client } = app();
    const page = await get(authorizeUrl({ scope: 'read write' }), signIn(ADA));

    expect(page.status).toBe(200);
    expect(page.location).toBeNull();
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');

    const csrf = setCookieValue(page.headers, 'authgate_csrf');
    expect(csrf?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(csrf?.attributes).toMatch(/HttpOnly/i);
    expect(csrf?.attributes).toMatch(/SameSite=Lax/i);
    expect(csrf?.attributes).toMatch(/Path=\/v1\/oauth\/authorize/);

    // The page shows the application, the user deciding and both scope values, and posts back.
    expect(page.text).toContain(client.name);
    expect(page.text).toContain(ADA.name);
    expect(page.text).toContain('read-only');
    expect(page.text).toContain('Create, change and delete');
    expect(page.text).toMatch(/<form method="post" action="\/v1\/oauth\/authorize\/decision">/);
    expect(page.text).toContain('value="approve"');
    expect(page.text).toContain('value="deny"');
  });

  it('approve → 303 to the callback with code and state → token exchange with the form body', async () => {
    const { signIn, openConsent, decide, exchange, clock } = app();
    const sid = signIn(ADA);
    const consent = await openConsent({ scope: 'read write', state: 'xyz-state' }, sid);

    const decided = await decide(consent, 'approve', sid);
    expect(decided.status).toBe(303);
    const callback = new URL(decided.location!);
    expect(target(callback)).toBe(CALLBACK);
    expect(callback.searchParams.get('state')).toBe('xyz-state');
    const code = callback.searchParams.get('code');
    expect(code).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(callback.hash).toBe('');
    expect(callback.searchParams.has('access_token')).toBe(false);
    expect(decided.headers.get('cache-control')).toBe('no-store');
    expect(decided.headers.get('referrer-policy')).toBe('no-referrer');

    const reply = await exchange(code!);
    expect(reply.status, reply.text).toBe(200);
    expectNoStoreJson(reply);
    const body = reply.json<TokenBody>();
    expect(body.access_token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(body.token_type).toBe('bearer');
    expect(body.expires_in).toBe(ACCESS_TOKEN_SECONDS);
    expect(body.refresh_token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(body.refresh_token).not.toBe(body.access_token);
    expect(body.scope).toBe('read write');
    expect(body.info).toEqual({ name: ADA.name, email: ADA.email, uuid: ADA.uuid });

    // The token works at the resource API for that user.
    const account = await app().api('GET', '/v2/account', body.access_token);
    expect(account.status).toBe(200);
    expect(account.json<{ oauth: { account: { uuid: string }; expiresAt: number } }>().oauth.account.uuid).toBe(ADA.uuid);
    expect(account.json<{ oauth: { expiresAt: number } }>().oauth.expiresAt).toBe(clock.now() + ACCESS_TOKEN_SECONDS * 1000);
  });

  it('token exchange with the parameters in the query string of the POST, as some clients send them', async () => {
    const { getCode, exchangeInQuery } = app();
    const code = await getCode({ scope: 'read' });

    const reply = await exchangeInQuery(code);
    expect(reply.status, reply.text).toBe(200);
    expectNoStoreJson(reply);
    const body = reply.json<TokenBody>();
    expect(body.token_type).toBe('bearer');
    expect(body.expires_in).toBe(ACCESS_TOKEN_SECONDS);
    expect(body.scope).toBe('read');
    expect(body.refresh_token).toBeTruthy();
    expect(body.info).toEqual({ name: ADA.name, email: ADA.email, uuid: ADA.uuid });
  });

  it('scope defaults to read when absent', async () => {
    const { get, signIn, readConsent, decide, exchange, client } = app();
    const sid = signIn(ADA);
    const url = `/v1/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: CALLBACK, response_type: 'code' })}`;
    expect(url).not.toContain('scope');
    const consent = await readConsent(await get(url, sid));
    expect(consent.page.text).not.toContain('Create, change and delete');
    const decided = await decide(consent, 'approve', sid);
    const callback = new URL(decided.location!);
    // No state was sent: none comes back.
    expect(callback.searchParams.has('state')).toBe(false);
    const reply = await exchange(callback.searchParams.get('code')!);
    expect(reply.json<TokenBody>().scope).toBe('read');
  });

  it('refresh over HTTP rotates the pair, with the same response shape', async () => {
    const { tokens, postForm, api } = app();
    const first = await tokens({ scope: 'read write' });
    const reply = await postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(reply.status, reply.text).toBe(200);
    expectNoStoreJson(reply);
    const second = reply.json<TokenBody>();
    expect(second.token_type).toBe('bearer');
    expect(second.expires_in).toBe(ACCESS_TOKEN_SECONDS);
    expect(second.scope).toBe('read write');
    expect(second.info).toEqual({ name: ADA.name, email: ADA.email, uuid: ADA.uuid });
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    // The old access token is invalidated; the new one works.
    expect((await api('GET', '/v2/account', first.access_token)).status).toBe(401);
    expect((await api('GET', '/v2/account', second.access_token)).status).toBe(200);
  });

  it('deny → 303 to the callback with error=access_denied, error_description and state; no code', async () => {
    const { signIn, openConsent, decide } = app();
    const sid = signIn(ADA);
    const consent = await openConsent({ state: 'deny-state' }, sid);
    const reply = await decide(consent, 'deny', sid);

    expect(reply.status).toBe(303);
    const callback = new URL(reply.location!);
    expect(target(callback)).toBe(CALLBACK);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('error_description')).toBeTruthy();
    expect(callback.searchParams.get('state')).toBe('deny-state');
    expect(callback.searchParams.has('code')).toBe(false);
  });

  it('implicit flow: the token comes in the fragment with token_type, expires_in and state, and no refresh_token', async () => {
    const { authorizeAndApprove, api } = app();
    const callback = await authorizeAndApprove({ response_type: 'token', state: 'imp-state', scope: 'read' });

    expect(target(callback)).toBe(CALLBACK);
    expect(callback.search).toBe('');
    const fragment = fragmentParams(callback);
    expect(fragment.get('access_token')).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(fragment.get('token_type')).toBe('bearer');
    expect(fragment.get('expires_in')).toBe(String(ACCESS_TOKEN_SECONDS));
    expect(fragment.get('state')).toBe('imp-state');
    expect(fragment.has('refresh_token')).toBe(false);
    expect(fragment.has('code')).toBe(false);

    expect((await api('GET', '/v2/account', fragment.get('access_token')!)).status).toBe(200);
  });

  it('implicit flow deny: the error goes in the fragment', async () => {
    const { signIn, openConsent, decide } = app();
    const sid = signIn(ADA);
    const reply = await decide(await openConsent({ response_type: 'token', state: 's1' }, sid), 'deny', sid);
    const callback = new URL(reply.location!);
    expect(callback.search).toBe('');
    expect(fragmentParams(callback).get('error')).toBe('access_denied');
    expect(fragmentParams(callback).get('state')).toBe('s1');
  });

  it('a consent form can be used once: a second approve gives an error page, not a second code', async () => {
    const { signIn, openConsent, decide } = app();
    const sid = signIn(ADA);
    const consent = await openConsent({}, sid);
    expect((await decide(consent, 'approve', sid)).status).toBe(303);
    expectErrorPage(await decide(consent, 'approve', sid), 'invalid_request');
  });

  it('fields posted with the decision cannot change the stored request (scope, redirect_uri, client_id)', async () => {
    const { signIn, openConsent, decide, exchange } = app();
    const sid = signIn(ADA);
    const consent = await openConsent({ scope: 'read' }, sid);
    const reply = await decide(consent, 'approve', sid, {
      form: { scope: 'read write', redirect_uri: 'https://evil.example/cb', client_id: 'x' },
    });
    expect(reply.status).toBe(303);
    const callback = new URL(reply.location!);
    expect(target(callback)).toBe(CALLBACK);
    const tokens = await exchange(callback.searchParams.get('code')!);
    expect(tokens.json<TokenBody>().scope).toBe('read');
  });

  it('state with &, =, #, +, %, spaces and Unicode is echoed exactly and adds no parameter', async () => {
    const { authorizeAndApprove } = app();
    const state = 'x&code=evil #frag+%25 ü=&state=2';
    const callback = await authorizeAndApprove({ state });
    expect(callback.searchParams.getAll('state')).toEqual([state]);
    expect(callback.searchParams.getAll('code')).toHaveLength(1);
    expect(callback.searchParams.get('code')).not.toBe('evil');
    expect(callback.hash).toBe('');
  });

  it('a consent page older than 10 minutes can no longer be approved', async () => {
    const { signIn, openConsent, decide, clock } = app();
    const sid = signIn(ADA);
    const consent = await openConsent({}, sid);
    clock.advance(600_000);
    expectErrorPage(await decide(consent, 'approve', sid), 'invalid_request');
  });

  it('GET on the decision route never approves', async () => {
    const { signIn, openConsent, get } = app();
    const sid = signIn(ADA);
    const consent = await openConsent({}, sid);
    const q = new URLSearchParams({ interaction: consent.interaction, csrf: consent.csrf, decision: 'approve' });
    const reply = await get(`/v1/oauth/authorize/decision?${q}`, `${sid}; ${consent.csrfCookie}`);
    expectErrorPage(reply, 'invalid_request');
  });
});

describe.each(FRAMEWORKS)('%s: sign-in redirect and resume', (framework) => {
  const app = useApp({ framework });

  it('not signed in → 302 to loginUrl?interaction=…; after sign-in, resume shows the consent page; approve gives a code', async () => {
    const { get, authorizeUrl, signIn, readConsent, decide, exchange } = app();
    const first = await get(authorizeUrl({ state: 'login-state' }));
    expect(first.status).toBe(302);
    const login = new URL(first.location!, 'http://host.invalid');
    expect(login.pathname).toBe(LOGIN_URL);
    const interaction = login.searchParams.get('interaction');
    expect(interaction).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.headers.get('cache-control')).toBe('no-store');
    // Not sent to the callback, and no consent page yet.
    expect(first.location).not.toContain('client.example');

    // The host signs the user in, then sends the browser to resume.
    const sid = signIn(ADA);
    const page = await get(`/v1/oauth/authorize/resume?interaction=${encodeURIComponent(interaction!)}`, sid);
    const consent = await readConsent(page);
    expect(page.text).toContain(ADA.name);
    expect(page.headers.get('x-frame-options')).toBe('DENY');

    const decided = await decide(consent, 'approve', sid);
    expect(decided.status).toBe(303);
    const callback = new URL(decided.location!);
    expect(callback.searchParams.get('state')).toBe('login-state');
    expect((await exchange(callback.searchParams.get('code')!)).status).toBe(200);
  });

  it('resume without signing in sends the browser back to sign-in with a new interaction', async () => {
    const { get, authorizeUrl } = app();
    const first = await get(authorizeUrl());
    const id = new URL(first.location!, 'http://h.invalid').searchParams.get('interaction')!;
    const again = await get(`/v1/oauth/authorize/resume?interaction=${encodeURIComponent(id)}`);
    expect(again.status).toBe(302);
    const next = new URL(again.location!, 'http://h.invalid');
    expect(next.pathname).toBe(LOGIN_URL);
    expect(next.searchParams.get('interaction')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(next.searchParams.get('interaction')).not.toBe(id);
  });

  it('a resume link works once; unknown or missing interaction ids give an error page', async () => {
    const { get, authorizeUrl, signIn } = app();
    const first = await get(authorizeUrl());
    const id = new URL(first.location!, 'http://h.invalid').searchParams.get('interaction')!;
    const sid = signIn(ADA);
    expect((await get(`/v1/oauth/authorize/resume?interaction=${encodeURIComponent(id)}`, sid)).status).toBe(200);
    expectErrorPage(await get(`/v1/oauth/authorize/resume?interaction=${encodeURIComponent(id)}`, sid), 'invalid_request');
    expectErrorPage(await get('/v1/oauth/authorize/resume?interaction=nope', sid), 'invalid_request');
    expectErrorPage(await get('/v1/oauth/authorize/resume', sid), 'invalid_request');
  });

  const interactionOf = (location: string | null) => new URL(location!, 'http://h.invalid').searchParams.get('interaction')!;

  it('prompt=login: a signed-in user must sign in again; resuming with the old session asks again, a fresh sign-in continues', async () => {
    const { get, authorizeUrl, signIn, clock, readConsent } = app();
    const old = signIn(ADA);
    clock.advance(60_000);
    const reply = await get(authorizeUrl({ prompt: 'login' }), old);
    expect(reply.status).toBe(302);
    expect(new URL(reply.location!, 'http://h.invalid').pathname).toBe(LOGIN_URL);

    const again = await get(`/v1/oauth/authorize/resume?interaction=${encodeURIComponent(interactionOf(reply.location))}`, old);
    expect(again.status).toBe(302);
    expect(new URL(again.location!, 'http://h.invalid').pathname).toBe(LOGIN_URL);

    clock.advance(1_000);
    const fresh = signIn(ADA);
    const page = await get(`/v1/oauth/authorize/resume?interaction=${encodeURIComponent(interactionOf(again.location))}`, fresh);
    await readConsent(page);
  });

  it('max_auth_age: an older session must sign in again; with prompt=none it is login_required', async () => {
    const { get, authorizeUrl, signIn, clock, authorizeAndApprove } = app();
    const sid = signIn(ADA);
    await authorizeAndApprove({}, sid);
    clock.advance(120_000);
    const reply = await get(authorizeUrl({ max_auth_age: '60' }), sid);
    expect(reply.status).toBe(302);
    expect(new URL(reply.location!, 'http://h.invalid').pathname).toBe(LOGIN_URL);
    const silent = new URL((await get(authorizeUrl({ max_auth_age: '60', prompt: 'none' }), sid)).location!);
    expect(silent.searchParams.get('error')).toBe('login_required');
    // Young enough: consent page.
    expect((await get(authorizeUrl({ max_auth_age: '600' }), sid)).status).toBe(200);
  });

  it('an i hint that does not match the signed-in account counts as not signed in', async () => {
    const { get, authorizeUrl, signIn, authorizeAndApprove } = app();
    const sid = signIn(ADA);
    await authorizeAndApprove({}, sid);
    const mismatch = await get(authorizeUrl({ i: BOB.uuid.slice(0, 6) }), sid);
    expect(mismatch.status).toBe(302);
    expect(new URL(mismatch.location!, 'http://h.invalid').pathname).toBe(LOGIN_URL);
    const silent = new URL((await get(authorizeUrl({ i: BOB.uuid.slice(0, 6), prompt: 'none' }), sid)).location!);
    expect(silent.searchParams.get('error')).toBe('login_required');
    const match = new URL((await get(authorizeUrl({ i: ADA.uuid.slice(0, 6), prompt: 'none' }), sid)).location!);
    expect(match.searchParams.get('code')).toBeTruthy();
  });
});

describe.each(FRAMEWORKS)('%s: prompt=none', (framework) => {
  const app = useApp({ framework });

  it('not signed in → redirect to the callback with error=login_required and state (no login page)', async () => {
    const { get, authorizeUrl } = app();
    const reply = await get(authorizeUrl({ prompt: 'none', state: 'pn-1' }));
    expect(reply.status).toBe(302);
    const callback = new URL(reply.location!);
    expect(target(callback)).toBe(CALLBACK);
    expect(callback.searchParams.get('error')).toBe('login_required');
    expect(callback.searchParams.get('state')).toBe('pn-1');
    expect(callback.searchParams.has('code')).toBe(false);
  });

  it('signed in, never authorized → error=consent_required', async () => {
    const { get, authorizeUrl, signIn } = app();
    const reply = await get(authorizeUrl({ prompt: 'none', state: 'pn-2' }), signIn(ADA));
    expect(reply.status).toBe(302);
    const callback = new URL(reply.location!);
    expect(target(callback)).toBe(CALLBACK);
    expect(callback.searchParams.get('error')).toBe('consent_required');
    expect(callback.searchParams.get('state')).toBe('pn-2');
    expect(reply.headers.get('content-type') ?? '').not.toMatch(/html/);
  });

  it('signed in after an earlier approval → a code directly, which exchanges for tokens', async () => {
    const { get, authorizeUrl, signIn, authorizeAndApprove, exchange } = app();
    const sid = signIn(ADA);
    await authorizeAndApprove({ scope: 'read' }, sid);

    const reply = await get(authorizeUrl({ prompt: 'none', state: 'pn-3', scope: 'read' }), sid);
    expect(reply.status).toBe(302);
    const callback = new URL(reply.location!);
    expect(target(callback)).toBe(CALLBACK);
    expect(callback.searchParams.get('state')).toBe('pn-3');
    const code = callback.searchParams.get('code');
    expect(code).toBeTruthy();
    const tokens = await exchange(code!);
    expect(tokens.status).toBe(200);
    expect(tokens.json<TokenBody>().info.uuid).toBe(ADA.uuid);
  });

  it('an earlier approval of read does not cover read write (consent_required); another user has no consent', async () => {
    const { get, authorizeUrl, signIn, authorizeAndApprove } = app();
    const sid = signIn(ADA);
    await authorizeAndApprove({ scope: 'read' }, sid);
    const wider = new URL((await get(authorizeUrl({ prompt: 'none', scope: 'read write' }), sid)).location!);
    expect(wider.searchParams.get('error')).toBe('consent_required');
    const bob = new URL((await get(authorizeUrl({ prompt: 'none' }), signIn(BOB))).location!);
    expect(bob.searchParams.get('error')).toBe('consent_required');
  });
});
