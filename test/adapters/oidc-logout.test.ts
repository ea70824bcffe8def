/**
 * RP-initiated logout over real HTTP through every adapter (Express, Fastify, Hono, bare Node,
 * Hono in workerd): the discovery document names `{basePath}/logout`, which answers; a hint of
 * the signed-in account signs out and redirects with `state` (the host's `signOut` headers on the
 * reply, in process: a hook cannot reach into workerd); no hint shows the confirmation page with
 * its CSRF cookie, whose form posted back signs out (303); an unregistered
 * `post_logout_redirect_uri` is an error page. The core's tests (test/core/oidc-logout.test.ts)
 * cover each rule; these check that every framework routes, reads and answers them alike.
 */
import { describe, expect, it } from 'vitest';
import type { Account, OAuthRequest } from '../../src/index.js';
import { ISSUER } from '../fixtures.js';
import { ADA, FORM, FRAMEWORKS, formValue, setCookieValue, useApp } from './app.js';

const LOGOUT = '/v1/oauth/logout';
const BACK = 'https://client.example/signed-out';

describe.each(FRAMEWORKS)('%s: RP-initiated logout', (framework) => {
  const signedOut: (Account | null)[] = [];
  const inProcess = framework !== 'workerd';
  const signOut = (request: OAuthRequest, account: Account | null) => {
    const sid = /sid=([^;]+)/.exec(String(request.headers.cookie ?? ''))?.[1];
    if (sid) app().sessions.signOut(sid);
    signedOut.push(account);
    return { headers: { 'set-cookie': 'sid=; Max-Age=0; Path=/' } };
  };
  const app = useApp({ framework, server: { issuer: ISSUER, openid: inProcess ? { signOut } : {} } });

  it('discovery names the endpoint; a hint of the signed-in account signs out and redirects with state', async () => {
    const { get, server, client, tokens, signIn, authorizeUrl, checkHealthy } = app();
    await server.updateClient(client.clientId, { openid: { postLogoutRedirectUris: [BACK] } });
    const doc = (await get('/.well-known/openid-configuration')).json<Record<string, string>>();
    expect(doc.end_session_endpoint).toBe(`${ISSUER}${LOGOUT}`);

    const sid = signIn(ADA);
    const { id_token: hint } = (await tokens({ scope: 'openid' }, sid)) as unknown as { id_token: string };
    const reply = await get(`${LOGOUT}?${new URLSearchParams({ id_token_hint: hint, post_logout_redirect_uri: BACK, state: 's 1' })}`, sid);
    expect(reply.status, reply.text).toBe(302);
    expect(reply.location).toBe(`${BACK}?state=s+1`);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    if (inProcess) {
      expect(setCookieValue(reply.headers, 'sid')?.value).toBe('');
      expect(signedOut.at(-1)).toEqual(ADA);
      // The session is gone: a silent sign-in is refused.
      const silent = await get(authorizeUrl({ scope: 'openid', prompt: 'none' }), sid);
      expect(silent.location).toContain('error=login_required');
    }
    checkHealthy();
  });

  it('without a hint: the confirmation page and its CSRF cookie; the form posted back signs out (303)', async () => {
    const { get, postForm, server, client, signIn, checkHealthy } = app();
    await server.updateClient(client.clientId, { openid: { postLogoutRedirectUris: [BACK] } });
    const sid = signIn(ADA);
    const page = await get(
      `${LOGOUT}?${new URLSearchParams({ client_id: client.clientId, post_logout_redirect_uri: BACK, state: 'x' })}`,
      sid,
    );
    expect(page.status, page.text).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const cookie = setCookieValue(page.headers, 'authgate_csrf');
    expect(cookie?.attributes).toContain(`Path=${LOGOUT}`);
    const csrf = formValue(page.text, 'csrf');
    expect(csrf).toBe(cookie?.value);
    const form = { client_id: client.clientId, post_logout_redirect_uri: BACK, state: 'x', csrf: csrf! };
    const forged = await postForm(LOGOUT, form, { cookie: sid });
    expect(forged.status).toBe(403);
    const done = await postForm(LOGOUT, form, { cookie: `${sid}; authgate_csrf=${csrf}` });
    expect(done.status, done.text).toBe(303);
    expect(done.location).toBe(`${BACK}?state=x`);
    checkHealthy();
  });

  it('an unregistered post_logout_redirect_uri is an error page, never a redirect', async () => {
    const { get, request, client, signIn } = app();
    const sid = signIn(ADA);
    const reply = await get(
      `${LOGOUT}?${new URLSearchParams({ client_id: client.clientId, post_logout_redirect_uri: 'https://evil.example/' })}`,
      sid,
    );
    expect(reply.status).toBe(400);
    expect(reply.location).toBeNull();
    expect(reply.text).toContain('not registered for this application');
    const put = await request('PUT', LOGOUT, { headers: { 'content-type': FORM }, body: '' });
    expect(put.status).toBe(405);
  });
});

describe.each(FRAMEWORKS)('%s: without the openid option', (framework) => {
  const app = useApp({ framework, server: { issuer: ISSUER } });
  it('there is no logout route', async () => {
    expect((await app().get(LOGOUT)).status).toBe(404);
  });
});
