#!/usr/bin/env node
/**
 * `node .ci/build-hooks.mjs prepare|prepack|postpack`: npm's build hooks of package.json.
 *
 * - `prepare` builds dist/ (tsup) when npm makes a package from this checkout for someone else:
 *   a git dependency (`npm install github:owner/authgate`; npm runs only `prepare` there) or a
 *   directory dependency (`npm install ../authgate`). It builds nothing on a contributor's own
 *   `npm ci` or `npm install` in this checkout, where nothing reads dist/: the tests and the demo
 *   run src/ through vitest and tsx, and test/pack builds its own copy. `npm run build` builds it;
 *   so does `npm run prepare`, as asked. Which install this is: npm sets `INIT_CWD` to the
 *   folder npm was run in and `npm_command` to the command (docs.npmjs.com, "Scripts").
 * - `prepack` (run by `npm pack` and `npm publish`, before the tarball is made) builds dist/ and
 *   takes `scripts.prepare` out of package.json, so the packed manifest has no install-time script
 *   (npm 11 lists one for every install of a tarball, and a tarball has nothing left to prepare).
 *   `postpack` puts package.json back. A pack that died in between leaves `.package.json.packing`,
 *   which the next `prepack` or `postpack` puts back first.
 * - `prepack` also rewrites the README's relative links (`docs/guide.md#…`, `examples/…`) into
 *   links to the repository (`<repository>/blob/main/…`): in the checkout they work offline and on
 *   any fork, but the tarball ships only dist/, so on the registry they would point at nothing.
 *   `postpack` puts the README back too (`.README.md.packing`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = realpathSync(fileURLToPath(new URL('..', import.meta.url)));
const manifest = join(root, 'package.json');
const saved = join(root, '.package.json.packing');
const readme = join(root, 'README.md');
const savedReadme = join(root, '.README.md.packing');

/** Whether npm was run inside this checkout, for itself (npm ci, npm install, npm pack here), other than `npm run prepare`. */
function inThisCheckout() {
  const from = process.env.INIT_CWD;
  if (!from || !existsSync(from) || process.env.npm_command === 'run') return false;
  const inside = relative(root, realpathSync(from));
  return !inside.startsWith('..') && !isAbsolute(inside);
}

function build() {
  // tsup is on PATH in an npm script (node_modules/.bin).
  const result = spawnSync('tsup', [], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.error) throw result.error;
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/** Put back the package.json and README that `prepack` set aside, if they are set aside. */
function restore() {
  if (existsSync(saved)) renameSync(saved, manifest);
  if (existsSync(savedReadme)) renameSync(savedReadme, readme);
}

/** `git+https://github.com/o/r.git` → `https://github.com/o/r`. */
function repositoryPage(pkg) {
  const url = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  if (!url) throw new Error('package.json has no repository url: the README links cannot be made absolute');
  return url.replace(/^git\+/, '').replace(/\.git$/, '');
}

/** Markdown links whose target has no scheme and is not a same-page anchor, made absolute. */
function absoluteLinks(markdown, page) {
  return markdown.replace(/\]\(([^)\s]+)\)/g, (whole, target) => {
    if (/^([a-z][a-z0-9+.-]*:|#)/i.test(target)) return whole;
    return `](${page}/blob/main/${target.replace(/^\.\//, '')})`;
  });
}

const hook = process.argv[2];
if (hook === 'prepare') {
  if (!inThisCheckout()) build();
} else if (hook === 'prepack') {
  restore();
  build();
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  delete pkg.scripts.prepare;
  writeFileSync(saved, text);
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
  const readmeText = readFileSync(readme, 'utf8');
  writeFileSync(savedReadme, readmeText);
  writeFileSync(readme, absoluteLinks(readmeText, repositoryPage(pkg)));
} else if (hook === 'postpack') {
  restore();
} else {
  console.error('usage: node .ci/build-hooks.mjs prepare|prepack|postpack');
  process.exit(2);
}
