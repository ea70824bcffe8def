/**
 * PostgresStorage on a real PostgreSQL server: the storage conformance kit, then what is
 * PostgreSQL's own: migrations (idempotent, concurrent, versioned), prune, options, error mapping,
 * and no values in SQL text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlOf } from './fixtures/statements.js';
import {
  PostgresStorage,
  PostgresStorageError,
  SCHEMA_VERSION,
  openPostgresStorage,
  type PgPool,
  type PgPoolClient,
} from '../../src/postgres/index.js';
import { CLIENT_COLUMNS } from '../../src/postgres/clients.js';
import { CODE_COLUMNS } from '../../src/postgres/codes.js';
import { CONSENT_COLUMNS } from '../../src/postgres/consents.js';
import { DEVICE_COLUMNS } from '../../src/postgres/devices.js';
import { INTERACTION_COLUMNS } from '../../src/postgres/interactions.js';
import { MIGRATIONS } from '../../src/postgres/schema.js';
import { TOKEN_READ_COLUMNS } from '../../src/postgres/tokens.js';
import pg from 'pg';
import { makePair, T0, withPair } from '../../src/testing/conformance/fixtures.js';
import { describeStorageConformance, runStorageConformance } from '../../src/testing/index.js';
import { MAX_REFRESH_WINDOW_SECONDS, type OAuthGrantRecord, type OAuthTokenRecord } from '../../src/index.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from './pg.js';

const pool = makePool(25);
const schema = schemaName('conformance');
const created: string[] = [schema];
let storage: PostgresStorage;

describe.skipIf(!DATABASE_URL)('PostgresStorage', () => {
  beforeAll(async () => {
    storage = new PostgresStorage(pool, { schema });
    await storage.migrate();
  });

  afterAll(async () => {
    for (const name of created) await dropSchema(pool, name);
    await pool.end();
  });

  // 25 connections: the concurrent cases race on separate connections, as several servers would.
  describeStorageConformance('PostgresStorage', () => storage, { describe, it });

  const T = 1_700_000_000_000;
  const grant = (over: Partial<Omit<OAuthGrantRecord, 'kind'>> = {}): OAuthGrantRecord => ({
    id: `g${Math.random().toString(36).slice(2)}`,
    kind: 'oauth',
    clientId: 'client',
    account: { uuid: 'acct', name: 'A', email: 'a@example.com' },
    scope: ['read'],
    createdAt: T,
    revokedAt: null,
    ...over,
  });
  const token = (g: OAuthGrantRecord, over: Partial<OAuthTokenRecord> = {}): OAuthTokenRecord => ({
    hash: `t${Math.random().toString(36).slice(2)}`,
    kind: 'access',
    grantId: g.id,
    clientId: g.clientId,
    scope: ['read'],
    issuedAt: T,
    expiresAt: T + 1000,
    pairHash: null,
    rotatedAt: null,
    revokedAt: null,
    ...over,
  });

  describe('migrate()', () => {
    it('creates every table and index in its schema, records the version, and is idempotent', async () => {
      const s = schemaName('migrate');
      created.push(s);
      const fresh = new PostgresStorage(pool, { schema: s });
      expect(await fresh.migrate()).toEqual({ from: 0, to: SCHEMA_VERSION });
      expect(await fresh.migrate()).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
      const tables = await pool.query('SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1', [s]);
      expect(tables.rows.map((r) => r.tablename)).toEqual([
        'authgate_clients',
        'authgate_codes',
        'authgate_consents',
        'authgate_device_authorizations',
        'authgate_dpop_proofs',
        'authgate_grants',
        'authgate_interactions',
        'authgate_migrations',
        'authgate_tokens',
      ]);
      const versions = await pool.query(`SELECT version, name, applied_at FROM "${s}".authgate_migrations`);
      expect(versions.rows).toHaveLength(MIGRATIONS.length);
      expect(typeof versions.rows[0].name).toBe('string');
      // An index for every lookup: by hash / id (primary keys) and by grant, pair, client, expiry.
      const indexes = await pool.query('SELECT indexdef FROM pg_indexes WHERE schemaname = $1', [s]);
      const defs = indexes.rows.map((r) => String(r.indexdef)).join('\n');
      for (const wanted of [
        /authgate_grants USING btree \(account_uuid, client_id\)/,
        /authgate_grants USING btree \(client_id\)/,
        /authgate_codes USING btree \(grant_id\)/,
        /authgate_tokens USING btree \(grant_id\)/,
        /authgate_codes USING btree \(expires_at\)/,
        /authgate_tokens USING btree \(expires_at\)/,
        /authgate_interactions USING btree \(expires_at\)/,
        /authgate_consents_pkey .* \(account_uuid, client_id\)/,
        /authgate_tokens_pkey .* \(hash\)/,
        /authgate_codes_pkey .* \(hash\)/,
        /authgate_clients USING btree \(owner\) WHERE \(owner IS NOT NULL\)/,
        /authgate_dpop_proofs_pkey .* \(key\)/,
        /authgate_dpop_proofs USING btree \(expires_at\)/,
      ])
        expect(defs).toMatch(wanted);
    });

    it('is safe when several instances start at once: one migrates, the others find nothing to do', async () => {
      const s = schemaName('race');
      created.push(s);
      const results = await Promise.all(Array.from({ length: 6 }, () => new PostgresStorage(pool, { schema: s }).migrate()));
      expect(results.filter((r) => r.from === 0)).toHaveLength(1);
      expect(results.every((r) => r.to === SCHEMA_VERSION)).toBe(true);
      const versions = await pool.query(`SELECT count(*)::int AS n FROM "${s}".authgate_migrations`);
      expect(versions.rows[0].n).toBe(MIGRATIONS.length);
    });

    it('leaves a database already at a newer version alone (a newer authgate rolled out first)', async () => {
      const s = schemaName('newer');
      created.push(s);
      const fresh = new PostgresStorage(pool, { schema: s });
      await fresh.migrate();
      await pool.query(`INSERT INTO "${s}".authgate_migrations (version, name, applied_at) VALUES ($1, 'from the future', 0)`, [
        SCHEMA_VERSION + 1,
      ]);
      expect(await fresh.migrate()).toEqual({ from: SCHEMA_VERSION + 1, to: SCHEMA_VERSION + 1 });
    });

    it('a client row with only the columns of migration 1 (response_types, grant_types NULL) reads back without types', async () => {
      const s = schemaName('legacy_client');
      created.push(s);
      const store = new PostgresStorage(pool, { schema: s });
      await store.migrate();
      await pool.query(
        `INSERT INTO "${s}".authgate_clients (id, name, redirect_uri, secret_hash, created_at) VALUES ('old', 'Old', 'https://old.example/cb', NULL, $1)`,
        [T],
      );
      const found = await store.findClient('old');
      expect(found).toEqual({ id: 'old', name: 'Old', redirectUri: 'https://old.example/cb', secretHash: null, createdAt: T });
      expect(found).not.toHaveProperty('responseTypes');
      expect(found).not.toHaveProperty('grantTypes');
      // And a value outside the known types is refused by the table itself.
      await expect(pool.query(`UPDATE "${s}".authgate_clients SET response_types = ARRAY['id_token'] WHERE id = 'old'`)).rejects.toThrow();
    });

    it('keeps two table prefixes in one schema apart', async () => {
      const s = schemaName('prefix');
      created.push(s);
      const a = new PostgresStorage(pool, { schema: s, tablePrefix: 'tenant_a_' });
      const b = new PostgresStorage(pool, { schema: s, tablePrefix: 'tenant_b_' });
      await Promise.all([a.migrate(), b.migrate()]);
      await a.saveClient({ id: 'c', name: 'A', redirectUri: 'https://a.example/cb', secretHash: null, createdAt: T });
      expect(await b.findClient('c')).toBeNull();
      expect(await a.findClient('c')).toMatchObject({ name: 'A' });
    });

    it('refuses a schema or prefix that is not a plain identifier, and an object that is not a pool', () => {
      for (const bad of ['Public', 'a-b', 'x"; DROP TABLE y; --', '', '1abc', 'a'.repeat(64)]) {
        expect(() => new PostgresStorage(pool, { schema: bad }), bad).toThrow(TypeError);
      }
      for (const bad of ['A_', 'a b', 'x";--', 'a'.repeat(31)]) {
        expect(() => new PostgresStorage(pool, { tablePrefix: bad }), bad).toThrow(TypeError);
      }
      expect(() => new PostgresStorage(pool, { tablePrefix: '' })).not.toThrow();
      expect(() => new PostgresStorage({} as PgPool)).toThrow(/pg\.Pool/);
    });
  });

  describe('prune()', () => {
    it("deletes expired interactions, codes and tokens, revoked and empty grants, rotated refresh tokens at once; keeps used codes until they expire and a family's newest refresh token", async () => {
      const s = schemaName('prune');
      created.push(s);
      const st = new PostgresStorage(pool, { schema: s });
      await st.migrate();

      await st.saveInteraction({
        idHash: 'i-old',
        kind: 'login',
        purpose: 'authorization',
        request: { clientId: 'c', redirectUri: 'x', responseType: 'code', scope: ['read'], prompt: [] },
        requestedAt: T,
        expiresAt: T + 10,
        loginAfter: null,
      });
      await st.saveInteraction({
        idHash: 'i-new',
        kind: 'login',
        purpose: 'authorization',
        request: { clientId: 'c', redirectUri: 'x', responseType: 'code', scope: ['read'], prompt: [] },
        requestedAt: T,
        expiresAt: T + 1000,
        loginAfter: null,
      });

      // A used code, still within its lifetime: kept (replay detection), then pruned at expiry.
      const g1 = grant();
      await st.createGrant(g1, {
        code: {
          hash: 'code-used',
          grantId: g1.id,
          clientId: 'client',
          redirectUri: 'x',
          scope: ['read'],
          codeChallenge: null,
          codeChallengeMethod: null,
          expiresAt: T + 600,
          usedAt: null,
        },
      });
      const access = token(g1, { hash: 'a1', expiresAt: T + 100 });
      const refresh = token(g1, { hash: 'r1', kind: 'refresh', expiresAt: null, pairHash: 'a1', familyHash: 'f1' });
      expect((await st.redeemCode('code-used', T + 1, [access, refresh])).ok).toBe(true);
      const next = [
        token(g1, { hash: 'a2', expiresAt: T + 5000 }),
        token(g1, { hash: 'r2', kind: 'refresh', expiresAt: null, pairHash: 'a2', familyHash: 'f1' }),
      ];
      expect((await st.rotateRefreshToken('r1', T + 2, next)).ok).toBe(true);

      // An unused code that expires: its grant has nothing left afterwards.
      const g2 = grant();
      await st.createGrant(g2, {
        code: {
          hash: 'code-stale',
          grantId: g2.id,
          clientId: 'client',
          redirectUri: 'x',
          scope: ['read'],
          codeChallenge: null,
          codeChallengeMethod: null,
          expiresAt: T + 600,
          usedAt: null,
        },
      });
      // A revoked grant with live-looking tokens: all dead already.
      const g3 = grant();
      await st.createGrant(g3, { tokens: [token(g3, { hash: 'a3', expiresAt: T + 100_000 })] });
      await st.revokeGrant(g3.id, T + 3);
      await st.saveConsent({
        accountUuid: 'acct',
        clientId: 'client',
        scope: ['read'],
        approvals: [{ resource: null, scope: ['read'] }],
        grantedAt: T,
      });

      // The access token a1 its rotation revoked goes at once; the rotated r1 stays while it may be
      // retried (no child rotated, MAX_REFRESH_WINDOW_SECONDS after its rotation); r2 answers for the family.
      expect(await st.prune(T + 50)).toEqual({ interactions: 1, codes: 0, tokens: 1, grants: 1, devices: 0 });
      expect(await st.findToken('r1')).not.toBeNull();
      expect(await st.findToken('a1')).toBeNull();
      expect(await st.findToken('a3')).toBeNull(); // its grant was revoked
      expect(await st.findRefreshFamily('f1')).toEqual({ grantId: g1.id, clientId: 'client' });
      expect(await st.findInteraction('i-old')).toBeNull();
      expect(await st.findInteraction('i-new')).not.toBeNull();
      expect(await st.prune(T + 500)).toEqual({ interactions: 0, codes: 0, tokens: 0, grants: 0, devices: 0 });
      // The used code is still there: a replay is still a replay.
      expect(await st.redeemCode('code-used', T + 500, [])).toEqual({ ok: false, reason: 'used', grantId: g1.id, usedAt: T + 1 });

      expect(await st.prune(T + 600)).toEqual({ interactions: 0, codes: 2, tokens: 0, grants: 1, devices: 0 });
      expect(await st.findCode('code-used')).toBeNull();
      expect(await st.findCode('code-stale')).toBeNull();
      // g1 still has its refresh tokens (no lifetime): kept, and r2 still works.
      expect((await st.findToken('r2'))?.grant.id).toBe(g1.id);
      expect((await st.rotateRefreshToken('r2', T + 700, [])).ok).toBe(true);
      await st.prune(T + 2 + MAX_REFRESH_WINDOW_SECONDS * 1000 + 1);
      expect(await st.findToken('r1')).toBeNull(); // its window is over
      expect(await st.findConsent('acct', 'client')).not.toBeNull(); // consents are never pruned
      const left = await pool.query(`SELECT id FROM "${s}".authgate_grants ORDER BY id`);
      expect(left.rows.map((r) => r.id)).toEqual([g1.id]);
    });

    it('deletes device authorizations (RFC 8628) once expired, whatever their status, and frees their user codes', async () => {
      const s = schemaName('prune_devices');
      created.push(s);
      const st = new PostgresStorage(pool, { schema: s });
      await st.migrate();
      const device = (hash: string, expiresAt: number) => ({
        hash,
        userCodeHash: `u-${hash}`,
        clientId: 'client',
        scope: ['read'],
        createdAt: T,
        expiresAt,
        interval: 5,
        lastPolledAt: null,
        status: 'pending' as const,
        account: null,
        decidedAt: null,
      });
      await st.createDeviceAuthorization(device('d-short', T + 100));
      await st.createDeviceAuthorization(device('d-long', T + 1000));
      await st.decideDeviceAuthorization('d-short', T + 1, null);
      expect(await st.prune(T + 99)).toMatchObject({ devices: 0 });
      expect(await st.prune(T + 100)).toMatchObject({ devices: 1 });
      expect(await st.findDeviceAuthorization('u-d-short')).toBeNull();
      expect((await st.findDeviceAuthorization('u-d-long'))?.hash).toBe('d-long');
      expect(await st.pollDeviceAuthorization('d-short', 'client', T + 101, 0)).toEqual({ status: 'missing' });
    });
  });

  describe('database errors', () => {
    it('a duplicate key is a PostgresStorageError naming the operation, never a value; the transaction left nothing behind', async () => {
      const g = grant();
      const t = token(g);
      await storage.createGrant(g, { tokens: [t] });
      const other = grant();
      const error = await storage.createGrant(other, { tokens: [token(other, { hash: t.hash })] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PostgresStorageError);
      expect(error).toMatchObject({ kind: 'duplicate', operation: 'createGrant', sqlState: '23505' });
      expect((error as Error).message).not.toContain(t.hash);
      // The grant inserted before the failing token insert was rolled back with it.
      const found = await pool.query(`SELECT 1 FROM "${schema}".authgate_grants WHERE id = $1`, [other.id]);
      expect(found.rowCount).toBe(0);
    });

    it('a serialization failure or deadlock is retried once, then reported as kind "serialization"', async () => {
      // A pool whose connections fail the single-use UPDATE with SQLSTATE 40001 the first `failures` times.
      function flaky(failures: number): { pool: PgPool; attempts: () => number } {
        let attempts = 0;
        const wrapped: PgPool = {
          query: (text, values) => pool.query(text, values as unknown[]),
          connect: async () => {
            const client = await pool.connect();
            const proxy: PgPoolClient = {
              query: async (text, values) => {
                if (/\bUPDATE \S*authgate_codes\b/.test(sqlOf(text)) && attempts++ < failures) {
                  throw Object.assign(new Error('could not serialize access due to concurrent update'), { code: '40001' });
                }
                return client.query(text, values as unknown[]);
              },
              release: (destroy) => client.release(destroy),
            };
            return proxy;
          },
        };
        return { pool: wrapped, attempts: () => attempts };
      }
      const g = grant();
      await storage.createGrant(g, {
        code: {
          hash: `c${g.id}`,
          grantId: g.id,
          clientId: 'client',
          redirectUri: 'x',
          scope: ['read'],
          codeChallenge: null,
          codeChallengeMethod: null,
          expiresAt: T + 600,
          usedAt: null,
        },
      });
      const once = flaky(1);
      expect((await new PostgresStorage(once.pool, { schema }).redeemCode(`c${g.id}`, T, [])).ok).toBe(true);
      expect(once.attempts()).toBe(2);

      const g2 = grant();
      await storage.createGrant(g2, {
        code: {
          hash: `c${g2.id}`,
          grantId: g2.id,
          clientId: 'client',
          redirectUri: 'x',
          scope: ['read'],
          codeChallenge: null,
          codeChallengeMethod: null,
          expiresAt: T + 600,
          usedAt: null,
        },
      });
      const always = flaky(2);
      const error = await new PostgresStorage(always.pool, { schema }).redeemCode(`c${g2.id}`, T, []).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'PostgresStorageError', kind: 'serialization', sqlState: '40001', operation: 'redeemCode' });
      expect((await storage.findCode(`c${g2.id}`))?.usedAt).toBeNull();
    });

    it('a missing table says to run migrate()', async () => {
      const error = await new PostgresStorage(pool, { schema: schemaName('missing') }).findClient('x').catch((e: unknown) => e);
      expect(error).toMatchObject({ kind: 'database', sqlState: '42P01' });
      expect((error as Error).message).toMatch(/migrate\(\)/);
    });

    it('a schema older than this version (the rotation function of migration 14 missing) says to run migrate()', async () => {
      const older = schemaName('older');
      const store = new PostgresStorage(pool, { schema: older });
      try {
        await store.migrate();
        await pool.query(`DROP FUNCTION "${older}".authgate_rotate_refresh_token(text, bigint)`);
        const error = await store.rotateRefreshToken('r', T, []).catch((e: unknown) => e);
        expect(error).toMatchObject({ kind: 'database', sqlState: '42883', operation: 'rotateRefreshToken' });
        expect((error as Error).message).toMatch(/function is missing.*migrate\(\)/);
      } finally {
        await pool.query(`DROP SCHEMA IF EXISTS "${older}" CASCADE`);
      }
    });
  });

  it('the kit catches a check-then-write redeemCode on real connections (the race case is not vacuous on PostgreSQL)', async () => {
    /** SELECT, then an unconditional UPDATE in another statement: two racers can both see the code unused. */
    class CheckThenWrite extends PostgresStorage {
      override async redeemCode(hash: string, now: number, tokens: OAuthTokenRecord[]) {
        const code = await this.findCode(hash);
        if (!code) return { ok: false as const, reason: 'missing' as const };
        if (code.usedAt !== null) return { ok: false as const, reason: 'used' as const, grantId: code.grantId, usedAt: code.usedAt };
        if (now >= code.expiresAt) return { ok: false as const, reason: 'expired' as const };
        await pool.query(`UPDATE "${schema}".authgate_codes SET used_at = $2 WHERE hash = $1`, [hash, now]);
        for (const t of tokens) {
          await pool.query(
            `INSERT INTO "${schema}".authgate_tokens (hash, kind, grant_id, client_id, scope, issued_at, expires_at, pair_hash)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
            [t.hash, t.kind, t.grantId, t.clientId, t.scope, t.issuedAt, t.expiresAt, t.pairHash],
          );
        }
        const { rows } = await pool.query(`SELECT * FROM "${schema}".authgate_grants WHERE id = $1`, [code.grantId]);
        const g = rows[0];
        return {
          ok: true as const,
          grant: {
            id: g.id,
            kind: 'oauth' as const,
            clientId: g.client_id,
            account: g.account,
            scope: g.scope,
            createdAt: Number(g.created_at),
            revokedAt: null,
          },
        };
      }
    }
    const broken = new CheckThenWrite(pool, { schema });
    const [result] = await runStorageConformance(() => broken, { only: ['redeemCode: exactly one of'] });
    expect(result?.ok).toBe(false);
    expect(String((result?.error as Error | undefined)?.message)).toMatch(
      /\d+ of 20 concurrent redemptions succeeded \(expected exactly 1\)/,
    );
  });

  it('sends every value as a parameter: no id, hash or time ever appears in the SQL text', async () => {
    const texts: string[] = [];
    const recording: PgPool = {
      query: (text, values) => {
        texts.push(sqlOf(text));
        return pool.query(text, values as unknown[]);
      },
      connect: async () => {
        const client = await pool.connect();
        return {
          query: (text, values) => {
            texts.push(sqlOf(text));
            return client.query(text, values as unknown[]);
          },
          release: (d) => client.release(d),
        };
      },
    };
    const st = new PostgresStorage(recording, { schema });
    const g = grant({ id: 'grant-marker-1' });
    await st.saveClient({
      id: 'client-marker-1',
      name: "O'Brien",
      redirectUri: 'https://x.example/cb',
      secretHash: 'secret-hash-marker',
      createdAt: 1_234_567_890_123,
    });
    await st.findClient('client-marker-1');
    await st.saveClient({
      id: 'client-marker-2',
      name: 'Owned',
      redirectUri: 'https://x.example/cb',
      secretHash: null,
      createdAt: 1_234_567_890_123,
      owner: 'owner-marker',
      metadata: { note: 'metadata-marker' },
    });
    await st.listClients({ owner: 'owner-marker' });
    await st.listClients({});
    await st.deleteClient('client-marker-2', 1_234_567_890_127);
    await st.createGrant(g, {
      code: {
        hash: 'code-marker-1',
        grantId: g.id,
        clientId: 'client',
        redirectUri: 'x',
        scope: ['read'],
        codeChallenge: null,
        codeChallengeMethod: null,
        expiresAt: 9_876_543_210_987,
        usedAt: null,
      },
    });
    await st.redeemCode('code-marker-1', 1_234_567_890_124, [token(g, { hash: 'token-marker-1' })]);
    await st.redeemCode('code-marker-1', 1_234_567_890_125, []);
    await st.rotateRefreshToken('token-marker-1', 1_234_567_890_126, []);
    await st.saveConsent({
      accountUuid: 'acct-marker',
      clientId: 'client-marker-1',
      scope: ['read'],
      approvals: [{ resource: null, scope: ['read'] }],
      grantedAt: 1,
    });
    await st.revokeAccess('acct-marker', 'client-marker-1', 2);
    await st.revokeClientGrants('client-marker-1', 3);
    await st.revokeGrant('grant-marker-1', 4);
    await st.revokeAccountGrants('acct-marker', 1_234_567_890_128);
    await st.prune(5);
    expect(texts.length).toBeGreaterThan(10);
    for (const text of texts) expect(text).not.toMatch(/marker|O'Brien|1234567890|9876543210/);
  });

  // Named prepared statements (preparedStatements, on by default): each connection parses and plans
  // a statement once. An instance of this version keeps running its prepared statements while a
  // newer one migrates the database (a rolling upgrade); a statement whose result is a table's
  // whole row (`SELECT *`) then fails with "cached plan must not change result type".
  describe('prepared statements', () => {
    // The store's named statements on each of the pool's `size` connections, summed (all of them
    // checked out at once: which one a single query lands on is the pool's choice).
    const prepared = async (on: pg.Pool, size = 1) => {
      const clients = await Promise.all(Array.from({ length: size }, () => on.connect()));
      try {
        const counts = await Promise.all(
          clients.map((c) => c.query(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'authgate\\_%'`)),
        );
        return counts.reduce((sum, r) => sum + (r.rows[0].n as number), 0);
      } finally {
        for (const c of clients) c.release();
      }
    };

    it('a newer version adding a column to every table meanwhile breaks none of the statements this version prepared', async () => {
      const s = schemaName('prepared');
      created.push(s);
      // Two connections that are never closed while idle: what the first run prepared, the second meets.
      const mine = new pg.Pool({ connectionString: DATABASE_URL, max: 2, idleTimeoutMillis: 0 });
      mine.on('error', () => {});
      try {
        // Twenty concurrent takes share two connections here: no time bound to trip on a loaded machine.
        const store = new PostgresStorage(mine, { schema: s, acquireTimeoutMs: false, queryTimeoutMs: false });
        await store.migrate();
        const failed = (results: Awaited<ReturnType<typeof runStorageConformance>>) =>
          results.filter((r) => !r.ok).map((r) => `${r.name}: ${String(r.error)}`);
        expect(failed(await runStorageConformance(() => store))).toEqual([]);
        expect(await prepared(mine, 2)).toBeGreaterThan(30);
        const tables = await mine.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [s]);
        expect(tables.rows.length).toBeGreaterThan(8);
        for (const { table_name } of tables.rows) {
          await mine.query(`ALTER TABLE "${s}"."${table_name}" ADD COLUMN added_by_a_newer_version text DEFAULT 'new'`);
        }
        expect(failed(await runStorageConformance(() => store))).toEqual([]);
      } finally {
        await mine.end();
      }
    });

    it('every column list the statements name is the whole of its migrated table (no `SELECT *` to fall back on)', async () => {
      const columns = await pool.query(
        `SELECT table_name, array_agg(column_name::text ORDER BY column_name) AS names
        FROM information_schema.columns WHERE table_schema = $1 GROUP BY table_name`,
        [schema],
      );
      const of = (table: string) => columns.rows.find((r) => r.table_name === `authgate_${table}`)?.names;
      const sorted = (list: string) => list.split(', ').sort();
      expect(sorted(CLIENT_COLUMNS)).toEqual(of('clients'));
      expect(sorted(CODE_COLUMNS)).toEqual(of('codes'));
      expect(sorted(CONSENT_COLUMNS)).toEqual(of('consents'));
      expect(sorted(DEVICE_COLUMNS)).toEqual(of('device_authorizations'));
      expect(sorted(INTERACTION_COLUMNS)).toEqual(of('interactions'));
      expect(sorted(TOKEN_READ_COLUMNS)).toEqual(of('tokens'));
    });

    it('a column whose type a newer version changes meanwhile: the statement runs again unnamed on a fresh connection, nothing fails', async () => {
      const s = schemaName('retyped');
      created.push(s);
      const mine = new pg.Pool({ connectionString: DATABASE_URL, max: 1, idleTimeoutMillis: 0 });
      mine.on('error', () => {});
      const backend = async () => (await mine.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      try {
        const store = new PostgresStorage(mine, { schema: s });
        await store.migrate();
        // One statement (findClient), prepared on the pool's one connection, then its column retyped.
        await store.saveClient({ id: 'c1', name: 'n', redirectUri: 'https://x.example/cb', secretHash: null, createdAt: T });
        for (let i = 0; i < 2; i++) expect(await store.findClient('c1')).toMatchObject({ id: 'c1', name: 'n' });
        const before = await backend();
        await mine.query(`ALTER TABLE "${s}".authgate_clients ALTER COLUMN name TYPE varchar(300)`);
        expect(await store.findClient('c1')).toMatchObject({ id: 'c1', name: 'n' });
        expect(await backend()).not.toBe(before); // the connection with the stale statements was closed
        expect(await store.findClient('c1')).toMatchObject({ id: 'c1', name: 'n' });
        // A transaction (retryRefreshToken: its SELECT returns the grant's columns), likewise.
        const { grant, refresh } = await withPair(store);
        const pair = (at: number) => makePair(grant, at, { parentHash: refresh.hash });
        expect((await store.rotateRefreshToken(refresh.hash, T0 + 10, pair(T0 + 10))).ok).toBe(true);
        expect((await store.retryRefreshToken(refresh.hash, T0 + 20, 60_000, pair(T0 + 20))).ok).toBe(true);
        const again = await backend();
        await mine.query(`ALTER TABLE "${s}".authgate_grants ALTER COLUMN name TYPE varchar(300)`);
        const retried = await store.retryRefreshToken(refresh.hash, T0 + 30, 60_000, pair(T0 + 30));
        expect(retried).toMatchObject({ ok: true, grant: { id: grant.id } });
        expect(await backend()).not.toBe(again);
      } finally {
        await mine.end();
      }
    });

    it('a column retyped under a running instance, on a server whose messages are not in English: the statement still runs again', async () => {
      const s = schemaName('retypedde');
      created.push(s);
      const mine = new pg.Pool({ connectionString: DATABASE_URL, max: 1, idleTimeoutMillis: 0 });
      mine.on('error', () => {});
      // What PostgreSQL 15 sends with lc_messages = 'de_DE.UTF-8' (seen on such a server, by review):
      // the same SQLSTATE and routine, the message in German. Every other error goes through unchanged.
      const german = (error: unknown): unknown => {
        const e = error as { code?: string; routine?: string; message: string };
        if (e?.code === '0A000' && e.routine === 'RevalidateCachedQuery') e.message = 'gecachter Plan darf den Ergebnistyp nicht ändern';
        return error;
      };
      const translating: PgPool = {
        query: (text, values) => mine.query(text, values),
        connect: async () => {
          const c = await mine.connect();
          const wrapped: PgPoolClient = {
            query: (statement, values) =>
              (c.query as (a: unknown, b?: unknown[]) => Promise<pg.QueryResult>)(statement, values).catch((error: unknown) => {
                throw german(error);
              }),
            release: (destroy) => c.release(destroy),
            on: (event, listener) => c.on(event, listener),
            off: (event, listener) => c.off(event, listener),
          };
          return wrapped;
        },
      };
      try {
        const store = new PostgresStorage(translating, { schema: s });
        await store.migrate();
        await store.saveClient({ id: 'c1', name: 'n', redirectUri: 'https://x.example/cb', secretHash: null, createdAt: T });
        for (let i = 0; i < 2; i++) expect(await store.findClient('c1')).toMatchObject({ id: 'c1' });
        await mine.query(`ALTER TABLE "${s}".authgate_clients ALTER COLUMN name TYPE varchar(300)`);
        expect(await store.findClient('c1')).toMatchObject({ id: 'c1', name: 'n' });
        expect(await store.findClient('c1')).toMatchObject({ id: 'c1', name: 'n' });
      } finally {
        await mine.end();
      }
    });

    it("a connection whose prepared statements were dropped behind the driver's back (DISCARD ALL) serves the store again", async () => {
      const s = schemaName('discarded');
      created.push(s);
      const mine = new pg.Pool({ connectionString: DATABASE_URL, max: 1, idleTimeoutMillis: 0 });
      mine.on('error', () => {});
      try {
        const store = new PostgresStorage(mine, { schema: s });
        await store.migrate();
        await store.saveClient({ id: 'c1', name: 'n', redirectUri: 'https://x.example/cb', secretHash: null, createdAt: T });
        expect(await store.findClient('c1')).toMatchObject({ id: 'c1' });
        // A session reset on the pool's one connection (a host's own code, or a pooler), which `pg` does not see.
        await mine.query('DISCARD ALL');
        const outcomes: string[] = [];
        for (let i = 0; i < 3; i++) {
          outcomes.push(
            await store.findClient('c1').then(
              (found) => (found ? 'found' : 'null'),
              (error: Error) => error.message,
            ),
          );
        }
        expect(outcomes).toEqual(['found', 'found', 'found']);
      } finally {
        await mine.end();
      }
    });

    it('behind a pooler that moves the store between server connections (its statements gone): unnamed from then on, nothing fails', async () => {
      const s = schemaName('pooler');
      created.push(s);
      const inner = new pg.Pool({ connectionString: DATABASE_URL, max: 2, idleTimeoutMillis: 0 });
      inner.on('error', () => {});
      // As PgBouncer in transaction mode: the next checkout may be another server connection, which
      // has none of the statements the driver prepared on this one (it still lists them as prepared).
      const forgetful: PgPool = {
        query: (text, values) => inner.query(text, values),
        async connect() {
          const client = await inner.connect();
          await client.query('DEALLOCATE ALL');
          return client;
        },
      };
      try {
        const store = new PostgresStorage(forgetful, { schema: s });
        await store.migrate();
        const results = await runStorageConformance(() => store, {
          only: ['clients:', 'grants:', 'refresh', 'redeemCode', 'retryRefreshToken'],
        });
        expect(results.length).toBeGreaterThan(10);
        expect(results.filter((r) => !r.ok).map((r) => `${r.name}: ${String(r.error)}`)).toEqual([]);
      } finally {
        await inner.end();
      }
    });

    it('preparedStatements: false sends every statement unnamed; anything else is refused', async () => {
      const s = schemaName('unprepared');
      created.push(s);
      const mine = new pg.Pool({ connectionString: DATABASE_URL, max: 1, idleTimeoutMillis: 0 });
      mine.on('error', () => {});
      try {
        const store = new PostgresStorage(mine, { schema: s, preparedStatements: false });
        await store.migrate();
        const results = await runStorageConformance(() => store, { only: ['grants:', 'refresh', 'redeemCode'] });
        expect(results.length).toBeGreaterThan(5);
        expect(results.filter((r) => !r.ok)).toEqual([]);
        expect(await prepared(mine)).toBe(0);
      } finally {
        await mine.end();
      }
      expect(() => new PostgresStorage(pool, { preparedStatements: 'yes' as unknown as boolean })).toThrow(
        'PostgresStorage option "preparedStatements" must be true or false',
      );
    });
  });

  it('openPostgresStorage(url) opens a pool, migrates, and closes', async () => {
    const s = schemaName('open');
    created.push(s);
    const { storage: opened, close } = await openPostgresStorage(DATABASE_URL!, { schema: s, max: 2 });
    await opened.saveClient({ id: 'c', name: 'n', redirectUri: 'https://x.example/cb', secretHash: null, createdAt: T });
    expect(await opened.findClient('c')).toMatchObject({ id: 'c', createdAt: T });
    await close();
  });
});
