/**
 * Shared setup of the PostgreSQL tests: the database comes from DATABASE_URL (`.ci/run` starts a
 * throwaway server and exports it). In CI (CI=true) a missing DATABASE_URL is an error, never a
 * skip. Locally, without it, the PostgreSQL tests are skipped with a message saying how to run them.
 *
 * Every test file works in a schema of its own with a random name, dropped at the end, so files
 * (and several developers' runs on one server) never see each other's rows.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { MemoryStorage, type Storage } from '../../src/index.js';
import { PostgresStorage } from '../../src/postgres/index.js';

const url = process.env['DATABASE_URL'];
const inCI = /^(1|true|yes)$/i.test(process.env['CI'] ?? '');

if (!url && inCI) {
  throw new Error(
    'DATABASE_URL is not set, and CI=true: the PostgreSQL tests must run in CI, never skip. .ci/run starts a server with .ci/pg-start and exports DATABASE_URL.',
  );
}
if (!url) {
  console.warn(
    'PostgreSQL tests skipped: DATABASE_URL is not set. `npm run setup:test` installs Debian\'s postgresql; then run `eval "$(bash .ci/pg-start)"` and the tests again in that shell.',
  );
}

/** The connection string, or undefined when the PostgreSQL tests are skipped. */
export const DATABASE_URL = url;

/** A fresh schema name: `ag_<label>_<random>`. */
export function schemaName(label: string): string {
  return `ag_${label}_${randomBytes(6).toString('hex')}`;
}

/** A pool on DATABASE_URL; idle-connection errors (a killed backend) are not fatal. */
export function makePool(max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => {});
  return pool;
}

/** Drop a schema made by a test, with everything in it. */
export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  if (!/^ag_[a-z0-9_]+$/.test(schema)) throw new Error(`refusing to drop ${schema}`);
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/**
 * The stores a storage test file runs its cases on, for `describe.each`: `MemoryStorage`, and
 * with DATABASE_URL also `PostgresStorage` in a schema of its own (`label`), migrated before the
 * file's tests and dropped after them. `wrap` changes each store before use (a slower read, say);
 * `tablePrefix` checks the SQL names with a prefix.
 */
export function storesUnderTest(
  label: string,
  options: { tablePrefix?: string; wrap?: <S extends Storage>(storage: S) => S } = {},
): [string, () => Storage][] {
  const pool = url ? makePool(5) : undefined;
  const pgOptions = { schema: schemaName(label), ...(options.tablePrefix !== undefined && { tablePrefix: options.tablePrefix }) };
  beforeAll(async () => {
    if (pool) await new PostgresStorage(pool, pgOptions).migrate();
  });
  afterAll(async () => {
    if (!pool) return;
    await dropSchema(pool, pgOptions.schema);
    await pool.end();
  });
  const wrap = options.wrap ?? (<S extends Storage>(storage: S) => storage);
  const stores: [string, () => Storage][] = [['MemoryStorage', () => wrap(new MemoryStorage())]];
  if (pool) stores.push(['PostgresStorage', () => wrap(new PostgresStorage(pool, pgOptions))]);
  return stores;
}
