import { defineConfig } from 'vitest/config';

/** The suites that run a second time on Express 4, with Express 5's test files for other hosts left out. */
const EXPRESS4_SUITES = ['test/adapters/**/*.test.ts', 'test/mcp/**/*.test.ts'];
const NOT_EXPRESS = ['test/adapters/fastify-host.test.ts', 'test/adapters/hono-host.test.ts', 'test/adapters/node-host.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'all', include: ['test/**/*.test.ts'] } },
      {
        // The peer range claims `^4.21.0 || ^5.0.0`: the HTTP suites once more with `express`
        // resolved to Express 4 (the devDependency `express4`, an npm alias), in the adapter as in
        // the host apps. The shipped adapter keeps importing `express`. Only the Express targets,
        // and node:http for same-answers.test.ts to compare with (test/adapters/targets/select.ts).
        extends: true,
        resolve: { alias: [{ find: /^express$/, replacement: 'express4' }] },
        test: {
          name: 'express4',
          include: EXPRESS4_SUITES,
          exclude: NOT_EXPRESS,
          env: { AUTHGATE_TARGETS: 'express,node', AUTHGATE_EXPRESS: '4' },
        },
      },
    ],
  },
});
