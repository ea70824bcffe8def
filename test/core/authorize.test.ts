import { describe, expect, it } from 'vitest';
import { ADA, BOB, CALLBACK, json, setup } from '../helpers.js';

/**
 * The authorization endpoint (RFC 6749 §4.1.1, §4.2.1; docs/reference.md#authorization-endpoint):
 * the implicit grant (RFC 6749 §4.2), prompt (docs/reference.md#prompt-and-sign-in-requirements)
 * and errors (RFC 6749 §4.1.2.1).
 */
describe('authorization endpoint', () => {
  it('code flow: a signed-in user is asked for consent, and approving redirects with code and state', async () => {
    const t = await setup();
    const decision = await t.server.authorize(t.get(t.authorizeUrl({ state: 'xyz' }), t.ada));
    expect(decision.type).toBe('consent');
    if (decision.type !== 'consent') return;
    expect(decision.interaction.client).toEqual({ id: t.client.clientId, name: 'Example App' });
    expect(decision.interaction.scope).toEqual(['read']);
    expect(decision.interaction.account).toEqual(ADA);
    const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
    expect(approved.type).toBe('redirect');
    if (approved.type !== 'redirect') return;
    const url = new URL(approved.location);
    expect(`${url.origin}${url.pathname}`).toBe(CALLBACK);
    expect([...url.searchParams.keys()].sort()).toEqual(['code', 'state']);
    expect(url.searchParams.get('state')).toBe('xyz');
    expect(url.searchParams.get('code')!.length).toBeGreaterThanOrEqual(43);
  });

  it('state is left out of the redirect when it was not sent', async () => {
    const t = await setup();
    const url = await t.authorizeAndApprove();
    expect(url.searchParams.has('state')).toBe(false);
  });

  it('state with reserved characters is echoed exactly and cannot add parameters', async () => {
    const t = await setup();
    const state = 'a&code=evil#x y+%;Set-Cookie: z=1 é';
    const url = await t.authorizeAndApprove({ state });
    expect(url.searchParams.get('state')).toBe(state);
    expect(url.searchParams.getAll('code')).toHaveLength(1);
  });

  it('state with control characters (CR, LF, NUL) is invalid_request, not echoed', async () => {
    const t = await setup();
    for (const state of ['a\r\nSet-Cookie: z=1', 'a\u0000b', '\t']) {
      const d = await t.server.authorize(t.get(t.authorizeUrl({ state }), t.ada));
      if (d.type !== 'redirect') throw new Error(d.type);
      const url = new URL(d.location);
      expect(url.searchParams.get('error')).toBe('invalid_request');
      expect(url.searchParams.has('state')).toBe(false);
      expect(d.location).not.toMatch(/[\r\n\u0000]/);
    }
  });

  it('a client_id with control characters is an unknown client, without a storage lookup', async () => {
    const t = await setup();
    expect(await t.server.authorize(t.get(t.authorizeUrl({ client_id: 'a\u0000b' }), t.ada))).toMatchObject({
      type: 'error',
      error: 'invalid_client',
    });
    expect(await t.server.getClient('a\u0000b')).toBeNull();
  });

  it('keeps a query that is part of the registered callback URL and appends to it', async () => {
    const t = await setup();
    const client = await t.server.registerClient({ name: 'Q', redirectUri: 'https://q.example/cb?tenant=a%7E1' });
    const d = await t.server.authorize(
      t.get(
        `/v1/oauth/authorize?client_id=${client.clientId}&redirect_uri=${encodeURIComponent('https://q.example/cb?tenant=a%7E1')}&response_type=code`,
        t.ada,
      ),
    );
    if (d.type !== 'consent') throw new Error(d.type);
    const r = await t.server.approve(d.interaction.id, t.get('/', t.ada));
    if (r.type !== 'redirect') throw new Error(r.type);
    expect(r.location.startsWith('https://q.example/cb?tenant=a%7E1&code=')).toBe(true);
  });

  it('implicit flow (RFC 6749 §4.2.2): fragment with access_token, token_type, expires_in and state, and no refresh token', async () => {
    const t = await setup();
    const url = await t.authorizeAndApprove({ response_type: 'token', state: 's1' });
    expect(url.search).toBe('');
    const fragment = new URLSearchParams(url.hash.slice(1));
    expect(fragment.get('token_type')).toBe('bearer');
    expect(fragment.get('expires_in')).toBe('2592000');
    expect(fragment.get('state')).toBe('s1');
    expect(fragment.has('refresh_token')).toBe(false);
    expect(fragment.has('code')).toBe(false);
    const result = await t.api('GET', fragment.get('access_token')!);
    expect(result.ok).toBe(true);
  });

  it('implicit flow: expires_in counts the seconds remaining (30 days for a fresh token)', async () => {
    const t = await setup();
    const url = await t.authorizeAndApprove({ response_type: 'token' });
    const token = new URLSearchParams(url.hash.slice(1)).get('access_token')!;
    t.clock.advance(2_592_000_000 - 1);
    expect((await t.api('GET', token)).ok).toBe(true);
    t.clock.advance(1);
    expect((await t.api('GET', token)).ok).toBe(false);
  });

  it('scope is "read" when absent or empty, and "read write" in either order', async () => {
    const t = await setup();
    for (const [scope, expected] of [
      [undefined, ['read']],
      ['', ['read']],
      ['read', ['read']],
      ['read write', ['read', 'write']],
      ['write read', ['read', 'write']],
    ] as const) {
      const d = await t.server.authorize(t.get(t.authorizeUrl(scope === undefined ? {} : { scope }), t.ada));
      expect(d.type === 'consent' && d.interaction.scope).toEqual(expected);
    }
  });

  it('unknown parameters are ignored (RFC 6749 §3.1)', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ extra: 'foobar' }), t.ada));
    expect(d.type).toBe('consent');
  });
});

describe('errors at the authorization step (RFC 6749 §4.1.2.1)', () => {
  it('the user denies: redirect with error=access_denied, error_description and state', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ state: 'st' }), t.ada));
    if (d.type !== 'consent') throw new Error(d.type);
    const denied = await t.server.deny(d.interaction.id, t.get('/', t.ada));
    if (denied.type !== 'redirect') throw new Error(denied.type);
    const url = new URL(denied.location);
    expect(`${url.origin}${url.pathname}`).toBe(CALLBACK);
    expect(url.searchParams.get('error')).toBe('access_denied');
    expect(url.searchParams.get('error_description')).toMatch(/denied/);
    expect(url.searchParams.get('state')).toBe('st');
    expect(url.searchParams.has('code')).toBe(false);
    // Denying stores no consent: prompt=none afterwards still needs consent.
    const none = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none' }), t.ada));
    expect(none.type === 'redirect' && new URL(none.location).searchParams.get('error')).toBe('consent_required');
  });

  it('denying in the implicit flow puts the error in the fragment', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ response_type: 'token', state: 'q' }), t.ada));
    if (d.type !== 'consent') throw new Error(d.type);
    const denied = await t.server.deny(d.interaction.id, t.get('/', t.ada));
    if (denied.type !== 'redirect') throw new Error(denied.type);
    const url = new URL(denied.location);
    expect(url.search).toBe('');
    const fragment = new URLSearchParams(url.hash.slice(1));
    expect(fragment.get('error')).toBe('access_denied');
    expect(fragment.get('state')).toBe('q');
  });

  const badRedirects = [
    'https://client.example/cb/',
    'HTTPS://client.example/cb',
    'https://CLIENT.example/cb',
    'https://client.example/CB',
    'https://client.example/cb?x=1',
    'https://client.example/cb#f',
    'https://client.example:443/cb',
    'http://client.example/cb',
    'https://client.example/a/../cb',
    'https://client.example/./cb',
    'https://client.example@evil.example/cb',
    'https://evil.example/cb',
    'https://client.example/cb%20',
    'https://client.example/%63b',
    ' https://client.example/cb',
    '',
  ];
  it.each(badRedirects)('redirect_uri %j that does not equal the registered URL: error page, no redirect', async (redirectUri) => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ redirect_uri: redirectUri, state: 's' }), t.ada));
    expect(d).toMatchObject({ type: 'error', status: 400, error: 'invalid_redirect_uri' });
    if (d.type === 'error') expect(d.description).toMatch(/redirect URI is not valid/);
  });

  it('a missing redirect_uri is an error page, never a redirect to the registered one', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(`/v1/oauth/authorize?client_id=${t.client.clientId}&response_type=code`, t.ada));
    expect(d).toMatchObject({ type: 'error', error: 'invalid_redirect_uri' });
  });

  it.each(['admin', 'READ', 'read,write', 'read  write', 'read read', 'write', ' read', 'read write admin', 'read\twrite'])(
    'invalid, unknown or malformed scope %j: error page, no redirect',
    async (scope) => {
      const t = await setup();
      const d = await t.server.authorize(t.get(t.authorizeUrl({ scope, state: 's' }), t.ada));
      expect(d).toMatchObject({ type: 'error', status: 400, error: 'invalid_scope' });
      if (d.type === 'error') expect(d.description).toMatch(/scope is invalid, unknown or malformed/);
    },
  );

  it('unknown or missing client_id: error page', async () => {
    const t = await setup();
    expect(await t.server.authorize(t.get(t.authorizeUrl({ client_id: 'nope' }), t.ada))).toMatchObject({
      type: 'error',
      error: 'invalid_client',
    });
    expect(await t.server.authorize(t.get(`/v1/oauth/authorize?redirect_uri=${CALLBACK}&response_type=code`, t.ada))).toMatchObject({
      type: 'error',
      error: 'invalid_request',
    });
  });

  it('a bad redirect_uri wins over every other error (errors are redirected only to a verified callback)', async () => {
    const t = await setup();
    for (const extra of [{ response_type: 'nope' }, { prompt: 'bogus' }, { scope: 'admin' }, { max_auth_age: '-1' }] as Record<
      string,
      string
    >[]) {
      const d = await t.server.authorize(t.get(t.authorizeUrl({ redirect_uri: 'https://evil.example/cb', ...extra }), t.ada));
      expect(d.type).toBe('error');
    }
  });

  it('response_type missing or unknown: redirected error', async () => {
    const t = await setup();
    const missing = await t.server.authorize(
      t.get(`/v1/oauth/authorize?client_id=${t.client.clientId}&redirect_uri=${encodeURIComponent(CALLBACK)}&state=s`, t.ada),
    );
    expect(missing.type === 'redirect' && new URL(missing.location).searchParams.get('error')).toBe('invalid_request');
    for (const rt of ['id_token', 'code token', 'CODE']) {
      const d = await t.server.authorize(t.get(t.authorizeUrl({ response_type: rt }), t.ada));
      expect(d.type === 'redirect' && new URL(d.location).searchParams.get('error')).toBe('unsupported_response_type');
    }
  });

  it('a parameter sent twice: error page for client_id/redirect_uri, redirected invalid_request otherwise, duplicated state not echoed', async () => {
    const t = await setup();
    const base = t.authorizeUrl();
    expect((await t.server.authorize(t.get(`${base}&client_id=${t.client.clientId}`, t.ada))).type).toBe('error');
    expect((await t.server.authorize(t.get(`${base}&redirect_uri=${encodeURIComponent(CALLBACK)}`, t.ada))).type).toBe('error');
    const dupState = await t.server.authorize(t.get(`${base}&state=a&state=b`, t.ada));
    if (dupState.type !== 'redirect') throw new Error(dupState.type);
    const url = new URL(dupState.location);
    expect(url.searchParams.get('error')).toBe('invalid_request');
    expect(url.searchParams.has('state')).toBe(false);
    const dupPrompt = await t.server.authorize(t.get(`${base}&prompt=login&prompt=none&state=k`, t.ada));
    expect(dupPrompt.type === 'redirect' && new URL(dupPrompt.location).searchParams.get('error')).toBe('invalid_request');
  });

  it('a non-GET request to the authorization endpoint is an error page', async () => {
    const t = await setup();
    for (const method of ['POST', 'HEAD', 'PUT']) {
      const d = await t.server.authorize({ method, url: t.authorizeUrl(), headers: { cookie: t.ada } });
      expect(d).toMatchObject({ type: 'error', error: 'invalid_request' });
    }
  });
});

describe('prompt values (OpenID Connect Core §3.1.2.1)', () => {
  it('absent prompt is select_account: a signed-in user must authorize every time, even after an earlier approval', async () => {
    const t = await setup();
    await t.authorizeAndApprove();
    const again = await t.server.authorize(t.get(t.authorizeUrl(), t.ada));
    expect(again.type).toBe('consent');
  });

  it('select_account: a user who is not signed in must sign in, then authorize', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'select_account', state: 'st' })));
    if (d.type !== 'login') throw new Error(d.type);
    const cookie = t.sessions.signIn(BOB);
    const resumed = await t.server.resume(d.interaction.id, t.get('/', cookie));
    if (resumed.type !== 'consent') throw new Error(resumed.type);
    expect(resumed.interaction.account).toEqual(BOB);
    const approved = await t.server.approve(resumed.interaction.id, t.get('/', cookie));
    if (approved.type !== 'redirect') throw new Error(approved.type);
    expect(new URL(approved.location).searchParams.get('state')).toBe('st');
    const token = await t.exchange(new URL(approved.location).searchParams.get('code')!);
    expect(JSON.parse(token.body).info).toEqual({ name: BOB.name, email: BOB.email, uuid: BOB.uuid });
  });

  it('resume without a sign-in gives another login decision', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl()));
    if (d.type !== 'login') throw new Error(d.type);
    const again = await t.server.resume(d.interaction.id, t.get('/'));
    expect(again.type).toBe('login');
  });

  it('none, signed in and previously authorized: redirect back with a new code, no interaction', async () => {
    const t = await setup();
    await t.authorizeAndApprove();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none', state: 'p' }), t.ada));
    if (d.type !== 'redirect') throw new Error(d.type);
    const url = new URL(d.location);
    expect(url.searchParams.get('state')).toBe('p');
    expect((await t.exchange(url.searchParams.get('code')!)).status).toBe(200);
  });

  it('none in the implicit flow, previously authorized: a new token in the fragment', async () => {
    const t = await setup();
    await t.authorizeAndApprove({ response_type: 'token' });
    const d = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none', response_type: 'token' }), t.ada));
    if (d.type !== 'redirect') throw new Error(d.type);
    const token = new URLSearchParams(new URL(d.location).hash.slice(1)).get('access_token')!;
    expect((await t.api('GET', token)).ok).toBe(true);
  });

  it('none, signed in, never authorized: error=consent_required', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none', state: 'z' }), t.ada));
    if (d.type !== 'redirect') throw new Error(d.type);
    const url = new URL(d.location);
    expect(`${url.origin}${url.pathname}`).toBe(CALLBACK);
    expect(url.searchParams.get('error')).toBe('consent_required');
    expect(url.searchParams.get('state')).toBe('z');
  });

  it('none, authorized for read only, asking for read write: consent_required', async () => {
    const t = await setup();
    await t.authorizeAndApprove({ scope: 'read' });
    const d = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none', scope: 'read write' }), t.ada));
    expect(d.type === 'redirect' && new URL(d.location).searchParams.get('error')).toBe('consent_required');
  });

  it('none, authorization by another user does not count', async () => {
    const t = await setup();
    await t.authorizeAndApprove({}, t.sessions.signIn(BOB));
    const d = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none' }), t.ada));
    expect(d.type === 'redirect' && new URL(d.location).searchParams.get('error')).toBe('consent_required');
  });

  it('none, not signed in: error=login_required', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none' })));
    expect(d.type === 'redirect' && new URL(d.location).searchParams.get('error')).toBe('login_required');
  });

  it('none in the implicit flow: errors go in the fragment', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none', response_type: 'token' })));
    if (d.type !== 'redirect') throw new Error(d.type);
    expect(new URLSearchParams(new URL(d.location).hash.slice(1)).get('error')).toBe('login_required');
  });

  it('i hint: the first 6 characters of the signed-in account UUID let prompt=none through', async () => {
    const t = await setup();
    await t.authorizeAndApprove();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none', i: ADA.uuid.slice(0, 6) }), t.ada));
    expect(d.type === 'redirect' && new URL(d.location).searchParams.has('code')).toBe(true);
  });

  it('i hint naming another account: as not signed in (login_required with none, a login otherwise)', async () => {
    const t = await setup();
    await t.authorizeAndApprove();
    const none = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none', i: BOB.uuid.slice(0, 6) }), t.ada));
    expect(none.type === 'redirect' && new URL(none.location).searchParams.get('error')).toBe('login_required');
    const normal = await t.server.authorize(t.get(t.authorizeUrl({ i: BOB.uuid.slice(0, 6) }), t.ada));
    expect(normal.type).toBe('login');
    if (normal.type === 'login') expect(normal.interaction.accountHint).toBe(BOB.uuid.slice(0, 6));
  });

  it('login: the user must sign in again even with a valid session, and a sign-in from before the request does not count', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'login' }), t.ada));
    if (d.type !== 'login') throw new Error(d.type);
    // Resuming with the old session: still a login.
    const stale = await t.server.resume(d.interaction.id, t.get('/', t.ada));
    if (stale.type !== 'login') throw new Error(stale.type);
    t.clock.advance(1000);
    const fresh = t.sessions.signIn(ADA);
    const resumed = await t.server.resume(stale.interaction.id, t.get('/', fresh));
    expect(resumed.type).toBe('consent');
  });

  it('a space-separated list: "login select_account" asks for sign-in; "none login" is invalid_request', async () => {
    const t = await setup();
    expect((await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'login select_account' }), t.ada))).type).toBe('login');
    const bad = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none login' }), t.ada));
    expect(bad.type === 'redirect' && new URL(bad.location).searchParams.get('error')).toBe('invalid_request');
    const unknown = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'consent' }), t.ada));
    expect(unknown.type === 'redirect' && new URL(unknown.location).searchParams.get('error')).toBe('invalid_request');
  });

  it('max_auth_age: a session older than the limit needs a new sign-in; exactly at the limit is fine', async () => {
    const t = await setup();
    t.clock.advance(60_000);
    expect((await t.server.authorize(t.get(t.authorizeUrl({ max_auth_age: '60' }), t.ada))).type).toBe('consent');
    t.clock.advance(1);
    const d = await t.server.authorize(t.get(t.authorizeUrl({ max_auth_age: '60' }), t.ada));
    expect(d.type).toBe('login');
    const none = await t.server.authorize(t.get(t.authorizeUrl({ max_auth_age: '60', prompt: 'none' }), t.ada));
    expect(none.type === 'redirect' && new URL(none.location).searchParams.get('error')).toBe('login_required');
    if (d.type !== 'login') return;
    t.clock.advance(1);
    const fresh = t.sessions.signIn(ADA);
    expect((await t.server.resume(d.interaction.id, t.get('/', fresh))).type).toBe('consent');
  });

  it.each(['-1', '1.5', '1e3', '0x10', 'abc', '99999999999'])('max_auth_age %j is invalid_request', async (value) => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ max_auth_age: value }), t.ada));
    expect(d.type === 'redirect' && new URL(d.location).searchParams.get('error')).toBe('invalid_request');
  });
});

describe('interactions', () => {
  it('approve is single use: a second approve of the same interaction is an error page', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl(), t.ada));
    if (d.type !== 'consent') throw new Error(d.type);
    const results = await Promise.all([1, 2, 3].map(() => t.server.approve(d.interaction.id, t.get('/', t.ada))));
    expect(results.filter((r) => r.type === 'redirect')).toHaveLength(1);
    expect(results.filter((r) => r.type === 'error')).toHaveLength(2);
  });

  it('approve by a user other than the one shown the consent is refused, and does not use the interaction', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl(), t.ada));
    if (d.type !== 'consent') throw new Error(d.type);
    expect((await t.server.approve(d.interaction.id, t.get('/', t.sessions.signIn(BOB)))).type).toBe('error');
    expect((await t.server.approve(d.interaction.id, t.get('/'))).type).toBe('error');
    expect((await t.server.deny(d.interaction.id, t.get('/', t.sessions.signIn(BOB)))).type).toBe('error');
    expect((await t.server.approve(d.interaction.id, t.get('/', t.ada))).type).toBe('redirect');
  });

  it('interactions expire after 10 minutes', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl(), t.ada));
    if (d.type !== 'consent') throw new Error(d.type);
    t.clock.advance(600_000);
    expect(await t.server.approve(d.interaction.id, t.get('/', t.ada))).toMatchObject({ type: 'error', error: 'invalid_request' });
  });

  it('unknown interaction ids are error pages', async () => {
    const t = await setup();
    for (const id of ['', 'nope', 'x'.repeat(5000)]) {
      expect((await t.server.resume(id, t.get('/', t.ada))).type).toBe('error');
      expect((await t.server.approve(id, t.get('/', t.ada))).type).toBe('error');
      expect((await t.server.deny(id, t.get('/', t.ada))).type).toBe('error');
    }
  });

  it('a login interaction cannot be approved', async () => {
    const t = await setup();
    const login = await t.server.authorize(t.get(t.authorizeUrl()));
    if (login.type !== 'login') throw new Error(login.type);
    expect((await t.server.approve(login.interaction.id, t.get('/', t.ada))).type).toBe('error');
  });

  it('select_account: resuming a consent interaction switches account, and the old consent id is used up', async () => {
    const t = await setup();
    const consent = await t.server.authorize(t.get(t.authorizeUrl({ state: 'sw' }), t.ada));
    if (consent.type !== 'consent') throw new Error(consent.type);
    const bob = t.sessions.signIn(BOB);
    const switched = await t.server.resume(consent.interaction.id, t.get('/', bob));
    if (switched.type !== 'consent') throw new Error(switched.type);
    expect(switched.interaction.account).toEqual(BOB);
    expect(switched.interaction.id).not.toBe(consent.interaction.id);
    expect((await t.server.approve(consent.interaction.id, t.get('/', t.ada))).type).toBe('error');
    const approved = await t.server.approve(switched.interaction.id, t.get('/', bob));
    if (approved.type !== 'redirect') throw new Error(approved.type);
    const token = json(await t.exchange(new URL(approved.location).searchParams.get('code')!));
    expect((token.info as { uuid: string }).uuid).toBe(BOB.uuid);
  });
});
