/**
 * The import rule of docs/architecture.md holds, and stays held: `node .ci/layers.mjs` (run by
 * `npm run lint`, so by CI) passes on the repository, reading its layers and allowed upward
 * imports from the document itself, and fails on a planted cycle (type-only on one side), a
 * planted upward import, a stale allowed one, an adapter importing past `src/index.ts` and a
 * file in no layer.
 *
 * One case runs the command itself (`node .ci/layers.mjs`, as `npm run lint` does); the fixtures
 * go to its `layersCheck` in this process, which prints and exits with the same (each spawned
 * case loaded the TypeScript parser anew: about 2 s of CPU each).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, '.ci/layers.mjs');
const dir = mkdtempSync(join(tmpdir(), 'authgate-layers-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Result = { status: number | null; stdout: string; stderr: string };
const { layersCheck } = (await import(pathToFileURL(SCRIPT).href)) as { layersCheck: (root?: string) => Result };

/** `node .ci/layers.mjs [root]`, as a process. */
const spawned = (...root: string[]): Result => {
  const { status, stdout, stderr } = spawnSync(process.execPath, [SCRIPT, ...root], { cwd: ROOT, encoding: 'utf8' });
  return { status, stdout, stderr };
};
/** `node .ci/layers.mjs root`, in this process: what it prints, and its exit status. */
const run = (root: string): Result => layersCheck(root);

/** The two marked tables of docs/architecture.md, as the script reads them. */
function architecture(allowed: [from: string, to: string][] = []): string {
  return `# Architecture

<!-- layers -->
| Layer     | Files |
| --------- | ----- |
| base      | \`src/types.ts\`, \`src/context.ts\` |
| checks    | \`src/checks/\` |
| endpoints | \`src/endpoints/\`, \`src/index.ts\` |
| adapters  | \`adapters/\` |
<!-- /layers -->

<!-- upward-imports -->
| From | To | Why |
| ---- | -- | --- |
${allowed.map(([from, to]) => `| \`${from}\` | \`${to}\` | a reason |`).join('\n')}
<!-- /upward-imports -->
`;
}

/** A fixture repository: its document and its source files (path → text). */
function fixture(name: string, files: Record<string, string>, allowed: [string, string][] = []): string {
  const root = join(dir, name);
  for (const [path, text] of Object.entries({ 'docs/architecture.md': architecture(allowed), ...files })) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** A tree that keeps the rule: each file imports only downward. */
const GOOD = {
  'src/types.ts': 'export type Id = string;\n',
  'src/context.ts': "import type { Id } from './types.js';\nexport interface Context { id: Id }\n",
  'src/checks/a.ts': "import type { Context } from '../context.js';\nexport const a = (ctx: Context) => ctx.id;\n",
  'src/checks/b.ts': "import { a } from './a.js';\nexport const b = a;\n",
  'src/endpoints/e.ts': "import { b } from '../checks/b.js';\nexport const e = b;\n",
  'src/index.ts': "export { e } from './endpoints/e.js';\n",
  'adapters/x/index.ts': "import { e } from '../../src/index.js';\nimport { s } from '../shared.js';\nexport const x = [e, s];\n",
  'adapters/shared.ts': "import type { Context } from '../src/index.js';\nexport const s = 1 as unknown as Context;\n",
};

// The first case spawns node, which loads the TypeScript parser (about 2 s of CPU): more on a loaded CI machine.
describe('.ci/layers.mjs', { timeout: 60_000 }, () => {
  it('passes on the repository, reading docs/architecture.md, and npm run lint runs it', () => {
    const result = spawned();
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/no cycle, no upward import/);
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.lint).toContain('node .ci/layers.mjs');
  });

  it('passes on a fixture that keeps the rule', () => {
    const result = run(fixture('good', GOOD));
    expect(result.status, result.stderr).toBe(0);
  });

  it('fails on a cycle, counting a type-only import', () => {
    const root = fixture('cycle', {
      ...GOOD,
      'src/checks/a.ts': "import type { b } from './b.js';\nexport const a = 1 as unknown as typeof b;\n",
    });
    const result = run(root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('import cycle: src/checks/a.ts <-> src/checks/b.ts');
    // The command itself prints the same and exits 1 (npm run lint fails).
    expect(spawned(root)).toEqual(result);
  });

  it('fails on an upward import (type-only too), passes once it is listed, fails when a listed one is gone', () => {
    const upward: Record<string, string> = {
      ...GOOD,
      'src/context.ts': "import type { a } from './checks/a.js';\nexport interface Context { id: string; a?: typeof a }\n",
      'src/checks/a.ts': 'export const a = (ctx: { id: string }) => ctx.id;\n',
    };
    const refused = run(fixture('upward', upward));
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('src/context.ts -> src/checks/a.ts imports upward (base -> checks)');

    const listed = run(fixture('listed', upward, [['src/context.ts', 'src/checks/a.ts']]));
    expect(listed.status, listed.stderr).toBe(0);

    const stale = run(fixture('stale', GOOD, [['src/context.ts', 'src/checks/a.ts']]));
    expect(stale.status).toBe(1);
    expect(stale.stderr).toContain('allowed upward import src/context.ts -> src/checks/a.ts no longer exists');
  });

  it('fails on an adapter importing the core past src/index.ts, and on a file in no layer', () => {
    const result = run(
      fixture('past-index', {
        ...GOOD,
        'adapters/x/index.ts': "import { b } from '../../src/checks/b.js';\nexport const x = b;\n",
        'src/stray.ts': 'export const stray = 1;\n',
      }),
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('adapters/x/index.ts imports src/checks/b.ts: an adapter imports the core only through src/index.ts');
    expect(result.stderr).toContain('src/stray.ts is in no layer');
  });
});
