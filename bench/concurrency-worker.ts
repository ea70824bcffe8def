/**
 * A second process of the concurrency section (bench/concurrency.ts): it opens its own pool on
 * the database and schema the parent set up, registers its own client, prepares its workers,
 * says `ready`, runs when told `go`, and answers its operations and wall time.
 */
import { preparedWorkers, runConcurrently } from './concurrency.js';
import type { WorkloadId } from './authgate.js';
import { authgateFixture } from './lib/fixture.js';
import { loadCore, loadOptional } from './lib/load.js';
import { openPool, type PostgresStorageModule } from './lib/pg.js';

interface Args {
  url: string;
  schema: string;
  id: WorkloadId;
  concurrency: number;
  pool: number;
  perWorker: number;
  dist: boolean;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const send = (message: unknown) => new Promise<void>((resolve) => process.send!(message, () => resolve()));
const pool = await openPool(args.url, args.pool);
try {
  const core = await loadCore(args.dist);
  const loaded = await loadOptional<PostgresStorageModule>('postgres', ['PostgresStorage'], args.dist);
  if (!loaded.ok) throw new Error(loaded.reason);
  const fixture = await authgateFixture(core, new loaded.module.PostgresStorage(pool, { schema: args.schema }));
  const workers = await preparedWorkers(fixture, args.id, args.concurrency, args.perWorker);
  await new Promise<void>((resolve) => {
    process.once('message', () => resolve());
    void send({ ready: true });
  });
  const run = await runConcurrently(
    args.id,
    workers.map((w) => (i: number) => w.op(i)),
    args.perWorker,
  );
  for (const w of workers) await w.verify?.();
  await send({ ops: run.ops, ms: run.ms });
} catch (error) {
  await send({ error: error instanceof Error ? error.message : String(error) });
} finally {
  await pool.end();
  process.disconnect?.();
}
