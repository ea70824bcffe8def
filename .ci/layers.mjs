#!/usr/bin/env node
/**
 * `node .ci/layers.mjs [root]`: the import rule of docs/architecture.md, checked on `src/` and
 * `adapters/` (run by `npm run lint`, so by CI). Exits 1, naming each offender, when
 *
 * - files import each other in a cycle (type-only imports count: a cycle means a shared part
 *   wants a room below both);
 * - a file imports one of a higher layer and that import is not listed as an allowed upward
 *   import, or a listed one no longer exists (so the list cannot go stale);
 * - a file of `adapters/` imports anything of `src/` but its public entry, `src/index.ts`;
 * - a file of `src/` or `adapters/` is in no layer.
 *
 * The layers and the allowed upward imports are two tables of docs/architecture.md, between the
 * comments `<!-- layers -->` … `<!-- /layers -->` and `<!-- upward-imports -->` …
 * `<!-- /upward-imports -->`: the document is the rule, so the two cannot drift. The layers
 * table lists the layers bottom first, each with its paths in backticks (`src/checks/` is every
 * file below it); a file belongs to the layer of its longest matching path. A file may import
 * files of its own layer or of layers below. Imports are read with the `typescript` parser
 * (`import`, `import type`, `export … from`, `import()`), relative ones only.
 *
 * `layersCheck(root)` is the same check in-process (test/docs/layers.test.ts calls it on its
 * fixtures, without a Node process and a TypeScript load per case): it returns what the command
 * prints and its exit status.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const slash = (path) => path.split(sep).join('/');
const paths = (cell) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);

/**
 * The check on the repository at `rootArg` (default: this checkout), in-process: what
 * `node .ci/layers.mjs [root]` prints on stdout and stderr (each line ended by a newline, as
 * `console.log` writes it) and its exit status.
 *
 * @param {string} [rootArg]
 * @returns {{ status: number, stdout: string, stderr: string }}
 */
export function layersCheck(rootArg) {
  const root = resolve(rootArg ?? fileURLToPath(new URL('..', import.meta.url)));
  const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');

  /** The rows of the Markdown table between `<!-- name -->` and `<!-- /name -->`, each a list of cells (header and rule dropped). */
  function table(name) {
    const match = new RegExp(`<!-- ${name} -->([\\s\\S]*?)<!-- /${name} -->`).exec(doc);
    if (!match) throw new Error(`docs/architecture.md has no <!-- ${name} --> table`);
    const rows = match[1].split('\n').filter((line) => line.trim().startsWith('|'));
    return rows.slice(2).map((line) =>
      line
        .trim()
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  }

  const layers = table('layers').map(([name, files]) => ({ name, paths: paths(files) }));
  const allowed = new Map(table('upward-imports').map(([from, to]) => [`${paths(from)[0]} -> ${paths(to)[0]}`, false]));

  /** The layer index of a file: its longest matching path wins; -1 when none matches. */
  function layerOf(file) {
    let best = -1;
    let length = -1;
    layers.forEach((layer, index) => {
      for (const path of layer.paths) {
        const matches = path.endsWith('/') ? file.startsWith(path) : file === path;
        if (matches && path.length > length) [best, length] = [index, path.length];
      }
    });
    return best;
  }

  function sources(dir) {
    const out = [];
    if (!existsSync(join(root, dir))) return out;
    for (const name of readdirSync(join(root, dir)).sort()) {
      const path = `${dir}/${name}`;
      if (statSync(join(root, path)).isDirectory()) out.push(...sources(path));
      else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
    }
    return out;
  }

  /** The files of the repository a file imports (relative specifiers only; `.js` names its `.ts`). */
  function importsOf(file) {
    const found = new Set();
    for (const { fileName } of ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const base = slash(relative(root, join(root, dirname(file), fileName)));
      const target = [base.replace(/\.m?js$/, '.ts'), base, `${base}.ts`, `${base}/index.ts`].find((p) => existsSync(join(root, p)));
      if (target && statSync(join(root, target)).isFile()) found.add(target);
    }
    return found;
  }

  const files = [...sources('src'), ...sources('adapters')];
  const graph = new Map(files.map((file) => [file, importsOf(file)]));
  const problems = [];

  for (const [file, targets] of graph) {
    const own = layerOf(file);
    if (own < 0) problems.push(`${file} is in no layer: add it to the layers table of docs/architecture.md`);
    for (const target of targets) {
      if (file.startsWith('adapters/') && target.startsWith('src/') && target !== 'src/index.ts') {
        problems.push(`${file} imports ${target}: an adapter imports the core only through src/index.ts`);
      }
      const theirs = layerOf(target);
      if (own < 0 || theirs <= own) continue;
      const key = `${file} -> ${target}`;
      if (allowed.has(key)) allowed.set(key, true);
      else problems.push(`${key} imports upward (${layers[own].name} -> ${layers[theirs].name}): not in the allowed upward imports`);
    }
  }
  for (const [key, used] of allowed) if (!used) problems.push(`allowed upward import ${key} no longer exists: remove it from the table`);

  // Cycles: the strongly connected components of more than one file (Tarjan), or a file importing itself.
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  function connect(file) {
    index.set(file, counter);
    low.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(file, Math.min(low.get(file), low.get(target)));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file), index.get(target)));
    }
    if (low.get(file) !== index.get(file)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)?.has(file)) {
      problems.push(`import cycle: ${component.sort().join(' <-> ')} (give the shared part a room below both)`);
    }
  }
  for (const file of files) if (!index.has(file)) connect(file);

  const edges = [...graph.values()].reduce((sum, targets) => sum + targets.size, 0);
  if (problems.length > 0) {
    const summary = `${problems.length} layer problem${problems.length > 1 ? 's' : ''} (docs/architecture.md#layers-and-the-import-direction-rule)`;
    return { status: 1, stdout: '', stderr: [...problems, summary].map((line) => `${line}\n`).join('') };
  }
  return {
    status: 0,
    stdout: `${files.length} files, ${edges} imports: no cycle, no upward import but the ${allowed.size} allowed\n`,
    stderr: '',
  };
}

// Run as a command (`node .ci/layers.mjs [root]`), not imported (Node names the main module by its real path).
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const { status, stdout, stderr } = layersCheck(process.argv[2]);
  process.stdout.write(stdout);
  process.stderr.write(stderr);
  process.exitCode = status;
}
