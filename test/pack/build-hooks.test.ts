/**
 * npm's build hooks (.ci/build-hooks.mjs): `prepare` builds dist/ when npm makes a package from a
 * checkout for someone else (a git or directory dependency) and builds nothing on a contributor's
 * own `npm ci` or `npm install` there; `prepack` builds and takes `prepare` out of the packed
 * manifest, and `postpack` puts package.json back (test/pack/pack.test.ts packs for real). Run on
 * a copy of the script in a temporary checkout, with a `tsup` on PATH that only records its call.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../.ci/build-hooks.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'authgate-build-hooks-'));
const checkout = join(dir, 'authgate');
const bin = join(dir, 'bin');
const built = join(dir, 'built');
const MANIFEST = `${JSON.stringify(
  {
    name: 'authgate',
    version: '0.0.0',
    repository: { type: 'git', url: 'git+https://github.com/owner/authgate.git' },
    scripts: { build: 'tsup', prepare: 'node .ci/build-hooks.mjs prepare' },
  },
  null,
  2,
)}\n`;
const README = [
  'See [the guide](docs/guide.md#scope), [an example](./examples/cli.ts) and [below](#install).',
  'Also [the RFC](https://www.rfc-editor.org/rfc/rfc6749) and [mail](mailto:a@example.com).',
  '',
].join('\n');

mkdirSync(join(checkout, '.ci'), { recursive: true });
mkdirSync(join(checkout, 'test'));
cpSync(SCRIPT, join(checkout, '.ci', 'build-hooks.mjs'));
mkdirSync(bin);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A `tsup` that appends a line to `built` and exits with `status`. */
function fakeTsup(status = 0): void {
  writeFileSync(join(bin, 'tsup'), `#!/bin/sh\necho tsup >> '${built}'\nexit ${status}\n`);
  chmodSync(join(bin, 'tsup'), 0o755);
}

/** Run a hook as npm would: `INIT_CWD` is where npm was run, `npm_command` the command. */
function hook(name: string, npm: { INIT_CWD?: string; npm_command?: string }) {
  const env: NodeJS.ProcessEnv = { PATH: `${bin}${delimiter}${process.env['PATH']}`, ...npm };
  const result = spawnSync(process.execPath, [join(checkout, '.ci', 'build-hooks.mjs'), name], { cwd: checkout, env, encoding: 'utf8' });
  return {
    status: result.status,
    output: result.stdout + result.stderr,
    builds: existsSync(built) ? readFileSync(built, 'utf8').split('\n').filter(Boolean).length : 0,
  };
}

beforeEach(() => {
  rmSync(built, { force: true });
  rmSync(join(checkout, '.package.json.packing'), { force: true });
  rmSync(join(checkout, '.README.md.packing'), { force: true });
  writeFileSync(join(checkout, 'package.json'), MANIFEST);
  writeFileSync(join(checkout, 'README.md'), README);
  fakeTsup();
});

describe.skipIf(process.platform === 'win32')('.ci/build-hooks.mjs', () => {
  it("prepare builds nothing on the checkout's own npm ci or npm install, from its root or a folder inside", () => {
    expect(hook('prepare', { INIT_CWD: checkout, npm_command: 'ci' })).toMatchObject({ status: 0, builds: 0 });
    expect(hook('prepare', { INIT_CWD: join(checkout, 'test'), npm_command: 'install' })).toMatchObject({ status: 0, builds: 0 });
  });

  it('prepare builds for a git or directory dependency (npm run elsewhere), on npm run prepare, and without npm', () => {
    expect(hook('prepare', { INIT_CWD: dir, npm_command: 'install' })).toMatchObject({ status: 0, builds: 1 });
    expect(hook('prepare', { INIT_CWD: dir, npm_command: 'ci' })).toMatchObject({ status: 0, builds: 2 });
    expect(hook('prepare', { INIT_CWD: checkout, npm_command: 'run' })).toMatchObject({ status: 0, builds: 3 });
    expect(hook('prepare', {})).toMatchObject({ status: 0, builds: 4 });
  });

  it('a failed build fails prepare and prepack, and prepack then leaves package.json alone', () => {
    fakeTsup(3);
    expect(hook('prepare', { INIT_CWD: dir, npm_command: 'install' })).toMatchObject({ status: 3, builds: 1 });
    expect(hook('prepack', { INIT_CWD: checkout, npm_command: 'pack' })).toMatchObject({ status: 3, builds: 2 });
    expect(readFileSync(join(checkout, 'package.json'), 'utf8')).toBe(MANIFEST);
    expect(existsSync(join(checkout, '.package.json.packing'))).toBe(false);
  });

  it('prepack builds once and takes prepare out of package.json; postpack puts it back byte for byte', () => {
    expect(hook('prepack', { INIT_CWD: checkout, npm_command: 'pack' })).toMatchObject({ status: 0, builds: 1 });
    const packed = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(packed.scripts).toEqual({ build: 'tsup' });
    expect(hook('postpack', { INIT_CWD: checkout, npm_command: 'pack' })).toMatchObject({ status: 0, builds: 1 });
    expect(readFileSync(join(checkout, 'package.json'), 'utf8')).toBe(MANIFEST);
    expect(existsSync(join(checkout, '.package.json.packing'))).toBe(false);
  });

  it("prepack points the README's relative links at the repository; postpack puts the README back byte for byte", () => {
    expect(hook('prepack', { INIT_CWD: checkout, npm_command: 'pack' }).status).toBe(0);
    expect(readFileSync(join(checkout, 'README.md'), 'utf8')).toBe(
      [
        'See [the guide](https://github.com/owner/authgate/blob/main/docs/guide.md#scope), [an example](https://github.com/owner/authgate/blob/main/examples/cli.ts) and [below](#install).',
        'Also [the RFC](https://www.rfc-editor.org/rfc/rfc6749) and [mail](mailto:a@example.com).',
        '',
      ].join('\n'),
    );
    expect(hook('postpack', { INIT_CWD: checkout, npm_command: 'pack' }).status).toBe(0);
    expect(readFileSync(join(checkout, 'README.md'), 'utf8')).toBe(README);
    expect(existsSync(join(checkout, '.README.md.packing'))).toBe(false);
  });

  it('a pack that died between prepack and postpack is undone by the next prepack', () => {
    expect(hook('prepack', { INIT_CWD: checkout, npm_command: 'pack' }).status).toBe(0);
    // No postpack: npm pack died. The next pack starts from the package.json set aside.
    expect(hook('prepack', { INIT_CWD: checkout, npm_command: 'pack' }).status).toBe(0);
    expect(hook('postpack', { INIT_CWD: checkout, npm_command: 'pack' }).status).toBe(0);
    expect(readFileSync(join(checkout, 'package.json'), 'utf8')).toBe(MANIFEST);
    expect(readFileSync(join(checkout, 'README.md'), 'utf8')).toBe(README);
  });
});
