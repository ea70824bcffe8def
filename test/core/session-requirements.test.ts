/**
 * Every step of an authorization request (authorize, resume, approve, deny) re-checks every
 * requirement of the original request against the session it sees
 * (docs/reference.md#prompt-and-sign-in-requirements): signed in with a finite sign-in time,
 * the `i` account hint, `prompt=login` (a sign-in after the request) and `max_auth_age`.
 */
import { describe, expect, it } from 'vitest';
import type { AuthorizeDecision } from '../../src/index.js';
import { ADA, BOB, json, setup } from '../helpers.js';

const DAY = 86_400_000;

type Setup = Awaited<ReturnType<typeof setup>>;

function expectKind<K extends AuthorizeDecision['type']>(d: AuthorizeDecision, kind: K): Extract<AuthorizeDecision, { type: K }> {
  expect(d.type, JSON.stringify(d)).toBe(kind);
  return d as Extract<AuthorizeDecision, { type: K }>;
}

/** The redirect carries a code (or a token): something was issued. */
const issued = (d: AuthorizeDecision) =>
  d.type === 'redirect' && (new URL(d.location).searchParams.has('code') || d.location.includes('access_token='));

/**
 * authorize with `params` as a signed-in user (one minute after sign-in), a fresh sign-in on the
 * same browser, resume: the consent interaction of a request that demanded a fresh sign-in.
 */
async function consentAfterFreshSignIn(t: Setup, params: Record<string, string>) {
  const browser = t.sessions.signIn(ADA);
  t.clock.advance(120_000);
  const login = expectKind(await t.server.authorize(t.get(t.authorizeUrl(params), browser)), 'login');
  t.clock.advance(1_000);
  t.sessions.setSession({ account: ADA, authenticatedAt: t.clock.now() }, browser);
  const consent = expectKind(await t.server.resume(login.interaction.id, t.get('/', browser)), 'consent');
  return { browser, consent };
}

describe.each([
  ['prompt=login', { prompt: 'login' }],
  ['max_auth_age=60', { max_auth_age: '60' }],
  ['prompt=login with max_auth_age=3600', { prompt: 'login', max_auth_age: '3600' }],
] as const)('%s: the fresh sign-in is required at every later step', (_name, params) => {
  it('a day-old session (same account) replacing the fresh one cannot approve or deny; the interaction is kept', async () => {
    const t = await setup();
    const { browser, consent } = await consentAfterFreshSignIn(t, params);
    // The browser's session is replaced by one that signed in a day ago.
    t.sessions.setSession({ account: ADA, authenticatedAt: t.clock.now() - DAY }, browser);
    const approved = await t.server.approve(consent.interaction.id, t.get('/', browser));
    expect(issued(approved)).toBe(false);
    expect(approved).toMatchObject({ type: 'error', error: 'invalid_request' });
    expect(await t.server.deny(consent.interaction.id, t.get('/', browser))).toMatchObject({ type: 'error', error: 'invalid_request' });
    // Not used up by the refusals: a session that meets the requirement still can.
    t.sessions.setSession({ account: ADA, authenticatedAt: t.clock.now() - 1 }, browser);
    const ok = await t.server.approve(consent.interaction.id, t.get('/', browser));
    expect(issued(ok)).toBe(true);
  });

  it('resuming the consent interaction with a day-old session is another login, never a consent', async () => {
    const t = await setup();
    const { browser, consent } = await consentAfterFreshSignIn(t, params);
    t.sessions.setSession({ account: ADA, authenticatedAt: t.clock.now() - DAY }, browser);
    const again = expectKind(await t.server.resume(consent.interaction.id, t.get('/', browser)), 'login');
    // Still a day-old session: still a login.
    const stale = expectKind(await t.server.resume(again.interaction.id, t.get('/', browser)), 'login');
    // A fresh sign-in continues, and the code is for it.
    t.clock.advance(1_000);
    t.sessions.setSession({ account: ADA, authenticatedAt: t.clock.now() }, browser);
    const next = expectKind(await t.server.resume(stale.interaction.id, t.get('/', browser)), 'consent');
    const approved = expectKind(await t.server.approve(next.interaction.id, t.get('/', browser)), 'redirect');
    expect((await t.exchange(new URL(approved.location).searchParams.get('code')!)).status).toBe(200);
  });
});

describe('max_auth_age on a consent shown straight away', () => {
  it('a session young enough gets the consent; swapped for a day-old one it cannot approve', async () => {
    const t = await setup();
    t.clock.advance(30_000);
    const consent = expectKind(await t.server.authorize(t.get(t.authorizeUrl({ max_auth_age: '60' }), t.ada)), 'consent');
    t.sessions.setSession({ account: ADA, authenticatedAt: t.clock.now() - DAY }, t.ada);
    expect(issued(await t.server.approve(consent.interaction.id, t.get('/', t.ada)))).toBe(false);
    expectKind(await t.server.resume(consent.interaction.id, t.get('/', t.ada)), 'login');
  });

  it('the session it was shown to can still approve (the age is that of the session, not of the page)', async () => {
    const t = await setup();
    t.clock.advance(30_000);
    const consent = expectKind(await t.server.authorize(t.get(t.authorizeUrl({ max_auth_age: '60' }), t.ada)), 'consent');
    t.clock.advance(20_000);
    expect(issued(await t.server.approve(consent.interaction.id, t.get('/', t.ada)))).toBe(true);
  });

  it('max_auth_age=0 after a fresh sign-in: the consent can be approved some seconds later', async () => {
    const t = await setup();
    const { browser, consent } = await consentAfterFreshSignIn(t, { max_auth_age: '0' });
    t.clock.advance(5_000);
    expect(issued(await t.server.approve(consent.interaction.id, t.get('/', browser)))).toBe(true);
  });
});

describe('the i account hint at every step', () => {
  it('resume of a login interaction with a session of another account than the hint: another login', async () => {
    const t = await setup();
    const login = expectKind(await t.server.authorize(t.get(t.authorizeUrl({ i: BOB.uuid.slice(0, 8) }))), 'login');
    const again = expectKind(await t.server.resume(login.interaction.id, t.get('/', t.ada)), 'login');
    expect(again.interaction.accountHint).toBe(BOB.uuid.slice(0, 8));
    const bob = t.sessions.signIn(BOB);
    const consent = expectKind(await t.server.resume(again.interaction.id, t.get('/', bob)), 'consent');
    expect(consent.interaction.account).toEqual(BOB);
  });

  it('a consent interaction for the hinted account, resumed by another account ("use another account"): a login, not a consent', async () => {
    const t = await setup();
    const consent = expectKind(
      await t.server.authorize(t.get(t.authorizeUrl({ i: ADA.uuid.slice(0, 6).toUpperCase() }), t.ada)),
      'consent',
    );
    const bob = t.sessions.signIn(BOB);
    const switched = expectKind(await t.server.resume(consent.interaction.id, t.get('/', bob)), 'login');
    expect(issued(await t.server.approve(switched.interaction.id, t.get('/', bob)))).toBe(false);
  });

  it('without a hint, "use another account" still switches (unchanged)', async () => {
    const t = await setup();
    const consent = expectKind(await t.server.authorize(t.get(t.authorizeUrl(), t.ada)), 'consent');
    const bob = t.sessions.signIn(BOB);
    const switched = expectKind(await t.server.resume(consent.interaction.id, t.get('/', bob)), 'consent');
    expect(switched.interaction.account).toEqual(BOB);
  });
});

describe('a sign-in time that is not a finite number (a host bug) counts as not signed in', () => {
  const BROKEN: [string, unknown][] = [
    ['undefined', undefined],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ['a date string', '2026-01-01T00:00:00Z'],
    ['a numeric string', String(Date.UTC(2026, 0, 1))],
    ['null', null],
  ];

  it.each(BROKEN)(
    'authenticatedAt %s: prompt=login, max_auth_age and prompt=none never issue, and onError hears of it once',
    async (_name, value) => {
      const errors: unknown[] = [];
      const t = await setup({ onError: (e) => errors.push(e) });
      await t.authorizeAndApprove(); // a stored consent, so prompt=none would issue to a real session
      const broken = t.sessions.setSession({ account: ADA, authenticatedAt: value });

      // prompt=login: a login, and resuming with the same session is a login again.
      const login = expectKind(await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'login' }), broken)), 'login');
      t.clock.advance(1_000);
      expectKind(await t.server.resume(login.interaction.id, t.get('/', broken)), 'login');
      // max_auth_age: a login, not a consent.
      const aged = expectKind(await t.server.authorize(t.get(t.authorizeUrl({ max_auth_age: '60' }), broken)), 'login');
      expectKind(await t.server.resume(aged.interaction.id, t.get('/', broken)), 'login');
      // prompt=none (with and without max_auth_age): login_required, nothing issued.
      for (const params of [{ prompt: 'none' }, { prompt: 'none', max_auth_age: '60' }] as Record<string, string>[]) {
        const none = expectKind(await t.server.authorize(t.get(t.authorizeUrl(params), broken)), 'redirect');
        expect(new URL(none.location).searchParams.get('error')).toBe('login_required');
      }
      // The default prompt: a login too (not a consent for an account nobody signed in to).
      expectKind(await t.server.authorize(t.get(t.authorizeUrl(), broken)), 'login');

      // A consent shown to a good session cannot be approved by a broken one.
      const consent = expectKind(await t.server.authorize(t.get(t.authorizeUrl(), t.ada)), 'consent');
      t.sessions.setSession({ account: ADA, authenticatedAt: value }, t.ada);
      expect(issued(await t.server.approve(consent.interaction.id, t.get('/', t.ada)))).toBe(false);

      // Reported once (per server), as an Error naming the problem, with nothing of the session in it.
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(Error);
      const message = (errors[0] as Error).message;
      expect(message).toMatch(/authenticatedAt/);
      for (const secret of [ADA.uuid, ADA.email, ADA.name, t.ada, broken]) expect(message).not.toContain(secret);
    },
  );

  it('a finite sign-in time is never reported', async () => {
    const errors: unknown[] = [];
    const t = await setup({ onError: (e) => errors.push(e) });
    const token = json(await t.exchange(await t.getCode({ max_auth_age: '60' })));
    expect(token.access_token).toBeTruthy();
    expect(errors).toEqual([]);
  });
});
