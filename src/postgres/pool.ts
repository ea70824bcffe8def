/**
 * What `PostgresStorage` needs of the `pg` driver, as types of its own: `authgate/postgres` loads
 * without `pg` installed, and any pool with the same `query` and `connect` fits.
 */

/**
 * The result of a query, as `pg` returns it.
 * @group Storage
 */
export interface PgQueryResult {
  // Each topic module maps its rows field by field; `pg` types them as `any` too.
  // biome-ignore lint/suspicious/noExplicitAny: the driver's own row type
  rows: any[];
  rowCount: number | null;
}

/**
 * A named statement as `pg` takes it (`{ name, text, values }`): parsed and planned once per
 * connection. `PostgresStorage` sends its statements with values this way unless its option
 * `preparedStatements` is `false`.
 * @group Storage
 */
export interface PgQueryConfig {
  name: string;
  text: string;
  values: unknown[];
}

/**
 * A connection checked out of the pool (`pg.PoolClient`).
 * @group Storage
 */
export interface PgPoolClient {
  /**
   * A statement: its text (and values), or, with `preparedStatements` (the default), `pg`'s
   * named-statement config for a statement with values. A wrapper that reads or rewrites the SQL
   * finds it in `text` of either.
   */
  query(statement: string | PgQueryConfig, values?: unknown[]): Promise<PgQueryResult>;
  /** `release(true)` destroys the connection instead of returning it to the pool. */
  release(destroy?: boolean | Error): void;
  /**
   * Optional, as on an `EventEmitter`: `pg` emits `error` on a checked-out connection that dies
   * (a database restart or failover, a killed backend), and with no listener that error ends
   * the process. `PostgresStorage` listens while it holds the connection, and destroys it when
   * it died. A pool whose connections emit no events may leave both out.
   */
  on?(event: 'error', listener: (error: Error) => void): unknown;
  /** Optional: removes the listener that `on` added, when the connection goes back to the pool. */
  off?(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * What `PostgresStorage` needs of a pool: `pg.Pool` fits, and so does any pool with the same
 * `query` and `connect` (e.g. a pool of a `pg`-compatible driver).
 * @group Storage
 */
export interface PgPool {
  query(text: string, values?: unknown[]): Promise<PgQueryResult>;
  connect(): Promise<PgPoolClient>;
  /**
   * Optional, as on an `EventEmitter`: `pg.Pool` emits `error` when an idle connection dies, and
   * with no listener that error ends the process. `PostgresStorage` adds one listener to each
   * pool it is given (the pool has already dropped the dead connection: nothing else is to do).
   * The host may add its own, to log.
   */
  on?(event: 'error', listener: (error: Error) => void): unknown;
  /**
   * Optional, as on `pg.Pool`: the idle connections, and the callers waiting for one. With one
   * idle and nobody waiting, `PostgresStorage` knows `connect()` answers at once and arms no
   * `acquireTimeoutMs` timer for it.
   */
  readonly idleCount?: number;
  readonly waitingCount?: number;
}
