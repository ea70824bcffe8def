/**
 * The device authorization grant (RFC 8628; docs/reference.md#device-authorization-grant-rfc-8628)
 * against the core: the device authorization endpoint, the verification steps (the code, the
 * confirmation, approve / deny), the token endpoint's polling answers, the guessing limit, and
 * single use under races. Over HTTP with a real RFC 8628 client: test/adapters/device-flow.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { handleDeviceAuthorization, handleDeviceVerification } from '../../src/ui/device-routes.js';
import {
  AuthorizationServer,
  ConfigError,
  DEVICE_CODE_GRANT,
  MemoryStorage,
  type AuditEvent,
  type AuthorizationServerOptions,
  type AuthorizeDecision,
  type OAuthRequest,
} from '../../src/index.js';
import { FakeSessions } from '../../src/testing/index.js';
import { ADA, BOB, json, setup } from '../helpers.js';

const VERIFY = '/v1/oauth/device/verify';
const VERIFY_URI = `https://auth.example${VERIFY}`;

async function deviceSetup(options: Partial<AuthorizationServerOptions> = {}) {
  const events: AuditEvent[] = [];
  const t = await setup({ deviceAuthorization: {}, onAudit: (e) => events.push(e), ...options });
  const cli = await t.server.registerClient({
    name: 'Terminal CLI',
    redirectUri: 'http://127.0.0.1/cb',
    public: true,
    grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'],
  });
  const tv = await t.server.registerClient({ name: 'TV App', redirectUri: 'https://tv.example/cb', grantTypes: [DEVICE_CODE_GRANT] });

  const start = async (form: Record<string, string> = {}, clientId = cli.clientId) => {
    const res = await t.server.deviceAuthorization(t.post('/v1/oauth/device', { client_id: clientId, ...form }), VERIFY_URI);
    expect(res.status, res.body).toBe(200);
    return json(res) as {
      device_code: string;
      user_code: string;
      verification_uri: string;
      verification_uri_complete: string;
      expires_in: number;
      interval: number;
    };
  };
  const poll = (deviceCode: string, form: Record<string, string> = { client_id: cli.clientId }) =>
    t.server.token(t.post('/v1/oauth/token', { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode, ...form }));
  /** The user enters `code` signed in as `cookie`; answers the confirmation step. */
  const enter = async (code: string, cookie = t.ada, browser?: string) => {
    const outcome = await t.server.enterUserCode(code, t.get(VERIFY, cookie), VERIFY, browser);
    if (outcome.type !== 'decision' || outcome.decision.type !== 'consent')
      throw new Error(`expected a confirmation: ${JSON.stringify(outcome)}`);
    return outcome.decision.interaction;
  };
  const approve = async (code: string, cookie = t.ada) => t.server.approve((await enter(code, cookie)).id, t.get(VERIFY, cookie));
  return { ...t, events, cli, tv, start, poll, enter, approve };
}

const error = (res: { body: string }) => (JSON.parse(res.body) as { error: string }).error;

describe('device authorization grant: off by default', () => {
  it('answers 404 at the device endpoint, unsupported_grant_type at the token endpoint, and is not in the metadata', async () => {
    const t = await setup({ issuer: 'https://auth.example' });
    const res = await t.server.deviceAuthorization(t.post('/v1/oauth/device', { client_id: t.client.clientId }), VERIFY_URI);
    expect(res.status).toBe(404);
    const token = await t.server.token(
      t.post('/v1/oauth/token', {
        grant_type: DEVICE_CODE_GRANT,
        device_code: 'x',
        client_id: t.client.clientId,
        client_secret: t.client.clientSecret,
      }),
    );
    expect(error(token)).toBe('unsupported_grant_type');
    const doc = t.server.metadataDocument()!;
    expect(doc).not.toHaveProperty('device_authorization_endpoint');
    expect(doc['grant_types_supported']).not.toContain(DEVICE_CODE_GRANT);
  });

  it('metadata advertises the endpoint and the grant type when enabled', async () => {
    const t = await setup({ issuer: 'https://auth.example', deviceAuthorization: {} });
    const doc = t.server.metadataDocument({ basePath: '/oauth' })!;
    expect(doc['device_authorization_endpoint']).toBe('https://auth.example/oauth/device');
    expect(doc['grant_types_supported']).toContain(DEVICE_CODE_GRANT);
  });

  it('enabling it on a storage without the optional device methods is a ConfigError', () => {
    const storage = new MemoryStorage() as unknown as Record<string, unknown>;
    const bare = Object.fromEntries(
      Object.getOwnPropertyNames(MemoryStorage.prototype)
        .filter((name) => name !== 'constructor' && !name.includes('Device'))
        .map((name) => [name, (storage[name] as () => unknown).bind(storage)]),
    );
    expect(() => new AuthorizationServer({ storage: bare as never, sessions: new FakeSessions(), deviceAuthorization: {} })).toThrow(
      ConfigError,
    );
    expect(() => new AuthorizationServer({ storage: bare as never, sessions: new FakeSessions() })).not.toThrow();
  });
});

describe('device authorization grant: clients', () => {
  it('registerClient takes the device grant alone, or with authorization_code, never by default', async () => {
    const t = await deviceSetup();
    await expect(
      t.server.registerClient({ name: 'x', redirectUri: 'http://127.0.0.1/cb', public: true, grantTypes: ['refresh_token'] }),
    ).rejects.toThrow(/grantTypes must list/);
    // A client registered without grantTypes may not use the device grant.
    const res = await t.server.deviceAuthorization(
      t.post('/v1/oauth/device', { client_id: t.client.clientId, client_secret: t.client.clientSecret }),
      VERIFY_URI,
    );
    expect(res.status).toBe(400);
    expect(error(res)).toBe('unauthorized_client');
    const token = await t.poll('x', { client_id: t.client.clientId, client_secret: t.client.clientSecret });
    expect(error(token)).toBe('unauthorized_client');
  });

  it('a device-only client may not use the code flow', async () => {
    const t = await deviceSetup();
    const decision = await t.server.authorize(
      t.get(
        `/v1/oauth/authorize?${new URLSearchParams({ client_id: t.tv.clientId, redirect_uri: 'https://tv.example/cb', response_type: 'code' })}`,
        t.ada,
      ),
    );
    expect(decision).toMatchObject({ type: 'redirect', location: expect.stringContaining('error=unauthorized_client') });
  });

  it('a confidential client authenticates at both endpoints; without credentials it is invalid_client', async () => {
    const t = await deviceSetup();
    const bad = await t.server.deviceAuthorization(
      t.post('/v1/oauth/device', { client_id: t.tv.clientId, client_secret: 'wrong' }),
      VERIFY_URI,
    );
    expect(bad.status).toBe(401);
    const none = await t.server.deviceAuthorization(t.post('/v1/oauth/device', { scope: 'read' }), VERIFY_URI);
    expect(error(none)).toBe('invalid_client');
    const started = await t.start({ client_secret: t.tv.clientSecret }, t.tv.clientId);
    await t.approve(started.user_code);
    expect(error(await t.poll(started.device_code, { client_id: t.tv.clientId }))).toBe('invalid_client');
    const ok = await t.poll(started.device_code, { client_id: t.tv.clientId, client_secret: t.tv.clientSecret });
    expect(ok.status, ok.body).toBe(200);
    // The TV client may not refresh: no refresh token.
    expect(json(ok)).not.toHaveProperty('refresh_token');
  });

  it('scope and resource are checked as at the authorization endpoint', async () => {
    const t = await deviceSetup({ protectedResources: [{ resource: 'https://api.example' }] });
    const scope = await t.server.deviceAuthorization(t.post('/v1/oauth/device', { client_id: t.cli.clientId, scope: 'admin' }), VERIFY_URI);
    expect(error(scope)).toBe('invalid_scope');
    const resource = await t.server.deviceAuthorization(
      t.post('/v1/oauth/device', { client_id: t.cli.clientId, resource: 'https://elsewhere.example' }),
      VERIFY_URI,
    );
    expect(error(resource)).toBe('invalid_target');
    const get = await t.server.deviceAuthorization(t.get(`/v1/oauth/device?client_id=${t.cli.clientId}`), VERIFY_URI);
    expect(get.status).toBe(405);
  });
});

describe('device authorization grant: the flow', () => {
  it('answers the RFC 8628 §3.2 fields; the user code is 8 consonants shown XXXX-XXXX', async () => {
    const t = await deviceSetup();
    const started = await t.start({ scope: 'read' });
    expect(started.device_code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(started.verification_uri).toBe(VERIFY_URI);
    expect(started.verification_uri_complete).toBe(`${VERIFY_URI}?user_code=${started.user_code}`);
    expect(started.expires_in).toBe(600);
    expect(started.interval).toBe(5);
    expect(t.events.map((e) => e.type)).toContain('device.authorization_started');
  });

  it('pending, then approved (code typed in lower case without the dash), then tokens once, then invalid_grant', async () => {
    const t = await deviceSetup();
    const started = await t.start({ scope: 'read write' });
    expect(error(await t.poll(started.device_code))).toBe('authorization_pending');
    const interaction = await t.enter(` ${started.user_code.replace('-', '').toLowerCase()} `);
    expect(interaction.device).toEqual({ userCode: started.user_code });
    expect(interaction.client.name).toBe('Terminal CLI');
    expect(interaction.scope).toEqual(['read', 'write']);
    const decided = await t.server.approve(interaction.id, t.get(VERIFY, t.ada));
    expect(decided).toEqual({ type: 'redirect', location: `${VERIFY}?result=approved` });
    t.clock.advance(5000);
    const res = await t.poll(started.device_code);
    expect(res.status, res.body).toBe(200);
    const body = json(res) as { access_token: string; refresh_token: string; scope: string; info: { uuid: string } };
    expect(body.scope).toBe('read write');
    expect(body.info.uuid).toBe(ADA.uuid);
    expect(body.refresh_token).toBeTruthy();
    expect((await t.api('POST', body.access_token)).ok).toBe(true);
    expect(t.events).toContainEqual(expect.objectContaining({ type: 'token.issued', grantType: 'device_code', clientId: t.cli.clientId }));
    // Replay after the tokens: invalid_grant, whenever.
    expect(error(await t.poll(started.device_code))).toBe('invalid_grant');
    t.clock.advance(3_600_000);
    expect(error(await t.poll(started.device_code))).toBe('invalid_grant');
    // The refresh token works; the user sees the application among their authorized ones and can revoke it.
    expect((await t.refresh(body.refresh_token, { client_id: t.cli.clientId })).status).toBe(200);
    expect((await t.server.listAuthorizations(ADA.uuid)).map((a) => a.client.name)).toContain('Terminal CLI');
    await t.server.revokeAccess({ accountUuid: ADA.uuid, clientId: t.cli.clientId });
    expect((await t.api('GET', body.access_token)).ok).toBe(false);
  });

  it('denied: access_denied to the device, the confirmation cannot be reused', async () => {
    const t = await deviceSetup();
    const started = await t.start();
    const interaction = await t.enter(started.user_code);
    expect(await t.server.deny(interaction.id, t.get(VERIFY, t.ada))).toEqual({ type: 'redirect', location: `${VERIFY}?result=denied` });
    expect(error(await t.poll(started.device_code))).toBe('access_denied');
    expect((await t.server.approve(interaction.id, t.get(VERIFY, t.ada))).type).toBe('error');
    expect(error(await t.poll(started.device_code))).toBe('access_denied');
    // A decided code is no longer accepted on the verification page.
    const again = await t.server.enterUserCode(started.user_code, t.get(VERIFY, t.ada), VERIFY);
    expect(again.type).toBe('wrong');
  });

  it('only the account the confirmation was shown to may decide it', async () => {
    const t = await deviceSetup();
    const started = await t.start();
    const interaction = await t.enter(started.user_code);
    const bob = t.sessions.signIn(BOB);
    expect((await t.server.approve(interaction.id, t.get(VERIFY, bob))).type).toBe('error');
    expect(error(await t.poll(started.device_code))).toBe('authorization_pending');
  });

  it('polling faster than the interval is slow_down, which raises the interval by 5 seconds', async () => {
    const t = await deviceSetup({ deviceAuthorization: { interval: 2 } });
    const started = await t.start();
    expect(error(await t.poll(started.device_code))).toBe('authorization_pending');
    t.clock.advance(1000);
    expect(error(await t.poll(started.device_code))).toBe('slow_down');
    // Now 7 seconds: 2 seconds later is still too fast (and raises it to 12).
    t.clock.advance(2000);
    expect(error(await t.poll(started.device_code))).toBe('slow_down');
    t.clock.advance(12_000);
    expect(error(await t.poll(started.device_code))).toBe('authorization_pending');
    t.clock.advance(12_000);
    expect(error(await t.poll(started.device_code))).toBe('authorization_pending');
  });

  it('expired: expired_token after expires_in, the code no longer accepted, and prune removes the record', async () => {
    const t = await deviceSetup({ deviceAuthorization: { lifetime: 60 } });
    const started = await t.start();
    t.clock.advance(59_999);
    expect(error(await t.poll(started.device_code))).toBe('authorization_pending');
    t.clock.advance(1);
    expect(error(await t.poll(started.device_code))).toBe('expired_token');
    expect((await t.server.enterUserCode(started.user_code, t.get(VERIFY, t.ada), VERIFY)).type).toBe('wrong');
    expect(t.storage.prune(t.clock.now()).devices).toBe(1);
    expect(error(await t.poll(started.device_code))).toBe('invalid_grant');
  });

  it("another client's device code is invalid_grant and leaves it untouched", async () => {
    const t = await deviceSetup();
    const other = await t.server.registerClient({
      name: 'Other CLI',
      redirectUri: 'http://127.0.0.1/cb',
      public: true,
      grantTypes: [DEVICE_CODE_GRANT],
    });
    const started = await t.start();
    await t.approve(started.user_code);
    expect(error(await t.poll(started.device_code, { client_id: other.clientId }))).toBe('invalid_grant');
    expect((await t.poll(started.device_code)).status).toBe(200);
  });

  it('an unknown or malformed device_code is invalid_grant; a missing one invalid_request', async () => {
    const t = await deviceSetup();
    expect(error(await t.poll('nope'))).toBe('invalid_grant');
    expect(error(await t.poll('x'.repeat(5000)))).toBe('invalid_request');
    const res = await t.server.token(t.post('/v1/oauth/token', { grant_type: DEVICE_CODE_GRANT, client_id: t.cli.clientId }));
    expect(error(res)).toBe('invalid_request');
  });
});

describe('device authorization grant: the rest of the token request', () => {
  it('storage holds the device code and the user code only as hashes', async () => {
    const t = await deviceSetup();
    const started = await t.start();
    await t.enter(started.user_code);
    const internals = t.storage as unknown as Record<string, Map<string, unknown>>;
    const dump = JSON.stringify(Object.values(internals).map((m) => (m instanceof Map ? [...m] : m)));
    expect(dump).toContain('pending');
    for (const secret of [started.device_code, started.user_code, started.user_code.replace('-', '')]) expect(dump).not.toContain(secret);
  });

  it('a parameter twice at the device endpoint is invalid_request', async () => {
    const t = await deviceSetup();
    const res = await t.server.deviceAuthorization(
      t.post('/v1/oauth/device', `client_id=${t.cli.clientId}&scope=read&scope=read`),
      VERIFY_URI,
    );
    expect(error(res)).toBe('invalid_request');
  });

  it('resource: the tokens are for the resources requested; a resource not requested is invalid_target', async () => {
    const t = await deviceSetup({ protectedResources: [{ resource: 'https://api.example' }, { resource: 'https://other.example' }] });
    const started = await t.start({ resource: 'https://api.example' });
    await t.approve(started.user_code);
    const res = await t.poll(started.device_code);
    expect(res.status, res.body).toBe(200);
    const token = (json(res) as { access_token: string }).access_token;
    const at = (resource: string) =>
      t.server.authenticate({ method: 'GET', url: '/r', headers: { authorization: `Bearer ${token}` } }, { resource });
    expect((await at('https://api.example')).ok).toBe(true);
    expect((await at('https://other.example')).ok).toBe(false);
    const second = await t.start({ resource: 'https://api.example' });
    await t.approve(second.user_code);
    expect(error(await t.poll(second.device_code, { client_id: t.cli.clientId, resource: 'https://other.example' }))).toBe(
      'invalid_target',
    );
    // A wrong resource uses nothing up: the next poll, without it, gets the tokens.
    t.clock.advance(5000);
    expect((await t.poll(second.device_code)).status).toBe(200);
  });

  it('a storage failure while the tokens are stored leaves the approval for the next poll (nothing lost, nothing half-written)', async () => {
    const t = await deviceSetup();
    const started = await t.start();
    await t.approve(started.user_code);
    const redeem = t.storage.redeemDeviceAuthorization.bind(t.storage);
    let fail = true;
    t.storage.redeemDeviceAuthorization = async (...args) => {
      if (fail) {
        fail = false;
        throw new Error('database down');
      }
      return redeem(...args);
    };
    const failed = await t.poll(started.device_code);
    expect(failed.status).toBe(500);
    t.clock.advance(5000);
    const res = await t.poll(started.device_code);
    expect(res.status, res.body).toBe(200);
    expect(error(await t.poll(started.device_code))).toBe('invalid_grant');
  });

  it('isAccountActive: an inactive account gets invalid_grant and nothing usable', async () => {
    const t = await deviceSetup({ isAccountActive: (uuid) => uuid !== ADA.uuid });
    const started = await t.start();
    await t.approve(started.user_code);
    expect(error(await t.poll(started.device_code))).toBe('invalid_grant');
    expect(t.events.map((e) => e.type)).toContain('account.inactive');
  });

  it('the sign-in step names no client: it and describeInteraction say purpose device, with no application and no scope, until it expires', async () => {
    const t = await deviceSetup();
    const login = await t.server.deviceVerification(t.get(VERIFY), VERIFY);
    if (login?.type !== 'login') throw new Error(`expected a login step, got ${JSON.stringify(login)}`);
    const expiresAt = t.clock.now() + 600_000;
    // The documented Interaction type requires a client: empty, and `purpose` tells the step apart.
    expect(login.interaction).toEqual({ id: expect.any(String), client: { id: '', name: '' }, scope: [], purpose: 'device', expiresAt });
    expect(await t.server.describeInteraction(login.interaction.id)).toEqual({
      kind: 'login',
      purpose: 'device',
      client: { id: '', name: '' },
      scope: [],
      expiresAt,
    });
    expect(t.events).toContainEqual(expect.objectContaining({ type: 'interaction.started', clientId: '', kind: 'login', signedIn: false }));
    t.clock.advance(600_000);
    expect(await t.server.describeInteraction(login.interaction.id)).toBeNull();
  });

  it('the confirmation step: purpose device and the code on the decision; describeInteraction names the device client and scope', async () => {
    const t = await deviceSetup();
    const started = await t.start({ scope: 'read' });
    const confirmation = await t.enter(started.user_code);
    expect(confirmation).toMatchObject({
      client: { id: t.cli.clientId, name: 'Terminal CLI' },
      scope: ['read'],
      account: ADA,
      purpose: 'device',
      device: { userCode: started.user_code },
    });
    expect(confirmation).not.toHaveProperty('redirectHost');
    expect(await t.server.describeInteraction(confirmation.id)).toEqual({
      kind: 'consent',
      purpose: 'device',
      client: { id: t.cli.clientId, name: 'Terminal CLI' },
      scope: ['read'],
      expiresAt: confirmation.expiresAt,
    });
  });
});

describe('device authorization grant: guessing user codes (RFC 8628 §5.1)', () => {
  it('counts wrong codes per account with an audit event each, locks after maxUserCodeAttempts, unlocks after lockSeconds', async () => {
    const t = await deviceSetup({ deviceAuthorization: { maxUserCodeAttempts: 3, lockSeconds: 60 } });
    const started = await t.start();
    const wrong = (code: string) => t.server.enterUserCode(code, t.get(VERIFY, t.ada), VERIFY);
    expect(await wrong('BBBB-BBBB')).toEqual({ type: 'wrong', attempts: 1 });
    expect(await wrong('not a code')).toEqual({ type: 'wrong', attempts: 2 });
    const locked = await wrong('CCCC-CCCC');
    expect(locked).toEqual({ type: 'locked', until: t.clock.now() + 60_000 });
    // Locked: even the right code is refused, and nothing more is counted.
    expect((await wrong(started.user_code)).type).toBe('locked');
    const failed = t.events.filter((e) => e.type === 'device.user_code_failed');
    expect(failed).toHaveLength(3);
    expect(JSON.stringify(t.events)).not.toContain(started.user_code.replace('-', ''));
    expect(t.events.filter((e) => e.type === 'device.user_code_locked')).toEqual([
      expect.objectContaining({ accountUuid: ADA.uuid, until: t.clock.now() + 60_000 }),
    ]);
    // Another account is not locked.
    const bob = t.sessions.signIn(BOB);
    expect((await t.server.enterUserCode('DDDD-DDDD', t.get(VERIFY, bob), VERIFY)).type).toBe('wrong');
    t.clock.advance(60_000);
    expect((await t.enter(started.user_code)).device?.userCode).toBe(started.user_code);
  });

  it('counts per browser too: another account in the same browser is locked with it', async () => {
    const t = await deviceSetup({ deviceAuthorization: { maxUserCodeAttempts: 2 } });
    const browser = 'b'.repeat(43);
    const bob = t.sessions.signIn(BOB);
    await t.server.enterUserCode('BBBB-BBBB', t.get(VERIFY, t.ada), VERIFY, browser);
    expect((await t.server.enterUserCode('BBBB-BBBB', t.get(VERIFY, bob), VERIFY, browser)).type).toBe('locked');
    const carol = t.sessions.signIn({ uuid: 'c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0', name: 'Carol', email: 'carol@example.com' });
    expect((await t.server.enterUserCode('BBBB-BBBB', t.get(VERIFY, carol), VERIFY, browser)).type).toBe('locked');
    expect((await t.server.enterUserCode('BBBB-BBBB', t.get(VERIFY, carol), VERIFY, 'c'.repeat(43))).type).toBe('wrong');
  });

  it('nobody signed in: the sign-in step, which resume turns into the way back to the verification page', async () => {
    const t = await deviceSetup();
    const started = await t.start();
    const outcome = await t.server.enterUserCode(started.user_code, t.get(VERIFY), VERIFY);
    expect(outcome.type).toBe('decision');
    const login = (outcome as { decision: AuthorizeDecision }).decision;
    expect(login.type).toBe('login');
    const id = (login as { interaction: { id: string } }).interaction.id;
    expect(await t.server.resume(id, t.get('/v1/oauth/authorize/resume', t.ada))).toEqual({
      type: 'redirect',
      location: `${VERIFY}?user_code=${started.user_code}`,
    });
    // Single use, as every interaction.
    expect((await t.server.resume(id, t.get('/v1/oauth/authorize/resume', t.ada))).type).toBe('error');
    expect(await t.server.deviceVerification(t.get(VERIFY, t.ada), VERIFY)).toBeNull();
  });
});

describe('device authorization grant: single use under concurrency', () => {
  it('two polls racing after approval: exactly one gets tokens', async () => {
    const t = await deviceSetup();
    const started = await t.start();
    await t.approve(started.user_code);
    const answers = await Promise.all(Array.from({ length: 8 }, () => t.poll(started.device_code)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    expect(answers.filter((r) => r.status !== 200).map(error)).toEqual(Array(7).fill('invalid_grant'));
  });

  it('two confirmations of one code racing: exactly one decides it', async () => {
    const t = await deviceSetup();
    const started = await t.start();
    const bob = t.sessions.signIn(BOB);
    const first = await t.enter(started.user_code);
    const second = await t.enter(started.user_code, bob);
    const decisions = await Promise.all([t.server.approve(first.id, t.get(VERIFY, t.ada)), t.server.deny(second.id, t.get(VERIFY, bob))]);
    expect(decisions.filter((d) => d.type === 'redirect')).toHaveLength(1);
    const res = await t.poll(started.device_code);
    if (decisions[0]!.type === 'redirect') expect(res.status).toBe(200);
    else expect(error(res)).toBe('access_denied');
  });
});

describe('device verification page (the adapter kit handler)', () => {
  const page = (t: Awaited<ReturnType<typeof deviceSetup>>, request: OAuthRequest) =>
    handleDeviceVerification(t.server, request, { basePath: '/v1/oauth' });

  it('refuses a form without the CSRF cookie or with a wrong one (403), and checks nothing', async () => {
    const t = await deviceSetup();
    const started = await t.start();
    const missing = await page(t, t.post(VERIFY, { user_code: started.user_code, csrf: 'x'.repeat(43) }, { cookie: t.ada }));
    expect(missing).toMatchObject({ type: 'error', status: 403 });
    const wrong = await page(
      t,
      t.post(VERIFY, { user_code: started.user_code, csrf: 'x'.repeat(43) }, { cookie: `${t.ada}; authgate_csrf=${'y'.repeat(43)}` }),
    );
    expect(wrong).toMatchObject({ type: 'error', status: 403 });
    expect(t.events.filter((e) => e.type === 'device.user_code_failed')).toHaveLength(0);
  });

  it('the confirmation is bound to the browser whose CSRF cookie entered the code', async () => {
    const t = await deviceSetup();
    const started = await t.start();
    const csrf = 'a'.repeat(43);
    const cookie = `${t.ada}; authgate_csrf=${csrf}`;
    const step = (await page(t, t.post(VERIFY, { user_code: started.user_code, csrf }, { cookie }))) as AuthorizeDecision;
    expect(step.type).toBe('consent');
    const id = (step as { interaction: { id: string } }).interaction.id;
    const other = 'z'.repeat(43);
    const elsewhere = await page(
      t,
      t.post(VERIFY, { interaction: id, csrf: other, decision: 'approve' }, { cookie: `${t.ada}; authgate_csrf=${other}` }),
    );
    expect(elsewhere).toMatchObject({ type: 'error', status: 400 });
    const here = await page(t, t.post(VERIFY, { interaction: id, csrf, decision: 'approve' }, { cookie }));
    expect(here).toEqual({ type: 'redirect', location: `${VERIFY}?result=approved` });
  });

  it('checkDeviceBinding checks the browser secret given as a value: only the secret that entered the code decides the step', async () => {
    const t = await deviceSetup();
    const started = await t.start();
    const secret = 'a'.repeat(43);
    const step = await t.enter(started.user_code, t.ada, secret);
    const anotherBrowser = {
      type: 'error',
      status: 400,
      error: 'invalid_request',
      description: expect.stringContaining('another browser'),
    };
    expect(await t.server.checkDeviceBinding(step.id, 'z'.repeat(43))).toMatchObject(anotherBrowser);
    expect(await t.server.checkDeviceBinding(step.id, undefined)).toMatchObject(anotherBrowser);
    expect(await t.server.checkDeviceBinding(step.id, secret)).toBeNull();
    // Checking uses nothing up; an unknown id is left to approve / deny to report.
    expect(await t.server.checkDeviceBinding('x'.repeat(43), undefined)).toBeNull();
    expect(await t.server.approve(step.id, t.get(VERIFY, t.ada))).toEqual({ type: 'redirect', location: `${VERIFY}?result=approved` });
    // A step entered without a browser secret is bound to none; the sign-in step never is.
    const unbound = await t.enter((await t.start()).user_code);
    expect(await t.server.checkDeviceBinding(unbound.id, undefined)).toBeNull();
    const signIn = await t.server.deviceVerification(t.get(VERIFY), VERIFY);
    if (signIn?.type !== 'login') throw new Error('expected a sign-in step');
    expect(await t.server.checkDeviceBinding(signIn.interaction.id, 'z'.repeat(43))).toBeNull();
  });
});

describe('verification_uri', () => {
  it('is built as the metadata builds endpoints: the issuer with its path, then the mounted basePath; else the request origin', async () => {
    for (const [issuer, expected] of [
      ['https://auth.example/tenant-1', 'https://auth.example/tenant-1/v1/oauth/device/verify'],
      ['https://auth.example', 'https://auth.example/v1/oauth/device/verify'],
      [undefined, 'http://127.0.0.1:8080/v1/oauth/device/verify'],
    ] as const) {
      const t = await deviceSetup(issuer === undefined ? {} : { issuer });
      const res = await handleDeviceAuthorization(
        t.server,
        t.post('http://127.0.0.1:8080/v1/oauth/device', { client_id: t.cli.clientId }),
        '/v1/oauth',
      );
      expect(json(res)['verification_uri']).toBe(expected);
      if (issuer !== undefined) {
        const endpoint = t.server.metadataDocument()?.['device_authorization_endpoint'] as string;
        expect(endpoint).toBe(expected.replace(/\/verify$/, ''));
      }
    }
  });
});

describe('unsupported_grant_type', () => {
  it('names the device grant among those the server takes only while it is enabled', async () => {
    const on = await deviceSetup();
    const answer = json(await on.server.token(on.post('/v1/oauth/token', { grant_type: 'password' })));
    expect(answer).toMatchObject({ error: 'unsupported_grant_type' });
    expect(answer['error_description']).toContain(DEVICE_CODE_GRANT);
    const off = await setup();
    const offAnswer = json(await off.server.token(off.post('/v1/oauth/token', { grant_type: 'password' })));
    expect(offAnswer['error_description']).not.toContain('device_code');
  });
});

describe('device authorization grant: guessing under concurrency and at capacity (RFC 8628 §5.1)', () => {
  it('concurrent wrong codes from one account and browser: only maxUserCodeAttempts are judged, the right code after them is locked', async () => {
    const t = await deviceSetup({ deviceAuthorization: { maxUserCodeAttempts: 5 } });
    const victim = await t.start();
    const letters = 'CDFGHJKLMNPQRSTVWXZ';
    const guesses = Array.from({ length: 39 }, (_, i) => `BBBB-BB${letters[i % 19]}${letters[Math.floor(i / 19)]}`);
    guesses.push(victim.user_code);
    const outcomes = await Promise.all(guesses.map((g) => t.server.enterUserCode(g, t.get(VERIFY, t.ada), VERIFY, 'a'.repeat(43))));
    expect(t.events.filter((e) => e.type === 'device.user_code_failed')).toHaveLength(5);
    expect(outcomes.at(-1)!.type).toBe('locked');
  });

  it('a right code among concurrent ones within the limit is confirmed and not counted', async () => {
    const t = await deviceSetup({ deviceAuthorization: { maxUserCodeAttempts: 5 } });
    const mine = await t.start();
    const codes = ['BBBB-BBBC', 'BBBB-BBBD', 'BBBB-BBBF', 'BBBB-BBBG', mine.user_code];
    const outcomes = await Promise.all(codes.map((c) => t.server.enterUserCode(c, t.get(VERIFY, t.ada), VERIFY, 'a'.repeat(43))));
    expect(outcomes.at(-1)).toMatchObject({ type: 'decision', decision: { type: 'consent' } });
    // Four wrong codes counted: the next wrong one is the fifth, and locks.
    expect((await t.server.enterUserCode('BBBB-BBBH', t.get(VERIFY, t.ada), VERIFY, 'a'.repeat(43))).type).toBe('locked');
  });

  it('a locked account stays locked while other accounts fail with fresh browser cookies past the 10 000 keys kept', async () => {
    const t = await deviceSetup({ deviceAuthorization: { maxUserCodeAttempts: 5 } });
    const wrong = (cookie: string, browser: string) => t.server.enterUserCode('BBBB-BBBB', t.get(VERIFY, cookie), VERIFY, browser);
    const browser = (i: number) => i.toString(36).padStart(43, 'x');
    for (let i = 0; i < 5; i++) await wrong(t.ada, browser(i));
    expect((await wrong(t.ada, browser(99_999))).type).toBe('locked');
    let n = 100;
    for (let a = 0; a < 2000; a++) {
      const helper = t.sessions.signIn({ uuid: `helper-${a}`, name: 'Helper', email: `h${a}@example.com` });
      for (let k = 0; k < 5; k++) await wrong(helper, browser(n++));
    }
    expect((await wrong(t.ada, browser(n++))).type).toBe('locked');
  });
});
