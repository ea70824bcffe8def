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
 */
export type { PgPool, PgPoolClient, PgQueryResult } from './pool.js';
export { PostgresStorageError } from './errors.js';
export { SCHEMA_VERSION } from './schema.js';
export type { MigrateResult } from './migrate.js';
export type { PruneResult } from './prune.js';
export { PostgresStorage, type PostgresStorageOptions } from './storage.js';
export { openPostgresStorage } from './open.js';
