/**
 * A revocation racing an issuance, with the interleaving forced (docs/architecture.md,
 * "Revocation racing issuance"): once a revocation returns, nothing of its account or client
 * that was issued before it returned works. Every revocation kind (revokeAllForAccount,
 * revokeAccess, revokeClientTokens, deleteClient) against every step that inserts a grant or
 * makes one live (a device approval and its redemption, a code, an implicit token, a personal
 * access token) or adds tokens to a grant (a code exchange, a refresh); and every revocation that
 * deletes consents against every step that saves one (an approval, a device approval), after
 * which `prompt=none` must answer `consent_required`.
 *
 * On PostgreSQL the schedule is forced through the pool and two row locks:
 * 1. a "bystander" grant of the same account and client is locked (`FOR UPDATE`, as a concurrent
 *    writer of that row would), so the revocation, once it reaches that row, waits in the
 *    middle of its work;
 * 2. the issuance runs up to its COMMIT, which the pool wrapper holds (a code exchange, one
 *    autocommit statement that redeems the code and inserts its tokens, is held before that
 *    statement is sent: its writes are not visible either); a new grant with its code or tokens
 *    (createGrant), one autocommit statement, is held inside it, at the grant's INSERT, after
 *    its issuance locks, by a trigger of the test's schema that waits for a lock the test holds
 *    (`holdGrantInserts`); a device decision, one
 *    autocommit statement, is held instead by a lock on its device row, which it waits for
 *    after taking its issuance locks (src/postgres/locks.ts); a consent, one autocommit
 *    `INSERT ... ON CONFLICT`, by an uncommitted row of the test with the same key, which it
 *    waits for after taking its issuance locks;
 * 3. the revocation starts, and the test waits until it waits on a lock: the bystander row, or
 *    the issuance locks the held issuance holds;
 * 4. the issuance is let go and answers, while the revocation still waits;
 * 5. the bystander row is let go, and the revocation answers.
 * So the issuance always answers first; its code, token, approval or consent must then be dead.
 * Without the issuance locks, the revocation's single UPDATE took its snapshot in step 3, did not
 * see the grant (or the consent) committed in step 4, and left it live.
 *
 * Two schedules end the other way round: an approval and a device approval, each held at its
 * consent. Each writes again afterwards (the approval its grant, the device approval its
 * decision), taking the issuance locks anew, and the revocation, which was waiting for the first
 * write, has them by then; so these approvals answer after the revocation (`order: 'either'`,
 * and each says what it expects).
 *
 * On MemoryStorage every storage step is atomic, so what matters is where the revocation's
 * storage call runs: held (not yet run) while the issuance runs to its answer, the same table
 * with the revocation held at the storage seam; or, for a device approval held at its decision,
 * right after the decision is stored and before anything the approval writes after it.
 */
import { randomBytes } from 'node:crypto';
import { sqlOf } from './fixtures/statements.js';
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
import type { ClientRecord } from '../../src/storage/types.js';
import { randomId, sha256Base64url } from '../../src/crypto.js';
import { PostgresStorage } from '../../src/postgres/index.js';
import type { PgPool, PgPoolClient } from '../../src/postgres/pool.js';
import { tableNames } from '../../src/postgres/schema.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA, CALLBACK } from '../fixtures.js';
import { DATABASE_URL, dropSchema, schemaName } from './pg.js';

const VERIFY = '/v1/oauth/device/verify';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/** Longest any one step of a forced schedule may take before the test says where it hangs. */
const STEP_MS = 10_000;

// ---------------------------------------------------------------------------------------------
// A promise's state, readable at once.

interface Tracked<T> {
  promise: Promise<T>;
  settled: boolean;
  /** The order in which tracked promises settled (shared counter). */
  at: number;
}
let settledCount = 0;
function track<T>(promise: Promise<T>): Tracked<T> {
  const t: Tracked<T> = { promise, settled: false, at: 0 };
  promise.then(
    () => {
      t.settled = true;
      t.at = ++settledCount;
    },
    () => {
      t.settled = true;
      t.at = ++settledCount;
    },
  );
  return t;
}

async function until(what: string, ok: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + STEP_MS;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`forced schedule stuck: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function within<T>(what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`forced schedule stuck: ${what}`)), STEP_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: a pool that holds the COMMIT of the next transaction that inserts.

/**
 * `PgPool` around a real `pg.Pool`. `holdNextInsertingCommit()` arms it: the next transaction
 * that runs an INSERT (a grant, a code, tokens: what an issuance writes; no revocation inserts)
 * sends every statement but its COMMIT, which waits for `release()`; or, if it comes first, the
 * next autocommit statement that inserts tokens (a code exchange: one statement, whose COMMIT
 * is its own) waits for `release()` before it is sent.
 */
class GatedPool implements PgPool {
  private gate: { held: () => void; released: Promise<void> } | null = null;
  constructor(readonly inner: pg.Pool) {}

  holdNextInsertingCommit(): { held: Promise<void>; release: () => void } {
    let held!: () => void;
    let release!: () => void;
    const heldPromise = new Promise<void>((resolve) => {
      held = resolve;
    });
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.gate = { held, released };
    return { held: heldPromise, release };
  }

  query(text: string, values?: unknown[]) {
    return this.inner.query(text, values);
  }

  async connect(): Promise<PgPoolClient> {
    const client = await this.inner.connect();
    let inserted = false;
    let inTransaction = false;
    return {
      query: async (statement: string, values?: unknown[]) => {
        const text = sqlOf(statement);
        if (text.startsWith('BEGIN')) {
          inserted = false;
          inTransaction = true;
        }
        const issuingStatement = !inTransaction && /\bINSERT INTO \S*authgate_tokens\b/.test(text);
        if (((text === 'COMMIT' && inserted) || issuingStatement) && this.gate) {
          const gate = this.gate;
          this.gate = null;
          gate.held();
          await gate.released;
        }
        if (text === 'COMMIT' || text === 'ROLLBACK') inTransaction = false;
        const result = await client.query(statement, values);
        if (/\bINSERT INTO\b/.test(text)) inserted = true;
        return result;
      },
      release: (destroy?: boolean | Error) => client.release(destroy),
    };
  }
}

const appName = `ag-revrace-${randomBytes(4).toString('hex')}`;
const pgSetup = DATABASE_URL
  ? {
      schema: schemaName('revrace'),
      pool: new pg.Pool({ connectionString: DATABASE_URL, max: 8, application_name: appName }),
      /** The test's own connections: the row locks it holds, and the look at pg_stat_activity. */
      monitor: new pg.Pool({ connectionString: DATABASE_URL, max: 4, application_name: `${appName}-monitor` }),
    }
  : undefined;
if (pgSetup) {
  pgSetup.pool.on('error', () => {});
  pgSetup.monitor.on('error', () => {});
}

beforeAll(async () => {
  if (!pgSetup) return;
  await new PostgresStorage(pgSetup.pool, { schema: pgSetup.schema }).migrate();
  await installGrantHold(pgSetup.schema);
});
afterAll(async () => {
  if (!pgSetup) return;
  await dropSchema(pgSetup.monitor, pgSetup.schema);
  await pgSetup.pool.end();
  await pgSetup.monitor.end();
});

/** How many connections of the storage's pool wait on a lock right now. */
async function waitingOnLocks(): Promise<number> {
  const { rows } = await pgSetup!.monitor.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
    [appName],
  );
  return rows[0]!.n;
}

/** A transaction of the test's own that holds one row lock until `release()`. */
async function lockRow(table: string, column: string, value: string): Promise<{ release: () => Promise<void> }> {
  const connection = await pgSetup!.monitor.connect();
  await connection.query('BEGIN');
  const { rowCount } = await connection.query(`SELECT 1 FROM ${table} WHERE ${column} = $1 FOR UPDATE`, [value]);
  if (rowCount !== 1) throw new Error(`no row to lock in ${table}`);
  return {
    release: async () => {
      await connection.query('ROLLBACK');
      connection.release();
    },
  };
}

/**
 * A transaction of the test's own that has inserted, and not committed, the consent row of this
 * account and client: a concurrent `INSERT ... ON CONFLICT` of the same key waits for it, and
 * inserts its own row once `release()` rolls it back.
 */
async function holdConsentKey(table: string, accountUuid: string, clientId: string): Promise<{ release: () => Promise<void> }> {
  const connection = await pgSetup!.monitor.connect();
  await connection.query('BEGIN');
  await connection.query(`INSERT INTO ${table} (account_uuid, client_id, scope, granted_at) VALUES ($1, $2, '{}', 0)`, [
    accountUuid,
    clientId,
  ]);
  return {
    release: async () => {
      await connection.query('ROLLBACK');
      connection.release();
    },
  };
}

/**
 * Whether a connection of the storage's pool waits in a statement of an issuance (one that
 * inserts, or that takes the shared issuance locks: a device decision; no revocation does either),
 * on any lock or only on an advisory lock (an issuance lock that a revocation holds or waits for).
 */
async function issuanceWaiting(on: 'any lock' | 'an issuance lock'): Promise<boolean> {
  const { rows } = await pgSetup!.monitor.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
    WHERE a.application_name = $1 AND NOT l.granted
      AND (position('INSERT INTO' in a.query) > 0 OR position('pg_advisory_xact_lock_shared' in a.query) > 0)
      AND ($2 OR l.locktype = 'advisory')`,
    [appName, on === 'any lock'],
  );
  return rows[0]!.n > 0;
}

/** The advisory lock that the test's trigger on the grants table waits for (`holdGrantInserts`). */
const GRANT_HOLD = [424242, 1] as const;

/**
 * A BEFORE INSERT trigger on the grants table of the test's schema that takes `GRANT_HOLD`
 * shared: a grant's INSERT waits there while the test holds it (`holdGrantInserts`) and goes
 * straight on otherwise. createGrant takes its issuance locks in the CTE its INSERT reads, so it
 * waits there holding them, as a transaction held at its COMMIT did.
 */
async function installGrantHold(schema: string): Promise<void> {
  await pgSetup!.monitor.query(
    `CREATE FUNCTION "${schema}".hold_grant_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_advisory_xact_lock_shared(${GRANT_HOLD[0]}, ${GRANT_HOLD[1]}); RETURN NEW; END $$;
    CREATE TRIGGER hold_grant_insert BEFORE INSERT ON "${schema}".authgate_grants
      FOR EACH ROW EXECUTE FUNCTION "${schema}".hold_grant_insert()`,
  );
}

/** Hold every grant INSERT (see `installGrantHold`) until `release()`. */
async function holdGrantInserts(): Promise<{ release: () => Promise<void> }> {
  const connection = await pgSetup!.monitor.connect();
  await connection.query('SELECT pg_advisory_lock($1, $2)', [...GRANT_HOLD]);
  return {
    release: async () => {
      await connection.query('SELECT pg_advisory_unlock($1, $2)', [...GRANT_HOLD]);
      connection.release();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The world of one case: a server on the store, one client that may use every flow, Ada signed in.

/**
 * Where the issuance is held on PostgreSQL: at the COMMIT of its next inserting transaction (or
 * before its next autocommit statement that inserts tokens), at its new grant's INSERT (inside
 * createGrant's one statement, its issuance locks taken), at its consent's INSERT (the key held
 * by the test), or at the decision of this device code.
 */
type Hold = 'commit' | 'grant' | 'consent' | { deviceCode: string };
/** Which side of a forced schedule must answer first. */
type Order = 'issuance first' | 'either';

interface World {
  server: AuthorizationServer;
  storage: Storage;
  clock: FakeClock;
  app: { clientId: string; clientSecret: string };
  /** The app's stored record, to register it again under the same id after `deleteClient`. */
  client: ClientRecord;
  cookie: string;
  errors: unknown[];
  /**
   * A live grant of Ada for the app: the row the forced schedule locks. Stored directly, with no
   * consent: the consent rows need the approval to insert a new one (an existing row would make
   * its save wait for the revocation's DELETE of it, and the approval could not answer first).
   */
  bystander: string;
  /**
   * Run `issue` and `revoke` side by side, `revoke` starting while `issue` is held (`hold`, on
   * PostgreSQL), and check that `issue` answered first; with `order: 'either'`, only note which
   * did (`issuedFirst`), for the schedules in which the issuance waits for the revocation.
   */
  interleave<T>(issue: () => Promise<T>, revoke: () => Promise<void>, hold: Hold, order?: Order): Promise<T>;
  /** Whether the issuance of the last `interleave` answered before the revocation. */
  issuedFirst: boolean;
  /**
   * PostgreSQL: whether the issuance of the last `interleave` was seen waiting on an issuance lock
   * while the revocation was under way (a later step of it waited for the revocation).
   */
  issuanceWaited: boolean;
}

const post = (url: string, form: Record<string, string>): OAuthRequest => ({
  method: 'POST',
  url,
  headers: { ...FORM },
  body: new URLSearchParams(form).toString(),
});
const get = (url: string, cookie: string): OAuthRequest => ({ method: 'GET', url, headers: { cookie } });
const json = (res: OAuthResponse) => JSON.parse(res.body) as Record<string, unknown>;

async function makeWorld(store: 'memory' | 'postgres'): Promise<World> {
  let storage: Storage;
  let gated: GatedPool | undefined;
  /** MemoryStorage: the revocation's storage call waits for this before it runs, when set. */
  let holdRevocation: Promise<void> | null = null;
  /** MemoryStorage: run (and wait for) once the next device decision is stored, before the approval goes on. */
  let afterDecision: (() => Promise<void>) | null = null;
  if (store === 'postgres') {
    gated = new GatedPool(pgSetup!.pool);
    storage = new PostgresStorage(gated, { schema: pgSetup!.schema });
  } else {
    const memory = new MemoryStorage();
    for (const method of ['revokeAccess', 'revokeAccountGrants', 'revokeClientGrants', 'deleteClient'] as const) {
      const inner = memory[method].bind(memory) as (...args: unknown[]) => Promise<void>;
      (memory as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
        if (holdRevocation) await holdRevocation;
        return inner(...args);
      };
    }
    const decide = memory.decideDeviceAuthorization.bind(memory);
    memory.decideDeviceAuthorization = async (...args) => {
      const decided = await decide(...args);
      const run = afterDecision;
      afterDecision = null;
      if (run) await run();
      return decided;
    };
    storage = memory;
  }
  const clock = new FakeClock();
  const sessions = new FakeSessions(clock);
  const errors: unknown[] = [];
  const server = new AuthorizationServer({ storage, sessions, clock, deviceAuthorization: {}, onError: (e) => errors.push(e) });
  const app = await server.registerClient({
    name: 'Racing App',
    redirectUri: CALLBACK,
    responseTypes: ['code', 'token'],
    grantTypes: ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT],
  });
  const client = (await storage.findClient(app.clientId))!;
  const bystander = randomId();
  await storage.createGrant(
    { id: bystander, kind: 'oauth', clientId: app.clientId, account: ADA, scope: ['read'], createdAt: clock.now(), revokedAt: null },
    { tokens: [] },
  );

  async function interleavePostgres<T>(issue: () => Promise<T>, revoke: () => Promise<void>, hold: Hold, order: Order): Promise<T> {
    const t = tableNames(pgSetup!.schema, 'authgate_');
    const bystanderLock = await lockRow(t.grants, 'id', bystander);
    try {
      let releaseIssue: () => Promise<void>;
      let issued: Tracked<T>;
      if (hold === 'commit') {
        const gate = gated!.holdNextInsertingCommit();
        issued = track(issue());
        await within('the issuance reaching its COMMIT', Promise.race([gate.held, issued.promise.then(() => {})]));
        expect(issued.settled, 'the issuance is held at its COMMIT').toBe(false);
        releaseIssue = async () => gate.release();
      } else if (hold === 'grant') {
        const grants = await holdGrantInserts();
        issued = track(issue());
        await until('the grant INSERT waiting for the test', async () => issued.settled || (await waitingOnLocks()) >= 1);
        expect(issued.settled, 'the issuance is held at its grant').toBe(false);
        releaseIssue = grants.release;
      } else if (hold === 'consent') {
        const consentKey = await holdConsentKey(t.consents, ADA.uuid, app.clientId);
        issued = track(issue());
        await until('the consent waiting on its key', async () => issued.settled || (await issuanceWaiting('any lock')));
        expect(issued.settled, 'the issuance is held at its consent').toBe(false);
        releaseIssue = consentKey.release;
      } else {
        const deviceLock = await lockRow(t.deviceAuthorizations, 'hash', sha256Base64url(hold.deviceCode));
        issued = track(issue());
        await until('the approval waiting on its device row', async () => (await waitingOnLocks()) >= 1);
        releaseIssue = deviceLock.release;
      }
      const waitingBefore = await waitingOnLocks();
      const revoked = track(revoke());
      await until('the revocation waiting on a lock', async () => revoked.settled || (await waitingOnLocks()) > waitingBefore);
      expect(revoked.settled, 'the revocation is under way (waiting on a lock) when the issuance goes on').toBe(false);
      await releaseIssue();
      // The issuance answers; or a later step of it (the consent a device approval saves after
      // its decision, the grant an approval creates after its consent) waits for the issuance
      // locks of the revocation, which took them once what it waited for had committed.
      await until(
        'the issuance answering, or waiting for the revocation',
        async () => issued.settled || (await issuanceWaiting('an issuance lock')),
      );
      expect(revoked.settled, 'the revocation is still under way').toBe(false);
      world.issuanceWaited = !issued.settled;
      await bystanderLock.release();
      await within('the revocation answering', revoked.promise);
      const result = await within('the issuance answering', issued.promise);
      world.issuedFirst = issued.at < revoked.at;
      if (order === 'issuance first') expect(world.issuedFirst, 'the issuance answered before the revocation').toBe(true);
      return result;
    } catch (error) {
      await bystanderLock.release().catch(() => {});
      throw error;
    }
  }

  async function interleaveMemory<T>(issue: () => Promise<T>, revoke: () => Promise<void>, hold: Hold): Promise<T> {
    if (typeof hold === 'object') {
      // Held at its decision: the revocation runs once the decision is stored, and the approval
      // goes on after it (whatever it writes after its decision, it writes after the revocation).
      let revoked: Tracked<void> | undefined;
      afterDecision = async () => {
        revoked = track(revoke());
        await within('the revocation', revoked.promise);
      };
      const result = await within('the issuance', issue());
      afterDecision = null;
      if (!revoked) throw new Error('forced schedule: the approval stored no device decision');
      world.issuedFirst = false;
      return result;
    }
    let release!: () => void;
    holdRevocation = new Promise<void>((resolve) => {
      release = resolve;
    });
    const revoked = track(revoke());
    const result = await within('the issuance', issue());
    expect(revoked.settled, 'the issuance answered before the revocation').toBe(false);
    holdRevocation = null;
    release();
    await within('the revocation', revoked.promise);
    world.issuedFirst = true;
    return result;
  }

  const world: World = {
    server,
    storage,
    clock,
    app,
    client,
    cookie: sessions.signIn(ADA),
    errors,
    bystander,
    interleave: (issue, revoke, hold, order = 'issuance first') =>
      store === 'postgres' ? interleavePostgres(issue, revoke, hold, order) : interleaveMemory(issue, revoke, hold),
    issuedFirst: false,
    issuanceWaited: false,
  };
  return world;
}

// ---------------------------------------------------------------------------------------------
// The steps of the flows, on a world.

/** authorize as Ada: the consent interaction's id. */
async function consentFor(w: World, responseType: 'code' | 'token'): Promise<string> {
  const query = new URLSearchParams({
    client_id: w.app.clientId,
    redirect_uri: CALLBACK,
    response_type: responseType,
    scope: 'read',
    state: 's',
  });
  const decision = await w.server.authorize(get(`/v1/oauth/authorize?${query}`, w.cookie));
  if (decision.type !== 'consent') throw new Error(`expected a consent, got ${JSON.stringify(decision)}`);
  return decision.interaction.id;
}

/** approve an interaction: the redirect's URL. */
async function approve(w: World, interactionId: string): Promise<URL> {
  const decision = await w.server.approve(interactionId, get(VERIFY, w.cookie));
  if (decision.type !== 'redirect') throw new Error(`expected a redirect, got ${JSON.stringify(decision)}`);
  return new URL(decision.location, 'https://auth.example');
}

const credentials = (w: World) => ({ client_id: w.app.clientId, client_secret: w.app.clientSecret });

const exchange = (w: World, code: string) =>
  w.server.token(post('/v1/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, ...credentials(w) }));

const refresh = (w: World, refreshToken: string) =>
  w.server.token(post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, ...credentials(w) }));

const poll = (w: World, deviceCode: string) =>
  w.server.token(post('/v1/oauth/token', { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode, ...credentials(w) }));

/** A device authorization of the app, its user code entered by Ada: the device code and the consent interaction. */
async function deviceConsent(w: World, scope?: string): Promise<{ deviceCode: string; interaction: string }> {
  const form = { ...credentials(w), ...(scope !== undefined && { scope }) };
  const started = json(await w.server.deviceAuthorization(post('/v1/oauth/device', form), `https://a.example${VERIFY}`));
  const outcome = await w.server.enterUserCode(started['user_code'] as string, get(VERIFY, w.cookie), VERIFY);
  if (outcome.type !== 'decision' || outcome.decision.type !== 'consent') throw new Error('expected a confirmation');
  return { deviceCode: started['device_code'] as string, interaction: outcome.decision.interaction.id };
}

type Tokens = { access: string; refresh?: string };
function tokensOf(res: OAuthResponse): Tokens {
  if (res.status !== 200) throw new Error(`expected tokens, got ${res.status} ${res.body}`);
  const body = json(res);
  return {
    access: body['access_token'] as string,
    ...(body['refresh_token'] !== undefined && { refresh: body['refresh_token'] as string }),
  };
}

/** What of these tokens still works: empty when all are dead. */
async function usableTokens(w: World, tokens: Tokens): Promise<string[]> {
  const usable: string[] = [];
  const bearer = await w.server.authenticate({ method: 'GET', url: '/v2/account', headers: { authorization: `Bearer ${tokens.access}` } });
  if (bearer.ok) usable.push('the access token authenticates');
  const found = await w.storage.findToken(sha256Base64url(tokens.access));
  if (found && found.grant.revokedAt === null) usable.push('the access token’s grant is not revoked');
  if (tokens.refresh !== undefined && (await refresh(w, tokens.refresh)).status === 200) usable.push('the refresh token refreshes');
  return usable;
}

/** What of a device approval still works: a poll's tokens, or the approval itself. */
async function deviceUsable(w: World, deviceCode: string): Promise<string[]> {
  const usable: string[] = [];
  const res = await poll(w, deviceCode);
  if (res.status === 200) usable.push('a poll got tokens');
  const record = await w.storage.pollDeviceAuthorization!(sha256Base64url(deviceCode), w.app.clientId, w.clock.now(), 0);
  if (record.status === 'approved') usable.push('the device authorization is still approved');
  return usable;
}

/** What of a code still works: an exchange, or its grant. */
async function codeUsable(w: World, code: string): Promise<string[]> {
  const usable: string[] = [];
  if ((await exchange(w, code)).status === 200) usable.push('the code was exchanged for tokens');
  const redeemed = await w.storage.redeemCode(sha256Base64url(code), w.clock.now(), []);
  if (redeemed.ok) usable.push('the code’s grant is not revoked');
  return usable;
}

/**
 * What is left of Ada's consent to the app: empty when it is gone. The user meets a consent
 * left behind as `prompt=none` getting a code without asking, so that is asked too (after
 * `deleteClient`, of the app registered again under the same id, as a host that keeps its
 * clients' ids in its configuration would; else prompt=none would only find no client).
 */
async function consentLeft(w: World): Promise<string[]> {
  const left: string[] = [];
  if (await w.storage.findConsent(ADA.uuid, w.app.clientId)) left.push('the consent is stored');
  if (!(await w.storage.findClient(w.app.clientId))) await w.storage.saveClient(w.client);
  const query = new URLSearchParams({
    client_id: w.app.clientId,
    redirect_uri: CALLBACK,
    response_type: 'code',
    scope: 'read',
    state: 's',
    prompt: 'none',
  });
  const silent = await w.server.authorize(get(`/v1/oauth/authorize?${query}`, w.cookie));
  const answer = silent.type === 'redirect' ? new URL(silent.location).searchParams : null;
  if (answer?.get('error') !== 'consent_required') {
    left.push(`prompt=none answered ${answer?.has('code') ? 'a code' : (answer?.get('error') ?? silent.type)}, not consent_required`);
  }
  return left;
}

// ---------------------------------------------------------------------------------------------
// The table.

type Revocation = 'revokeAllForAccount' | 'revokeAccess' | 'revokeClientTokens' | 'deleteClient';
const REVOCATIONS: Record<Revocation, (w: World) => Promise<void>> = {
  revokeAllForAccount: (w) => w.server.revokeAllForAccount(ADA.uuid),
  revokeAccess: (w) => w.server.revokeAccess({ accountUuid: ADA.uuid, clientId: w.app.clientId }),
  revokeClientTokens: (w) => w.server.revokeClientTokens(w.app.clientId),
  deleteClient: (w) => w.server.deleteClient(w.app.clientId),
};
const ALL = Object.keys(REVOCATIONS) as Revocation[];

interface Path {
  /** The revocations that cover what it issues (a personal token belongs to no client). */
  revocations: Revocation[];
  /** Runs the issuance racing `revoke` (through `w.interleave`), then answers what of it still works. */
  race(w: World, revoke: () => Promise<void>): Promise<string[]>;
}

const PATHS: Record<string, Path> = {
  'a device approval redeemed by a poll (redeemDeviceAuthorization)': {
    revocations: ALL,
    async race(w, revoke) {
      const { deviceCode, interaction } = await deviceConsent(w);
      await approve(w, interaction);
      const tokens = await w.interleave(async () => tokensOf(await poll(w, deviceCode)), revoke, 'commit');
      return usableTokens(w, tokens);
    },
  },
  'a device approved on the verification page (decideDeviceAuthorization), polled afterwards': {
    revocations: ALL,
    async race(w, revoke) {
      const { deviceCode, interaction } = await deviceConsent(w);
      // On PostgreSQL the approval answers after the revocation: its consent, saved after the
      // decision the revocation waited for, then waits for the revocation (header). The
      // decision was made first, so the revocation must deny it all the same.
      await w.interleave(() => approve(w, interaction), revoke, { deviceCode }, 'either');
      return deviceUsable(w, deviceCode);
    },
  },
  'a code issued on approval (createGrant), exchanged afterwards': {
    revocations: ALL,
    async race(w, revoke) {
      const interaction = await consentFor(w, 'code');
      const url = await w.interleave(() => approve(w, interaction), revoke, 'grant');
      return codeUsable(w, url.searchParams.get('code')!);
    },
  },
  'an implicit access token (createGrant)': {
    revocations: ALL,
    async race(w, revoke) {
      const interaction = await consentFor(w, 'token');
      const url = await w.interleave(() => approve(w, interaction), revoke, 'grant');
      const access = new URLSearchParams(url.hash.slice(1)).get('access_token');
      if (!access) throw new Error(`expected an access token, got ${url.href}`);
      return usableTokens(w, { access });
    },
  },
  'a personal access token (createGrant)': {
    revocations: ['revokeAllForAccount'],
    async race(w, revoke) {
      const created = await w.interleave(
        () => w.server.createPersonalToken({ account: ADA, name: 'CI', scope: ['read'] }),
        revoke,
        'grant',
      );
      return usableTokens(w, { access: created.token });
    },
  },
  'a code exchanged (redeemCode)': {
    revocations: ALL,
    async race(w, revoke) {
      const code = (await approve(w, await consentFor(w, 'code'))).searchParams.get('code')!;
      const tokens = await w.interleave(async () => tokensOf(await exchange(w, code)), revoke, 'commit');
      return usableTokens(w, tokens);
    },
  },
  'a refresh token rotated (rotateRefreshToken)': {
    revocations: ALL,
    async race(w, revoke) {
      const code = (await approve(w, await consentFor(w, 'code'))).searchParams.get('code')!;
      const first = tokensOf(await exchange(w, code));
      const tokens = await w.interleave(async () => tokensOf(await refresh(w, first.refresh!)), revoke, 'commit');
      return usableTokens(w, tokens);
    },
  },
};

const cases = Object.entries(PATHS).flatMap(([path, p]) => p.revocations.map((revocation) => [revocation, path] as const));
const stores: ('memory' | 'postgres')[] = pgSetup ? ['memory', 'postgres'] : ['memory'];

describe.each(stores)('%s: a revocation racing an issuance (forced interleaving)', (store) => {
  it.each(cases)('%s racing %s: what was issued before it returned is dead', async (revocation, path) => {
    const w = await makeWorld(store);
    const usable = await PATHS[path]!.race(w, () => REVOCATIONS[revocation](w));
    expect(usable).toEqual([]);
    expect(w.errors).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Consents. A revocation that deletes them (revokeAllForAccount, revokeAccess, deleteClient)
// racing a step that saves one: a consent saved by an approval that answered before the
// revocation returned is gone, and prompt=none for the app answers consent_required. An
// approval saves its consent before createGrant, and a device approval before its decision, so
// each can answer first only when its consent was saved before the revocation took its lock
// ('grant', or the decision held at its device row); one whose consent INSERT is still in flight
// then answers after the revocation (the PostgreSQL cases below the table).

const DELETES_CONSENTS: Revocation[] = ['revokeAllForAccount', 'revokeAccess', 'deleteClient'];

const CONSENT_PATHS: Record<string, (w: World, revoke: () => Promise<void>) => Promise<string[]>> = {
  'a device approval (saveConsent, then decideDeviceAuthorization), held at its decision': async (w, revoke) => {
    const { deviceCode, interaction } = await deviceConsent(w, 'read');
    // MemoryStorage: the revocation runs between the decision and whatever the approval writes
    // after it. PostgreSQL: the decision waits on its device row holding its issuance locks, so
    // the revocation waits for it, then denies it and deletes the consent saved before it.
    await w.interleave(() => approve(w, interaction), revoke, { deviceCode }, 'either');
    return [...(await deviceUsable(w, deviceCode)), ...(await consentLeft(w))];
  },
  'an approval (saveConsent, then createGrant), its code held at its grant': async (w, revoke) => {
    const interaction = await consentFor(w, 'code');
    const url = await w.interleave(() => approve(w, interaction), revoke, 'grant');
    return [...(await codeUsable(w, url.searchParams.get('code')!)), ...(await consentLeft(w))];
  },
};

const consentCases = Object.keys(CONSENT_PATHS).flatMap((path) => DELETES_CONSENTS.map((revocation) => [revocation, path] as const));

describe.each(stores)('%s: a revocation racing a consent (forced interleaving)', (store) => {
  it.each(consentCases)('%s racing %s: prompt=none then answers consent_required', async (revocation, path) => {
    const w = await makeWorld(store);
    const left = await CONSENT_PATHS[path]!(w, () => REVOCATIONS[revocation](w));
    expect(left).toEqual([]);
    expect(w.errors).toEqual([]);
  });

  // The check above must be able to fail: without a revocation, the same consent lets prompt=none
  // through (the device request asks the same scope, without resource, as the silent one).
  it.each(Object.keys(CONSENT_PATHS))('without a revocation, %s leaves a consent prompt=none uses', async (path) => {
    const w = await makeWorld(store);
    const left = await CONSENT_PATHS[path]!(Object.assign(w, { interleave: <T>(issue: () => Promise<T>) => issue() }), async () => {});
    expect(left).toContain('the consent is stored');
    expect(left).toContain('prompt=none answered a code, not consent_required');
  });
});

describe.skipIf(!pgSetup)('postgres: a device approval whose consent is being written when a revocation starts', () => {
  it.each(DELETES_CONSENTS)('%s: its consent is gone, and its decision, made after it (it waited for it), stands', async (revocation) => {
    const w = await makeWorld('postgres');
    const { deviceCode, interaction } = await deviceConsent(w, 'read');
    await w.interleave(
      () => approve(w, interaction),
      () => REVOCATIONS[revocation](w),
      'consent',
      'either',
    );
    // The revocation waited for the consent's INSERT, took its lock, deleted the consent; the
    // approval's decision then waited for it (the schedule saw it wait on the revocation's lock),
    // so the device was approved after it, as a code is issued after it in the case below: had
    // the decision come first, the revocation would have denied it. Which of the two answers
    // first is not asserted: the decision is one statement, whose answer can reach the process
    // in the same tick as the revocation's COMMIT.
    expect(await w.storage.findConsent(ADA.uuid, w.app.clientId)).toBeNull();
    const after = await w.storage.pollDeviceAuthorization!(sha256Base64url(deviceCode), w.app.clientId, w.clock.now(), 0);
    expect(after.status).toBe('approved');
    expect(w.errors).toEqual([]);
  });
});

describe.skipIf(!pgSetup)('postgres: an approval whose consent is being written when a revocation starts', () => {
  it.each(DELETES_CONSENTS)('%s: the approval answers first, and its consent and its code are dead', async (revocation) => {
    const w = await makeWorld('postgres');
    const interaction = await consentFor(w, 'code');
    const url = await w.interleave(
      () => approve(w, interaction),
      () => REVOCATIONS[revocation](w),
      'consent',
      'either',
    );
    // PostgresStorage has the combinedApproval group: the approval is one statement (the
    // interaction taken, the consent saved, the grant and its code created), which took its
    // issuance locks before it waited on the test's consent row. The revocation waited for it,
    // then deleted its consent and revoked its grant: the approval never waited on the
    // revocation (a store without the group saves the consent and creates the grant in two
    // statements, and the second waits: the memory cases and the model cover that order).
    expect(w.issuanceWaited).toBe(false);
    expect(await w.storage.findConsent(ADA.uuid, w.app.clientId)).toBeNull();
    expect(await codeUsable(w, url.searchParams.get('code')!)).toEqual([]);
    expect(w.errors).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// What the locks cost in round trips: nothing on the issuance steps and saveConsent (each lock is
// taken by a statement the step sends anyway), three on a revocation (BEGIN, the lock, COMMIT).
// createGrant is one statement (its locks, the grant, its code or tokens).

/** `PgPool` that counts round trips: every `query`, on the pool or on a checked-out connection. */
class CountingPool implements PgPool {
  count = 0;
  constructor(readonly inner: pg.Pool) {}
  query(text: string, values?: unknown[]) {
    this.count++;
    return this.inner.query(text, values);
  }
  async connect(): Promise<PgPoolClient> {
    const client = await this.inner.connect();
    return {
      query: (text: string, values?: unknown[]) => {
        this.count++;
        return client.query(text, values);
      },
      release: (destroy?: boolean | Error) => client.release(destroy),
    };
  }
}

describe.skipIf(!pgSetup)('PostgresStorage: round trips of the steps the issuance locks touch', () => {
  it('createGrant 1 with a code, approveInteraction 1, redeemDeviceAuthorization 5, decideDeviceAuthorization 1, saveConsent 1; each revocation 4', async () => {
    const counting = new CountingPool(pgSetup!.pool);
    const storage = new PostgresStorage(counting, { schema: pgSetup!.schema });
    const rounds = async (step: () => Promise<unknown>) => {
      const before = counting.count;
      await step();
      return counting.count - before;
    };
    const now = Date.now();
    const grant = () => ({
      id: randomId(),
      kind: 'oauth' as const,
      clientId: 'c1',
      account: ADA,
      scope: ['read'],
      createdAt: now,
      revokedAt: null,
    });
    const g = grant();
    const code = {
      hash: randomId(),
      grantId: g.id,
      clientId: 'c1',
      redirectUri: CALLBACK,
      scope: ['read'],
      codeChallenge: null,
      codeChallengeMethod: null,
      expiresAt: now + 60_000,
      usedAt: null,
    };
    const device = {
      hash: randomId(),
      userCodeHash: randomId(),
      clientId: 'c1',
      scope: ['read'],
      createdAt: now,
      expiresAt: now + 60_000,
      interval: 5,
      lastPolledAt: null,
      status: 'pending' as const,
      account: null,
      decidedAt: null,
    };
    await storage.createDeviceAuthorization(device);
    const counts = {
      createGrant: await rounds(() => storage.createGrant(g, { code })),
      approveInteraction: await rounds(async () => {
        const interaction = {
          idHash: randomId(),
          kind: 'consent' as const,
          purpose: 'authorization' as const,
          request: { clientId: 'c1', redirectUri: CALLBACK, responseType: 'code' as const, scope: ['read'], prompt: [] },
          requestedAt: now,
          expiresAt: now + 60_000,
          loginAfter: null,
          account: ADA,
        };
        await counting.inner.query(
          `INSERT INTO "${pgSetup!.schema}".authgate_interactions (id_hash, kind, purpose, request, requested_at, expires_at, account) VALUES ($1, 'consent', 'authorization', $2::jsonb, $3, $4, $5::jsonb)`,
          [interaction.idHash, JSON.stringify(interaction.request), now, now + 60_000, JSON.stringify(ADA)],
        );
        const approved = grant();
        const consent = {
          accountUuid: ADA.uuid,
          clientId: 'c1',
          scope: ['read'],
          approvals: [{ resource: null, scope: ['read'] }],
          grantedAt: now,
        };
        expect(
          await storage.approveInteraction(interaction.idHash, now, consent, approved, {
            code: { ...code, hash: randomId(), grantId: approved.id },
          }),
        ).toBe(true);
      }),
      decideDeviceAuthorization: await rounds(() => storage.decideDeviceAuthorization(device.hash, now, ADA)),
      saveConsent: await rounds(() =>
        storage.saveConsent({
          accountUuid: ADA.uuid,
          clientId: 'c1',
          scope: ['read'],
          approvals: [{ resource: null, scope: ['read'] }],
          grantedAt: now,
        }),
      ),
      redeemDeviceAuthorization: await rounds(() => {
        const redeemed = grant();
        const access = {
          hash: randomId(),
          kind: 'access' as const,
          grantId: redeemed.id,
          clientId: 'c1',
          scope: ['read'],
          issuedAt: now,
          expiresAt: now + 60_000,
          pairHash: null,
          rotatedAt: null,
          revokedAt: null,
        };
        return storage.redeemDeviceAuthorization(device.hash, now, redeemed, [access]);
      }),
      revokeAccountGrants: await rounds(() => storage.revokeAccountGrants(ADA.uuid, now)),
      revokeAccess: await rounds(() => storage.revokeAccess(ADA.uuid, 'c1', now)),
      revokeClientGrants: await rounds(() => storage.revokeClientGrants('c1', now)),
      deleteClient: await rounds(() => storage.deleteClient('c1', now)),
    };
    expect(counts).toEqual({
      createGrant: 1,
      approveInteraction: 1,
      decideDeviceAuthorization: 1,
      saveConsent: 1,
      redeemDeviceAuthorization: 5,
      revokeAccountGrants: 4,
      revokeAccess: 4,
      revokeClientGrants: 4,
      deleteClient: 4,
    });
  });
});
