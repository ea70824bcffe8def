/**
 * Where authgate keeps clients, codes, tokens and consents: the one place the demo chooses it.
 */
import { MemoryStorage, type Storage } from '../../src/index.js';

/**
 * In memory by default: nothing to set up, and a restart forgets everything. With DATABASE_URL
 * set, PostgreSQL through `authgate/postgres` (tables created or upgraded at start, expired rows
 * pruned hourly). The platform's own sessions stay in memory; the applications and their owners
 * are in authgate's tables, and the demo finds its StatusBoard client there again at the next
 * start (demo-clients.ts). A DATABASE_URL that is set but empty or not a PostgreSQL URL is a
 * `ConfigError` (openPostgresStorage), not a quiet fallback to memory or to localhost:5432.
 */
export async function chooseStorage(env: NodeJS.ProcessEnv = process.env): Promise<{ storage: Storage; close(): Promise<void> }> {
  if (env.DATABASE_URL !== undefined) {
    const { openPostgresStorage } = await import('../../src/postgres/index.js');
    const { storage, close } = await openPostgresStorage(env.DATABASE_URL);
    const pruning = setInterval(() => storage.prune().catch((error: unknown) => console.error('prune failed:', error)), 3_600_000);
    pruning.unref();
    return {
      storage,
      close: async () => {
        clearInterval(pruning);
        await close();
      },
    };
  }
  return { storage: new MemoryStorage(), close: async () => {} };
}
