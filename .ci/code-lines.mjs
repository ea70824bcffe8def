#!/usr/bin/env node
/**
 * `node .ci/code-lines.mjs [file ...]`: code lines per file, comments and blank lines not
 * counted. Default: every adapter entry (`adapters/*\/index.ts`) and the shared modules next to
 * them. Exits 1 when an adapter entry (a file `adapters/<name>/index.ts`) has more than
 * `MAX_ADAPTER_LINES` code lines: the README promises thin adapters, and `npm run lint` holds it
 * to that. What adapters share goes to the adapter kit (src/adapter-kit.ts, adapters/shared.ts).
 *
 * With no file named, it also counts the non-null assertions (`x!`, NonNullExpression nodes) in
 * `src/` and exits 1 when there are more than `MAX_NON_NULL`: issue 23 cut them from 110 to 4 by
 * narrowing, destructuring and checked helpers, and this keeps them from growing back (lower the
 * ceiling when you remove one). `node .ci/code-lines.mjs --non-null DIR` counts DIR instead.
 *
 * `codeLinesCheck(args)` is the same check in-process (test/docs/code-lines.test.ts calls it on its
 * fixtures, without a Node process and a TypeScript load per case): it returns what the command
 * prints and its exit status.
 *
 * A line counts when a token of the program is on it. The file is parsed with the `typescript`
 * package and every token of the syntax tree marks the lines it spans (a template literal over
 * three lines is three code lines); comments are trivia, never tokens, so a line holding only a
 * comment (or a JSDoc block) is not counted, and a line with code and a trailing comment is.
 */
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The most code lines an adapter entry may have (the README promises thin adapters, "under 100 lines of code"). */
const MAX_ADAPTER_LINES = 100;

/** The most non-null assertions `src/` may hold (see above). */
const MAX_NON_NULL = 4;

/** Whether `file` is an adapter entry: `adapters/<name>/index.ts`, wherever `adapters` is. */
const isAdapterEntry = (file) => /(^|[\\/])adapters[\\/][^\\/]+[\\/]index\.ts$/.test(file);

/** The line numbers (0-based) that hold at least one token of `text`. */
function codeLines(path, text) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const lines = new Set();
  const visit = (node) => {
    if (ts.isJSDoc(node)) return;
    const children = node.getChildren(source);
    if (children.length === 0) {
      if (node.kind === ts.SyntaxKind.EndOfFileToken) return;
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      for (let line = start; line <= end; line++) lines.add(line);
      return;
    }
    for (const child of children) visit(child);
  };
  visit(source);
  return lines.size;
}

function defaultFiles() {
  const adapters = join(root, 'adapters');
  const files = [];
  for (const name of readdirSync(adapters).sort()) {
    const path = join(adapters, name);
    if (statSync(path).isDirectory()) files.push(join(path, 'index.ts'));
    else if (name.endsWith('.ts')) files.push(path);
  }
  return files;
}

/** The `.ts` files under `dir`, at any depth. */
function tsFilesUnder(dir) {
  return readdirSync(dir, { recursive: true })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(dir, name));
}

/** The non-null assertions (`x!`) in `text`: a walk of the syntax tree, no type checking. */
function nonNullAssertions(path, text) {
  // Doc comments are not parsed (JSDocParsingMode.ParseNone): they hold no assertion (a tenth faster).
  const options = { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone };
  const source = ts.createSourceFile(path, text, options, false, ts.ScriptKind.TS);
  let count = 0;
  const visit = (node) => {
    if (node.kind === ts.SyntaxKind.NonNullExpression) count++;
    ts.forEachChild(node, visit);
  };
  visit(source);
  return count;
}

/**
 * Prints the non-null assertions under `dir` by file and in all (to `out`); returns 1 above
 * `MAX_NON_NULL` (after saying so to `err`), else 0.
 */
function checkNonNull(dir, out, err) {
  let total = 0;
  for (const file of tsFilesUnder(dir).sort()) {
    const count = nonNullAssertions(file, readFileSync(file, 'utf8'));
    if (count > 0) out.push(`${String(count).padStart(5)} non-null assertions  ${relative(root, file) || file}`);
    total += count;
  }
  out.push(`${String(total).padStart(5)} non-null assertions  total (at most ${MAX_NON_NULL})`);
  if (total <= MAX_NON_NULL) return 0;
  err.push(
    `${total} non-null assertions (x!) in ${relative(root, dir) || dir}, more than ${MAX_NON_NULL}: narrow the value instead (a check with the specified error, a destructuring, a loop over entries).`,
  );
  return 1;
}

/**
 * The command with its arguments (`process.argv.slice(2)`), in-process: what it prints on stdout
 * and stderr (each line ended by a newline, as `console.log` writes it) and its exit status.
 *
 * @param {string[]} args
 * @returns {{ status: number, stdout: string, stderr: string }}
 */
export function codeLinesCheck(args) {
  const out = [];
  const err = [];
  const done = (status) => ({ status, stdout: out.map((line) => `${line}\n`).join(''), stderr: err.map((line) => `${line}\n`).join('') });
  if (args[0] === '--non-null') return done(checkNonNull(args[1] ?? join(root, 'src'), out, err));
  const files = args.length > 0 ? args : defaultFiles();
  let total = 0;
  const tooLong = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const count = codeLines(file, text);
    total += count;
    if (count > MAX_ADAPTER_LINES && isAdapterEntry(file)) tooLong.push(`${relative(root, file) || file} (${count})`);
    const all = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    out.push(`${String(count).padStart(5)} code lines  ${String(all).padStart(5)} lines  ${relative(root, file) || file}`);
  }
  if (files.length > 1) out.push(`${String(total).padStart(5)} code lines  total`);
  let status = 0;
  if (tooLong.length > 0) {
    err.push(
      `More than ${MAX_ADAPTER_LINES} code lines in an adapter entry: ${tooLong.join(', ')}. Move what is shared or protocol to the adapter kit.`,
    );
    status = 1;
  }
  if (args.length === 0) status = Math.max(status, checkNonNull(join(root, 'src'), out, err));
  return done(status);
}

// Run as a command (`node .ci/code-lines.mjs`), not imported (Node names the main module by its real path).
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const { status, stdout, stderr } = codeLinesCheck(process.argv.slice(2));
  process.stdout.write(stdout);
  process.stderr.write(stderr);
  process.exitCode = status;
}
