import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * The in-process suites: the `unit` project, run without isolation (`isolate: false`). The files
 * of one worker share one process and one module graph, so `src/`, the frameworks and the test
 * helpers load once per worker instead of once per file (loading them took longer than most of
 * these files' tests), and the code under test stays warm. test/per-file-setup.ts gives each file
 * what a process of its own would: its clean-up after it, and Node's own Web platform globals.
 *
 * The browser files, the DPoP clients and the OpenID Connect conformance modules are the
 * `shared` project, likewise without isolation: each of them loads the demo (examples/), the
 * adapters and playwright-core or a client library, 3-4 s of a loaded machine per file, and they
 * keep no state in a module (each file starts its own servers and browser).
 *
 * Everything else is the `all` project, each file in a fresh module graph (vitest's default):
 * timing.test.ts mocks a module (`vi.mock`), the model tests count steps in a shared module
 * (test/model/model.ts), and the storage, workerd, packaging and relying-party files
 * drive servers, databases and child processes, whose time dwarfs the loading. A new
 * folder lands there too until it is listed here.
 */
export const IN_PROCESS = [
  'test/core/**/*.test.ts',
  'test/adapters/**/*.test.ts',
  'test/mcp/**/*.test.ts',
  'test/security/**/!(timing).test.ts',
  'test/speed/**/*.test.ts',
  'test/docs/**/*.test.ts',
];
export const PER_FILE_SETUP = ['test/per-file-setup.ts'];
/** Run without isolation too, in a project of their own (see above). */
const SHARED = ['test/e2e/**/*.test.ts', 'test/dpop/**/*.test.ts', 'test/oidc/**/*.test.ts'];

/** The suites that run a second time on Express 4, with Express 5's test files for other hosts left out. */
const EXPRESS4_SUITES = ['test/adapters/**/*.test.ts', 'test/mcp/**/*.test.ts'];
const NOT_EXPRESS = ['test/adapters/fastify-host.test.ts', 'test/adapters/hono-host.test.ts', 'test/adapters/node-host.test.ts'];
/** The side-by-side comparison needs a second target to compare Express 4 with: node:http. */
const SAME_ANSWERS = 'test/adapters/same-answers.test.ts';
/**
 * Suites that use Express only as a host for what they test elsewhere (two agent processes racing
 * the core's refresh retries): once, on Express 5, is enough.
 */
const NOT_FRAMEWORK = ['test/mcp/refresh-processes.test.ts'];

/** Shared by vitest.quick.config.ts. */
export const TIMEOUTS = { testTimeout: 20_000, hookTimeout: 60_000 };
/**
 * vitest's default is one worker less than the cores, so one worker on a 2-core machine: the
 * second core then idles while a file waits for PostgreSQL, a browser, workerd or npm. Two files
 * at a time at least.
 */
export const MAX_WORKERS = Math.max(2, availableParallelism() - 1);

export default defineConfig({
  test: {
    ...TIMEOUTS,
    maxWorkers: MAX_WORKERS,
    projects: [
      { extends: true, test: { name: 'unit', include: IN_PROCESS, isolate: false, setupFiles: PER_FILE_SETUP } },
      { extends: true, test: { name: 'shared', include: SHARED, isolate: false, setupFiles: PER_FILE_SETUP } },
      { extends: true, test: { name: 'all', include: ['test/**/*.test.ts'], exclude: [...IN_PROCESS, ...SHARED] } },
      {
        // The peer range claims `^4.21.0 || ^5.0.0`: the HTTP suites once more with `express`
        // resolved to Express 4 (the devDependency `express4`, an npm alias), in the adapter as in
        // the host apps. The shipped adapter keeps importing `express`. Only the Express target
        // (test/adapters/targets/select.ts): the other targets do not load Express and run in
        // `unit`; same-answers.test.ts compares Express 4 with node:http in `express4-vs-node`.
        extends: true,
        resolve: { alias: [{ find: /^express$/, replacement: 'express4' }] },
        test: {
          name: 'express4',
          include: EXPRESS4_SUITES,
          exclude: [...NOT_EXPRESS, SAME_ANSWERS, ...NOT_FRAMEWORK],
          isolate: false,
          setupFiles: PER_FILE_SETUP,
          env: { AUTHGATE_TARGETS: 'express', AUTHGATE_EXPRESS: '4' },
        },
      },
      {
        extends: true,
        resolve: { alias: [{ find: /^express$/, replacement: 'express4' }] },
        test: {
          name: 'express4-vs-node',
          include: [SAME_ANSWERS],
          isolate: false,
          setupFiles: PER_FILE_SETUP,
          env: { AUTHGATE_TARGETS: 'express,node', AUTHGATE_EXPRESS: '4' },
        },
      },
    ],
  },
});
