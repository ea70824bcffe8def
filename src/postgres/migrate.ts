/**
 * `migrate()`: create or upgrade the tables, safely when several instances start at once.
 */
import type { Db } from './db.js';
import { lockKey } from './locks.js';
import { MIGRATIONS, quote } from './schema.js';

/** The migration lock's second key, from the schema name: also taken by the tests that hold it. */
export { lockKey };

/**
 * What `migrate()` did: the schema version before and after. Equal when nothing was to do.
 * @group Storage
 */
export interface MigrateResult {
  from: number;
  to: number;
}

/** The first half of the two-key advisory lock: "auth" in ASCII. */
export const LOCK_NAMESPACE = 0x61757468;

/**
 * Apply the migrations the database has not recorded yet, in one transaction that holds a
 * transaction-level advisory lock: concurrent callers wait, then find nothing to do. See
 * `PostgresStorage.migrate`.
 */
export async function migrate(db: Db): Promise<MigrateResult> {
  // Without the time bound of queryTimeoutMs (the `false` at the end): DDL may take long on large
  // tables, and the advisory lock waits for another instance's migration.
  return db.transaction(
    'migrate',
    async (tx) => {
      // Keyed by the schema alone: migrations of every table prefix in one schema take turns, so
      // none races another's CREATE SCHEMA.
      await tx.query('SELECT pg_advisory_xact_lock($1::int, $2::int)', [LOCK_NAMESPACE, lockKey(db.schema)]);
      const exists = await tx.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [db.schema]);
      if (exists.rowCount === 0) await tx.query(`CREATE SCHEMA ${quote(db.schema)}`);
      await tx.query(`CREATE TABLE IF NOT EXISTS ${db.t.migrations} (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at bigint NOT NULL
      )`);
      const current = await tx.query(`SELECT coalesce(max(version), 0) AS version FROM ${db.t.migrations}`);
      const from = Number(current.rows[0]?.version ?? 0);
      let to = from;
      for (const migration of MIGRATIONS) {
        if (migration.version <= from) continue;
        for (const statement of migration.up(db.t, (name) => quote(db.prefix + name), db.r)) await tx.query(statement);
        // Metadata only: when this database was upgraded, by the machine's clock.
        await tx.query(`INSERT INTO ${db.t.migrations} (version, name, applied_at) VALUES ($1, $2, $3)`, [
          migration.version,
          migration.name,
          Date.now(),
        ]);
        to = migration.version;
      }
      return { from, to };
    },
    false,
  );
}
