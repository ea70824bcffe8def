/**
 * Where the benchmark gets authgate from. By default the TypeScript sources (run through tsx or
 * vitest), so an edit in src/ is measured by the next `npm run bench` without a build. With
 * `--dist` (or BENCH_DIST=1) the built package through its own exports (`authgate`,
 * `authgate/express`, ...): run `npm run build` first.
 *
 * Modules that other developers may still be writing (the Fastify and Hono adapters,
 * `authgate/postgres`) are loaded by a computed specifier and checked for the exports the bench
 * needs; when they are missing the caller skips that part and says why.
 */
import type * as Core from '../../src/index.js';

export type CoreModule = typeof Core;

const SOURCE: Record<string, string> = {
  core: '../../src/index.js',
  express: '../../adapters/express/index.js',
  fastify: '../../adapters/fastify/index.js',
  hono: '../../adapters/hono/index.js',
  postgres: '../../src/postgres/index.js',
};
const DIST: Record<string, string> = {
  core: 'authgate',
  express: 'authgate/express',
  fastify: 'authgate/fastify',
  hono: 'authgate/hono',
  postgres: 'authgate/postgres',
};

function specifier(name: string, dist: boolean): string {
  return dist ? DIST[name]! : new URL(SOURCE[name]!, import.meta.url).href;
}

export async function loadCore(dist: boolean): Promise<CoreModule> {
  return (await import(specifier('core', dist))) as CoreModule;
}

/** A module that may not exist yet: its exports, or why it cannot be used. */
export type Optional<T> = { ok: true; module: T } | { ok: false; reason: string };

/**
 * Load `name` and check that it exports every function in `required`; otherwise say what is
 * missing (the module is absent, fails to load, or lacks an export).
 */
export async function loadOptional<T>(
  name: 'express' | 'fastify' | 'hono' | 'postgres',
  required: string[],
  dist: boolean,
): Promise<Optional<T>> {
  let module: Record<string, unknown>;
  try {
    module = (await import(specifier(name, dist))) as Record<string, unknown>;
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return { ok: false, reason: `module ${dist ? DIST[name] : SOURCE[name]} could not be loaded (${message})` };
  }
  const missing = required.filter((key) => typeof module[key] !== 'function');
  if (missing.length > 0)
    return { ok: false, reason: `module ${dist ? DIST[name] : SOURCE[name]} does not export ${missing.join(', ')} yet` };
  return { ok: true, module: module as T };
}
