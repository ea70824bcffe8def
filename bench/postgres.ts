/**
 * The PostgreSQL section (only with DATABASE_URL): the in-process workloads on PostgresStorage,
 * next to the same workloads on MemoryStorage in the same rounds, and the database round trips
 * each operation makes, counted by a wrapper around the pool (`pool.query` calls, and the
 * queries of connections checked out for transactions, BEGIN and COMMIT included).
 * Tables go to a schema of their own (`authgate_bench_<pid>`), dropped at the end.
 */
import { authgateContenders, WORKLOADS, type WorkloadId } from './authgate.js';
import { authgateFixture } from './lib/fixture.js';
import { loadOptional, type CoreModule } from './lib/load.js';
import { measure, type Series } from './lib/measure.js';
import type { BenchOptions } from './lib/options.js';
import { countedPool, openPool, type PostgresStorageModule } from './lib/pg.js';

export interface RoundTrips {
  /** Per operation. */
  queries: number;
  transactions: number;
}

export type PostgresResult =
  | { skipped: string }
  | { series: Series[]; roundTrips: Partial<Record<WorkloadId, RoundTrips>>; serverVersion: string };

export const PG_NAME = 'authgate + PostgreSQL';
export const MEMORY_NAME = 'authgate + MemoryStorage';

export async function postgresSection(core: CoreModule, options: BenchOptions): Promise<PostgresResult> {
  const url = process.env.DATABASE_URL;
  if (!url) return { skipped: 'PostgreSQL: skipped, DATABASE_URL is not set (eval "$(bash .ci/pg-start)" starts a throwaway server).' };
  const loaded = await loadOptional<PostgresStorageModule>('postgres', ['PostgresStorage'], options.dist);
  if (!loaded.ok) return { skipped: `PostgreSQL: skipped, ${loaded.reason}.` };
  const pool = await openPool(url, 4);
  const { pool: counted, counts } = countedPool(pool);
  const schema = `authgate_bench_${process.pid}`;
  try {
    const serverVersion = String((await pool.query('SHOW server_version')).rows[0]?.server_version ?? '?');
    const storage = new loaded.module.PostgresStorage(counted, { schema });
    await storage.migrate();
    const pgFixture = await authgateFixture(core, storage);
    const memoryFixture = await authgateFixture(core, new core.MemoryStorage());
    const series: Series[] = [];
    const roundTrips: Partial<Record<WorkloadId, RoundTrips>> = {};
    for (const id of options.workloads) {
      // Round trips per operation, counted over a few operations outside any timing.
      const probe = authgateContenders(pgFixture, PG_NAME)[id];
      const n = options.smoke ? 3 : 20;
      await probe.prepare?.(n);
      counts.queries = 0;
      counts.transactions = 0;
      for (let i = 0; i < n; i++) await probe.op(i);
      roundTrips[id] = { queries: counts.queries / n, transactions: counts.transactions / n };
      await probe.verify?.();

      options.log(
        `${id} on PostgreSQL ${serverVersion} — ${WORKLOADS[id]}: ${roundTrips[id]!.queries} queries, ${roundTrips[id]!.transactions} transactions per operation`,
      );
      const contenders = [authgateContenders(memoryFixture, MEMORY_NAME)[id], authgateContenders(pgFixture, PG_NAME)[id]];
      series.push(
        ...(await measure(
          { id, title: WORKLOADS[id], contenders },
          {
            rounds: options.rounds,
            timeMs: options.timeMs,
            minBatches: options.smoke ? 2 : 3,
            batch: options.smoke ? options.batch : Math.max(4, options.batch >> 2),
            warmupMs: options.smoke ? 0 : 100,
            slices: options.smoke ? 1 : 3,
            log: options.log,
          },
        )),
      );
      for (const contender of contenders) await contender.verify?.();
    }
    return { series, roundTrips, serverVersion };
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
  }
}
