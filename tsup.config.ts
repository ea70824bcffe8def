import { defineConfig } from 'tsup';

// One ESM build with code splitting, so the core is a single shared chunk: every entry point
// sees the same AuthorizationServer class and `instanceof` holds across entries.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    testing: 'src/testing/index.ts',
    express: 'adapters/express/index.ts',
    fastify: 'adapters/fastify/index.ts',
    hono: 'adapters/hono/index.ts',
    node: 'adapters/node/index.ts',
    postgres: 'src/postgres/index.ts',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'neutral',
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
  treeshake: true,
  external: ['express', 'fastify', 'hono', 'vitest', 'pg'],
});
