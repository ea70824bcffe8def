/**
 * The core helper for hosts with their own pages (docs/reference.md#browser-binding): `bindBrowser`
 * issues the browser binding, `server.checkBrowserBinding` checks it; `resume` / `approve` / `deny`
 * called directly keep working without it.
 */
import { describe, expect, it } from 'vitest';
import { BROWSER_COOKIE, bindBrowser, type AuthorizeDecision } from '../../src/index.js';
import { ADA, BOB, setup } from '../helpers.js';

const idOf = (decision: AuthorizeDecision) => {
  if (decision.type !== 'login' && decision.type !== 'consent') throw new Error(`expected an interaction, got ${JSON.stringify(decision)}`);
  return decision.interaction.id;
};

describe('bindBrowser', () => {
  it('makes a new random secret for a browser without one: the request carries it, Set-Cookie sets it', () => {
    const request = { method: 'GET', url: 'http://as.example/v1/oauth/authorize?x=1', headers: { cookie: 'sid=s1' } };
    const binding = bindBrowser(request);
    const secret = /^authgate_browser=([A-Za-z0-9_-]{43}); Path=\/v1\/oauth\/authorize; HttpOnly; SameSite=Lax$/.exec(
      binding.setCookie ?? '',
    )?.[1];
    expect(secret).toBeDefined();
    expect(binding.request.headers['cookie']).toBe(`sid=s1; ${BROWSER_COOKIE}=${secret}`);
    // The caller's request is not changed.
    expect(request.headers.cookie).toBe('sid=s1');
    expect(bindBrowser(request).setCookie).not.toBe(binding.setCookie);
  });

  it("Secure on https (or when asked); the path is the caller's", () => {
    expect(bindBrowser({ method: 'GET', url: 'https://as.example/v1/oauth/authorize', headers: {} }).setCookie).toMatch(/; Secure$/);
    expect(bindBrowser({ method: 'GET', url: '/v1/oauth/authorize', headers: {} }, { secure: true, path: '/oauth' }).setCookie).toMatch(
      /; Path=\/oauth; HttpOnly; SameSite=Lax; Secure$/,
    );
  });

  it('reuses the cookie a browser already has; replaces a malformed one', () => {
    const has = { method: 'GET', url: '/', headers: { cookie: `${BROWSER_COOKIE}=${'x'.repeat(43)}; sid=s1` } };
    expect(bindBrowser(has)).toEqual({ request: has, setCookie: undefined });
    const malformed = bindBrowser({ method: 'GET', url: '/', headers: { cookie: `${BROWSER_COOKIE}=short` } });
    expect(malformed.setCookie).toMatch(/^authgate_browser=[A-Za-z0-9_-]{43};/);
  });
});

describe('server.checkBrowserBinding', () => {
  it('null for the browser that started the interaction; the error page for any other; the interaction stays usable', async () => {
    const t = await setup();
    const { request, setCookie } = bindBrowser(t.get(t.authorizeUrl()));
    const mine = setCookie!.split(';')[0]!;
    const id = idOf(await t.server.authorize(request));

    const bob = t.sessions.signIn(BOB);
    for (const cookie of [bob, `${bob}; ${BROWSER_COOKIE}=${'A'.repeat(43)}`, `${bob}; ${BROWSER_COOKIE}=${id}`]) {
      const refused = await t.server.checkBrowserBinding(id, t.get('/', cookie));
      expect(refused).toMatchObject({ type: 'error', status: 400, error: 'invalid_request' });
      expect((refused as { description: string }).description).toMatch(/^This authorization was started in another browser\./);
    }
    expect(await t.server.checkBrowserBinding(id, t.get('/', `${t.ada}; ${mine}`))).toBeNull();

    // resume carries the binding on to the consent interaction it creates.
    const consentId = idOf(await t.server.resume(id, t.get('/', `${t.ada}; ${mine}`)));
    expect(await t.server.checkBrowserBinding(consentId, t.get('/', t.ada))).toMatchObject({ type: 'error', error: 'invalid_request' });
    expect(await t.server.checkBrowserBinding(consentId, t.get('/', `${t.ada}; ${mine}`))).toBeNull();
    expect((await t.server.approve(consentId, t.get('/', `${t.ada}; ${mine}`))).type).toBe('redirect');
  });

  it('null for an unbound interaction, and for an unknown or malformed id (the step reports those)', async () => {
    const t = await setup();
    const id = idOf(await t.server.authorize(t.get(t.authorizeUrl(), t.ada)));
    expect(await t.server.checkBrowserBinding(id, t.get('/', t.sessions.signIn(ADA)))).toBeNull();
    for (const bad of ['nope', '', 'x'.repeat(500), 42 as unknown as string])
      expect(await t.server.checkBrowserBinding(bad, t.get('/'))).toBeNull();
  });

  it('a storage failure is a 500 error page, reported to onError', async () => {
    const errors: unknown[] = [];
    const t = await setup({ onError: (e) => errors.push(e) });
    t.storage.findInteraction = async () => {
      throw new Error('down');
    };
    expect(await t.server.checkBrowserBinding('x'.repeat(43), t.get('/'))).toMatchObject({
      type: 'error',
      status: 500,
      error: 'server_error',
    });
    expect(errors).toHaveLength(1);
  });

  it("resume, approve and deny called directly do not check it (the host's own pages decide)", async () => {
    const t = await setup();
    const { request } = bindBrowser(t.get(t.authorizeUrl(), t.ada));
    const id = idOf(await t.server.authorize(request));
    expect((await t.server.deny(id, t.get('/', t.ada))).type).toBe('redirect');
  });
});
