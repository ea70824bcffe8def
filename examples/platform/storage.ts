/**
 * Where authgate keeps clients, codes, tokens and consents: the one place the demo chooses it.
 */
import { MemoryStorage, type Storage } from '../../src/index.js';

/**
 * In memory by default: nothing to set up, and a restart forgets everything.
 *
 * ─── POSTGRES GOES HERE ───────────────────────────────────────────────────────────────────────
 * With DATABASE_URL set the demo is meant to use PostgreSQL through `authgate/postgres`
 * (DESIGN.md: `new PostgresStorage(pool)`, `await storage.migrate()`). Until that lands, it says
 * so and keeps to memory. The wiring will look like:
 *
 *   const { Pool } = await import('pg');
 *   const { PostgresStorage } = await import('../../src/postgres/index.js');
 *   const pool = new Pool({ connectionString: env.DATABASE_URL });
 *   const storage = new PostgresStorage(pool);
 *   await storage.migrate();
 *   return { storage, close: () => pool.end() };
 * ──────────────────────────────────────────────────────────────────────────────────────────────
 */
export async function chooseStorage(env: NodeJS.ProcessEnv = process.env): Promise<{ storage: Storage; close(): Promise<void> }> {
  if (env.DATABASE_URL) {
    console.warn('DATABASE_URL is set, but the demo cannot use PostgreSQL yet (authgate/postgres is not wired in): using memory.');
  }
  return { storage: new MemoryStorage(), close: async () => {} };
}
