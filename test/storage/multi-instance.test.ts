/**
 * Several authgate processes on one PostgreSQL database, as behind a load balancer: two separate
 * Node processes (test/storage/fixtures/server.ts), each an Express app on PostgresStorage, share
 * one schema. Requests go over real sockets; races use one undici Client (one connection) per
 * racer, warmed up first, so the requests really arrive together at both instances.
 *
 * - a code issued through A is redeemed at B, and its replay at A revokes what B issued;
 * - 50 concurrent redemptions of one code, split across A and B: exactly one success;
 * - the same for a refresh token;
 * - SIGKILL of A in the middle of a burst of refreshes and code exchanges: every token a client
 *   received still works or was legitimately rotated, and no half-rotated pair remains (checked
 *   in the database: exactly one live refresh token per family);
 * - restart: a new process on the same database accepts the tokens issued before, a rotated
 *   refresh token stays rotated (reuse is still detected), a revoked token stays revoked.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthorizationServer, type RegisteredClient } from '../../src/index.js';
import { sha256Base64url } from '../../src/crypto.js';
import { PostgresStorage } from '../../src/postgres/index.js';
import { CALLBACK } from '../fixtures.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from './pg.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/server.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RACERS = 50;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

interface Instance {
  name: string;
  origin: string;
  child: ChildProcess;
  exited: Promise<unknown>;
  log: string[];
}

const children = new Set<ChildProcess>();
const schema = schemaName('multi');
const pool = makePool(5);

/** Start one server process and wait for its port. */
async function start(name: string, commitDelayMs = 0): Promise<Instance> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL,
    AUTHGATE_SCHEMA: schema,
    AUTHGATE_INSTANCE: name,
    AUTHGATE_COMMIT_DELAY_MS: String(commitDelayMs),
  };
  delete env['NODE_OPTIONS'];
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const log: string[] = [];
  const exited = once(child, 'exit').then((args) => {
    children.delete(child);
    return args;
  });
  child.stderr!.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 30 s:\n${log.join('')}`)), 30_000);
    lines.on('line', (line) => {
      try {
        const message = JSON.parse(line) as { ready?: boolean; port?: number };
        if (message.ready && message.port) {
          clearTimeout(timer);
          resolve(message.port);
        }
      } catch {
        log.push(line);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before it was ready:\n${log.join('')}`));
    });
  });
  return { name, origin: `http://127.0.0.1:${port}`, child, exited, log };
}

async function kill(instance: Instance, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (instance.child.exitCode === null && instance.child.signalCode === null) instance.child.kill(signal);
  await instance.exited;
}

interface Reply {
  status: number;
  body: Record<string, unknown>;
  location: string | null;
  setCookie: string[];
  text: string;
}

async function http(
  instance: Instance,
  path: string,
  init: { method?: string; headers?: Record<string, string>; form?: Record<string, string> } = {},
): Promise<Reply> {
  const res = await fetch(`${instance.origin}${path}`, {
    method: init.method ?? (init.form ? 'POST' : 'GET'),
    headers: { ...(init.form ? FORM : {}), ...init.headers },
    ...(init.form && { body: new URLSearchParams(init.form).toString() }),
    redirect: 'manual',
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* HTML or empty */
  }
  return { status: res.status, body, location: res.headers.get('location'), setCookie: res.headers.getSetCookie(), text };
}

const hiddenField = (html: string, field: string) => new RegExp(`name="${field}" value="([^"]*)"`).exec(html)?.[1];
const newAccount = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');

let client: RegisteredClient;

/** Authorize at `shownBy` (the consent page), approve at `decidedAt`: returns the code. */
async function getCode(shownBy: Instance, decidedAt: Instance, account = newAccount()): Promise<string> {
  const query = new URLSearchParams({
    client_id: client.clientId,
    redirect_uri: CALLBACK,
    response_type: 'code',
    scope: 'read write',
    state: 'st',
  });
  const page = await http(shownBy, `/v1/oauth/authorize?${query}`, { headers: { 'x-test-account': account } });
  expect(page.status, page.text).toBe(200);
  const interaction = hiddenField(page.text, 'interaction');
  const csrf = hiddenField(page.text, 'csrf');
  expect(interaction && csrf).toBeTruthy();
  // The same browser: it sends back the binding cookie A set (bound at A, checked at B).
  const binding = page.setCookie.find((line) => line.startsWith('authgate_browser='))?.split(';')[0];
  expect(binding).toBeTruthy();
  const decided = await http(decidedAt, '/v1/oauth/authorize/decision', {
    headers: { 'x-test-account': account, cookie: `authgate_csrf=${csrf}; ${binding}` },
    form: { interaction: interaction!, csrf: csrf!, decision: 'approve' },
  });
  expect([302, 303], decided.text).toContain(decided.status);
  const code = new URL(decided.location!).searchParams.get('code');
  expect(code).toBeTruthy();
  return code!;
}

const exchangeForm = (code: string) => ({
  grant_type: 'authorization_code',
  code,
  redirect_uri: CALLBACK,
  client_id: client.clientId,
  client_secret: client.clientSecret,
});
const refreshForm = (refreshToken: string) => ({ grant_type: 'refresh_token', refresh_token: refreshToken });
const me = async (instance: Instance, accessToken: string) =>
  (await http(instance, '/v2/me', { headers: { authorization: `Bearer ${accessToken}` } })).status;

async function tokens(instance: Instance, code: string): Promise<{ access: string; refresh: string }> {
  const res = await http(instance, '/v1/oauth/token', { form: exchangeForm(code) });
  expect(res.status, res.text).toBe(200);
  return { access: res.body['access_token'] as string, refresh: res.body['refresh_token'] as string };
}

/** Live refresh tokens of the grant a token belongs to, read from the database directly. */
async function liveRefreshTokens(anyTokenOfTheFamily: string): Promise<{ grantRevoked: boolean; live: string[] }> {
  const hash = sha256Base64url(anyTokenOfTheFamily);
  const { rows } = await pool.query(
    `SELECT g.revoked_at, coalesce(array_agg(t.hash) FILTER (WHERE t.kind = 'refresh' AND t.rotated_at IS NULL AND t.revoked_at IS NULL), '{}') AS live
       FROM "${schema}".authgate_tokens AS mine
       JOIN "${schema}".authgate_grants AS g ON g.id = mine.grant_id
       JOIN "${schema}".authgate_tokens AS t ON t.grant_id = g.id
      WHERE mine.hash = $1
      GROUP BY g.revoked_at`,
    [hash],
  );
  expect(rows, `no token ${hash} in the database`).toHaveLength(1);
  return { grantRevoked: rows[0].revoked_at !== null, live: rows[0].live as string[] };
}

/** Fire one identical POST from `RACERS` warmed-up connections, half to each instance, at once. */
async function race(
  instances: Instance[],
  path: string,
  form: Record<string, string>,
): Promise<Array<{ status: number; body: Record<string, unknown> }>> {
  const clients = Array.from({ length: RACERS }, (_, i) => new Client(instances[i % instances.length]!.origin, { pipelining: 1 }));
  try {
    await Promise.all(clients.map(async (c) => (await c.request({ method: 'GET', path: '/health' })).body.dump()));
    const body = new URLSearchParams(form).toString();
    return await Promise.all(
      clients.map(async (c) => {
        const res = await c.request({ method: 'POST', path, headers: FORM, body });
        return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
      }),
    );
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

describe.skipIf(!DATABASE_URL)('several authgate processes on one PostgreSQL database', { timeout: 90_000 }, () => {
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    // Both start at once: their migrate() calls race, and the advisory lock serializes them.
    // A commits slowly (20 ms before and after each COMMIT) so that the SIGKILL test lands inside
    // its transactions and between a commit and its response.
    [a, b] = await Promise.all([start('A', 20), start('B')]);
    // Registration through a third server object in this process, on the same database.
    const admin = new AuthorizationServer({ storage: new PostgresStorage(pool, { schema }), sessions: { current: () => null } });
    client = await admin.registerClient({ name: 'Multi-instance App', redirectUri: CALLBACK });
  }, 60_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await dropSchema(pool, schema);
    await pool.end();
  });

  it('a code issued through A (consent shown by A, approved at B) is redeemed at B; its replay at A revokes what B issued', async () => {
    const code = await getCode(a, b);
    const issued = await tokens(b, code);
    expect(await me(a, issued.access)).toBe(200);
    expect(await me(b, issued.access)).toBe(200);
    const replay = await http(a, '/v1/oauth/token', { form: exchangeForm(code) });
    expect(replay.status).toBe(400);
    expect(replay.body['error']).toBe('invalid_grant');
    expect(await me(b, issued.access)).toBe(401);
    expect((await http(b, '/v1/oauth/token', { form: refreshForm(issued.refresh) })).status).toBe(400);
  });

  it('a token revoked at A is refused at B at once (no cache)', async () => {
    const issued = await tokens(a, await getCode(b, a));
    expect(await me(b, issued.access)).toBe(200);
    expect((await http(a, '/v1/oauth/revoke', { form: { token: issued.access } })).status).toBe(200);
    expect(await me(b, issued.access)).toBe(401);
  });

  it(`${RACERS} concurrent redemptions of one code, split across A and B: exactly one succeeds (3 rounds)`, async () => {
    for (let round = 0; round < 3; round++) {
      const code = await getCode(a, b);
      const results = await race([a, b], '/v1/oauth/token', exchangeForm(code));
      const ok = results.filter((r) => r.status === 200);
      expect(ok, `round ${round}`).toHaveLength(1);
      expect(
        results.filter((r) => r.status !== 200).every((r) => r.status === 400 && r.body['error'] === 'invalid_grant'),
        JSON.stringify(results.map((r) => r.status)),
      ).toBe(true);
      // The losers were replays of a used code: the family is revoked, so nothing of it is live.
      const family = await liveRefreshTokens(ok[0]!.body['refresh_token'] as string);
      expect(family.grantRevoked).toBe(true);
      expect(await me(a, ok[0]!.body['access_token'] as string)).toBe(401);
    }
  });

  it(`${RACERS} concurrent refreshes of one refresh token, split across A and B: exactly one succeeds (3 rounds)`, async () => {
    for (let round = 0; round < 3; round++) {
      const issued = await tokens(a, await getCode(a, a));
      const results = await race([a, b], '/v1/oauth/token', refreshForm(issued.refresh));
      const ok = results.filter((r) => r.status === 200);
      expect(ok, `round ${round}`).toHaveLength(1);
      expect(
        results.filter((r) => r.status !== 200).every((r) => r.status === 400 && r.body['error'] === 'invalid_grant'),
        JSON.stringify(results.map((r) => r.status)),
      ).toBe(true);
      const family = await liveRefreshTokens(issued.refresh);
      // Exactly one rotation happened (one new refresh token in the family), and the replays revoked it.
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM "${schema}".authgate_tokens WHERE grant_id = (SELECT grant_id FROM "${schema}".authgate_tokens WHERE hash = $1) AND kind = 'refresh'`,
        [sha256Base64url(issued.refresh)],
      );
      expect(rows[0].n).toBe(2);
      expect(family.live.length).toBeLessThanOrEqual(1);
      expect(family.grantRevoked).toBe(true);
    }
  });

  it('SIGKILL of one instance in the middle of a burst of refreshes and code exchanges loses no token a client received and leaves no half-rotated pair', async () => {
    const WORKERS = 12;
    const STEPS = 30;
    const families = await Promise.all(Array.from({ length: WORKERS }, async () => tokens(b, await getCode(b, b))));
    const codes = await Promise.all(Array.from({ length: WORKERS }, () => getCode(b, b)));
    let aDead = false;
    let successes = 0;
    const killAfter = 60;
    let killed: Promise<void> | undefined;
    const target = (i: number) => (aDead || i % 2 === 1 ? b : a);
    let nearKill!: () => void;
    const exchangesGo = new Promise<void>((resolve) => (nearKill = resolve));
    const counted = () => {
      ++successes;
      if (successes === killAfter - 3) nearKill();
      if (successes === killAfter) {
        aDead = true;
        killed = kill(a);
      }
    };

    type Chain = { held: { access: string; refresh: string }; inFlight?: string; lost: boolean; steps: number };
    const chains: Chain[] = families.map((held) => ({ held, lost: false, steps: 0 }));
    const refreshing = chains.map(async (chain, w) => {
      for (let step = 0; step < STEPS; step++) {
        const instance = target(w + step);
        chain.inFlight = chain.held.refresh;
        let res: Reply;
        try {
          res = await http(instance, '/v1/oauth/token', { form: refreshForm(chain.held.refresh) });
        } catch {
          chain.lost = true; // the connection died with A: the rotation may or may not have committed
          return;
        }
        expect(res.status, `worker ${w} step ${step} at ${instance.name}: ${res.text}`).toBe(200);
        chain.held = { access: res.body['access_token'] as string, refresh: res.body['refresh_token'] as string };
        chain.inFlight = undefined;
        chain.steps++;
        counted();
      }
    });
    type Exchange = { code: string; received?: { access: string; refresh: string }; lost: boolean };
    const exchanges: Exchange[] = codes.map((code) => ({ code, lost: false }));
    const exchanging = exchanges.map(async (exchange, i) => {
      // Just before the kill, half of them to A: some are in flight when it dies.
      await exchangesGo;
      const instance = target(i);
      try {
        const res = await http(instance, '/v1/oauth/token', { form: exchangeForm(exchange.code) });
        expect(res.status, res.text).toBe(200);
        exchange.received = { access: res.body['access_token'] as string, refresh: res.body['refresh_token'] as string };
        counted();
      } catch {
        exchange.lost = true;
      }
    });
    await Promise.all([...refreshing, ...exchanging]);
    expect(killed, `A should have been killed after ${killAfter} successes (got ${successes})`).toBeDefined();
    await killed;
    expect(a.child.signalCode).toBe('SIGKILL');
    const lost = chains.filter((c) => c.lost).length + exchanges.filter((e) => e.lost).length;
    expect(lost, 'the kill should catch requests in flight at A').toBeGreaterThan(0);

    let rotatedUnseen = 0;
    for (const chain of chains) {
      const family = await liveRefreshTokens(chain.held.refresh);
      expect(family.grantRevoked).toBe(false);
      // Never zero, never two: exactly one live refresh token per family.
      expect(family.live, JSON.stringify(chain)).toHaveLength(1);
      const heldHash = sha256Base64url(chain.held.refresh);
      if (family.live[0] === heldHash) {
        // The client's tokens are current: both still work (at the surviving instance).
        expect(await me(b, chain.held.access)).toBe(200);
        const next = await http(b, '/v1/oauth/token', { form: refreshForm(chain.held.refresh) });
        expect(next.status, next.text).toBe(200);
        expect(await me(b, next.body['access_token'] as string)).toBe(200);
      } else {
        // Only possible when A died after committing a rotation whose response was lost:
        // the client's refresh token was legitimately rotated, and its access token with it.
        expect(chain.lost).toBe(true);
        rotatedUnseen++;
        const { rows } = await pool.query(`SELECT rotated_at FROM "${schema}".authgate_tokens WHERE hash = $1`, [heldHash]);
        expect(rows[0].rotated_at).not.toBeNull();
        expect(await me(b, chain.held.access)).toBe(401);
      }
    }
    for (const exchange of exchanges) {
      const { rows } = await pool.query(
        `SELECT c.used_at, (SELECT count(*)::int FROM "${schema}".authgate_tokens AS t WHERE t.grant_id = c.grant_id) AS tokens
           FROM "${schema}".authgate_codes AS c WHERE c.hash = $1`,
        [sha256Base64url(exchange.code)],
      );
      // A code is used if and only if its tokens exist: redemption and inserts commit together.
      expect(rows[0].used_at === null ? 0 : 2, JSON.stringify(rows[0])).toBe(rows[0].tokens);
      if (exchange.received) {
        expect(await me(b, exchange.received.access)).toBe(200);
        expect((await http(b, '/v1/oauth/token', { form: refreshForm(exchange.received.refresh) })).status).toBe(200);
      } else {
        expect(exchange.lost).toBe(true);
        // Never redeemed (rolled back with A): the client can still exchange it at B.
        if (rows[0].used_at === null) expect((await http(b, '/v1/oauth/token', { form: exchangeForm(exchange.code) })).status).toBe(200);
      }
    }
    console.log(
      `SIGKILL burst: ${successes} successful requests; ${chains.filter((c) => c.lost).length} refresh chains and ${exchanges.filter((e) => e.lost).length} code exchanges lost their connection to A; ${rotatedUnseen} rotations committed whose response was lost`,
    );
    // Restart A for the next test.
    a = await start('A');
  });

  it('after a restart (new process, same database), tokens issued before still work, a rotated refresh token stays rotated, a revoked one stays revoked', async () => {
    const pending = await getCode(a, a);
    const first = await tokens(a, await getCode(a, a));
    const second = await http(a, '/v1/oauth/token', { form: refreshForm(first.refresh) });
    expect(second.status).toBe(200);
    const current = { access: second.body['access_token'] as string, refresh: second.body['refresh_token'] as string };
    const revoked = await tokens(a, await getCode(a, a));
    expect((await http(a, '/v1/oauth/revoke', { form: { token: revoked.refresh } })).status).toBe(200);

    await kill(a, 'SIGTERM');
    await kill(b, 'SIGTERM');
    a = await start('A2');
    b = await start('B2');

    expect(await me(a, current.access)).toBe(200);
    expect(await me(b, revoked.access)).toBe(401);
    expect(await me(a, first.access)).toBe(401); // rotated out before the restart
    const fromPending = await tokens(b, pending); // a code issued before the restart
    expect(await me(a, fromPending.access)).toBe(200);
    expect((await http(a, '/v1/oauth/token', { form: exchangeForm(pending) })).body['error']).toBe('invalid_grant');
    // Reuse of the refresh token rotated before the restart is still detected: the family is revoked.
    const reuse = await http(b, '/v1/oauth/token', { form: refreshForm(first.refresh) });
    expect(reuse.status).toBe(400);
    expect(reuse.body['error']).toBe('invalid_grant');
    expect(await me(a, current.access)).toBe(401);
    expect((await http(a, '/v1/oauth/token', { form: refreshForm(current.refresh) })).status).toBe(400);
  });
});
