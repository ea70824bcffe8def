/**
 * Which targets a run of the shared suites covers: all of them, unless `AUTHGATE_TARGETS`
 * (comma-separated names) narrows the list. The `express4` project of vitest.config.ts sets it,
 * since that project exists only to run the suites once more with `express` resolved to
 * Express 4 (the peer range claims `^4.21.0 || ^5.0.0`): the other frameworks are unchanged
 * there, and run in the main project.
 */
export function selectTargets<T extends string>(all: readonly T[]): readonly T[] {
  const wanted = process.env['AUTHGATE_TARGETS'];
  if (!wanted) return all;
  const names = new Set(wanted.split(',').map((name) => name.trim()));
  return all.filter((target) => names.has(target));
}

/** The major version of Express the run expects (`AUTHGATE_EXPRESS`, set by the `express4` project): 5 by default. */
export const EXPRESS_MAJOR = Number(process.env['AUTHGATE_EXPRESS'] ?? 5);
