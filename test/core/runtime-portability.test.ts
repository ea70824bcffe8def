/** The core runs on any JavaScript runtime, not only Node; test/workerd proves it in workerd. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('runtime portability', () => {
  it('src/ imports no node: module and touches no Node global (Buffer, process, require)', () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (path.endsWith('.ts')) files.push(path);
      }
    };
    walk(join(import.meta.dirname, '../../src'));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      if (file.includes('/postgres/')) continue; // authgate/postgres runs on Node with pg by design
      const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      expect(code, file).not.toMatch(/from\s+['"]node:|require\(|import\(['"]node:/);
      // The globals themselves; a module found by feature detection (`getBuiltinModule('node:buffer').Buffer`,
      // `{ Buffer: ... }` in its type) is fine: the core falls back when it is absent (workerd runs it so).
      if (!file.includes('/testing/')) expect(code, file).not.toMatch(/(?<![.\w])Buffer\b(?!\s*:)|globalThis\.Buffer\b|\bprocess\./);
    }
  });
});
