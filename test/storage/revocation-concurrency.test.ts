/**
 * Revocations racing issuance with real concurrency, nothing forced (the forced interleavings are
 * in revocation-races.test.ts): several instances (on PostgreSQL each with a pool of its own, on
 * MemoryStorage several servers on one store), and in every round one revocation fired together
 * with a burst of device redemptions, device approvals, approvals (codes and implicit tokens),
 * personal tokens, code exchanges and refreshes of the same account and client, spread over the
 * instances.
 *
 * What each round checks is what the order of the answers proves, whatever the timing:
 * - tokens a poll got for a device approval made before the revocation started: the poll won the
 *   approval before the revocation could deny it, so the revocation must have revoked its grant;
 * - tokens of a code exchange or a refresh: their grant existed before the revocation started;
 * - nothing answers 5xx, throws, or reports to onError (a deadlock or a lock wait gone wrong
 *   would), and no step hangs;
 * - after the revocation, the same account and client get new tokens that work (no lock is left
 *   behind), and a device approval made before the round and not polled in it is denied.
 * A grant created by an approval or a personal token racing the revocation may land on either
 * side of it: which one is not observable here (only the forced schedule can say), so for those
 * only the steps that answered before the revocation was called must be dead.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthorizationServer,
  DEVICE_CODE_GRANT,
  MemoryStorage,
  type OAuthRequest,
  type OAuthResponse,
  type Storage,
} from '../../src/index.js';
import { sha256Base64url } from '../../src/crypto.js';
import { PostgresStorage } from '../../src/postgres/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { CALLBACK } from '../fixtures.js';
import { DATABASE_URL, dropSchema, schemaName } from './pg.js';

const INSTANCES = 3;
const ROUNDS = Number(process.env['RACE_ROUNDS'] ?? 24);
/** Of each kind of issuance, per round. */
const EACH = 2;
const VERIFY = '/v1/oauth/device/verify';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

const schema = schemaName('revconc');
const pools = DATABASE_URL
  ? Array.from({ length: INSTANCES }, () => {
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 6 });
      pool.on('error', () => {});
      return pool;
    })
  : [];

beforeAll(async () => {
  if (pools[0]) await new PostgresStorage(pools[0], { schema }).migrate();
});
afterAll(async () => {
  if (!pools[0]) return;
  await dropSchema(pools[0], schema);
  await Promise.all(pools.map((p) => p.end()));
});

const post = (url: string, form: Record<string, string>): OAuthRequest => ({
  method: 'POST',
  url,
  headers: { ...FORM },
  body: new URLSearchParams(form).toString(),
});
const get = (url: string, cookie: string): OAuthRequest => ({ method: 'GET', url, headers: { cookie } });
const json = (res: OAuthResponse) => JSON.parse(res.body) as Record<string, unknown>;

interface Instance {
  server: AuthorizationServer;
  sessions: FakeSessions;
}

interface Cluster {
  store: 'memory' | 'postgres';
  instances: Instance[];
  storage: Storage;
  errors: unknown[];
  /** Wait `units` before a step of the burst: milliseconds on PostgreSQL, microtask turns on memory. */
  wait(units: number): Promise<void>;
  /**
   * How long the polls of the last round took, in the units of `wait`: the revocation of the next
   * round starts at a random point within that, so that it lands before, during and after
   * redemptions (it needs fewer round trips to reach its UPDATE than a poll to reach its
   * redemption).
   */
  pollSpread: number;
}

async function cluster(store: 'memory' | 'postgres'): Promise<Cluster> {
  const clock = new FakeClock();
  const errors: unknown[] = [];
  const memory = new MemoryStorage();
  const storages: Storage[] = pools.length && store === 'postgres' ? pools.map((p) => new PostgresStorage(p, { schema })) : [memory];
  const instances = Array.from({ length: INSTANCES }, (_, i) => {
    const sessions = new FakeSessions(clock);
    const server = new AuthorizationServer({
      storage: storages[i % storages.length]!,
      sessions,
      clock,
      deviceAuthorization: {},
      onError: (e) => errors.push(e),
    });
    return { server, sessions };
  });
  const wait =
    store === 'postgres'
      ? (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
      : async (turns: number) => {
          for (let i = 0; i < turns; i++) await Promise.resolve();
        };
  return { store, instances, storage: storages[0]!, errors, wait, pollSpread: store === 'postgres' ? 5 : 10 };
}

type Revocation = 'revokeAllForAccount' | 'revokeAccess' | 'revokeClientTokens' | 'deleteClient';
const REVOCATIONS: Revocation[] = ['revokeAllForAccount', 'revokeAccess', 'revokeClientTokens', 'deleteClient'];

/**
 * One round: a fresh account and client, the burst, then the checks. Returns how many
 * redemptions won their approval while the revocation was under way.
 */
async function round(c: Cluster, revocation: Revocation, n: number): Promise<{ redeemedInRace: number }> {
  const account = { uuid: randomBytes(16).toString('hex'), name: `Racer ${n}`, email: `racer${n}@example.com` };
  const at = (i: number) => c.instances[i % INSTANCES]!;
  const cookies = c.instances.map((inst) => inst.sessions.signIn(account));
  const app = await at(0).server.registerClient({
    name: `Racing App ${n}`,
    redirectUri: CALLBACK,
    responseTypes: ['code', 'token'],
    grantTypes: ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT],
  });
  const creds = { client_id: app.clientId, client_secret: app.clientSecret };

  const consent = async (i: number, responseType: 'code' | 'token') => {
    const query = new URLSearchParams({
      client_id: app.clientId,
      redirect_uri: CALLBACK,
      response_type: responseType,
      scope: 'read',
      state: 's',
    });
    const d = await at(i).server.authorize(get(`/v1/oauth/authorize?${query}`, cookies[i % INSTANCES]!));
    if (d.type !== 'consent') throw new Error(`expected a consent, got ${JSON.stringify(d)}`);
    return d.interaction.id;
  };
  const approve = async (i: number, id: string) => at(i).server.approve(id, get(VERIFY, cookies[i % INSTANCES]!));
  const codeOf = async (i: number) => {
    const d = await approve(i, await consent(i, 'code'));
    if (d.type !== 'redirect') throw new Error('expected a redirect');
    return new URL(d.location).searchParams.get('code')!;
  };
  const exchange = (i: number, code: string) =>
    at(i).server.token(post('/v1/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, ...creds }));
  const refresh = (i: number, token: string) =>
    at(i).server.token(post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: token, ...creds }));
  const poll = (i: number, deviceCode: string) =>
    at(i).server.token(post('/v1/oauth/token', { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode, ...creds }));
  const device = async (i: number) => {
    const started = json(await at(i).server.deviceAuthorization(post('/v1/oauth/device', creds), `https://a.example${VERIFY}`));
    const outcome = await at(i).server.enterUserCode(started['user_code'] as string, get(VERIFY, cookies[i % INSTANCES]!), VERIFY);
    if (outcome.type !== 'decision' || outcome.decision.type !== 'consent') throw new Error('expected a confirmation');
    return { deviceCode: started['device_code'] as string, interaction: outcome.decision.interaction.id };
  };
  const tokensOf = (res: OAuthResponse) => {
    const body = json(res);
    return { access: body['access_token'] as string, refresh: body['refresh_token'] as string | undefined };
  };
  const dead = async (tokens: { access: string; refresh?: string | undefined }, what: string) => {
    const bearer = await at(0).server.authenticate({ method: 'GET', url: '/v2/x', headers: { authorization: `Bearer ${tokens.access}` } });
    expect(bearer.ok, `${what}: the access token still authenticates after ${revocation}`).toBe(false);
    const found = await c.storage.findToken(sha256Base64url(tokens.access));
    expect(found?.grant.revokedAt ?? null, `${what}: its grant is not revoked after ${revocation}`).not.toBeNull();
    if (tokens.refresh) expect((await refresh(0, tokens.refresh)).status, `${what}: the refresh token still refreshes`).not.toBe(200);
  };

  // Ready before the round: approvals to redeem, approvals to decide, consents to approve, codes, refresh tokens.
  const range = Array.from({ length: EACH }, (_, i) => i);
  const approved = await Promise.all(
    range.map(async (i) => {
      const d = await device(i);
      await approve(i, d.interaction);
      return d.deviceCode;
    }),
  );
  const untouched = await device(1);
  await approve(1, untouched.interaction);
  const toDecide = await Promise.all(range.map((i) => device(i)));
  const codeConsents = await Promise.all(range.map((i) => consent(i, 'code')));
  const tokenConsents = await Promise.all(range.map((i) => consent(i, 'token')));
  const codes = await Promise.all(range.map((i) => codeOf(i)));
  const refreshTokens = await Promise.all(range.map(async (i) => tokensOf(await exchange(i, await codeOf(i))).refresh!));

  // The burst: every step on some instance, the revocation on another, each after a random
  // wait (the revocation's spread adapts to how long the polls take). Starts and ends are
  // numbered in the order they happen, so an overlap is read off the numbers.
  interface Span {
    start: number;
    end: number;
  }
  let events = 0;
  const timed = <T>(step: () => Promise<T>, spread = 3): { done: Promise<T>; span: Span; ms: () => number } => {
    const span: Span = { start: Infinity, end: Infinity };
    let began = 0;
    let took = 0;
    const done = (async () => {
      await c.wait(Math.floor(Math.random() * spread));
      span.start = ++events;
      began = performance.now();
      try {
        return await step();
      } finally {
        span.end = ++events;
        took = performance.now() - began;
      }
    })();
    return { done, span, ms: () => took };
  };
  const jitter = <T>(step: () => Promise<T>) => timed(step).done;
  const revoke: Record<Revocation, () => Promise<void>> = {
    revokeAllForAccount: () => at(n).server.revokeAllForAccount(account.uuid),
    revokeAccess: () => at(n).server.revokeAccess({ accountUuid: account.uuid, clientId: app.clientId }),
    revokeClientTokens: () => at(n).server.revokeClientTokens(app.clientId),
    deleteClient: () => at(n).server.deleteClient(app.clientId),
  };
  const revoked = timed(revoke[revocation], c.pollSpread);
  const polls = approved.map((code, i) => timed(() => poll(n + 1 + i, code)));
  const withSpans = <T>(steps: { done: Promise<T>; span: Span }[]) =>
    Promise.all(steps.map(async ({ done, span }) => ({ got: await done, span })));
  // A grant an issuance creates: how to tell whether what it handed out works afterwards.
  type Issued = { got: unknown; span: Span; works: () => Promise<boolean> };
  const located = (d: Awaited<ReturnType<typeof approve>>) => (d.type === 'redirect' ? new URL(d.location) : null);
  const bearer = async (token: string | null | undefined) =>
    !!token && (await at(0).server.authenticate({ method: 'GET', url: '/v2/x', headers: { authorization: `Bearer ${token}` } })).ok;
  const [redemptions, exchanges, refreshes, decisions, approvals, implicit, personal] = await Promise.all([
    withSpans(polls),
    Promise.all(codes.map((code, i) => jitter(() => exchange(n + 2 + i, code)))),
    Promise.all(refreshTokens.map((token, i) => jitter(() => refresh(n + 1 + i, token)))),
    withSpans(toDecide.map((d, i) => timed(() => approve(n + 2 + i, d.interaction)))),
    withSpans(codeConsents.map((id, i) => timed(() => approve(n + 1 + i, id)))),
    withSpans(tokenConsents.map((id, i) => timed(() => approve(n + 2 + i, id)))),
    revocation === 'revokeAllForAccount'
      ? withSpans(range.map((i) => timed(() => at(n + i).server.createPersonalToken({ account, name: `t${i}`, scope: ['read'] }))))
      : [],
  ]);
  await revoked.done;
  if (c.store === 'postgres') c.pollSpread = Math.max(5, ...polls.map((p) => p.ms()));

  // Every answer is a success or an OAuth error, never a fault.
  for (const res of [...redemptions.map((r) => r.got), ...exchanges, ...refreshes]) expect(res.status, res.body).toBeLessThan(500);
  for (const { got } of [...decisions, ...approvals, ...implicit]) expect(got.type === 'error' ? got.status : 0).toBeLessThan(500);
  expect(c.errors).toEqual([]);

  // What the order proves, whatever the timing.
  let redeemedInRace = 0;
  for (const { got, span } of redemptions) {
    if (got.status !== 200) continue;
    if (span.start < revoked.span.end && span.end > revoked.span.start) redeemedInRace++;
    await dead(tokensOf(got), 'a device redemption racing the revocation');
  }
  for (const res of exchanges) if (res.status === 200) await dead(tokensOf(res), 'a code exchange racing the revocation');
  for (const res of refreshes) if (res.status === 200) await dead(tokensOf(res), 'a refresh racing the revocation');
  expect((await poll(0, untouched.deviceCode)).status, 'an approval made before the round, not polled in it').not.toBe(200);
  // New grants: dead when the issuance answered before the revocation was called; live when it
  // started after the revocation returned (unless the client is gone); either in between.
  const issued: [string, Issued][] = [
    ...decisions.map((d, i): [string, Issued] => [
      'a device approval',
      { ...d, works: async () => (await poll(0, toDecide[i]!.deviceCode)).status === 200 },
    ]),
    ...approvals.map((a): [string, Issued] => [
      'a code',
      {
        ...a,
        works: async () =>
          !!located(a.got)?.searchParams.get('code') && (await exchange(0, located(a.got)!.searchParams.get('code')!)).status === 200,
      },
    ]),
    ...implicit.map((a): [string, Issued] => [
      'an implicit token',
      { ...a, works: () => bearer(new URLSearchParams(located(a.got)?.hash.slice(1)).get('access_token')) },
    ]),
    ...personal.map((p): [string, Issued] => ['a personal access token', { ...p, works: () => bearer(p.got.token) }]),
  ];
  for (const [what, { span, works }] of issued) {
    if (span.end < revoked.span.start) expect(await works(), `${what} issued before ${revocation} was called still works`).toBe(false);
    else if (span.start > revoked.span.end && revocation !== 'deleteClient')
      expect(await works(), `${what} issued after ${revocation} returned does not work`).toBe(true);
  }

  // After it: the account and the client still get working tokens (no lock left behind).
  if (revocation !== 'deleteClient') {
    const fresh = tokensOf(await exchange(0, await codeOf(1)));
    const bearer = await at(2).server.authenticate({ method: 'GET', url: '/v2/x', headers: { authorization: `Bearer ${fresh.access}` } });
    expect(bearer.ok, 'a code flow after the revocation gives a working token').toBe(true);
  }
  return { redeemedInRace };
}

const stores: ('memory' | 'postgres')[] = pools.length ? ['memory', 'postgres'] : ['memory'];

describe.each(stores)('%s: revocations racing issuance on several instances (real concurrency)', (store) => {
  it(`${ROUNDS} rounds, each revocation kind in turn: what the order of the answers proves holds`, async () => {
    const c = await cluster(store);
    let redeemedInRace = 0;
    for (let n = 0; n < ROUNDS; n++) redeemedInRace += (await round(c, REVOCATIONS[n % REVOCATIONS.length]!, n)).redeemedInRace;
    // The device redemptions really raced: some won their approval while the revocation ran.
    if (process.env['RACE_STATS'])
      console.log(`${store}: ${redeemedInRace} redemptions won their approval during the revocation in ${ROUNDS} rounds`);
    expect(redeemedInRace).toBeGreaterThan(0);
  }, 300_000);
});
