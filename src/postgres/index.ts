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
import { ConfigError } from '../errors.js';
import { PostgresStorageError } from './errors.js';
import type { PgPool } from './pool.js';
import { DEFAULT_ACQUIRE_TIMEOUT_MS, PostgresStorage, type PostgresStorageOptions } from './storage.js';

export type { PgPool, PgPoolClient, PgQueryConfig, PgQueryResult } from './pool.js';
export { PostgresStorageError } from './errors.js';
export { SCHEMA_VERSION } from './schema.js';
export type { MigrateResult } from './migrate.js';
export type { PruneResult } from './prune.js';
export { PostgresStorage, type PostgresStorageOptions } from './storage.js';

/**
 * Open a pool on `connectionString`, build a `PostgresStorage` on it and migrate the schema: the
 * one call a small app (or the demo) needs. `close()` ends the pool. Needs `pg` installed.
 *
 * The connection string is checked first: nothing, an empty string or one that is not a
 * `postgres://` / `postgresql://` (or `socket:`) URL is a `ConfigError`, rather than `pg`'s quiet
 * fallback to `localhost:5432` (an unset `DATABASE_URL`) or a host named `base` (`not-a-url`).
 * When the database cannot be opened or migrated, the `PostgresStorageError` says so on one line,
 * with where (`host:port`, database and user, never the password) and the driver's own reason,
 * e.g. `authgate openPostgresStorage: PostgreSQL at db.internal:5432 (database "app", user "app"):
 * the database refused the user or password (SQLSTATE 28P01): password authentication failed for
 * user "app"`; the driver's error stays in `cause`.
 *
 * The store's time bounds (`acquireTimeoutMs`, `queryTimeoutMs`, default 2 s and 3 s) apply as
 * on any pool, and the pool gets a `connectionTimeoutMillis` of `acquireTimeoutMs`, so that a
 * connection attempt to a database that does not answer is given up and no request waits in the
 * pool's queue past the bound.
 *
 * @example
 * const { storage, close } = await openPostgresStorage(process.env.DATABASE_URL);
 * @throws TypeError for a bad option (see `PostgresStorageOptions`).
 * @throws ConfigError for a missing, empty or unparsable `connectionString`.
 * @throws PostgresStorageError when the database cannot be opened or migrated.
 * @group Storage
 */
export async function openPostgresStorage(
  connectionString: string | undefined,
  options: PostgresStorageOptions & { max?: number } = {},
): Promise<{ storage: PostgresStorage; pool: PgPool; close(): Promise<void> }> {
  postgresUrl(connectionString);
  const url = new URL(connectionString);
  let pg: typeof import('pg').default;
  try {
    pg = (await import('pg')).default;
  } catch (error) {
    throw new Error('openPostgresStorage needs the pg package: npm install pg', { cause: error });
  }
  const { max, ...storageOptions } = options;
  const acquire = storageOptions.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS;
  // No error listener to add: PostgresStorage listens to the pool and to the connections it holds.
  // The pool's own connect timeout, as long as the store's acquire bound: the store answers when
  // its bound runs out, and the pool then drops the waiter from its queue and gives up a
  // connection attempt that hangs, so that waiters do not pile up in it while the database is
  // away.
  const pool = new pg.Pool({
    connectionString,
    ...(max !== undefined && { max }),
    ...(acquire !== false && { connectionTimeoutMillis: acquire }),
  });
  try {
    const storage = new PostgresStorage(pool, storageOptions);
    await storage.migrate();
    return { storage, pool, close: () => pool.end() };
  } catch (error) {
    await pool.end().catch(() => {});
    throw error instanceof PostgresStorageError ? openFailure(error, url, pg.defaults) : error;
  }
}

/** What a connection string must look like, for the messages. */
const EXPECTED = 'expected a PostgreSQL URL such as postgres://user:password@host:5432/database';

/**
 * Whether `connectionString` is a URL `pg` reads as written: `postgres:` or `postgresql:` with a
 * host (or a `host` parameter, for a Unix socket), or `socket:`.
 * @throws ConfigError otherwise; the message never shows the string (it may hold a password).
 */
function postgresUrl(connectionString: unknown): asserts connectionString is string {
  const option = 'connectionString';
  if (typeof connectionString !== 'string') {
    const got = connectionString === undefined ? 'nothing (is DATABASE_URL set?)' : `a ${typeof connectionString}`;
    throw new ConfigError(option, `openPostgresStorage: ${EXPECTED}, got ${got}`);
  }
  if (connectionString.trim() === '') throw new ConfigError(option, `openPostgresStorage: ${EXPECTED}, got an empty string`);
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(connectionString)?.[1]?.toLowerCase();
  let url: URL | undefined;
  try {
    url = new URL(connectionString);
  } catch {}
  const postgres = scheme === 'postgres' || scheme === 'postgresql';
  if (!url || !(scheme === 'socket' || (postgres && (url.hostname !== '' || url.searchParams.has('host'))))) {
    const got = !scheme
      ? 'a string with no postgres:// in front'
      : !postgres && scheme !== 'socket'
        ? `a URL of scheme "${scheme}:"`
        : 'a URL that does not parse or names no host';
    throw new ConfigError(option, `openPostgresStorage: ${EXPECTED}, got ${got}`);
  }
}

/**
 * `error` of opening `url`, on one line: where (host:port, database, user; never the password),
 * what went wrong (the storage error's own words) and the driver's reason, with the driver's
 * error as `cause`. `defaults` are `pg.defaults`, what `pg` fills in for what the URL leaves out.
 */
function openFailure(
  error: PostgresStorageError,
  url: URL,
  defaults: { host?: string | undefined; port?: number | string | undefined; user?: string | undefined },
): PostgresStorageError {
  const decode = (value: string) => {
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  };
  const host = url.protocol === 'socket:' ? decode(url.pathname) : decode(url.hostname) || url.searchParams.get('host') || defaults.host;
  const port = url.port || defaults.port || 5432;
  const database = decode(url.pathname.slice(1)) || url.searchParams.get('db');
  const user = decode(url.username) || defaults.user;
  const where = `PostgreSQL at ${host}:${port}${database ? ` (database ${JSON.stringify(database)}${user ? `, user ${JSON.stringify(user)}` : ''})` : ''}`;
  const what = error.message.replace(/^authgate PostgresStorage\.\w+ failed:? ?/, '').replace(/\.$/, '');
  const cause = error.cause instanceof Error ? error.cause.message.replace(/\s+/g, ' ').trim() : '';
  const message = [`authgate openPostgresStorage: ${where}`, what, cause].filter(Boolean).join(': ');
  return new PostgresStorageError(error.kind, error.operation, error.sqlState, message, { cause: error.cause });
}
