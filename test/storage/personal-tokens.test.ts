/**
 * Personal access tokens (docs/reference.md#personal-access-tokens) through the server on both
 * stores: the sequences over time (create, use, list the last use, revoke, expire, prune, race),
 * and on PostgreSQL the upgrade of a version-4 database by migration 5.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { AuthorizationServer, MemoryStorage, type AuditEvent, type OAuthRequest } from '../../src/index.js';
import { PostgresStorage, SCHEMA_VERSION } from '../../src/postgres/index.js';
import { MIGRATIONS, quote, routineNames, tableNames } from '../../src/postgres/schema.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA, BOB } from '../fixtures.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from './pg.js';

const MINUTE = 60_000;
const pool = DATABASE_URL ? makePool(25) : undefined;
const schemas: string[] = [];

afterAll(async () => {
  if (!pool) return;
  for (const s of schemas) await dropSchema(pool, s);
  await pool.end();
});

type Store = MemoryStorage | PostgresStorage;
const stores: [string, () => Promise<Store>][] = [['MemoryStorage', async () => new MemoryStorage()]];
if (pool) {
  stores.push([
    'PostgresStorage',
    async () => {
      const schema = schemaName('personal');
      schemas.push(schema);
      const storage = new PostgresStorage(pool, { schema });
      await storage.migrate();
      return storage;
    },
  ]);
}

async function world(storage: Store) {
  const clock = new FakeClock();
  const events: AuditEvent[] = [];
  const errors: unknown[] = [];
  const server = new AuthorizationServer({
    storage,
    sessions: new FakeSessions(clock),
    clock,
    onAudit: (e) => events.push(e),
    onError: (e) => errors.push(e),
  });
  const request = (method: string, token: string): OAuthRequest => ({
    method,
    url: '/v2/account',
    headers: { authorization: `Bearer ${token}` },
  });
  const api = (method: string, token: string) => server.authenticate(request(method, token));
  const status = async (method: string, token: string) => {
    const result = await api(method, token);
    return result.ok ? 200 : result.response.status;
  };
  const prune = (now: number) => Promise.resolve(storage.prune(now));
  return { clock, events, errors, server, api, status, prune };
}

describe.each(stores)('personal access tokens on %s', (_name, makeStorage) => {
  it('create → use → list (last used, written once a minute) → revoke → 401 → audit', async () => {
    const w = await world(await makeStorage());
    const created = await w.server.createPersonalToken({ account: ADA, name: 'deploy', scope: ['read', 'write'] });
    const t0 = w.clock.now();
    expect(await w.status('POST', created.token)).toBe(200);
    const lastUsed = async () => (await w.server.listPersonalTokens(ADA.uuid))[0]?.lastUsedAt;
    await vi.waitFor(async () => expect(await lastUsed()).toBe(t0));
    w.clock.advance(MINUTE - 1);
    expect(await w.status('GET', created.token)).toBe(200);
    w.clock.advance(1);
    expect(await w.status('GET', created.token)).toBe(200);
    await vi.waitFor(async () => expect(await lastUsed()).toBe(t0 + MINUTE));

    // Another account cannot revoke it.
    expect(await w.server.revokePersonalToken(BOB.uuid, created.id)).toBe(false);
    expect(await w.status('GET', created.token)).toBe(200);
    expect(await w.server.revokePersonalToken(ADA.uuid, created.id)).toBe(true);
    expect(await w.status('GET', created.token)).toBe(401);
    expect(await w.server.listPersonalTokens(ADA.uuid)).toEqual([]);
    expect(w.events.map((e) => e.type)).toEqual(['personal_token.created', 'personal_token.revoked']);
    expect(w.errors).toEqual([]);
  });

  it('expiry then prune: 401 with used_after_expiry, listed until pruned, gone after, nothing comes back', async () => {
    const w = await world(await makeStorage());
    const expiring = await w.server.createPersonalToken({ account: ADA, name: 'short', expiresIn: 60 });
    const forever = await w.server.createPersonalToken({ account: ADA, name: 'forever' });
    const revokedOne = await w.server.createPersonalToken({ account: ADA, name: 'revoked' });
    await w.server.revokePersonalToken(ADA.uuid, revokedOne.id);
    w.clock.advance(60_000);
    expect(await w.status('GET', expiring.token)).toBe(401);
    expect(w.events.filter((e) => e.type === 'personal_token.used_after_expiry')).toEqual([
      {
        type: 'personal_token.used_after_expiry',
        accountUuid: ADA.uuid,
        tokenId: expiring.id,
        expiresAt: expiring.expiresAt,
        at: w.clock.now(),
      },
    ]);
    expect((await w.server.listPersonalTokens(ADA.uuid)).map((p) => p.name).sort()).toEqual(['forever', 'short']);
    const removed = await w.prune(w.clock.now());
    // Both grants go (PostgreSQL deletes a revoked grant's token with it, by cascade: not counted as a token).
    expect(removed.grants).toBe(2);
    expect((await w.server.listPersonalTokens(ADA.uuid)).map((p) => p.name)).toEqual(['forever']);
    expect(await w.status('GET', expiring.token)).toBe(401);
    expect(await w.status('GET', revokedOne.token)).toBe(401);
    expect(await w.server.revokePersonalToken(ADA.uuid, expiring.id)).toBe(false);
    w.clock.advance(400 * 86_400_000);
    await w.prune(w.clock.now());
    expect(await w.status('GET', forever.token)).toBe(200);
  });

  it('revocation racing uses, and the revocation endpoint racing the owner: revoked for good, one event per revocation that happened', async () => {
    const w = await world(await makeStorage());
    const created = await w.server.createPersonalToken({ account: ADA, name: 'raced' });
    const uses = Array.from({ length: 20 }, () => w.status('GET', created.token));
    const outcomes = await Promise.all([
      ...uses.slice(0, 10),
      w.server.revokePersonalToken(ADA.uuid, created.id),
      w.server.revoke({
        method: 'POST',
        url: '/v1/oauth/revoke',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${created.token}`,
      }),
      ...uses.slice(10),
    ]);
    for (const status of [...outcomes.slice(0, 10), ...outcomes.slice(12)]) expect([200, 401]).toContain(status);
    expect(await w.status('GET', created.token)).toBe(401);
    expect(await w.server.listPersonalTokens(ADA.uuid)).toEqual([]);
    const revoked = w.events.filter((e) => e.type === 'personal_token.revoked');
    expect(revoked.length).toBeGreaterThanOrEqual(1);
    expect(revoked.length).toBeLessThanOrEqual(2);
    expect(w.errors).toEqual([]);
  });
});

describe.skipIf(!pool)('personal access tokens on one database shared by two server instances', () => {
  it('created on one, used on both (each writes the last use at most once a minute, the latest kept), revoked on one: refused by both', async () => {
    const schema = schemaName('personal_two');
    schemas.push(schema);
    const storage = new PostgresStorage(pool!, { schema });
    await storage.migrate();
    const clock = new FakeClock();
    const make = () =>
      new AuthorizationServer({ storage: new PostgresStorage(pool!, { schema }), sessions: new FakeSessions(clock), clock });
    const [a, b] = [make(), make()];
    const touch = vi.spyOn(PostgresStorage.prototype, 'touchPersonalToken');
    const use = async (server: AuthorizationServer, token: string) =>
      (await server.authenticate({ method: 'GET', url: '/', headers: { authorization: `Bearer ${token}` } })).ok;
    try {
      const created = await a.createPersonalToken({ account: ADA, name: 'shared' });
      const t0 = clock.now();
      expect(await use(a, created.token)).toBe(true);
      clock.advance(10_000);
      expect(await use(b, created.token)).toBe(true);
      expect(await use(a, created.token)).toBe(true);
      expect(await use(b, created.token)).toBe(true);
      await vi.waitFor(() => expect(touch.mock.calls).toHaveLength(2)); // one per instance
      await vi.waitFor(async () => expect((await b.listPersonalTokens(ADA.uuid))[0]?.lastUsedAt).toBe(t0 + 10_000));
      expect(await b.revokePersonalToken(ADA.uuid, created.id)).toBe(true);
      expect(await use(a, created.token)).toBe(false);
      expect(await use(b, created.token)).toBe(false);
      expect(await a.listPersonalTokens(ADA.uuid)).toEqual([]);
    } finally {
      touch.mockRestore();
    }
  });
});

describe.skipIf(!pool)('migration 5 on PostgreSQL', () => {
  const T = 1_700_000_000_000;

  /** A database at schema version 4, as authgate before personal tokens left it. */
  async function atVersion4(schema: string, prefix: string) {
    const t = tableNames(schema, prefix);
    await pool!.query(`CREATE SCHEMA ${quote(schema)}`);
    await pool!.query(`CREATE TABLE ${t.migrations} (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`);
    for (const m of MIGRATIONS.filter((m) => m.version <= 4)) {
      for (const statement of m.up(t, (name) => quote(prefix + name), routineNames(schema, prefix))) await pool!.query(statement);
      await pool!.query(`INSERT INTO ${t.migrations} VALUES ($1, $2, $3)`, [m.version, m.name, T]);
    }
    return t;
  }

  it.each([
    ['the default prefix', 'authgate_'],
    ['no prefix', ''],
    ['a long prefix', 'tenant_with_a_long_prefix_30_'],
  ])(
    'upgrades a version-4 database (%s): old rows read back as before, the token kind check now takes personal and still refuses others',
    async (_name, prefix) => {
      const schema = schemaName('v4');
      schemas.push(schema);
      const t = await atVersion4(schema, prefix);
      await pool!.query(
        `INSERT INTO ${t.grants} (id, client_id, account_uuid, account, scope, created_at) VALUES ('g', 'c', $1, $2, ARRAY['read'], $3)`,
        [ADA.uuid, JSON.stringify(ADA), T],
      );
      await pool!.query(
        `INSERT INTO ${t.tokens} (hash, kind, grant_id, client_id, scope, issued_at) VALUES ('h', 'access', 'g', 'c', ARRAY['read'], $1)`,
        [T],
      );
      await expect(
        pool!.query(
          `INSERT INTO ${t.tokens} (hash, kind, grant_id, client_id, scope, issued_at) VALUES ('p0', 'personal', 'g', '', ARRAY['read'], $1)`,
          [T],
        ),
      ).rejects.toThrow(/check/);

      const storage = new PostgresStorage(pool!, { schema, tablePrefix: prefix });
      expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(5);
      expect(await storage.migrate()).toEqual({ from: 4, to: SCHEMA_VERSION });
      const old = await storage.findToken('h');
      expect(old?.grant).toEqual({ id: 'g', kind: 'oauth', clientId: 'c', account: ADA, scope: ['read'], createdAt: T, revokedAt: null });
      expect(old?.token.kind).toBe('access');
      await expect(
        pool!.query(
          `INSERT INTO ${t.tokens} (hash, kind, grant_id, client_id, scope, issued_at) VALUES ('x', 'bogus', 'g', 'c', ARRAY['read'], $1)`,
          [T],
        ),
      ).rejects.toThrow(/check/);

      const clock = new FakeClock();
      const server = new AuthorizationServer({ storage, sessions: new FakeSessions(clock), clock });
      const created = await server.createPersonalToken({ account: ADA, name: 'after upgrade' });
      const used = await server.authenticate({ method: 'GET', url: '/', headers: { authorization: `Bearer ${created.token}` } });
      expect(used.ok && used.token.personalToken).toEqual({ id: created.id, name: 'after upgrade' });
      expect(await storage.migrate()).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
    },
  );
});
