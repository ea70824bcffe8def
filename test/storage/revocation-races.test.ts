/**
 * A revocation racing an issuance, with the interleaving forced (docs/architecture.md,
 * "Revocation racing issuance"): once a revocation returns, nothing of its account or client
 * that was issued before it returned works. Every revocation kind (revokeAllForAccount,
 * revokeAccess, revokeClientTokens, deleteClient) against every step that inserts a grant or
 * makes one live (a device approval and its redemption, a code, an implicit token, a personal
 * access token) or adds tokens to a grant (a code exchange, a refresh).
 *
 * On PostgreSQL the schedule is forced through the pool and two row locks:
 * 1. a "bystander" grant of the same account and client is locked (`FOR UPDATE`, as a concurrent
 *    writer of that row would), so the revocation, once it reaches that row, waits in the
 *    middle of its work;
 * 2. the issuance runs up to its COMMIT, which the pool wrapper holds; a device approval, one
 *    autocommit statement, is held instead by a lock on its device row, which it waits for
 *    after taking its issuance locks (src/postgres/locks.ts);
 * 3. the revocation starts, and the test waits until it waits on a lock: the bystander row, or
 *    the issuance locks the held issuance holds;
 * 4. the issuance is let go and answers, while the revocation still waits;
 * 5. the bystander row is let go, and the revocation answers.
 * So the issuance always answers first; its code, token or approval must then be dead. Without
 * the issuance locks, the revocation's single UPDATE took its snapshot in step 3, did not see
 * the grant committed in step 4, and left it live.
 *
 * On MemoryStorage every storage step is atomic, so the only interleaving that matters is the
 * revocation's storage call waiting (not yet run) while the issuance runs to its answer: the
 * same table, with the revocation held at the storage seam.
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
 * sends every statement but its COMMIT, which waits for `release()`.
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
    return {
      query: async (text: string, values?: unknown[]) => {
        if (text.startsWith('BEGIN')) inserted = false;
        if (text === 'COMMIT' && inserted && this.gate) {
          const gate = this.gate;
          this.gate = null;
          gate.held();
          await gate.released;
        }
        const result = await client.query(text, values);
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
  if (pgSetup) await new PostgresStorage(pgSetup.pool, { schema: pgSetup.schema }).migrate();
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

// ---------------------------------------------------------------------------------------------
// The world of one case: a server on the store, one client that may use every flow, Ada signed in.

type Hold = 'commit' | { deviceCode: string };

interface World {
  server: AuthorizationServer;
  storage: Storage;
  clock: FakeClock;
  app: { clientId: string; clientSecret: string };
  cookie: string;
  errors: unknown[];
  /**
   * A live grant of Ada for the app: the row the forced schedule locks. Stored directly, with no
   * consent: a device approval saves one after its decision, and with a consent row already
   * there that save would wait for the revocation's DELETE of it, so the approval could not
   * answer first.
   */
  bystander: string;
  /** Run `issue` and `revoke` so that `issue` answers first while `revoke` is under way. */
  interleave<T>(issue: () => Promise<T>, revoke: () => Promise<void>, hold: Hold): Promise<T>;
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
  const bystander = randomId();
  await storage.createGrant(
    { id: bystander, clientId: app.clientId, account: ADA, scope: ['read'], createdAt: clock.now(), revokedAt: null },
    { tokens: [] },
  );

  async function interleavePostgres<T>(issue: () => Promise<T>, revoke: () => Promise<void>, hold: Hold): Promise<T> {
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
      const result = await within('the issuance answering while the revocation waits', issued.promise);
      expect(revoked.settled, 'the issuance answered before the revocation').toBe(false);
      await bystanderLock.release();
      await within('the revocation answering', revoked.promise);
      expect(issued.at).toBeLessThan(revoked.at);
      return result;
    } catch (error) {
      await bystanderLock.release().catch(() => {});
      throw error;
    }
  }

  async function interleaveMemory<T>(issue: () => Promise<T>, revoke: () => Promise<void>): Promise<T> {
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
    return result;
  }

  return {
    server,
    storage,
    clock,
    app,
    cookie: sessions.signIn(ADA),
    errors,
    bystander,
    interleave: (issue, revoke, hold) => (store === 'postgres' ? interleavePostgres(issue, revoke, hold) : interleaveMemory(issue, revoke)),
  };
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
async function deviceConsent(w: World): Promise<{ deviceCode: string; interaction: string }> {
  const started = json(await w.server.deviceAuthorization(post('/v1/oauth/device', credentials(w)), `https://a.example${VERIFY}`));
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
      await w.interleave(() => approve(w, interaction), revoke, { deviceCode });
      const usable: string[] = [];
      const res = await poll(w, deviceCode);
      if (res.status === 200) usable.push('a poll got tokens');
      const record = await w.storage.pollDeviceAuthorization!(sha256Base64url(deviceCode), w.app.clientId, w.clock.now(), 0);
      if (record.status === 'approved') usable.push('the device authorization is still approved');
      return usable;
    },
  },
  'a code issued on approval (createGrant), exchanged afterwards': {
    revocations: ALL,
    async race(w, revoke) {
      const interaction = await consentFor(w, 'code');
      const url = await w.interleave(() => approve(w, interaction), revoke, 'commit');
      const code = url.searchParams.get('code')!;
      const usable: string[] = [];
      if ((await exchange(w, code)).status === 200) usable.push('the code was exchanged for tokens');
      const redeemed = await w.storage.redeemCode(sha256Base64url(code), w.clock.now(), []);
      if (redeemed.ok) usable.push('the code’s grant is not revoked');
      return usable;
    },
  },
  'an implicit access token (createGrant)': {
    revocations: ALL,
    async race(w, revoke) {
      const interaction = await consentFor(w, 'token');
      const url = await w.interleave(() => approve(w, interaction), revoke, 'commit');
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
        'commit',
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
// What the locks cost in round trips: nothing on the issuance steps (each lock is taken by a
// statement the step sends anyway), three on a revocation (BEGIN, the lock, COMMIT).

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
  it('createGrant 4 with a code, redeemDeviceAuthorization 5, decideDeviceAuthorization 1; each revocation 4', async () => {
    const counting = new CountingPool(pgSetup!.pool);
    const storage = new PostgresStorage(counting, { schema: pgSetup!.schema });
    const rounds = async (step: () => Promise<unknown>) => {
      const before = counting.count;
      await step();
      return counting.count - before;
    };
    const now = Date.now();
    const grant = () => ({ id: randomId(), clientId: 'c1', account: ADA, scope: ['read'], createdAt: now, revokedAt: null });
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
      decideDeviceAuthorization: await rounds(() => storage.decideDeviceAuthorization(device.hash, now, ADA)),
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
      createGrant: 4,
      decideDeviceAuthorization: 1,
      redeemDeviceAuthorization: 5,
      revokeAccountGrants: 4,
      revokeAccess: 4,
      revokeClientGrants: 4,
      deleteClient: 4,
    });
  });
});
