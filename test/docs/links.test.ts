/**
 * Every Markdown document of the repository cites only what a reader can open: each relative link
 * points at a file that exists (and, with `#anchor`, at a heading of it), no link goes to the
 * repository's own (unpublished) GitHub address, and each repository path
 * quoted in backticks (`src/...`, `test/...`, ...) exists. A document that outlives a moved or
 * deleted file fails here instead of misleading the next reader.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The package's repository (`homepage` of package.json). It is not published: a link to one of
 * its files there leads nowhere, so every document links the repository's files relatively.
 */
const REPOSITORY = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { homepage: string }
).homepage.replace(/#.*$/, '');

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCUMENTS = execFileSync('git', ['ls-files', '*.md'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((file) => file !== '' && !file.startsWith('node_modules/'));

/** GitHub's heading anchors: lower case, punctuation dropped (but `-` and `_`), spaces to `-`. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorsOf = new Map<string, Set<string>>();
function anchors(file: string): Set<string> {
  let found = anchorsOf.get(file);
  if (!found) {
    found = new Set();
    const counts = new Map<string, number>();
    let fenced = false;
    for (const line of readFileSync(join(ROOT, file), 'utf8').split('\n')) {
      if (line.startsWith('```')) fenced = !fenced;
      const heading = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
      if (!heading) continue;
      const base = slug(heading[1]!);
      const n = counts.get(base) ?? 0;
      counts.set(base, n + 1);
      found.add(n === 0 ? base : `${base}-${n}`);
    }
    anchorsOf.set(file, found);
  }
  return found;
}

/** The Markdown text outside fenced code blocks. */
function prose(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8')
    .split(/^```.*$/m)
    .filter((_, i) => i % 2 === 0)
    .join('\n');
}

describe.each(DOCUMENTS)('%s', (file) => {
  it('every relative link points at a file (and heading) that exists', () => {
    const broken: string[] = [];
    for (const [, link] of prose(file).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (link!.startsWith(REPOSITORY)) {
        broken.push(`${link} (not published: link the file relatively)`);
        continue;
      }
      const target = link!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path, anchor] = target!.split('#') as [string, string | undefined];
      const resolved = path === '' ? file : normalize(join(dirname(file), path));
      if (!existsSync(join(ROOT, resolved))) {
        broken.push(link!);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) broken.push(link!);
    }
    expect(broken).toEqual([]);
  });

  // CHANGELOG.md names files as they were when each entry was written (`test/modern/` was split).
  it.skipIf(file === 'CHANGELOG.md')('every repository path quoted in backticks exists', () => {
    const missing: string[] = [];
    for (const [, path] of prose(file).matchAll(/`((?:src|test|adapters|examples|bench|docs|\.ci)\/[\w./-]+)`/g)) {
      // A pattern, or what a command generates (not in git).
      if (/[*{}]/.test(path!) || path!.startsWith('docs/api') || path!.startsWith('bench/results') || path!.startsWith('bench/.ab'))
        continue;
      const clean = path!.replace(/[:.]+$/, '');
      if (!existsSync(join(ROOT, clean))) missing.push(path!);
    }
    expect(missing).toEqual([]);
  });
});
