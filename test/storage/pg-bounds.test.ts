/**
 * The time bounds of `PostgresStorage` (`acquireTimeoutMs`, `queryTimeoutMs`; docs/reference.md
 * "Failures and outages"): a database that stops answering fails each operation within the bounds,
 * as an outage does, instead of holding it for as long as the database is away.
 *
 * - With pools of the test's own making (no database): a statement or a transaction that never
 *   answers fails in time with a `PostgresStorageError`; its connection is destroyed (never
 *   used again, not even for ROLLBACK: its statement may still be on its way); a connection that
 *   comes after the acquire bound goes straight back to the pool; `pg`'s own timeouts read as
 *   timeouts; `migrate()` takes no query bound; the options are checked.
 * - On a throwaway cluster frozen with SIGSTOP (pg-cluster.ts): every operation of a store on a
 *   host's plain `pg.Pool` and on `openPostgresStorage` fails within the bounds while it is
 *   frozen, wave after wave, and works again after the thaw; the pool of `openPostgresStorage`
 *   keeps no waiter past the bound. A refresh-token rotation cut by the bound (the database frozen
 *   just before its UPDATE, or just before its COMMIT) rotated whole or not at all.
 *
 * Unhandled `error` events and unhandled rejections are uncaught here: recorded, and they fail the
 * case.
 */
import pg from 'pg';
import { sqlOf } from './fixtures/statements.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ClientRecord, OAuthGrantRecord, OAuthTokenRecord } from '../../src/index.js';
import {
  openPostgresStorage,
  type PgPool,
  type PgPoolClient,
  type PgQueryResult,
  PostgresStorage,
  PostgresStorageError,
} from '../../src/postgres/index.js';
import { clusterAvailable, type PgCluster, startCluster } from './pg-cluster.js';

const T = 1_700_000_000_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** How late past its bound a failure may come on a loaded 2-core machine. */
const MARGIN = 1500;

const uncaught: unknown[] = [];
const recordUncaught = (error: unknown) => uncaught.push(error);
beforeAll(() => {
  process.on('uncaughtException', recordUncaught);
  process.on('unhandledRejection', recordUncaught);
});
afterAll(() => {
  process.off('uncaughtException', recordUncaught);
  process.off('unhandledRejection', recordUncaught);
});
afterEach(async () => {
  await sleep(50); // a late rejection of a statement the bound gave up on
  const messages = uncaught.splice(0).map((error) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error)));
  expect(messages, 'uncaught exceptions or unhandled rejections').toEqual([]);
});

/** `promise`'s rejection and how long it took; fails the case when it resolves. */
async function failure(promise: Promise<unknown>): Promise<{ error: PostgresStorageError; ms: number }> {
  const start = performance.now();
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  const ms = performance.now() - start;
  expect(error).toBeInstanceOf(PostgresStorageError);
  expect((error as PostgresStorageError).kind).toBe('database');
  return { error: error as PostgresStorageError, ms };
}

// -----------------------------------------------------------------------------------------------
// Pools of the test's own making.

interface Fake {
  pool: PgPool;
  /** Each connection's statements, in order. */
  texts: string[][];
  /** What each `release` was called with (`true`: destroyed). */
  releases: unknown[];
}

/**
 * A pool whose connections answer each statement with `answer(text)`. As `pg` does, destroying a
 * connection (`release(true)`) fails its statements still waiting for an answer.
 */
function fakePool(answer: (text: string) => Promise<PgQueryResult>, connect?: () => Promise<void>): Fake {
  const texts: string[][] = [];
  const releases: unknown[] = [];
  const pool: PgPool = {
    query: () => Promise.reject(new Error('PostgresStorage must not use pool.query for a request')),
    async connect() {
      await connect?.();
      const mine: string[] = [];
      texts.push(mine);
      const waiting = new Set<(error: Error) => void>();
      const client: PgPoolClient = {
        query(statement) {
          const text = sqlOf(statement);
          mine.push(text.trim().split(/\s+/)[0]!);
          return new Promise<PgQueryResult>((resolve, reject) => {
            waiting.add(reject);
            answer(text).then(resolve, reject);
          });
        },
        release(destroy) {
          releases.push(destroy ?? false);
          if (destroy) for (const reject of waiting) reject(new Error('Connection terminated'));
        },
      };
      return client;
    },
  };
  return { pool, texts, releases };
}

const never = () => new Promise<PgQueryResult>(() => {});
/** A grant and a token for a fake pool's transaction, a device redemption (nothing reaches a database). */
const GRANT: OAuthGrantRecord = {
  id: 'g1',
  kind: 'oauth',
  clientId: 'c1',
  account: { uuid: 'u1', name: 'Ada', email: 'ada@example.com' },
  scope: ['read'],
  createdAt: T,
  revokedAt: null,
};
const TOKEN: OAuthTokenRecord = {
  hash: 'a1',
  kind: 'access',
  grantId: 'g1',
  clientId: 'c1',
  scope: ['read'],
  issuedAt: T,
  expiresAt: T + 3_600_000,
  pairHash: null,
  rotatedAt: null,
  revokedAt: null,
};
const empty = async (): Promise<PgQueryResult> => ({ rows: [], rowCount: 0 });
/** The answer of a statement that changed one row (the device row a redemption marks). */
const matched = async (): Promise<PgQueryResult> => ({ rows: [], rowCount: 1 });

describe('PostgresStorage bounds, on pools of the test’s own making', () => {
  it('a statement that never answers fails within queryTimeoutMs, its connection destroyed once; an answering one releases it', async () => {
    const hung = fakePool(never);
    const storage = new PostgresStorage(hung.pool, { queryTimeoutMs: 100 });
    const { error, ms } = await failure(storage.findClient('c1'));
    expect(error.operation).toBe('findClient');
    expect(error.message).toBe(
      'authgate PostgresStorage.findClient failed: the database did not answer within 100 ms (queryTimeoutMs); the connection was closed.',
    );
    expect(ms).toBeGreaterThanOrEqual(95);
    expect(ms).toBeLessThan(100 + MARGIN);
    expect(hung.releases).toEqual([true]);

    const fine = fakePool(empty);
    expect(await new PostgresStorage(fine.pool, { queryTimeoutMs: 100 }).findClient('c1')).toBeNull();
    expect(fine.releases).toEqual([false]);
  });

  it('a transaction that runs out of time: no ROLLBACK on its connection (its statement may still run), destroyed, not retried', async () => {
    const fake = fakePool((text) => (text.trim().startsWith('INSERT') ? never() : matched()));
    const storage = new PostgresStorage(fake.pool, { queryTimeoutMs: 100 });
    const { error, ms } = await failure(storage.redeemDeviceAuthorization('d1', T, GRANT, [TOKEN]));
    expect(error.operation).toBe('redeemDeviceAuthorization');
    expect(error.message).toMatch(/did not answer within 100 ms \(queryTimeoutMs\)/);
    expect(ms).toBeLessThan(100 + MARGIN);
    // BEGIN, the device row's UPDATE with its issuance locks (a WITH), the grant's INSERT.
    expect(fake.texts).toEqual([['BEGIN', 'WITH', 'INSERT']]);
    expect(fake.releases).toEqual([true]);
  });

  it('no connection within acquireTimeoutMs: fails in time; the connection that comes later goes straight back to the pool, unused', async () => {
    let arrive!: () => void;
    const arrived = new Promise<void>((resolve) => {
      arrive = resolve;
    });
    const fake = fakePool(empty, () => arrived);
    const storage = new PostgresStorage(fake.pool, { acquireTimeoutMs: 100 });
    const { error, ms } = await failure(storage.findToken('t1'));
    expect(error.message).toBe(
      'authgate PostgresStorage.findToken failed: no database connection within 100 ms (acquireTimeoutMs): the database is not answering or every connection of the pool is busy.',
    );
    expect(ms).toBeGreaterThanOrEqual(95);
    expect(ms).toBeLessThan(100 + MARGIN);
    expect(fake.releases).toEqual([]);
    arrive();
    await sleep(10);
    expect(fake.texts).toEqual([[]]);
    expect(fake.releases).toEqual([false]);
  });

  it("pg's own timeouts of a host's pool read as timeouts; a query_timeout in a transaction destroys the connection without ROLLBACK", async () => {
    const readTimeout = fakePool((text) =>
      text.trim().startsWith('INSERT') ? Promise.reject(new Error('Query read timeout')) : matched(),
    );
    const cut = await failure(
      new PostgresStorage(readTimeout.pool, { queryTimeoutMs: false }).redeemDeviceAuthorization('d1', T, GRANT, [TOKEN]),
    );
    expect(cut.error.message).toMatch(/did not answer within the pool's query_timeout; the connection was closed\.$/);
    expect(readTimeout.texts).toEqual([['BEGIN', 'WITH', 'INSERT']]);
    expect(readTimeout.releases).toEqual([true]);

    const connectTimeout = fakePool(empty, () => Promise.reject(new Error('timeout exceeded when trying to connect')));
    const none = await failure(new PostgresStorage(connectTimeout.pool).findClient('c1'));
    expect(none.error.message).toMatch(/no database connection within the pool's connectionTimeoutMillis/);

    const cancelled = fakePool(() =>
      Promise.reject(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })),
    );
    const statement = await failure(new PostgresStorage(cancelled.pool).findClient('c1'));
    expect(statement.error.message).toMatch(/cancelled the statement \(SQLSTATE 57014: statement_timeout/);
    expect(statement.error.sqlState).toBe('57014');
  });

  it('a single statement that fails: an ordinary error keeps its connection; a FATAL (a killed backend) or a driver error destroys it', async () => {
    const cases: Array<[string, Error, boolean]> = [
      ['duplicate key', Object.assign(new Error('duplicate key'), { code: '23505', severity: 'ERROR' }), false],
      ['statement_timeout', Object.assign(new Error('canceling statement'), { code: '57014', severity: 'ERROR' }), false],
      [
        'killed backend',
        Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01', severity: 'FATAL' }),
        true,
      ],
      ['connection failure', Object.assign(new Error('connection failure'), { code: '08006' }), true],
      ['driver error', new Error('Connection terminated unexpectedly'), true],
    ];
    for (const [what, error, destroyed] of cases) {
      const fake = fakePool(() => Promise.reject(error));
      await expect(new PostgresStorage(fake.pool).findClient('c1'), what).rejects.toBeInstanceOf(PostgresStorageError);
      expect(fake.releases, what).toEqual([destroyed]);
    }
  });

  it('migrate() takes no query bound (DDL may take long): statements slower than queryTimeoutMs complete', async () => {
    const slow = fakePool(async (text) => {
      await sleep(60);
      return /coalesce\(max\(version\)/.test(text) ? { rows: [{ version: 1_000_000 }], rowCount: 1 } : { rows: [{}], rowCount: 1 };
    });
    const result = await new PostgresStorage(slow.pool, { queryTimeoutMs: 20 }).migrate();
    expect(result).toEqual({ from: 1_000_000, to: 1_000_000 });
    expect(slow.releases).toEqual([false]);
  });

  it('the options: whole milliseconds from 1 to 2147483647, or false; anything else is a TypeError, in openPostgresStorage too', async () => {
    const { pool } = fakePool(empty);
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, '100', null, true]) {
      expect(() => new PostgresStorage(pool, { acquireTimeoutMs: bad as number }), String(bad)).toThrow(
        /option "acquireTimeoutMs" must be a whole number of milliseconds from 1 to 2147483647, or false/,
      );
      expect(() => new PostgresStorage(pool, { queryTimeoutMs: bad as number }), String(bad)).toThrow(TypeError);
    }
    expect(() => new PostgresStorage(pool, { acquireTimeoutMs: false, queryTimeoutMs: 2_147_483_647 })).not.toThrow();
    await expect(openPostgresStorage('postgres://nobody@127.0.0.1:1/none', { queryTimeoutMs: 0 })).rejects.toThrow(
      /option "queryTimeoutMs" must be/,
    );
  });
});

// -----------------------------------------------------------------------------------------------
// A real database, frozen.

describe.skipIf(!clusterAvailable)('PostgresStorage bounds, on a frozen database', { timeout: 60_000 }, () => {
  let cluster: PgCluster;
  let admin: pg.Pool;
  const ACQUIRE = 300;
  const QUERY = 500;

  beforeAll(async () => {
    cluster = await startCluster();
    admin = new pg.Pool({ connectionString: cluster.url, max: 2 });
    admin.on('error', () => {});
  });
  afterAll(async () => {
    cluster?.thaw();
    await admin?.end().catch(() => {});
    await cluster?.stop();
  });

  it('every operation fails within the bounds while frozen, wave after wave, on a plain pg.Pool and on openPostgresStorage; both work after the thaw', async () => {
    const bounds = { acquireTimeoutMs: ACQUIRE, queryTimeoutMs: QUERY };
    // A host's pool as the README sets it up: no timeouts of its own.
    const plain = new pg.Pool({ connectionString: cluster.url, max: 2 });
    const hosted = new PostgresStorage(plain, { schema: 'ag_bounds_plain', ...bounds });
    await hosted.migrate();
    const opened = await openPostgresStorage(cluster.url, { schema: 'ag_bounds_open', max: 2, ...bounds });
    const openedPool = opened.pool as pg.Pool;
    const poolOptions = (pool: unknown) => (pool as { options: { connectionTimeoutMillis?: number } }).options;
    // The pool of openPostgresStorage gives up a hanging connection attempt at the store's bound.
    expect(poolOptions(openedPool).connectionTimeoutMillis).toBe(ACQUIRE);
    const unbounded = await openPostgresStorage(cluster.url, { schema: 'ag_bounds_open', acquireTimeoutMs: false });
    expect(poolOptions(unbounded.pool).connectionTimeoutMillis).toBeUndefined();
    await unbounded.close();
    try {
      const stores = { hosted, opened: opened.storage };
      // Both connections of each pool open and idle: the first wave finds them and hangs on them.
      for (const store of Object.values(stores)) await Promise.all([store.findClient('a'), store.findClient('b')]);

      cluster.freeze();
      const slowest: Record<string, number> = {};
      try {
        for (let wave = 0; wave < 3; wave++) {
          for (const [name, store] of Object.entries(stores)) {
            const results = await Promise.all(Array.from({ length: 8 }, (_, i) => failure(store.findToken(`t${wave}-${i}`))));
            for (const { error, ms } of results) {
              expect(error.message, name).toMatch(/within \d+ ms \((acquireTimeoutMs|queryTimeoutMs)\)/);
              slowest[name] = Math.max(slowest[name] ?? 0, ms);
            }
          }
        }
        // The pool of openPostgresStorage gave up its waiters with the store: none piles up.
        await sleep(100);
        expect(openedPool.waitingCount).toBe(0);
        console.log(
          `pg-bounds frozen: slowest failure ${JSON.stringify(slowest)} ms (bounds ${ACQUIRE} + ${QUERY}); plain pool waiters ${plain.waitingCount}`,
        );
        for (const ms of Object.values(slowest)) expect(ms).toBeLessThan(ACQUIRE + QUERY + MARGIN);
      } finally {
        cluster.thaw();
      }

      // After the thaw: both work again at once, on connections that are not the destroyed ones.
      const thawed = performance.now();
      for (const store of Object.values(stores)) {
        for (;;) {
          const ok = await store.findClient('a').then(
            () => true,
            () => false,
          );
          if (ok) break;
          expect(performance.now() - thawed, 'working again after the thaw').toBeLessThan(5000);
          await sleep(50);
        }
      }
      expect(plain.totalCount).toBeLessThanOrEqual(2);
      expect(openedPool.totalCount).toBeLessThanOrEqual(2);
    } finally {
      await opened.close();
      await plain.end();
    }
  });

  /** A client, a grant, its access token and its refresh token, paired. */
  async function family(storage: PostgresStorage, n: string): Promise<{ access: OAuthTokenRecord; refresh: OAuthTokenRecord }> {
    const client: ClientRecord = { id: `c${n}`, name: 'App', redirectUri: 'https://app.example/cb', secretHash: null, createdAt: T };
    await storage.saveClient(client);
    const grant: OAuthGrantRecord = {
      id: `g${n}`,
      kind: 'oauth',
      clientId: client.id,
      account: { uuid: `u${n}`, name: 'Ada', email: 'ada@example.com' },
      scope: ['read'],
      createdAt: T,
      revokedAt: null,
    };
    const base = { grantId: grant.id, clientId: client.id, scope: ['read'], issuedAt: T, rotatedAt: null, revokedAt: null };
    const access: OAuthTokenRecord = { ...base, hash: `a${n}`, kind: 'access', expiresAt: T + 3_600_000, pairHash: null };
    const refresh: OAuthTokenRecord = { ...base, hash: `r${n}`, kind: 'refresh', expiresAt: null, pairHash: access.hash };
    await storage.createGrant(grant, { tokens: [access, refresh] });
    return { access, refresh };
  }

  /**
   * Where an operation is cut: a transaction just before a statement that writes (nothing of it
   * may land) or just before its COMMIT (all of it lands once the thawed backend reads the
   * COMMIT that was sent), and a single statement just before it is sent (all of it lands: the
   * backend reads and runs it after the thaw, before it reads the end of its socket). The
   * transaction is a refresh retry's (retryRefreshToken: its parent's row locked, the sibling
   * pair inserted); the single statements are a grant with its tokens (createGrant) and a
   * rotation (rotateRefreshToken).
   */
  const CUTS = [
    {
      operation: 'retryRefreshToken',
      before: 'INSERT',
      what: 'a refresh retry (one transaction), frozen before its tokens’ INSERT',
      lands: false,
    },
    { operation: 'retryRefreshToken', before: 'COMMIT', what: 'a refresh retry (one transaction), frozen before its COMMIT', lands: true },
    { operation: 'createGrant', before: 'WITH', what: 'a grant and its tokens (one statement), frozen before it is sent', lands: true },
    {
      operation: 'rotateRefreshToken',
      before: 'WITH',
      what: 'a refresh-token rotation (one statement), frozen before it is sent',
      lands: true,
    },
  ] as const;

  it.each(CUTS.map((cut) => [cut.what, cut] as const))(
    '%s: cut by the bound, whole or nothing, never half; the store works after the thaw',
    async (_, cut) => {
      const tag = `${cut.operation.toLowerCase()}_${cut.before.toLowerCase()}`;
      const schema = `ag_bounds_${tag}`;
      const app = `ag_bounds_${tag}`;
      const inner = new pg.Pool({ connectionString: cluster.url, max: 2, application_name: app });
      // Freezes the database just before the operation sends its statement `cut.before`.
      let armed = false;
      const freezing: PgPool = {
        query: (text, values) => inner.query(text, values),
        async connect() {
          const client = await inner.connect();
          return {
            query(text, values) {
              if (armed && sqlOf(text).trim().startsWith(cut.before)) {
                armed = false;
                cluster.freeze();
              }
              return client.query(text, values);
            },
            release: (destroy) => client.release(destroy),
            on: (event, listener) => client.on(event, listener),
            off: (event, listener) => client.off(event, listener),
          };
        },
      };
      const storage = new PostgresStorage(freezing, { schema, acquireTimeoutMs: ACQUIRE, queryTimeoutMs: QUERY });
      try {
        await storage.migrate();
        const { access, refresh } = await family(storage, tag);
        const pair = (grantId: string, suffix: string, at: number): OAuthTokenRecord[] => [
          { ...access, grantId, hash: `${access.hash}-${suffix}`, issuedAt: at },
          {
            ...refresh,
            grantId,
            hash: `${refresh.hash}-${suffix}`,
            issuedAt: at,
            pairHash: `${access.hash}-${suffix}`,
            parentHash: refresh.hash,
          },
        ];
        const grantId = `${refresh.grantId}-2`;
        const grant = { ...(await storage.findToken(refresh.hash))!.grant, id: grantId } as OAuthGrantRecord;
        // The retry's parent: rotated once (its child pair `-1`), so a retry of it mints siblings.
        if (cut.operation === 'retryRefreshToken')
          expect((await storage.rotateRefreshToken(refresh.hash, T, pair(refresh.grantId, '1', T))).ok).toBe(true);
        const next =
          cut.operation === 'createGrant'
            ? pair(grantId, '2', T + 1).map(({ parentHash: _, ...token }) => token)
            : pair(refresh.grantId, '2', T + 1);
        armed = true;
        let ms: number;
        try {
          ({ ms } = await failure(
            cut.operation === 'createGrant'
              ? storage.createGrant(grant, { tokens: next })
              : cut.operation === 'retryRefreshToken'
                ? storage.retryRefreshToken(refresh.hash, T + 1, 60_000, next)
                : storage.rotateRefreshToken(refresh.hash, T + 1, next),
          ));
        } finally {
          cluster.thaw();
        }
        expect(armed, 'the cut came').toBe(false);
        expect(ms).toBeLessThan(ACQUIRE + QUERY + MARGIN);

        // The backend of the destroyed connection reads what was sent, then the end of its socket,
        // and exits: only then is the outcome final.
        for (let i = 0; ; i++) {
          const { rows } = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [app]);
          if (rows[0].n === 0) break;
          expect(i, 'the cut connection’s backend exits after the thaw').toBeLessThan(200);
          await sleep(25);
        }
        const { rows } = await admin.query(
          `SELECT (SELECT count(*)::int FROM "${schema}".authgate_grants WHERE id = $4) AS grant_created,
              (SELECT rotated_at FROM "${schema}".authgate_tokens WHERE hash = $1) AS rotated,
              (SELECT revoked_at FROM "${schema}".authgate_tokens WHERE hash = $2) AS access_revoked,
              (SELECT count(*)::int FROM "${schema}".authgate_tokens WHERE hash = ANY($3)) AS inserted`,
          [refresh.hash, access.hash, next.map((t) => t.hash), grantId],
        );
        // What each operation writes, whole: the rotation marks the token rotated (at T + 1) and
        // revokes its access token; the retry finds it rotated (at T) and its access token revoked
        // by that rotation, and adds the sibling pair; createGrant adds the grant and its pair.
        const whole = {
          rotateRefreshToken: { grant_created: 0, rotated: String(T + 1), access_revoked: String(T + 1), inserted: 2 },
          retryRefreshToken: { grant_created: 0, rotated: String(T), access_revoked: String(T), inserted: 2 },
          createGrant: { grant_created: 1, rotated: null, access_revoked: null, inserted: 2 },
        }[cut.operation];
        const nothing = { ...whole, grant_created: 0, inserted: 0 };
        if (cut.operation === 'rotateRefreshToken') Object.assign(nothing, { rotated: null, access_revoked: null });
        expect(rows[0]).toEqual(cut.lands ? whole : nothing);

        // The store works after the thaw: the refresh token the client may still hold is the one
        // the database says is live (after a retry that did not land, the parent's first child).
        const live = {
          createGrant: refresh.hash,
          rotateRefreshToken: cut.lands ? next[1]!.hash : refresh.hash,
          retryRefreshToken: cut.lands ? next[1]!.hash : `${refresh.hash}-1`,
        }[cut.operation];
        const again = await storage.rotateRefreshToken(live, T + 2, [
          { ...refresh, hash: `${refresh.hash}-3`, issuedAt: T + 2, pairHash: null },
        ]);
        expect(again.ok).toBe(true);
      } finally {
        cluster.thaw();
        await inner.end();
      }
    },
  );
});
