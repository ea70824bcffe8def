/**
 * How every operation of `PostgresStorage` reaches the database: one statement or one transaction
 * on one connection checked out of the pool, each retried once on a serialization failure or
 * deadlock, and every failure turned into a `PostgresStorageError`. A connection that dies (the
 * database restarted, failed over, killed the backend) is one more such failure, never a crash.
 *
 * Every operation is bounded in time (`Bounds`): the wait for a connection, and the time the
 * database takes to answer once it has one. A database that stops answering (frozen, partitioned
 * away, a stuck disk) fails the operation when a bound runs out, as an outage does, instead of
 * holding the request for as long as the database is gone.
 */
import { connectionUsableAfter, isRetryable, planChanged, StorageTimeout, statementGone, storageError } from './errors.js';
import { lockSpaces, revocationLock, type LockSpaces } from './locks.js';
import type { PgPool, PgPoolClient, PgQueryResult } from './pool.js';
import { statementName } from './statements.js';
import { routineNames, tableNames, type Routines, type Tables } from './schema.js';

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
 * The time bounds of one store, in milliseconds; `false`: none.
 * - `acquire`: how long an operation waits for a connection of the pool (an idle one, a new one
 *   being opened, or one that another operation is to release).
 * - `query`: how long the database may take over one attempt of an operation once it has its
 *   connection: its statement, or its whole transaction from BEGIN to COMMIT.
 */
export interface Bounds {
  acquire: number | false;
  query: number | false;
}

/** What a transaction's work may do on its connection: run statements. */
export interface Tx {
  query(text: string, values?: unknown[]): Promise<PgQueryResult>;
}

/**
 * The pool and the tables of one `PostgresStorage`, with the ways to run SQL on them. The
 * per-topic modules (clients.ts, codes.ts, ...) take one as their first argument.
 */
export class Db {
  /** The qualified, quoted table names. */
  readonly t: Tables;
  /** The qualified, quoted function names (schema.ts). */
  readonly r: Routines;
  /** The first keys of this store's issuance locks (locks.ts). */
  readonly locks: LockSpaces;

  /** `schema` and `prefix` must have been checked against `IDENTIFIER` (schema.ts). */
  constructor(
    readonly pool: PgPool,
    readonly schema: string,
    readonly prefix: string,
    readonly bounds: Bounds = { acquire: false, query: false },
    /**
     * Whether statements with values run as named prepared statements (statements.ts); turned off
     * for good when the database says one is missing or there already (`statementGone`).
     */
    private prepared = false,
  ) {
    this.t = tableNames(schema, prefix);
    this.r = routineNames(schema, prefix);
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

  /**
   * One statement on a connection of the pool, within the bounds, retried once on a
   * serialization failure or deadlock, or on a prepared statement whose result changed type
   * (`planChanged`: sent unnamed then, on another connection). (Not `pool.query`: a statement
   * that runs out of time must be able to take its connection out of the pool, and only the
   * holder of one can.)
   */
  query(operation: string, text: string, values: unknown[]): Promise<PgQueryResult> {
    return this.retrying(operation, (again) => this.attempt((client) => this.send(client, text, values, again), false, this.bounds.query));
  }

  /**
   * `text` on `client`: as a named prepared statement when this store prepares them and the
   * statement has values (statements.ts), else as it is (a statement without values, such as
   * BEGIN or COMMIT, goes as one simple-protocol message). `unnamed`: as it is all the same.
   */
  private send(client: PgPoolClient, text: string, values: unknown[], unnamed = false): Promise<PgQueryResult> {
    const name = this.prepared && !unnamed && values.length > 0 ? statementName(text) : undefined;
    return name === undefined ? client.query(text, values) : client.query({ name, text, values });
  }

  /**
   * Run `work`, and once more (`again`: its statement unnamed) when it fails as `retriesAfter`
   * says it may run again.
   */
  async retrying<T>(operation: string, work: (again: boolean) => Promise<T>): Promise<T> {
    try {
      return await work(false);
    } catch (error) {
      if (!this.retriesAfter(error)) throw storageError(operation, error, false);
    }
    try {
      return await work(true);
    } catch (error) {
      throw storageError(operation, error, true);
    }
  }

  /**
   * Whether an operation that failed with `error` runs once more: after a serialization failure or
   * deadlock, or a prepared statement whose result changed type (`planChanged`, then unnamed), or
   * one that the database says is missing or there already (`statementGone`): a pooler in
   * transaction mode (PgBouncer before 1.21, or without `max_prepared_statements`) hands this
   * store's statements to server connections that never saw them. Then this store stops naming
   * statements for good, as `preparedStatements: false` would have it from the start.
   */
  private retriesAfter(error: unknown): boolean {
    if (statementGone(error)) this.prepared = false;
    return isRetryable(error) || planChanged(error) || statementGone(error);
  }

  /**
   * Run `work` in one READ COMMITTED transaction on one connection: COMMIT when it returns,
   * ROLLBACK when it throws. A serialization failure or deadlock is retried once from the start
   * (nothing of the first attempt survived the rollback), and so is one whose prepared statement
   * changed result type or is gone (`retriesAfter`), its statements unnamed then. A connection
   * that dies meanwhile, or
   * whose transaction runs out of time, fails the operation (never retried: a COMMIT whose answer
   * was lost may have landed) and is destroyed, never handed back to the pool; the database rolls
   * back a transaction whose connection closed before its COMMIT arrived. `bounded: false` lifts
   * the time bound of the transaction and prepares none of its statements (`migrate`, whose DDL
   * may take long on large tables, and whose statements run once).
   */
  async transaction<T>(operation: string, work: (tx: Tx) => Promise<T>, bounded = true): Promise<T> {
    let prepared = bounded && this.prepared;
    const run = async (client: PgPoolClient) => {
      await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      const result = await work(prepared ? { query: (text, values = []) => this.send(client, text, values) } : client);
      await client.query('COMMIT');
      return result;
    };
    const limit = bounded ? this.bounds.query : false;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(run, true, limit);
      } catch (error) {
        if (attempt === 1 && this.retriesAfter(error)) {
          if (!this.prepared || planChanged(error)) prepared = false;
          continue;
        }
        throw storageError(operation, error, attempt > 1);
      }
    }
  }

  /**
   * One attempt of an operation: a connection acquired within `bounds.acquire`, `work` on it
   * within `limit`, the connection handed back, or destroyed when it died or ran out of time.
   * `transactional`: `work` opened a transaction, to roll back when it throws. Rejects with the
   * driver's error or a `StorageTimeout`, for the caller to turn into a `PostgresStorageError`.
   */
  private async attempt<T>(work: (client: PgPoolClient) => Promise<T>, transactional: boolean, limit: number | false): Promise<T> {
    const client = await this.acquire();
    // While a connection is checked out the pool does not listen to it, and `pg` emits `error`
    // on it when it dies (its pending query fails as well): unhandled, that event would end the
    // process. The listener only notes the loss; the failed query tells the operation.
    let lost = false;
    const onError = () => {
      lost = true;
    };
    client.on?.('error', onError);
    let released = false;
    const release = (destroy: boolean) => {
      if (released) return;
      released = true;
      // A destroyed connection keeps the listener: a dead connection may report its end once more.
      if (!destroy) client.off?.('error', onError);
      client.release(destroy);
    };
    let expired = false;
    const run = (async () => {
      try {
        const result = await work(client);
        release(lost);
        return result;
      } catch (error) {
        // Out of time: the connection is destroyed already, and the bound has answered.
        if (expired) throw error;
        // A prepared statement whose result changed type fails on this connection for as long as
        // it lives (its other statements may be stale too): destroyed, so the pool opens a fresh one.
        let broken = lost || queryTimedOut(error) || planChanged(error) || (!transactional && !connectionUsableAfter(error));
        if (transactional && !broken) {
          try {
            await client.query('ROLLBACK');
          } catch {
            broken = true; // the connection is gone or unusable: do not hand it back to the pool
          }
        }
        release(broken);
        throw error;
      }
    })();
    if (limit === false) return run;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        expired = true;
        // Its statement may still be on its way or running: the connection must never serve
        // another operation. Destroying it fails that statement (and closes the socket, so the
        // database rolls back an open transaction once it reads again).
        release(true);
        reject(new StorageTimeout('query', limit));
      }, limit);
      run.then(
        (result) => {
          clearTimeout(timer);
          resolve(result);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  /**
   * A connection of the pool, within `bounds.acquire`. One that comes after the bound ran out is
   * handed straight back. The timer starts before the pool is asked, so that it answers first
   * when the pool has a timeout of the same length (`openPostgresStorage` sets one, which also
   * takes the waiter out of the pool's queue).
   */
  private acquire(): Promise<PgPoolClient> {
    const limit = this.bounds.acquire;
    // A pool that says it has an idle connection and nobody waiting hands that one over at once,
    // without a round trip: no timer needed (the common case, kept cheap).
    if (limit === false || ((this.pool.idleCount ?? 0) > 0 && this.pool.waitingCount === 0)) return this.pool.connect();
    return new Promise<PgPoolClient>((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new StorageTimeout('acquire', limit));
      }, limit);
      let connecting: Promise<PgPoolClient>;
      try {
        connecting = this.pool.connect();
      } catch (error) {
        clearTimeout(timer);
        reject(error);
        return;
      }
      connecting.then(
        (client) => {
          if (late) {
            client.release(false);
            return;
          }
          clearTimeout(timer);
          resolve(client);
        },
        (error: unknown) => {
          if (late) return; // the bound has answered already
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}

/**
 * Whether `error` is `pg`'s own `query_timeout` (a host may set one on its pool): the statement
 * may still be running on the connection, so it must not be used again, not even for ROLLBACK.
 */
const queryTimedOut = (error: unknown): boolean => error instanceof Error && error.message === 'Query read timeout';
