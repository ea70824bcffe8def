/**
 * The model-based test of the authorization state machine on PostgresStorage: the same commands and
 * invariants as `core.test.ts`, on a real PostgreSQL server. The schema is this file's own (see
 * `test/storage/pg.ts`); every run starts from empty tables.
 *
 * Skipped locally without DATABASE_URL (never in CI). A long local run:
 *   MODEL_RUNS=500 MODEL_SEED=random npx vitest run test/model/postgres.test.ts
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStorage } from '../../src/postgres/index.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from '../storage/pg.js';
import { reportRun, runModel, settings } from './run.js';

const s = settings(300);

describe.skipIf(!DATABASE_URL)('model-based: the authorization state machine on PostgresStorage', () => {
  const pool = makePool(4);
  const schema = schemaName('model');
  let storage: PostgresStorage;
  let tables: string[] = [];

  beforeAll(async () => {
    storage = new PostgresStorage(pool, { schema });
    await storage.migrate();
    const { rows } = await pool.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename NOT LIKE '%migrations'",
      [schema],
    );
    tables = rows.map((r) => `"${schema}"."${r.tablename}"`);
  });

  afterAll(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });

  it(`keeps every invariant over ${s.runs} runs of up to ${s.maxCommands} steps (seed ${s.seed ?? 'random'})`, async () => {
    const known = await runModel(async () => {
      // Whatever tables the schema has (a later version may add some), emptied for each run. DELETE,
      // not TRUNCATE: on tables this small it takes about 1 ms where TRUNCATE took 12-20 ms (a tenth
      // of the file's time over 300 runs).
      await pool.query(tables.map((table) => `DELETE FROM ${table}`).join('; '));
      // A Race step's lead in milliseconds: the order of a round trip, so either side can get ahead.
      const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 1));
      return { storage, prune: (now: number) => storage.prune(now), turn };
    }, s);
    // Every invariant is checked inside the run (a violation throws); here: the runs got far.
    const reached = reportRun(known);
    expect(reached.exchanged).toBeGreaterThan(0);
    expect(reached.refreshed).toBeGreaterThan(0);
    expect(reached.dpopBound).toBeGreaterThan(0); // DPoP-bound tokens on PostgreSQL (RFC 9449)
    expect(reached.dpopThief).toBeGreaterThan(0);
  }, 600_000);
});
