/**
 * authgate on PostgreSQL: `PostgresStorage`, a complete `Storage` on a `pg.Pool`, for platforms
 * that run several authgate instances on one database.
 *
 * @example
 * import pg from 'pg';
 * import { PostgresStorage } from 'authgate/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const storage = new PostgresStorage(pool);
 * await storage.migrate();                       // at startup: creates or upgrades the tables
 * const server = new AuthorizationServer({ storage, sessions });
 * setInterval(() => storage.prune(), 3600_000);  // from time to time: delete expired rows
 * @packageDocumentation
 * @module authgate/postgres
 */
import type { PgPool } from './pool.js';
import { PostgresStorage, type PostgresStorageOptions } from './storage.js';

export type { PgPool, PgPoolClient, PgQueryResult } from './pool.js';
export { PostgresStorageError } from './errors.js';
export { SCHEMA_VERSION } from './schema.js';
export type { MigrateResult } from './migrate.js';
export type { PruneResult } from './prune.js';
export { PostgresStorage, type PostgresStorageOptions } from './storage.js';

/**
 * Open a pool on `connectionString`, build a `PostgresStorage` on it and migrate the schema: the
 * one call a small app (or the demo) needs. `close()` ends the pool. Needs `pg` installed.
 *
 * @example
 * const { storage, close } = await openPostgresStorage(process.env.DATABASE_URL!);
 * @group Storage
 */
export async function openPostgresStorage(
  connectionString: string,
  options: PostgresStorageOptions & { max?: number } = {},
): Promise<{ storage: PostgresStorage; pool: PgPool; close(): Promise<void> }> {
  let pg: typeof import('pg').default;
  try {
    pg = (await import('pg')).default;
  } catch (error) {
    throw new Error('openPostgresStorage needs the pg package: npm install pg', { cause: error });
  }
  const { max, ...storageOptions } = options;
  // No error listener to add: PostgresStorage listens to the pool and to the connections it holds.
  const pool = new pg.Pool({ connectionString, ...(max !== undefined && { max }) });
  try {
    const storage = new PostgresStorage(pool, storageOptions);
    await storage.migrate();
    return { storage, pool, close: () => pool.end() };
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
}
