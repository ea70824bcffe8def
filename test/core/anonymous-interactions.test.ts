/**
 * Anonymous requests must not grow storage without bound (docs/reference.md#interactions). Every
 * unauthenticated authorization request for a valid client stores a `login` interaction; each
 * server instance keeps at most `maxPendingAnonymousInteractions` of those sign-in steps pending
 * (the oldest is forgotten first), and `onAudit` reports every interaction started, so a host can rate-limit.
 * On MemoryStorage and PostgresStorage.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthorizationServer, ConfigError, MemoryStorage, type AuditEvent, type AuthorizeDecision, type Storage } from '../../src/index.js';
import { PostgresStorage } from '../../src/postgres/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from '../storage/pg.js';
import { ADA, CALLBACK } from '../helpers.js';

let pool: pg.Pool | undefined;
const schema = schemaName('anonymous');
beforeAll(() => {
  if (DATABASE_URL) pool = makePool(4);
});
afterAll(async () => {
  if (!pool) return;
  await dropSchema(pool, schema);
  await pool.end();
});

let tables = 0;
const STORES: Array<[name: string, make: () => Promise<Storage>]> = [
  ['MemoryStorage', async () => new MemoryStorage()],
  [
    'PostgresStorage',
    async () => {
      // A table prefix of its own per server: each starts empty.
      const storage = new PostgresStorage(pool!, { schema, tablePrefix: `t${++tables}_` });
      await storage.migrate();
      return storage;
    },
  ],
];

const idOf = (decision: AuthorizeDecision) => {
  if (decision.type !== 'login' && decision.type !== 'consent') throw new Error(`expected an interaction, got ${JSON.stringify(decision)}`);
  return decision.interaction.id;
};

describe.each(STORES)('%s', (name, make) => {
  const skip = name === 'PostgresStorage' && !DATABASE_URL;

  async function setup(options: { maxPendingAnonymousInteractions?: number | null } = {}) {
    const clock = new FakeClock();
    const sessions = new FakeSessions(clock);
    const storage = await make();
    const events: AuditEvent[] = [];
    let takes = 0;
    const take = storage.takeInteraction.bind(storage);
    storage.takeInteraction = (idHash, now) => {
      takes++;
      return take(idHash, now);
    };
    const server = new AuthorizationServer({ storage, sessions, clock, onAudit: (e) => events.push(e), ...options });
    const client = await server.registerClient({ name: 'Example App', redirectUri: CALLBACK });
    const url = (params: Record<string, string> = {}) =>
      `/v1/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: CALLBACK, response_type: 'code', ...params })}`;
    const authorize = (cookie?: string, params: Record<string, string> = {}) =>
      server.authorize({ method: 'GET', url: url(params), headers: cookie ? { cookie } : {} });
    const pending = async (id: string) => (await server.describeInteraction(id)) !== null;
    return { clock, sessions, server, client, events, authorize, pending, takes: () => takes };
  }

  it.skipIf(skip)(
    'onAudit reports every interaction started: the client, the step, whether the browser is signed in as the request needs; nothing secret',
    async () => {
      const t = await setup();
      const login = idOf(await t.authorize());
      const ada = t.sessions.signIn(ADA);
      idOf(await t.authorize(ada));
      t.clock.advance(1000);
      idOf(await t.authorize(ada, { prompt: 'login' }));
      idOf(await t.server.resume(login, { method: 'GET', url: '/', headers: {} }));
      const started = t.events.filter((e) => e.type === 'interaction.started');
      expect(started).toEqual([
        { type: 'interaction.started', clientId: t.client.clientId, kind: 'login', signedIn: false, at: expect.any(Number) },
        {
          type: 'interaction.started',
          clientId: t.client.clientId,
          kind: 'consent',
          signedIn: true,
          accountUuid: ADA.uuid,
          at: expect.any(Number),
        },
        // prompt=login: a session is there, but not the fresh sign-in the request needs.
        { type: 'interaction.started', clientId: t.client.clientId, kind: 'login', signedIn: false, at: expect.any(Number) },
        { type: 'interaction.started', clientId: t.client.clientId, kind: 'login', signedIn: false, at: expect.any(Number) },
      ]);
      expect(JSON.stringify(started)).not.toContain(login);
    },
  );

  it.skipIf(skip)(
    'at most maxPendingAnonymousInteractions sign-in steps stay pending: the oldest is forgotten first; consent steps do not count',
    async () => {
      const t = await setup({ maxPendingAnonymousInteractions: 3 });
      const ada = t.sessions.signIn(ADA);
      const consent = idOf(await t.authorize(ada));
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(idOf(await t.authorize()));
      expect(await Promise.all(ids.map(t.pending))).toEqual([false, false, true, true, true]);
      // Consent steps (a signed-in account) neither count nor are forgotten.
      expect(await t.pending(consent)).toBe(true);
      // A forgotten one answers as expired; a kept one still works.
      const forgotten = await t.server.resume(ids[0]!, { method: 'GET', url: '/', headers: { cookie: ada } });
      expect(forgotten).toMatchObject({ type: 'error', error: 'invalid_request' });
      expect((await t.server.resume(ids[4]!, { method: 'GET', url: '/', headers: { cookie: ada } })).type).toBe('consent');
    },
  );

  it.skipIf(skip)('expired ones make room without a storage call; null turns the cap off', async () => {
    const t = await setup({ maxPendingAnonymousInteractions: 2 });
    for (let i = 0; i < 2; i++) await t.authorize();
    t.clock.advance(600_000);
    const before = t.takes();
    const fresh = [idOf(await t.authorize()), idOf(await t.authorize())];
    expect(t.takes()).toBe(before);
    expect(await Promise.all(fresh.map(t.pending))).toEqual([true, true]);

    const off = await setup({ maxPendingAnonymousInteractions: null });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(idOf(await off.authorize()));
    expect(await Promise.all(ids.map(off.pending))).toEqual([true, true, true, true, true]);
  });
});

describe('maxPendingAnonymousInteractions', () => {
  it('is a positive integer or null (default 10 000)', () => {
    const base = { storage: new MemoryStorage(), sessions: new FakeSessions(new FakeClock()) };
    expect(new AuthorizationServer(base).options.maxPendingAnonymousInteractions).toBe(10_000);
    for (const bad of [0, -1, 1.5, '10']) {
      expect(() => new AuthorizationServer({ ...base, maxPendingAnonymousInteractions: bad as number })).toThrow(ConfigError);
    }
  });
});
