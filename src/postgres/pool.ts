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
 * A connection checked out of the pool (`pg.PoolClient`).
 * @group Storage
 */
export interface PgPoolClient {
  query(text: string, values?: unknown[]): Promise<PgQueryResult>;
  /** `release(true)` destroys the connection instead of returning it to the pool. */
  release(destroy?: boolean | Error): void;
}

/**
 * What `PostgresStorage` needs of a pool: `pg.Pool` fits, and so does any pool with the same
 * `query` and `connect` (e.g. a pool of a `pg`-compatible driver).
 * @group Storage
 */
export interface PgPool {
  query(text: string, values?: unknown[]): Promise<PgQueryResult>;
  connect(): Promise<PgPoolClient>;
}
