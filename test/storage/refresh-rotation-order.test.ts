/**
 * PostgreSQL: a refresh token's rotation (one statement, the store's `rotate_refresh_token`
 * function) racing a retry of its parent, with the interleaving forced. The retry has locked the
 * parent's row and inserted a sibling pair, and not committed; the rotation of a child starts
 * and must wait for it, and then see that sibling and revoke it with its access token: once a
 * child is rotated, no other child of the parent may live (docs/reference.md, refresh retries).
 *
 * A rotation that did not wait for the parent's row would run while the sibling is uncommitted,
 * and not see it; one written as a single SQL statement that waits for the lock would keep the
 * snapshot it took before it waited, and not see it either. Either way the sibling would live on:
 * this test fails on both.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthGrantRecord, OAuthTokenRecord } from '../../src/index.js';
import { type PgPool, type PgPoolClient, PostgresStorage, SCHEMA_VERSION } from '../../src/postgres/index.js';
import { MIGRATIONS, quote, routineNames, tableNames } from '../../src/postgres/schema.js';
import { makePair, T0, withPair } from '../../src/testing/conformance/fixtures.js';
import { DATABASE_URL, dropSchema, schemaName } from './pg.js';

const T = 1_700_000_000_000;
const WINDOW = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const base = { clientId: 'app', scope: ['read'], rotatedAt: null, revokedAt: null };
const pair = (grantId: string, name: string, at: number, parentHash?: string): OAuthTokenRecord[] => [
  { ...base, grantId, hash: `a-${name}`, kind: 'access', issuedAt: at, expiresAt: at + 3_600_000, pairHash: null },
  {
    ...base,
    grantId,
    hash: `r-${name}`,
    kind: 'refresh',
    issuedAt: at,
    expiresAt: null,
    pairHash: `a-${name}`,
    ...(parentHash ? { parentHash } : {}),
  },
];

describe.skipIf(!DATABASE_URL)('PostgreSQL: a rotation of a child racing a retry of its parent (forced interleaving)', () => {
  const schema = schemaName('rotorder');
  const app = `ag_rotorder_${randomBytes(4).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4, application_name: app });
  const monitor = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
  pool.on('error', () => {});
  monitor.on('error', () => {});

  /** Set: the next COMMIT waits for `release` before it is sent. */
  let gate: { held: () => void; released: Promise<void> } | null = null;
  const gated: PgPool = {
    query: (text, values) => pool.query(text, values as unknown[]),
    async connect() {
      const client = await pool.connect();
      const wrapped: PgPoolClient = {
        query: async (text, values) => {
          if (text === 'COMMIT' && gate) {
            const g = gate;
            gate = null;
            g.held();
            await g.released;
          }
          return client.query(text, values as unknown[]);
        },
        release: (destroy) => client.release(destroy),
      };
      return wrapped;
    },
  };
  const storage = new PostgresStorage(gated, { schema });

  beforeAll(async () => {
    await storage.migrate();
  });
  afterAll(async () => {
    await dropSchema(monitor, schema);
    await pool.end();
    await monitor.end();
  });

  async function waitingOnLock(): Promise<boolean> {
    const { rows } = await monitor.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
      [app],
    );
    return rows[0].n > 0;
  }

  it('the retry commits while the rotation waits for the parent’s row: the rotation then revokes the retry’s sibling pair', async () => {
    await storage.saveClient({ id: 'app', name: 'App', redirectUri: 'https://app.example/cb', secretHash: null, createdAt: T });
    const grant: OAuthGrantRecord = {
      id: 'g1',
      kind: 'oauth',
      clientId: 'app',
      account: { uuid: 'u1', name: 'Ada', email: 'ada@example.com' },
      scope: ['read'],
      createdAt: T,
      revokedAt: null,
    };
    await storage.createGrant(grant, { tokens: pair('g1', 'root', T) });
    // The root rotated: its first child pair.
    expect(await storage.rotateRefreshToken('r-root', T + 1, pair('g1', 'child', T + 1, 'r-root'))).toMatchObject({ ok: true });

    // A retry of the root (its response was lost), held at its COMMIT: the root's row locked, the
    // sibling pair inserted, not committed.
    let held!: () => void;
    let release!: () => void;
    const heldAt = new Promise<void>((resolve) => {
      held = resolve;
    });
    gate = { held, released: new Promise<void>((resolve) => (release = resolve)) };
    const retry = storage.retryRefreshToken('r-root', T + 2, WINDOW, pair('g1', 'sibling', T + 2, 'r-root'));
    await heldAt;

    // The child is rotated meanwhile: it waits for the root's row.
    const rotation = storage.rotateRefreshToken('r-child', T + 3, pair('g1', 'grandchild', T + 3, 'r-child'));
    for (let i = 0; !(await waitingOnLock()); i++) {
      expect(i, 'the rotation waits for the parent’s row').toBeLessThan(400);
      await sleep(5);
    }
    release();
    expect(await retry).toMatchObject({ ok: true });
    expect(await rotation).toMatchObject({ ok: true });

    // The sibling pair, committed before the rotation took the root's row, died with it.
    expect((await storage.findToken('r-sibling'))?.token.revokedAt).toBe(T + 3);
    expect((await storage.findToken('a-sibling'))?.token.revokedAt).toBe(T + 3);
    // The root can no longer be retried, and the rotated child's line lives on.
    expect((await storage.findToken('r-root'))?.token.childRotatedAt).toBe(T + 3);
    expect(await storage.retryRefreshToken('r-root', T + 4, WINDOW, pair('g1', 'late', T + 4, 'r-root'))).toMatchObject({
      ok: false,
      reason: 'used',
    });
    expect((await storage.findToken('r-grandchild'))?.token).toMatchObject({ rotatedAt: null, revokedAt: null });
    expect((await storage.findToken('a-child'))?.token.revokedAt).toBe(T + 3);
  });
});

/** `schema` created and migrated up to `version` (as that version's `migrate()` left it); its table names. */
async function schemaAtVersion(pool: pg.Pool, schema: string, version: number) {
  const t = tableNames(schema, 'authgate_');
  await pool.query(`CREATE SCHEMA ${quote(schema)}`);
  await pool.query(`CREATE TABLE ${t.migrations} (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`);
  for (const m of MIGRATIONS.filter((m) => m.version <= version)) {
    for (const statement of m.up(t, (name) => quote(`authgate_${name}`), routineNames(schema, 'authgate_'))) await pool.query(statement);
    await pool.query(`INSERT INTO ${t.migrations} VALUES ($1, $2, $3)`, [m.version, m.name, 0]);
  }
  return t;
}

describe.skipIf(!DATABASE_URL)('migration 14 on PostgreSQL: the rotation function', () => {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  pool.on('error', () => {});
  const schema = schemaName('rot14');
  afterAll(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });

  it('a version-13 database gains rotate_refresh_token; a family stored before it rotates, retries and revokes its siblings as before', async () => {
    const t = await schemaAtVersion(pool, schema, 13);
    const q = (text: string, values: unknown[] = []) => pool.query(text, values);
    // A family as version 13 wrote it: the root rotated once, its child pair live.
    await q(
      `INSERT INTO ${t.grants} (id, client_id, account_uuid, account, scope, created_at, kind) VALUES ('g', 'app', 'u', '{"uuid":"u","name":"Ada","email":"a@x"}', '{read}', $1, 'oauth')`,
      [T],
    );
    await q(
      `INSERT INTO ${t.tokens} (hash, kind, grant_id, client_id, scope, issued_at, expires_at, pair_hash, rotated_at, parent_hash) VALUES
      ('a-root', 'access', 'g', 'app', '{read}', $1, $2, NULL, NULL, NULL),
      ('r-root', 'refresh', 'g', 'app', '{read}', $1, NULL, 'a-root', $3, NULL),
      ('a-child', 'access', 'g', 'app', '{read}', $3, $2, NULL, NULL, NULL),
      ('r-child', 'refresh', 'g', 'app', '{read}', $3, NULL, 'a-child', NULL, 'r-root')`,
      [T, T + 3_600_000, T + 1],
    );
    const storage = new PostgresStorage(pool, { schema });
    expect(await storage.migrate()).toEqual({ from: 13, to: SCHEMA_VERSION });
    const { rowCount } = await q(
      `SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname = 'authgate_rotate_refresh_token'`,
      [schema],
    );
    expect(rowCount).toBe(1);
    // The root retried (a sibling pair), then the child rotated: the sibling dies, the root can no longer be retried.
    const sibling = pair('g', 'sib', T + 2, 'r-root');
    expect(await storage.retryRefreshToken('r-root', T + 2, WINDOW, sibling)).toMatchObject({ ok: true });
    expect(await storage.rotateRefreshToken('r-child', T + 3, pair('g', 'next', T + 3, 'r-child'))).toMatchObject({ ok: true });
    expect((await storage.findToken('r-sib'))?.token.revokedAt).toBe(T + 3);
    expect((await storage.findToken('a-child'))?.token.revokedAt).toBe(T + 3);
    expect(await storage.rotateRefreshToken('r-child', T + 4, [])).toMatchObject({ ok: false, reason: 'used' });
  });
});

describe.skipIf(!DATABASE_URL)('migration 15 on PostgreSQL: the rotation function finds what it revokes by primary key', () => {
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  admin.on('error', () => {});
  const schemas: string[] = [];
  afterAll(async () => {
    for (const s of schemas) await dropSchema(admin, s);
    await admin.end();
  });

  // Found by review: migration 14's last UPDATE (`hash = x OR hash IN (subquery)`) read the whole
  // tokens table on every rotation of a token that has a parent, under the parent's row lock.
  it('rotating a refresh token that has a parent reads no table whole, with 40 000 other tokens stored', async () => {
    const s = schemaName('rotscan');
    schemas.push(s);
    // auto_explain reports the plan of every statement the function runs, as a NOTICE to this pool.
    const plans: string[] = [];
    const mine = new pg.Pool({
      connectionString: DATABASE_URL,
      max: 1,
      idleTimeoutMillis: 0,
      options:
        '-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 ' +
        '-c auto_explain.log_nested_statements=on -c auto_explain.log_level=notice',
    });
    mine.on('error', () => {});
    mine.on('connect', (c) => c.on('notice', (n) => plans.push(n.message ?? '')));
    try {
      const store = new PostgresStorage(mine, { schema: s });
      await store.migrate();
      const { grant, refresh } = await withPair(store);
      await admin.query(
        `INSERT INTO "${s}".authgate_tokens (hash, kind, grant_id, client_id, scope, issued_at, expires_at, pair_hash)
        SELECT 'bulk' || i, 'access', $1, $2, '{read}', $3, NULL, NULL FROM generate_series(1, 40000) AS i`,
        [grant.id, grant.clientId, T0],
      );
      await admin.query(`ANALYZE "${s}".authgate_tokens`);
      // The chain's first rotation (no parent), a retry of it (a sibling pair), then the child's
      // rotation (a parent: the siblings' branch, which revokes the sibling and its access token).
      const child = makePair(grant, T0 + 10, { parentHash: refresh.hash });
      expect((await store.rotateRefreshToken(refresh.hash, T0 + 10, child)).ok).toBe(true);
      const sibling = makePair(grant, T0 + 15, { parentHash: refresh.hash });
      expect((await store.retryRefreshToken(refresh.hash, T0 + 15, WINDOW, sibling)).ok).toBe(true);
      plans.length = 0;
      const grandchild = makePair(grant, T0 + 20, { parentHash: child[1].hash });
      expect((await store.rotateRefreshToken(child[1].hash, T0 + 20, grandchild)).ok).toBe(true);
      expect(plans.some((p) => p.includes('siblings'))).toBe(true); // auto_explain saw the function's statements
      const scans = plans.filter((p) => /Seq Scan on authgate_tokens/.test(p));
      expect(scans.map((p) => p.slice(p.indexOf('Query Text:'), p.indexOf('Query Text:') + 400))).toEqual([]);
      // Same answers as before: the sibling pair and the child's access token revoked, nothing else.
      for (const revoked of [sibling[0], sibling[1], child[0]])
        expect((await store.findToken(revoked.hash))?.token.revokedAt).toBe(T0 + 20);
      for (const live of [grandchild[0], grandchild[1]]) expect((await store.findToken(live.hash))?.token.revokedAt).toBe(null);
      expect((await store.findToken('bulk1'))?.token.revokedAt).toBe(null);
    } finally {
      await mine.end();
    }
  });

  it('a version-14 database is migrated to the new function in place', async () => {
    const s = schemaName('rot15');
    schemas.push(s);
    await schemaAtVersion(admin, s, 14);
    const q = (text: string, values: unknown[] = []) => admin.query(text, values);
    const body = async () =>
      (
        await q(
          `SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname = 'authgate_rotate_refresh_token'`,
          [s],
        )
      ).rows.map((r) => r.def as string);
    expect((await body())[0]).toContain('OR hash IN');
    const storage = new PostgresStorage(admin, { schema: s });
    expect(await storage.migrate()).toEqual({ from: 14, to: SCHEMA_VERSION });
    const after = await body();
    expect(after).toHaveLength(1);
    expect(after[0]).toContain('UNION ALL');
  });
});
