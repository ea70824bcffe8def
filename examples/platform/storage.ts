/**
 * Where authgate keeps clients, codes, tokens and consents: the one place the demo chooses it.
 */
import { MemoryStorage, type Storage } from '../../src/index.js';

/**
 * In memory by default: nothing to set up, and a restart forgets everything.
 *
 * ─── POSTGRES GOES HERE ───────────────────────────────────────────────────────────────────────
 * With DATABASE_URL set the demo is meant to use PostgreSQL through `authgate/postgres`
 * (`openPostgresStorage` in src/postgres). Until it is wired in here, the demo says so and keeps
 * to memory. The wiring will look like:
 *
 *   const { openPostgresStorage } = await import('../../src/postgres/index.js');
 *   return openPostgresStorage(env.DATABASE_URL); // pool, migration; close() ends the pool
 *
 * Mind: the platform's sessions and the developer page's app owners stay in memory, and the demo
 * registers StatusBoard anew at every start.
 * ──────────────────────────────────────────────────────────────────────────────────────────────
 */
export async function chooseStorage(env: NodeJS.ProcessEnv = process.env): Promise<{ storage: Storage; close(): Promise<void> }> {
  if (env.DATABASE_URL) {
    console.warn('DATABASE_URL is set, but the demo cannot use PostgreSQL yet (authgate/postgres is not wired in): using memory.');
  }
  return { storage: new MemoryStorage(), close: async () => {} };
}
