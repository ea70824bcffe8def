/**
 * How every operation of `PostgresStorage` reaches the database: one statement on the pool, or
 * one transaction on one connection, each retried once on a serialization failure or deadlock,
 * and every failure turned into a `PostgresStorageError`.
 */
import { isRetryable, storageError } from './errors.js';
import type { PgPool, PgPoolClient, PgQueryResult } from './pool.js';
import { tableNames, type Tables } from './schema.js';

/**
 * The pool and the tables of one `PostgresStorage`, with the ways to run SQL on them. The
 * per-topic modules (clients.ts, codes.ts, ...) take one as their first argument.
 */
export class Db {
  /** The qualified, quoted table names. */
  readonly t: Tables;

  /** `schema` and `prefix` must have been checked against `IDENTIFIER` (schema.ts). */
  constructor(
    readonly pool: PgPool,
    readonly schema: string,
    readonly prefix: string,
  ) {
    this.t = tableNames(schema, prefix);
  }

  /** One statement on the pool, retried once on a serialization failure or deadlock. */
  query(operation: string, text: string, values: unknown[]): Promise<PgQueryResult> {
    return this.retrying(operation, () => this.pool.query(text, values));
  }

  /** Run `work`, and once more when it fails with a serialization failure or deadlock. */
  async retrying<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (!isRetryable(error)) throw storageError(operation, error, false);
    }
    try {
      return await work();
    } catch (error) {
      throw storageError(operation, error, true);
    }
  }

  /**
   * Run `work` in one READ COMMITTED transaction on one connection: COMMIT when it returns,
   * ROLLBACK when it throws. A serialization failure or deadlock is retried once from the start
   * (nothing of the first attempt survived the rollback).
   */
  async transaction<T>(operation: string, work: (tx: PgPoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let tx: PgPoolClient;
      try {
        tx = await this.pool.connect();
      } catch (error) {
        throw storageError(operation, error, false);
      }
      let broken = false;
      try {
        await tx.query('BEGIN ISOLATION LEVEL READ COMMITTED');
        const result = await work(tx);
        await tx.query('COMMIT');
        return result;
      } catch (error) {
        try {
          await tx.query('ROLLBACK');
        } catch {
          broken = true; // the connection is gone or unusable: do not hand it back to the pool
        }
        if (attempt === 1 && isRetryable(error)) continue;
        throw storageError(operation, error, attempt > 1);
      } finally {
        tx.release(broken);
      }
    }
  }
}
