import { defineConfig } from 'vitest/config';
import { IN_PROCESS, MAX_WORKERS, PER_FILE_SETUP, TIMEOUTS } from './vitest.config.js';

/**
 * `npm run test:quick`, the inner loop: the in-process suites of vitest.config.ts (the core, every
 * in-process adapter over HTTP on 127.0.0.1, MCP, security and speed) without workerd,
 * PostgreSQL, a browser, packaging, the Express 4 rerun or test/docs (the checks of the documents
 * and of `npm run lint`'s scripts, which start a Node process each). `npm test` runs all of it.
 */
export default defineConfig({
  test: {
    ...TIMEOUTS,
    maxWorkers: MAX_WORKERS,
    name: 'quick',
    include: IN_PROCESS,
    exclude: ['test/docs/**'],
    isolate: false,
    setupFiles: PER_FILE_SETUP,
    // No workerd target (test/adapters/targets/select.ts); DATABASE_URL empty skips the PostgreSQL halves.
    env: { AUTHGATE_TARGETS: 'express,fastify,hono,node', DATABASE_URL: '' },
  },
});
