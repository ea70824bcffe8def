/**
 * What the PostgreSQL sections share: the slice of `pg` and `authgate/postgres` they use
 * (declared here, so the bench loads either lazily), and a pool wrapper that counts round trips
 * (`pool.query` calls, and each query of a connection checked out for a transaction, BEGIN and
 * COMMIT included).
 */
import type { Storage } from '../../src/index.js';

export interface PgQueryResult {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}
export interface PgPoolClient {
  query(text: string, values?: unknown[]): Promise<PgQueryResult>;
  release(destroy?: boolean | Error): void;
}
export interface PgPool {
  query(text: string, values?: unknown[]): Promise<PgQueryResult>;
  connect(): Promise<PgPoolClient>;
}
export interface PostgresStorageModule {
  PostgresStorage: new (pool: PgPool, options?: { schema?: string }) => Storage & { migrate(): Promise<unknown> };
}

/** Round trips made through a counted pool, since the last reset. */
export interface Counts {
  queries: number;
  transactions: number;
}

/** `pool`, counting its round trips into the returned `counts`. */
export function countedPool(pool: PgPool): { pool: PgPool; counts: Counts } {
  const counts: Counts = { queries: 0, transactions: 0 };
  const counted: PgPool = {
    query: (text, values) => {
      counts.queries++;
      return pool.query(text, values);
    },
    async connect() {
      counts.transactions++;
      const client = await pool.connect();
      return {
        query: (text, values) => {
          counts.queries++;
          return client.query(text, values);
        },
        release: (destroy) => client.release(destroy),
      };
    },
  };
  return { pool: counted, counts };
}

/** A `pg.Pool` of `max` connections on `url`, whose idle-connection errors are not fatal. */
export async function openPool(url: string, max: number): Promise<PgPool & { end(): Promise<void> }> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => {});
  return pool as unknown as PgPool & { end(): Promise<void> };
}
