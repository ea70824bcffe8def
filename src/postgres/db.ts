/**
 * How every operation of `PostgresStorage` reaches the database: one statement on the pool, or
 * one transaction on one connection, each retried once on a serialization failure or deadlock,
 * and every failure turned into a `PostgresStorageError`. A connection that dies (the database
 * restarted, failed over, killed the backend) is one more such failure, never a crash.
 */
import { isRetryable, storageError } from './errors.js';
import { lockSpaces, revocationLock, type LockSpaces } from './locks.js';
import type { PgPool, PgPoolClient, PgQueryResult } from './pool.js';
import { tableNames, type Tables } from './schema.js';

/** The pools that have our `error` listener: one per pool, however many stores share it. */
const guardedPools = new WeakSet<PgPool>();

/**
 * `pg.Pool` emits `error` when a connection dies while idle in it, or after it was released
 * (a dead connection may report its end once more), and an `error` event nobody listens to ends
 * the process. The pool has already dropped that connection, and the next operation connects
 * anew: there is nothing to do but listen.
 */
const ignorePoolError = (): void => {};

/**
 * The pool and the tables of one `PostgresStorage`, with the ways to run SQL on them. The
 * per-topic modules (clients.ts, codes.ts, ...) take one as their first argument.
 */
export class Db {
  /** The qualified, quoted table names. */
  readonly t: Tables;
  /** The first keys of this store's issuance locks (locks.ts). */
  readonly locks: LockSpaces;

  /** `schema` and `prefix` must have been checked against `IDENTIFIER` (schema.ts). */
  constructor(
    readonly pool: PgPool,
    readonly schema: string,
    readonly prefix: string,
  ) {
    this.t = tableNames(schema, prefix);
    this.locks = lockSpaces(schema, prefix);
    if (typeof pool.on === 'function' && !guardedPools.has(pool)) {
      guardedPools.add(pool);
      pool.on('error', ignorePoolError);
    }
  }

  /**
   * A revocation: one transaction that takes the exclusive issuance lock of `key` (an account or
   * a client) and then runs `text`, in a statement of its own so that it sees every grant whose
   * issuance it waited for (locks.ts).
   */
  revoke(operation: string, kind: keyof LockSpaces, key: string, text: string, values: unknown[]): Promise<void> {
    return this.transaction(operation, async (tx) => {
      await tx.query(revocationLock(this.locks, kind), [key]);
      await tx.query(text, values);
    });
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
   * (nothing of the first attempt survived the rollback). A connection that dies meanwhile fails
   * the operation (never retried: a COMMIT whose answer was lost may have landed) and is destroyed,
   * never handed back to the pool.
   */
  async transaction<T>(operation: string, work: (tx: PgPoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let tx: PgPoolClient;
      try {
        tx = await this.pool.connect();
      } catch (error) {
        throw storageError(operation, error, false);
      }
      // While a connection is checked out the pool does not listen to it, and `pg` emits `error`
      // on it when it dies (its pending query fails as well): unhandled, that event would end the
      // process. The listener only notes the loss; the failed query tells the operation.
      let lost = false;
      const onError = () => {
        lost = true;
      };
      tx.on?.('error', onError);
      let broken = false;
      try {
        await tx.query('BEGIN ISOLATION LEVEL READ COMMITTED');
        const result = await work(tx);
        await tx.query('COMMIT');
        return result;
      } catch (error) {
        if (!lost) {
          try {
            await tx.query('ROLLBACK');
          } catch {
            broken = true; // the connection is gone or unusable: do not hand it back to the pool
          }
        }
        if (attempt === 1 && isRetryable(error)) continue;
        throw storageError(operation, error, attempt > 1);
      } finally {
        if (lost || broken) {
          // Destroyed. The listener stays: a dead connection may report its end once more.
          tx.release(true);
        } else {
          tx.off?.('error', onError);
          tx.release(false);
        }
      }
    }
  }
}
