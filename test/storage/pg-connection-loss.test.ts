/**
 * A connection of `PostgresStorage` that dies (the database restarted, failed over, or killed the
 * backend) is a storage error of the operation that was using it, never an unhandled `error` event
 * that ends the process (docs/reference.md "Failures and outages"), and a dead connection is never
 * handed back to the pool.
 *
 * node-postgres emits `error` on a `Client` whose connection ends unexpectedly; the pool listens
 * only while the client is idle in it. Each case kills one backend of the store's pool with
 * `pg_terminate_backend` at a chosen moment, found in `pg_stat_activity` by the pool's own
 * `application_name`, so the moment is deterministic:
 *
 * - a transaction waiting on a row lock (mid-statement, checked out of the pool);
 * - single statements that write twice (a code exchange, a rotation, a new grant with its
 *   tokens), killed between their two writes (`killedAtTokenInsert`);
 * - a transaction between two statements (checked out, no query running);
 * - `migrate()` waiting for its advisory lock;
 * - a single statement on the pool waiting on a row lock;
 * - idle connections in the pool.
 *
 * The store's pool is set up as the README shows, with no `error` listener of the host: any
 * unhandled `error` event is an uncaught exception, which these tests record and fail on.
 * Crashes of the whole server, under load over HTTP, are in pg-outage.test.ts.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ClientRecord, OAuthGrantRecord, OAuthTokenRecord } from '../../src/index.js';
import { type PgPool, type PgPoolClient, PostgresStorage, PostgresStorageError } from '../../src/postgres/index.js';
import { LOCK_NAMESPACE, lockKey } from '../../src/postgres/migrate.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from './pg.js';

const schema = schemaName('loss');
const T = 1_700_000_000_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Uncaught exceptions raised while a case ran: an unhandled `error` event of a pg client lands here. */
const uncaught: unknown[] = [];
const recordUncaught = (error: unknown) => uncaught.push(error);

describe.skipIf(!DATABASE_URL)('PostgresStorage: a connection that dies is a storage error, never a crash', { timeout: 30_000 }, () => {
  /** The test's own pool: sets up rows, holds locks, kills the store's backends. */
  const admin = makePool(4);
  /** The store's pool: no `error` listener of its own, as the README sets it up. */
  const app = `ag_loss_${randomBytes(4).toString('hex')}`;
  let pool: pg.Pool;
  let storage: PostgresStorage;
  /** What each `release` of the store's pool was called with: `true` (or an error) destroys the connection. */
  const releases: unknown[] = [];

  beforeAll(async () => {
    process.on('uncaughtException', recordUncaught);
    pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4, application_name: app });
    pool.on('release', (destroy) => releases.push(destroy));
    storage = new PostgresStorage(pool, { schema });
    await storage.migrate();
  });

  afterAll(async () => {
    process.off('uncaughtException', recordUncaught);
    await pool?.end();
    await dropSchema(admin, schema);
    await admin.end();
  });

  afterEach(async () => {
    // A late `error` event (the socket's end after the error reply) comes a little after the
    // operation failed: give it the time to arrive before judging.
    await sleep(100);
    const messages = uncaught.splice(0).map((error) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error)));
    expect(messages, 'uncaught exceptions (unhandled error events of pg clients?)').toEqual([]);
  });

  /** The pid of the store's backend that waits on a lock, once it does. */
  async function blockedBackend(): Promise<number> {
    for (let i = 0; i < 200; i++) {
      const { rows } = await admin.query(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, [
        app,
      ]);
      if (rows.length === 1) return rows[0].pid as number;
      await sleep(20);
    }
    throw new Error('no backend of the store waits on a lock');
  }

  /** Kill backends of the store's pool (`pg_terminate_backend`: FATAL 57P01, then the socket closes). */
  async function terminate(pid?: number): Promise<number> {
    const { rows } = await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND ($2::int IS NULL OR pid = $2)`,
      [app, pid ?? null],
    );
    return rows.length;
  }

  let n = 0;
  /** A client, a grant and its refresh token, stored through the store. */
  async function refreshToken(): Promise<{ client: ClientRecord; token: OAuthTokenRecord }> {
    n++;
    const client: ClientRecord = { id: `c${n}`, name: `App ${n}`, redirectUri: 'https://app.example/cb', secretHash: null, createdAt: T };
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
    const token: OAuthTokenRecord = {
      hash: `r${n}`,
      kind: 'refresh',
      grantId: grant.id,
      clientId: client.id,
      scope: ['read'],
      issuedAt: T,
      expiresAt: null,
      pairHash: null,
      rotatedAt: null,
      revokedAt: null,
    };
    await storage.createGrant(grant, { tokens: [token] });
    return { client, token };
  }

  const next = (token: OAuthTokenRecord, suffix: string): OAuthTokenRecord => ({
    ...token,
    hash: `${token.hash}${suffix}`,
    issuedAt: T + 1,
  });

  /** Expect `promise` to reject with a `PostgresStorageError` of `operation`, and return it. */
  async function storageFailure(promise: Promise<unknown>, operation: string): Promise<PostgresStorageError> {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PostgresStorageError);
    const failure = error as PostgresStorageError;
    expect(failure.operation).toBe(operation);
    expect(failure.kind).toBe('database');
    return failure;
  }

  /**
   * Run `step`, one statement whose last INSERT writes the token `hash`, while an uncommitted row
   * of the test's own holds that key: the INSERT waits for the test's transaction after the rest
   * of the statement ran. Kill its backend there, and expect a storage error of `operation` and
   * the connection destroyed.
   */
  async function killedAtTokenInsert(
    hash: string,
    holder: { grantId: string; clientId: string },
    step: () => Promise<unknown>,
    operation: string,
  ) {
    const locker = await admin.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(
        `INSERT INTO "${schema}".authgate_tokens (hash, kind, grant_id, client_id, scope, issued_at) VALUES ($1, 'access', $2, $3, '{}', 0)`,
        [hash, holder.grantId, holder.clientId],
      );
      releases.length = 0;
      const failing = storageFailure(step(), operation);
      expect(await terminate(await blockedBackend())).toBe(1);
      await failing;
      await locker.query('ROLLBACK');
    } finally {
      locker.release();
    }
    expect(releases).toEqual([true]);
  }

  it('a transaction killed while its statement waits on a row lock: a storage error, the connection destroyed, the next call works', async () => {
    const { token } = await refreshToken();
    const locker = await admin.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM "${schema}".authgate_tokens WHERE hash = $1 FOR UPDATE`, [token.hash]);
      releases.length = 0;
      // (Judged at once: it fails while this test still waits for the kill's answer.)
      const rotation = storageFailure(storage.rotateRefreshToken(token.hash, T + 5, [next(token, 'a')]), 'rotateRefreshToken');
      expect(await terminate(await blockedBackend())).toBe(1);
      const failure = await rotation;
      expect(failure.message).toMatch(
        /^authgate PostgresStorage\.rotateRefreshToken failed: the database could not be reached or the connection was lost \(SQLSTATE 57P01\)\.$/,
      );
      expect(failure.message).not.toContain(token.hash);
      await locker.query('ROLLBACK');
    } finally {
      locker.release();
    }
    // The dead connection went out of the pool, never back into it.
    expect(releases).toHaveLength(1);
    expect(releases[0]).toBeTruthy();
    // Nothing of the failed rotation was kept: the token rotates now, once.
    expect(await storage.rotateRefreshToken(token.hash, T + 6, [next(token, 'b')])).toMatchObject({ ok: true });
    expect(await storage.rotateRefreshToken(token.hash, T + 7, [next(token, 'c')])).toMatchObject({ ok: false, reason: 'used' });
  });

  it('a code exchange (one statement: the code marked used, then its tokens inserted) killed in the middle, between the two: nothing of it kept, the code redeems once afterwards', async () => {
    const { client, token } = await refreshToken();
    const code = {
      hash: `code-${token.hash}`,
      grantId: token.grantId,
      clientId: client.id,
      redirectUri: client.redirectUri,
      scope: ['read'],
      codeChallenge: null,
      codeChallengeMethod: null,
      expiresAt: T + 60_000,
      usedAt: null,
    };
    // A second grant of the same client carries the code (createGrant inserts a grant with its code).
    const grant: OAuthGrantRecord = { ...((await storage.findToken(token.hash))!.grant as OAuthGrantRecord), id: `g-${code.hash}` };
    await storage.createGrant(grant, { code: { ...code, grantId: grant.id } });
    // The exchange's token INSERT runs after its UPDATE has marked the code used.
    await killedAtTokenInsert(
      `${token.hash}-x`,
      { grantId: grant.id, clientId: client.id },
      () => storage.redeemCode(code.hash, T + 5, [next({ ...token, grantId: grant.id }, '-x')]),
      'redeemCode',
    );
    // Not half-written: the code is unused and no token of the killed statement exists.
    expect((await storage.findCode(code.hash))?.usedAt).toBeNull();
    expect(await storage.findToken(`${token.hash}-x`)).toBeNull();
    expect(await storage.redeemCode(code.hash, T + 6, [next({ ...token, grantId: grant.id }, '-y')])).toMatchObject({ ok: true });
    expect(await storage.findToken(`${token.hash}-y`)).not.toBeNull();
    expect(await storage.redeemCode(code.hash, T + 7, [])).toMatchObject({ ok: false, reason: 'used' });
  });

  it('a refresh-token rotation (one statement: the rotation, then its new pair inserted) killed in the middle, between the two: nothing of it kept, the token rotates once afterwards', async () => {
    const { client, token } = await refreshToken();
    // The rotation's INSERT of the new pair runs after its function has marked the token rotated.
    await killedAtTokenInsert(
      `${token.hash}-m`,
      { grantId: token.grantId, clientId: client.id },
      () => storage.rotateRefreshToken(token.hash, T + 5, [next(token, '-m')]),
      'rotateRefreshToken',
    );
    // Not half-written: the token is not rotated, and nothing of the killed statement exists.
    expect((await storage.findToken(token.hash))?.token.rotatedAt).toBeNull();
    expect(await storage.findToken(`${token.hash}-m`)).toBeNull();
    expect(await storage.rotateRefreshToken(token.hash, T + 6, [next(token, '-n')])).toMatchObject({ ok: true });
    expect(await storage.rotateRefreshToken(token.hash, T + 7, [next(token, '-o')])).toMatchObject({ ok: false, reason: 'used' });
  });

  it('a new grant with its tokens (one statement: the issuance locks, the grant, then its tokens) killed in the middle, between the grant and its tokens: nothing of it kept, it is created afterwards', async () => {
    const { client, token } = await refreshToken();
    const grant: OAuthGrantRecord = { ...((await storage.findToken(token.hash))!.grant as OAuthGrantRecord), id: `g-${token.hash}-new` };
    const tokens = [{ ...next(token, '-g'), grantId: grant.id }];
    await killedAtTokenInsert(
      `${token.hash}-g`,
      { grantId: token.grantId, clientId: client.id },
      () => storage.createGrant(grant, { tokens }),
      'createGrant',
    );
    // Not half-written: neither the grant nor its token exists, and no issuance lock is left held.
    const { rows } = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".authgate_grants WHERE id = $1`, [grant.id]);
    expect(rows[0].n).toBe(0);
    expect(await storage.findToken(`${token.hash}-g`)).toBeNull();
    await storage.revokeAccountGrants(grant.account.uuid, T + 6);
    await storage.createGrant({ ...grant, createdAt: T + 7 }, { tokens });
    expect(await storage.findToken(`${token.hash}-g`)).toMatchObject({ grant: { id: grant.id, revokedAt: null } });
  });

  it('an approval (one statement: the interaction taken, the consent saved, the grant and its tokens created) killed between the grant and its tokens: nothing of it kept, the interaction is still there, and it is approved afterwards', async () => {
    const { client, token } = await refreshToken();
    const account = { uuid: `u-approve-${n}`, name: 'Ada', email: 'ada@example.com' };
    const interaction = {
      idHash: `i-${token.hash}`,
      kind: 'consent' as const,
      purpose: 'authorization' as const,
      request: { clientId: client.id, redirectUri: client.redirectUri, responseType: 'token' as const, scope: ['read'], prompt: [] },
      requestedAt: T,
      expiresAt: T + 600_000,
      loginAfter: null,
      account,
    };
    await storage.saveInteraction(interaction);
    const consent = {
      accountUuid: account.uuid,
      clientId: client.id,
      scope: ['read'],
      approvals: [{ resource: null, scope: ['read'] }],
      grantedAt: T,
    };
    const grant: OAuthGrantRecord = {
      id: `g-approve-${token.hash}`,
      kind: 'oauth',
      clientId: client.id,
      account,
      scope: ['read'],
      createdAt: T,
      revokedAt: null,
    };
    const tokens = [{ ...next(token, '-i'), grantId: grant.id, kind: 'access' as const, expiresAt: T + 3_600_000 }];
    await killedAtTokenInsert(
      `${token.hash}-i`,
      { grantId: token.grantId, clientId: client.id },
      () => storage.approveInteraction(interaction.idHash, T + 1, consent, grant, { tokens }),
      'approveInteraction',
    );
    // Not half-written: the interaction was not taken, no consent, no grant, no token.
    expect(await storage.findInteraction(interaction.idHash)).toMatchObject({ idHash: interaction.idHash });
    expect(await storage.findConsent(account.uuid, client.id)).toBeNull();
    expect(await storage.findToken(`${token.hash}-i`)).toBeNull();
    expect(await storage.approveInteraction(interaction.idHash, T + 2, consent, grant, { tokens })).toBe(true);
    expect(await storage.findConsent(account.uuid, client.id)).toMatchObject({ scope: ['read'] });
    expect(await storage.findToken(`${token.hash}-i`)).toMatchObject({ grant: { id: grant.id } });
    expect(await storage.approveInteraction(interaction.idHash, T + 3, consent, grant, { tokens })).toBe(false);
  });

  it('a transaction whose connection dies between two statements: a storage error, the connection destroyed', async () => {
    const { token } = await refreshToken();
    // The store's pool, with one difference: the first statement after BEGIN waits until the
    // connection is dead (killed, its socket ended) before it is sent.
    let killed = false;
    const dying: PgPool = {
      query: (text, values) => pool.query(text, values as unknown[]),
      connect: async () => {
        const client = await pool.connect();
        const wrapped: PgPoolClient = {
          query: async (text, values) => {
            if (!killed && text !== 'BEGIN ISOLATION LEVEL READ COMMITTED') {
              killed = true;
              // (Bounded: where the error event is unhandled, the client never gets to emit 'end'.)
              const ended = Promise.race([new Promise((resolve) => client.once('end', resolve)), sleep(2000)]);
              const { rows } = await admin.query('SELECT pg_terminate_backend($1::int) AS done', [
                (client as unknown as { processID: number }).processID,
              ]);
              expect(rows[0].done).toBe(true);
              await ended;
            }
            return client.query(text, values as unknown[]);
          },
          release: (destroy) => client.release(destroy),
          on: (event, listener) => client.on(event, listener),
          off: (event, listener) => client.off(event, listener),
        };
        return wrapped;
      },
    };
    releases.length = 0;
    await storageFailure(
      new PostgresStorage(dying, { schema }).rotateRefreshToken(token.hash, T + 5, [next(token, 'a')]),
      'rotateRefreshToken',
    );
    expect(killed).toBe(true);
    expect(releases).toHaveLength(1);
    expect(releases[0]).toBeTruthy();
    expect(await storage.rotateRefreshToken(token.hash, T + 6, [next(token, 'b')])).toMatchObject({ ok: true });
  });

  it('migrate() killed while it waits for the migration lock: a storage error that says the connection was lost; nothing half-made; it works once the lock is free', async () => {
    const other = schemaName('lossmig');
    const holder = await admin.connect();
    try {
      // Another instance is migrating this schema: migrate() waits for its advisory lock.
      await holder.query('SELECT pg_advisory_lock($1::int, $2::int)', [LOCK_NAMESPACE, lockKey(other)]);
      releases.length = 0;
      const migrating = storageFailure(new PostgresStorage(pool, { schema: other }).migrate(), 'migrate');
      expect(await terminate(await blockedBackend())).toBe(1);
      const failure = await migrating;
      expect(failure.message).toMatch(/^authgate PostgresStorage\.migrate failed/);
      expect(failure.message).toMatch(/connection/i);
      expect(releases).toEqual([true]);
      const { rowCount } = await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [other]);
      expect(rowCount).toBe(0);
      await holder.query('SELECT pg_advisory_unlock($1::int, $2::int)', [LOCK_NAMESPACE, lockKey(other)]);
      expect(await new PostgresStorage(pool, { schema: other }).migrate()).toMatchObject({ from: 0 });
    } finally {
      holder.release();
      await dropSchema(admin, other);
    }
  });

  it('a single statement on the pool killed while it waits on a row lock: a storage error, and the next call works', async () => {
    const { client } = await refreshToken();
    const locker = await admin.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM "${schema}".authgate_clients WHERE id = $1 FOR UPDATE`, [client.id]);
      const update = storageFailure(storage.updateClientFields(client.id, { name: 'Renamed' }), 'updateClientFields');
      expect(await terminate(await blockedBackend())).toBe(1);
      await update;
      await locker.query('ROLLBACK');
    } finally {
      locker.release();
    }
    expect(await storage.updateClientFields(client.id, { name: 'Renamed' })).toBe(true);
    expect((await storage.findClient(client.id))?.name).toBe('Renamed');
  });

  it('idle connections of the pool killed (the host added no error listener): nothing crashes, the next calls work', async () => {
    // Fill the pool with idle connections.
    await Promise.all(Array.from({ length: 4 }, () => storage.findClient('none')));
    expect(pool.idleCount).toBeGreaterThan(0);
    const removed = new Promise((resolve) => pool.once('remove', resolve));
    expect(await terminate()).toBeGreaterThan(0);
    await removed;
    await sleep(100);
    expect(pool.idleCount).toBe(pool.totalCount);
    const { token } = await refreshToken();
    expect(await storage.rotateRefreshToken(token.hash, T + 5, [next(token, 'a')])).toMatchObject({ ok: true });
  });
});
