/**
 * The concurrency section (only with DATABASE_URL): each workload on PostgresStorage with C
 * operations in flight over a pool of P connections (`--concurrency`, `--pool`; defaults 32 and
 * 10), its ops/s and latency percentiles, next to the database's own floor measured in the same
 * run with the same pool and concurrency (`SELECT 1`, a primary-key lookup, and a transaction of
 * BEGIN, two lookups and COMMIT). A workload that makes R round trips an operation can do at
 * most about (lookup floor ÷ R) operations a second: its share of that bound says how much of
 * the database's capacity authgate's own work leaves unused. The lookup floor is measured again
 * right before each workload, and its share taken against that one: on a shared machine the
 * floor drifts from minute to minute. Then W3 and W2 run in two processes
 * at once on the same database (each with the same C and P), against one process: whether it
 * scales out with instances, not only with connections.
 *
 * Each workload is a fixed number of operations (`--concurrency-ops`, default 2000) shared by C
 * workers, each with state of its own (its own refresh chain for W2, its own codes for W1x, its
 * own tokens for W4), made before the clock starts. Every operation checks its answer.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { authgateContenders, WORKLOADS, type CheckedContender, type WorkloadId } from './authgate.js';
import { authgateFixture } from './lib/fixture.js';
import { loadOptional, type CoreModule } from './lib/load.js';
import type { BenchOptions } from './lib/options.js';
import { countedPool, openPool, type PgPool, type PostgresStorageModule } from './lib/pg.js';

/** One run: `ops` operations with `concurrency` in flight. */
export interface ConcurrentRun {
  name: string;
  ops: number;
  ms: number;
  opsPerSecond: number;
  p50: number;
  p99: number;
}

export interface ConcurrencyWorkload extends ConcurrentRun {
  id: WorkloadId;
  /** Round trips per operation (queries, BEGIN and COMMIT included), counted one at a time. */
  roundTrips: number;
  /** The lookup floor measured right before this workload (ops/s): on a shared machine the floor drifts. */
  lookupFloor: number;
  /** ops/s ÷ (lookupFloor ÷ round trips). */
  share: number;
}

export interface ScaleOut {
  id: WorkloadId;
  oneProcess: number;
  /** ops/s of the two processes together (their operations over the longer of their two runs). */
  twoProcesses: number;
}

export type ConcurrencyResult =
  | { skipped: string }
  | {
      concurrency: number;
      pool: number;
      floor: { select1: ConcurrentRun; lookup: ConcurrentRun; transaction: ConcurrentRun; join?: ConcurrentRun };
      workloads: ConcurrencyWorkload[];
      scaleOut: ScaleOut[];
    };

/** Workloads that make sense with many in flight (W5 is W3 with another kind of token). */
const SCALE_OUT: WorkloadId[] = ['W3', 'W2'];

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

/**
 * Run `perWorker[w]` operations on each of the workers at once, each worker's in order, and time
 * the whole: ops/s over the wall clock, and each operation's latency.
 */
export async function runConcurrently(
  name: string,
  workers: ((i: number) => Promise<unknown>)[],
  perWorker: number,
): Promise<ConcurrentRun> {
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    workers.map(async (op) => {
      for (let i = 0; i < perWorker; i++) {
        const t = performance.now();
        await op(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const ms = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const ops = workers.length * perWorker;
  return { name, ops, ms, opsPerSecond: (ops / ms) * 1000, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}

/** C workers of workload `id` on `fixture`, each with state of its own, prepared for `perWorker` operations. */
export async function preparedWorkers(
  fixture: Awaited<ReturnType<typeof authgateFixture>>,
  id: WorkloadId,
  concurrency: number,
  perWorker: number,
): Promise<CheckedContender[]> {
  const workers = Array.from({ length: concurrency }, () => authgateContenders(fixture)[id]);
  await Promise.all(workers.map((w) => w.prepare?.(perWorker)));
  return workers;
}

/**
 * The floor's lookup as a named prepared statement, as PostgresStorage sends its own
 * (`preparedStatements`, on by default): parsed and planned once per connection, the least a
 * round trip with a value can cost. One name per text, as `pg` wants.
 */
const lookupNames = new Map<string, string>();
function lookupOn(on: { query: PgPool['query'] }, text: string, key: string) {
  let name = lookupNames.get(text);
  if (name === undefined) {
    name = `bench_floor_${lookupNames.size + 1}`;
    lookupNames.set(text, name);
  }
  const query = on.query as unknown as (config: { name: string; text: string; values: unknown[] }) => Promise<unknown>;
  return query.call(on, { name, text, values: [key] });
}

async function floor(pool: PgPool, table: string, key: string, concurrency: number, perWorker: number) {
  const lookup = `SELECT id FROM ${table} WHERE id = $1`;
  const workers = (op: () => Promise<unknown>) => Array.from({ length: concurrency }, () => op);
  const select1 = await runConcurrently(
    'SELECT 1',
    workers(() => pool.query('SELECT 1')),
    perWorker,
  );
  const pk = await lookupFloor(pool, table, key, concurrency, perWorker);
  const transaction = await runConcurrently(
    'BEGIN + 2 lookups + COMMIT',
    workers(async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await lookupOn(client, lookup, key);
        await lookupOn(client, lookup, key);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    }),
    perWorker,
  );
  return { select1, lookup: pk, transaction };
}

/**
 * W3's one statement alone, sent as the store sends it (named, prepared): an access token joined
 * to its grant, every column of both, by the token's hash. Not a bound of the issue's share (that
 * is the lookup), but what the database and the driver give a bearer check with no authgate
 * around it: the share W3 could reach at best on this machine.
 */
function joinFloor(pool: PgPool, schema: string, hash: string, concurrency: number, perWorker: number): Promise<ConcurrentRun> {
  const text = `SELECT t.*, g.* FROM "${schema}".authgate_tokens AS t JOIN "${schema}".authgate_grants AS g ON g.id = t.grant_id WHERE t.hash = $1`;
  const op = () => lookupOn(pool, text, hash);
  return runConcurrently(
    "W3's statement alone (a token joined to its grant)",
    Array.from({ length: concurrency }, () => op),
    perWorker * 4,
  );
}

/**
 * The primary-key lookup floor: the bound of one round trip at this concurrency. Four times the
 * workloads' operations: a lookup is fast, and a run of a few hundred ms is mostly noise.
 */
function lookupFloor(pool: PgPool, table: string, key: string, concurrency: number, perWorker: number): Promise<ConcurrentRun> {
  const lookup = `SELECT id FROM ${table} WHERE id = $1`;
  const op = () => lookupOn(pool, lookup, key);
  return runConcurrently(
    'primary-key lookup',
    Array.from({ length: concurrency }, () => op),
    perWorker * 4,
  );
}

/** Run workload `id` in a second process on the same schema; resolves once it is ready, with a function that starts it. */
function childRun(
  id: WorkloadId,
  args: { url: string; schema: string; concurrency: number; pool: number; perWorker: number; dist: boolean },
): Promise<{ go: () => Promise<{ ops: number; ms: number }> }> {
  const script = fileURLToPath(new URL('./concurrency-worker.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify({ ...args, id })], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the ${id} worker process exited (${code}) before it was ready`)));
    child.once('message', (message: { ready?: boolean; error?: string }) => {
      if (!message.ready) return reject(new Error(`the ${id} worker process failed: ${message.error}`));
      child.removeAllListeners('exit');
      resolve({
        go: () =>
          new Promise((done, fail) => {
            child.once('exit', (code) => fail(new Error(`the ${id} worker process exited (${code}) without a result`)));
            child.once('message', (result: { ops?: number; ms?: number; error?: string }) => {
              if (result.error !== undefined || result.ops === undefined || result.ms === undefined) {
                fail(new Error(`the ${id} worker process failed: ${result.error}`));
              } else {
                child.removeAllListeners('exit');
                done({ ops: result.ops, ms: result.ms });
              }
            });
            child.send('go');
          }),
      });
    });
  });
}

export async function concurrencySection(core: CoreModule, options: BenchOptions): Promise<ConcurrencyResult> {
  const url = process.env.DATABASE_URL;
  if (!url) return { skipped: 'Concurrency: skipped, DATABASE_URL is not set (eval "$(bash .ci/pg-start)" starts a throwaway server).' };
  const loaded = await loadOptional<PostgresStorageModule>('postgres', ['PostgresStorage'], options.dist);
  if (!loaded.ok) return { skipped: `Concurrency: skipped, ${loaded.reason}.` };
  const { concurrency, pool: poolSize } = options;
  const perWorker = Math.max(1, Math.ceil(options.concurrencyOps / concurrency));
  const pool = await openPool(url, poolSize);
  const { pool: counted, counts } = countedPool(pool);
  const schema = `authgate_bench_c_${process.pid}`;
  try {
    const storage = new loaded.module.PostgresStorage(counted, { schema });
    await storage.migrate();
    const fixture = await authgateFixture(core, storage);
    options.log(`concurrency: ${concurrency} in flight, pool of ${poolSize}, ${perWorker * concurrency} operations per run`);
    const clients = `"${schema}".authgate_clients`;
    await floor(pool, clients, fixture.clientId, concurrency, perWorker); // warm-up: connections, JIT
    const base: Awaited<ReturnType<typeof floor>> & { join?: ConcurrentRun } = await floor(
      pool,
      clients,
      fixture.clientId,
      concurrency,
      perWorker,
    );
    if (options.workloads.includes('W3')) {
      await fixture.issuePair();
      const { rows } = await pool.query(`SELECT hash FROM "${schema}".authgate_tokens WHERE kind = 'access' LIMIT 1`);
      base.join = await joinFloor(pool, schema, (rows[0] as { hash: string }).hash, concurrency, perWorker);
    }
    options.log(
      `floor: SELECT 1 ${base.select1.opsPerSecond.toFixed(0)}/s, lookup ${base.lookup.opsPerSecond.toFixed(0)}/s, transaction ${base.transaction.opsPerSecond.toFixed(0)}/s`,
    );
    const workloads: ConcurrencyWorkload[] = [];
    const single = new Map<WorkloadId, number>();
    for (const id of options.workloads) {
      // Round trips, one operation at a time (as the PostgreSQL section counts them).
      const [probe] = await preparedWorkers(fixture, id, 1, 5);
      counts.queries = 0;
      for (let i = 0; i < 5; i++) await probe!.op(i);
      const roundTrips = counts.queries / 5;
      await probe!.verify?.();

      const workers = await preparedWorkers(fixture, id, concurrency, perWorker);
      // The floor again, right before: what the machine gives now (others share its cores).
      const adjacent = (await lookupFloor(pool, clients, fixture.clientId, concurrency, perWorker)).opsPerSecond;
      const run = await runConcurrently(
        id,
        workers.map((w) => (i: number) => w.op(i)),
        perWorker,
      );
      for (const w of workers) await w.verify?.();
      const share = run.opsPerSecond / (adjacent / roundTrips);
      workloads.push({ ...run, id, roundTrips, lookupFloor: adjacent, share });
      single.set(id, run.opsPerSecond);
      options.log(
        `${id} — ${WORKLOADS[id]}: ${run.opsPerSecond.toFixed(0)} ops/s, p50 ${run.p50.toFixed(1)} ms, p99 ${run.p99.toFixed(1)} ms, ${roundTrips} round trips, lookup floor ${adjacent.toFixed(0)}/s, ${(share * 100).toFixed(0)}% of its bound`,
      );
    }
    const scaleOut: ScaleOut[] = [];
    for (const id of SCALE_OUT.filter((w) => single.has(w))) {
      const args = { url, schema, concurrency, pool: poolSize, perWorker, dist: options.dist };
      const children = await Promise.all([childRun(id, args), childRun(id, args)]);
      const results = await Promise.all(children.map((c) => c.go()));
      const twoProcesses = (results.reduce((n, r) => n + r.ops, 0) / Math.max(...results.map((r) => r.ms))) * 1000;
      scaleOut.push({ id, oneProcess: single.get(id)!, twoProcesses });
      options.log(`${id} in two processes: ${twoProcesses.toFixed(0)} ops/s together (one process: ${single.get(id)!.toFixed(0)})`);
    }
    return { concurrency, pool: poolSize, floor: base, workloads, scaleOut };
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
  }
}
