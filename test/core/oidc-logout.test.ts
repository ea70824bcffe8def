/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0; docs/reference.md#rp-initiated-logout):
 * the clients' `postLogoutRedirectUris` (registerClient, updateClient, dynamic registration,
 * client ID metadata documents) and the end-session endpoint driven through the core without
 * HTTP: the redirect only to a registered URI of the hint's application, the host's `signOut`
 * only after a confirmation or for the account the hint names, the confirmation page and its
 * CSRF check, and the sequence sign in, ID token, log out, `prompt=none` → `login_required`.
 */
import { SignJWT, importJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { documentClient } from '../../src/client-metadata/metadata-documents.js';
import { openIdProvider } from '../../src/oidc/provider.js';
import { generateSigningKey, type Account, type OAuthRequest } from '../../src/index.js';
import { ADA, BOB, json, setup } from '../helpers.js';

const ISSUER = 'https://auth.example.com';
const BACK = 'https://app.example.com/signed-out';
const LOGOUT = '/v1/oauth/logout';

async function logoutSetup(
  options: Record<string, unknown> = {},
  hookResult: unknown = { headers: { 'set-cookie': 'sid=; Max-Age=0; Path=/' } },
) {
  const calls: { account: Account | null; cookie: string | undefined }[] = [];
  const errors: unknown[] = [];
  // The host's sign-out: ends the session behind the request's cookie, and clears the cookie.
  let t!: Awaited<ReturnType<typeof setup>>;
  const signOut = (request: OAuthRequest, account: Account | null) => {
    const cookie = request.headers.cookie as string | undefined;
    calls.push({ account, cookie });
    const sid = /sid=([^;]+)/.exec(cookie ?? '')?.[1];
    if (sid) t.sessions.signOut(sid);
    if (hookResult instanceof Error) throw hookResult;
    return hookResult as never;
  };
  t = await setup({ issuer: ISSUER, openid: { signOut }, onError: (e: unknown) => errors.push(e), ...options });
  await t.server.updateClient(t.client.clientId, { openid: { postLogoutRedirectUris: [BACK] } });
  const idToken = async (cookie = t.ada) => json(await t.exchange(await t.getCode({ scope: 'openid' }, cookie))).id_token as string;
  const logout = (params: Record<string, string>, cookie?: string) =>
    t.server.endSession(t.get(`${LOGOUT}?${new URLSearchParams(params)}`, cookie));
  const postLogout = (form: Record<string, string>, cookie?: string) => t.server.endSession(t.post(LOGOUT, form, cookie ? { cookie } : {}));
  const signedIn = (cookie: string) => t.sessions.current(t.get('/', cookie)) !== null;
  return { ...t, calls, errors, idToken, logout, postLogout, signedIn };
}

/** The confirmation page's CSRF token, from its form and its cookie (which must agree). */
function csrfOf(res: { body: string; headers: Record<string, string> }): string {
  const field = /name="csrf" value="([^"]+)"/.exec(res.body)?.[1];
  const cookie = /^authgate_csrf=([^;]+);/.exec(res.headers['set-cookie'] ?? '')?.[1];
  expect(field).toBeDefined();
  expect(cookie).toBe(field);
  return field!;
}

describe('post_logout_redirect_uris of a client', () => {
  it('registerClient keeps them; updateClient replaces and removes them; getClient shows them', async () => {
    const t = await setup({ issuer: ISSUER, openid: {} });
    const c = await t.server.registerClient({
      name: 'RP',
      redirectUri: 'https://rp.example.com/cb',
      openid: { postLogoutRedirectUris: ['https://rp.example.com/bye', 'http://127.0.0.1:8080/bye?x=1'] },
    });
    expect((await t.server.getClient(c.clientId))?.openid).toEqual({
      postLogoutRedirectUris: ['https://rp.example.com/bye', 'http://127.0.0.1:8080/bye?x=1'],
    });
    await t.server.updateClient(c.clientId, { openid: { postLogoutRedirectUris: ['https://rp.example.com/later'], defaultMaxAge: 60 } });
    expect((await t.server.getClient(c.clientId))?.openid).toEqual({
      postLogoutRedirectUris: ['https://rp.example.com/later'],
      defaultMaxAge: 60,
    });
    await t.server.updateClient(c.clientId, { openid: null });
    expect((await t.server.getClient(c.clientId))?.openid).toBeUndefined();
  });

  it.each([
    ['http off loopback', ['http://rp.example.com/bye'], /must use https/],
    ['a fragment', ['https://rp.example.com/bye#x'], /fragment/],
    ['a wildcard', ['https://*.example.com/bye'], /wildcard|not an absolute/],
    ['user information', ['https://u:p@rp.example.com/bye'], /user information/],
    ['a state in its query', ['https://rp.example.com/bye?state=1'], /state/],
    ['an empty list', [], /1 to 10/],
    ['eleven URLs', Array.from({ length: 11 }, (_, i) => `https://rp.example.com/${i}`), /1 to 10/],
    ['a URL twice', ['https://rp.example.com/a', 'https://rp.example.com/a'], /twice/],
    ['a string, not a list', 'https://rp.example.com/a', /list/],
    ['a number in the list', [42], /strings/],
  ])('refuses %s (registerClient and updateClient: invalid_request naming the field)', async (_name, value, message) => {
    const t = await setup({ issuer: ISSUER, openid: {} });
    const input = { name: 'RP', redirectUri: 'https://rp.example.com/cb', openid: { postLogoutRedirectUris: value as string[] } };
    await expect(t.server.registerClient(input)).rejects.toMatchObject({
      code: 'invalid_request',
      description: expect.stringMatching(message),
    });
    await expect(t.server.updateClient(t.client.clientId, { openid: input.openid })).rejects.toMatchObject({ code: 'invalid_request' });
    expect((await t.server.getClient(t.client.clientId))?.openid).toBeUndefined();
  });

  it('updateClient refuses OpenID Connect fields on a server without the option', async () => {
    const t = await setup({ issuer: ISSUER });
    await expect(t.server.updateClient(t.client.clientId, { openid: { postLogoutRedirectUris: [BACK] } })).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });

  it('dynamic registration takes post_logout_redirect_uris and answers with them; a bad one is invalid_client_metadata', async () => {
    const t = await setup({ issuer: ISSUER, openid: {}, allowDynamicRegistration: true });
    const register = (metadata: Record<string, unknown>) =>
      t.server.registerDynamic({
        method: 'POST',
        url: '/v1/oauth/register',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'RP', redirect_uris: ['https://rp.example.com/cb'], ...metadata }),
      });
    const ok = await register({ post_logout_redirect_uris: ['https://rp.example.com/bye'] });
    expect(ok.status, ok.body).toBe(201);
    const body = json(ok);
    expect(body.post_logout_redirect_uris).toEqual(['https://rp.example.com/bye']);
    expect((await t.server.getClient(body.client_id as string))?.openid).toEqual({
      postLogoutRedirectUris: ['https://rp.example.com/bye'],
    });
    const bad = await register({ post_logout_redirect_uris: ['http://rp.example.com/bye'] });
    expect(bad.status).toBe(400);
    expect(json(bad)).toMatchObject({ error: 'invalid_client_metadata' });
  });

  it('a client ID metadata document: post_logout_redirect_uris kept; a bad one makes the document unusable', async () => {
    const provider = openIdProvider({ idTokenLifetime: 3600, claimsInIdToken: false } as never);
    const id = 'https://rp.example.com/client.json';
    const doc = (extra: Record<string, unknown>) =>
      JSON.stringify({ client_id: id, client_name: 'RP', redirect_uris: ['https://rp.example.com/cb'], ...extra });
    const client = documentClient(
      id,
      200,
      'application/json',
      doc({ post_logout_redirect_uris: ['https://rp.example.com/bye'] }),
      provider,
    );
    expect(typeof client === 'string' ? client : client.openid).toEqual({ postLogoutRedirectUris: ['https://rp.example.com/bye'] });
    expect(documentClient(id, 200, 'application/json', doc({ post_logout_redirect_uris: ['https://rp.example.com/#x'] }), provider)).toBe(
      'has invalid OpenID Connect fields',
    );
  });
});

describe('the end-session endpoint', () => {
  it('is in the discovery document', async () => {
    const t = await logoutSetup();
    const doc = json(t.server.openidConfiguration({ method: 'GET' }));
    expect(doc.end_session_endpoint).toBe(`${ISSUER}${LOGOUT}`);
  });

  it('sequence: sign in, ID token, log out with the hint → signOut, redirect with state; prompt=none is then login_required', async () => {
    const t = await logoutSetup();
    const hint = await t.idToken();
    t.clock.advance(2 * 3600_000); // the hint has expired: still accepted (Core §3.1.2.1)
    const res = await t.logout({ id_token_hint: hint, post_logout_redirect_uri: BACK, state: 'st&1' }, t.ada);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`${BACK}?state=st%261`);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['set-cookie']).toBe('sid=; Max-Age=0; Path=/');
    expect(t.calls).toEqual([{ account: ADA, cookie: t.ada }]);
    expect(t.signedIn(t.ada)).toBe(false);
    // The host's session is gone: a silent request cannot sign anyone in.
    const silent = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', prompt: 'none', state: 's2' }), t.ada));
    expect(silent.type).toBe('redirect');
    const url = new URL((silent as { location: string }).location);
    expect(url.searchParams.get('error')).toBe('login_required');
    expect(t.errors).toEqual([]);
  });

  it('by POST (form serialization) with the hint: 303 to the registered URI', async () => {
    const t = await logoutSetup();
    const hint = await t.idToken();
    const res = await t.postLogout({ id_token_hint: hint, post_logout_redirect_uri: BACK, state: 'p' }, t.ada);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${BACK}?state=p`);
    expect(t.calls).toHaveLength(1);
  });

  it('with the hint and client_id agreeing, and without post_logout_redirect_uri: the "signed out" page, state not shown', async () => {
    const t = await logoutSetup();
    const hint = await t.idToken();
    const res = await t.logout({ id_token_hint: hint, client_id: t.client.clientId, state: 'secret-state' }, t.ada);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.headers['set-cookie']).toBe('sid=; Max-Age=0; Path=/');
    expect(res.body).toContain('You are signed out of auth.example.com');
    expect(res.body).not.toContain('secret-state');
    expect(t.signedIn(t.ada)).toBe(false);
  });

  it('an unregistered post_logout_redirect_uri is an error page, never a redirect, and ends no session', async () => {
    const t = await logoutSetup();
    const hint = await t.idToken();
    const cases: Record<string, string>[] = [
      { id_token_hint: hint, post_logout_redirect_uri: 'https://evil.example/', state: 'x' },
      { id_token_hint: hint, post_logout_redirect_uri: `${BACK}/`, state: 'x' },
      { id_token_hint: hint, post_logout_redirect_uri: BACK.toUpperCase() },
      { client_id: t.client.clientId, post_logout_redirect_uri: 'https://evil.example/' },
      // The other client registered none.
      { client_id: t.other.clientId, post_logout_redirect_uri: BACK },
      // No application to check it against.
      { post_logout_redirect_uri: BACK },
    ];
    for (const params of cases) {
      const res = await t.logout(params, t.ada);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.body).toContain('This sign-out request cannot proceed');
      expect(res.body).not.toContain('evil.example');
    }
    expect(t.calls).toEqual([]);
    expect(t.signedIn(t.ada)).toBe(true);
  });

  it('a hint signed by a key that is not ours: error page with a redirect URI; the confirmation without one', async () => {
    const t = await logoutSetup();
    const key = await generateSigningKey('RS256');
    const forged = await new SignJWT({ sub: ADA.uuid })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(t.client.clientId)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(await importJWK(key, 'RS256'));
    const refused = await t.logout({ id_token_hint: forged, post_logout_redirect_uri: BACK, state: 'x' }, t.ada);
    expect(refused.status).toBe(400);
    expect(refused.headers.location).toBeUndefined();
    expect(refused.body).toContain('not an ID token this server issued');
    const asked = await t.logout({ id_token_hint: forged }, t.ada);
    expect(asked.status).toBe(200);
    expect(asked.body).toContain('Sign out of auth.example.com?');
    expect(t.calls).toEqual([]);
    expect(t.signedIn(t.ada)).toBe(true);
  });

  it('a hint issued to another application than client_id is an error page', async () => {
    const t = await logoutSetup();
    const hint = await t.idToken();
    const res = await t.logout({ id_token_hint: hint, client_id: t.other.clientId, post_logout_redirect_uri: BACK }, t.ada);
    expect(res.status).toBe(400);
    expect(res.body).toContain('not issued to the application named by client_id');
    expect(t.calls).toEqual([]);
  });

  it('without a hint: the confirmation page (no signOut yet); its POST with the CSRF token signs out and redirects with state', async () => {
    const t = await logoutSetup();
    const page = await t.logout({ client_id: t.client.clientId, post_logout_redirect_uri: BACK, state: 's"<3' }, t.ada);
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['set-cookie']).toMatch(/^authgate_csrf=[\w-]{43}; Path=\/v1\/oauth\/logout; HttpOnly; SameSite=Lax; Secure$/);
    expect(page.body).toContain('Signed in as <strong>Ada Lovelace</strong>');
    expect(page.body).toContain('<strong>Example App</strong> asks to sign you out.');
    expect(page.body).toContain(`action="${LOGOUT}"`);
    expect(page.body).toContain('name="state" value="s&#34;&#60;3"');
    expect(t.calls).toEqual([]);
    const csrf = csrfOf(page);
    const form = { client_id: t.client.clientId, post_logout_redirect_uri: BACK, state: 's"<3', csrf };

    // Without the cookie, or with another token: 403, nobody signed out.
    const noCookie = await t.postLogout(form, t.ada);
    expect(noCookie.status).toBe(403);
    const wrong = await t.postLogout({ ...form, csrf: 'A'.repeat(43) }, `${t.ada}; authgate_csrf=${csrf}`);
    expect(wrong.status).toBe(403);
    // An empty csrf is no confirmation: the page is shown again.
    const empty = await t.postLogout({ ...form, csrf: '' }, `${t.ada}; authgate_csrf=${csrf}`);
    expect(empty.status).toBe(200);
    expect(empty.body).toContain('Sign out of auth.example.com?');
    expect(t.calls).toEqual([]);
    expect(t.signedIn(t.ada)).toBe(true);

    // The form as posted, with its cookie: signed out, 303 with state.
    const done = await t.postLogout(form, `${t.ada}; authgate_csrf=${csrf}`);
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe(`${BACK}?state=s%22%3C3`);
    expect(t.calls.map((c) => c.account)).toEqual([ADA]);
    expect(t.signedIn(t.ada)).toBe(false);
  });

  it('the confirmation POST checks the redirect again: a tampered post_logout_redirect_uri is refused', async () => {
    const t = await logoutSetup();
    const page = await t.logout({ client_id: t.client.clientId, post_logout_redirect_uri: BACK }, t.ada);
    const csrf = csrfOf(page);
    const res = await t.postLogout(
      { client_id: t.client.clientId, post_logout_redirect_uri: 'https://evil.example/', csrf },
      `${t.ada}; authgate_csrf=${csrf}`,
    );
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(t.calls).toEqual([]);
  });

  it('a hint naming another account than the signed-in one asks first', async () => {
    const t = await logoutSetup();
    const hint = await t.idToken();
    const bob = t.sessions.signIn(BOB);
    const page = await t.logout({ id_token_hint: hint, post_logout_redirect_uri: BACK }, bob);
    expect(page.status).toBe(200);
    expect(page.body).toContain('Signed in as <strong>Bob Builder</strong>');
    expect(page.body).toContain(`name="id_token_hint" value="${hint}"`);
    expect(t.calls).toEqual([]);
    const csrf = csrfOf(page);
    const done = await t.postLogout({ id_token_hint: hint, post_logout_redirect_uri: BACK, csrf }, `${bob}; authgate_csrf=${csrf}`);
    expect(done.status).toBe(303);
    expect(t.calls.map((c) => c.account)).toEqual([BOB]);
    expect(t.signedIn(bob)).toBe(false);
    expect(t.signedIn(t.ada)).toBe(true);
  });

  it('nobody signed in: nothing to lose, so no question: signOut(request, null) and the redirect', async () => {
    const t = await logoutSetup();
    const res = await t.logout({ client_id: t.client.clientId, post_logout_redirect_uri: BACK, state: 'z' });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`${BACK}?state=z`);
    expect(t.calls).toEqual([{ account: null, cookie: undefined }]);
  });

  it('French with ui_locales=fr: the confirmation and the "signed out" page', async () => {
    const t = await logoutSetup({ pages: { messages: { fr: {} } } });
    const page = await t.logout({ ui_locales: 'fr' }, t.ada);
    expect(page.body).toContain('<html lang="fr"');
    expect(page.body).toContain('Se déconnecter de auth.example.com ?');
    const csrf = csrfOf(page);
    const done = await t.postLogout({ ui_locales: 'fr', csrf }, `${t.ada}; authgate_csrf=${csrf}`);
    expect(done.status).toBe(200);
    expect(done.body).toContain('Vous êtes déconnecté·e de auth.example.com.');
    const error = await t.logout({ ui_locales: 'fr', post_logout_redirect_uri: BACK });
    expect(error.body).toContain('Cette demande de déconnexion ne peut pas aboutir');
  });

  it('malformed requests: a parameter twice, a long state, another method, an unknown client_id', async () => {
    const t = await logoutSetup();
    const twice = await t.server.endSession(t.get(`${LOGOUT}?state=a&state=b`, t.ada));
    expect(twice.status).toBe(400);
    expect((await t.logout({ state: 'x'.repeat(2049) }, t.ada)).status).toBe(400);
    const put = await t.server.endSession({ method: 'PUT', url: LOGOUT, headers: {} });
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('GET, POST');
    expect((await t.logout({ client_id: 'nobody' }, t.ada)).status).toBe(400);
    expect(t.calls).toEqual([]);
  });

  it('a failing signOut is reported and answered with a 500 page, never the redirect', async () => {
    const t = await logoutSetup({}, new Error('session store down'));
    const hint = await t.idToken();
    const res = await t.logout({ id_token_hint: hint, post_logout_redirect_uri: BACK }, t.ada);
    expect(res.status).toBe(500);
    expect(res.headers.location).toBeUndefined();
    expect(t.errors).toHaveLength(1);
  });

  it("signOut's headers: the answer's own cannot be replaced, a bad one is dropped and reported", async () => {
    const t = await logoutSetup(
      {},
      { headers: { Location: 'https://evil.example/', 'Set-Cookie': 'a=; Max-Age=0', 'x-bad': 'a\r\nb: c' } },
    );
    const hint = await t.idToken();
    const res = await t.logout({ id_token_hint: hint, post_logout_redirect_uri: BACK }, t.ada);
    expect(res.headers.location).toBe(BACK);
    expect(res.headers['set-cookie']).toBe('a=; Max-Age=0');
    expect(res.headers['x-bad']).toBeUndefined();
    expect(t.errors).toHaveLength(2);
  });

  it('without the openid option: a 404 page', async () => {
    const t = await setup({ issuer: ISSUER });
    const res = await t.server.endSession(t.get(LOGOUT, t.ada));
    expect(res.status).toBe(404);
  });
});
