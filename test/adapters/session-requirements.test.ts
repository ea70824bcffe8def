/**
 * Through every adapter: resume and the consent decision re-check every requirement of the
 * original authorization request (`prompt=login`, `max_auth_age`, the `i` hint) against the
 * session of the browser at that step (docs/reference.md#prompt-and-sign-in-requirements).
 */
import { describe, expect, it } from 'vitest';
import { ADA, BOB, LOGIN_URL, expectErrorPage, FRAMEWORKS, useApp, type Reply } from './app.js';

const DAY = 86_400_000;

/** The cookies the server set on this browser (the consent form's CSRF cookie, and any other), sent back with the session cookie. */
function cookieJar() {
  const cookies = new Map<string, string>();
  return {
    take(reply: Reply): Reply {
      for (const line of reply.headers.getSetCookie()) {
        const pair = line.split(';')[0] ?? '';
        const eq = pair.indexOf('=');
        if (eq <= 0) continue;
        const name = pair.slice(0, eq).trim();
        const value = pair.slice(eq + 1).trim();
        if (!value || /max-age=0(?:;|$)/i.test(line)) cookies.delete(name);
        else cookies.set(name, value);
      }
      return reply;
    },
    with(sid: string): string {
      return [sid, ...[...cookies].map(([name, value]) => `${name}=${value}`)].join('; ');
    },
  };
}

const interactionOf = (location: string | null) => new URL(location!, 'http://h.invalid').searchParams.get('interaction')!;
const resumePath = (id: string) => `/v1/oauth/authorize/resume?interaction=${encodeURIComponent(id)}`;

function expectLoginRedirect(reply: Reply): string {
  expect(reply.status, reply.text).toBe(302);
  expect(new URL(reply.location!, 'http://h.invalid').pathname).toBe(LOGIN_URL);
  expect(reply.location).not.toContain('code=');
  return interactionOf(reply.location);
}

describe.each(FRAMEWORKS)('%s: every step re-checks the sign-in the request demanded', (framework) => {
  const app = useApp({ framework });

  /** authorize with `params` two minutes after sign-in → login; a fresh sign-in in the same browser → resume → the consent page. */
  async function consentAfterFreshSignIn(params: Record<string, string>) {
    const { get, authorizeUrl, signIn, clock, sessions, readConsent } = app();
    const jar = cookieJar();
    const sid = signIn(ADA);
    clock.advance(120_000);
    const loginId = expectLoginRedirect(jar.take(await get(authorizeUrl(params), jar.with(sid))));
    clock.advance(1_000);
    sessions.setSession({ account: ADA, authenticatedAt: clock.now() }, sid);
    const consent = await readConsent(jar.take(await get(resumePath(loginId), jar.with(sid))));
    return { jar, sid, consent };
  }

  it.each([
    ['prompt=login', { prompt: 'login' }],
    ['max_auth_age=60', { max_auth_age: '60' }],
  ])(
    "%s: the browser's session swapped for a day-old one (same account) cannot approve or deny; the consent is kept",
    async (_name, params) => {
      const { decide, sessions, clock, exchange } = app();
      const { jar, sid, consent } = await consentAfterFreshSignIn(params);
      sessions.setSession({ account: ADA, authenticatedAt: clock.now() - DAY }, sid);
      expectErrorPage(await decide(consent, 'approve', sid, { cookie: jar.with(sid) }), 'invalid_request');
      expectErrorPage(await decide(consent, 'deny', sid, { cookie: jar.with(sid) }), 'invalid_request');
      // The refusals used nothing up: the fresh session approves, and the code works.
      sessions.setSession({ account: ADA, authenticatedAt: clock.now() - 1 }, sid);
      const approved = await decide(consent, 'approve', sid, { cookie: jar.with(sid) });
      expect(approved.status, approved.text).toBe(303);
      const code = new URL(approved.location!).searchParams.get('code');
      expect(code).toBeTruthy();
      expect((await exchange(code!)).status).toBe(200);
    },
  );

  it.each([
    ['prompt=login', { prompt: 'login' }],
    ['max_auth_age=60', { max_auth_age: '60' }],
  ])('%s: resuming the consent with a day-old session sends the browser to sign in again', async (_name, params) => {
    const { get, sessions, clock, readConsent } = app();
    const { jar, sid, consent } = await consentAfterFreshSignIn(params);
    sessions.setSession({ account: ADA, authenticatedAt: clock.now() - DAY }, sid);
    const again = expectLoginRedirect(jar.take(await get(resumePath(consent.interaction), jar.with(sid))));
    // A fresh sign-in continues.
    clock.advance(1_000);
    sessions.setSession({ account: ADA, authenticatedAt: clock.now() }, sid);
    await readConsent(jar.take(await get(resumePath(again), jar.with(sid))));
  });

  it('the i hint: resuming as another account than the hint (a login or a consent interaction) is a sign-in again', async () => {
    const { get, authorizeUrl, signIn, readConsent } = app();
    const jar = cookieJar();
    const ada = signIn(ADA);
    const bob = signIn(BOB);
    // A consent shown to Ada for a request that named Ada; Bob's session resumes it.
    const consent = await readConsent(jar.take(await get(authorizeUrl({ i: ADA.uuid.slice(0, 8) }), jar.with(ada))));
    expectLoginRedirect(jar.take(await get(resumePath(consent.interaction), jar.with(bob))));
    // A request that named Bob, not signed in; Ada's session resumes it.
    const loginId = expectLoginRedirect(jar.take(await get(authorizeUrl({ i: BOB.uuid.slice(0, 8) }), jar.with(''))));
    const next = expectLoginRedirect(jar.take(await get(resumePath(loginId), jar.with(ada))));
    const page = await readConsent(jar.take(await get(resumePath(next), jar.with(bob))));
    expect(page.page.text).toContain(BOB.name);
  });
});
