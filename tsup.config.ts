import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const entry = {
  index: 'src/index.ts',
  testing: 'src/testing/index.ts',
  express: 'adapters/express/index.ts',
  fastify: 'adapters/fastify/index.ts',
  hono: 'adapters/hono/index.ts',
  node: 'adapters/node/index.ts',
  postgres: 'src/postgres/index.ts',
};

/**
 * The declarations: tsc emits one .d.ts per source file into dist/types/ (tsconfig.build.json),
 * and each entry's .d.ts re-exports its module's. tsup's own `dts` bundles them into one file per
 * entry instead, but it type-checks the whole program again inside Rollup: 38-43 s of a 2-core
 * machine where tsc's emit takes 12 s, on every `npm pack` and in the pack test.
 */
function declarations(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  for (const [name, source] of Object.entries(entry)) {
    const target = `./types/${source.replace(/\.ts$/, '.js')}`;
    writeFileSync(`dist/${name}.d.ts`, `export * from '${target}';\n`);
  }
}

// One ESM build with code splitting, so the core is a single shared chunk: every entry point
// sees the same AuthorizationServer class and `instanceof` holds across entries.
export default defineConfig({
  entry,
  format: ['esm'],
  target: 'node20',
  platform: 'neutral',
  dts: false,
  sourcemap: true,
  clean: true,
  splitting: true,
  treeshake: true,
  external: ['express', 'fastify', 'hono', 'vitest', 'pg'],
  onSuccess: async () => declarations(),
});
