/**
 * `openPostgresStorage(url)` as a newcomer meets it: a `DATABASE_URL` that is unset, empty or not
 * a PostgreSQL URL is a `ConfigError` naming `connectionString` before anything connects (`pg`
 * would quietly try localhost:5432, or a host named `base` for `not-a-url`); a database that
 * cannot be opened is a `PostgresStorageError` whose message is one line with host:port, database,
 * user and the driver's reason, never the password, the driver's error in `cause`. And the demo
 * (`npm run demo`, examples/demo.ts) says either on one line and exits 1, without a stack trace.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/index.js';
import { openPostgresStorage, PostgresStorageError } from '../../src/postgres/index.js';
import { freePort } from './pg-cluster.js';
import { DATABASE_URL } from './pg.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXPECTED =
  'authgate: option "connectionString": openPostgresStorage: expected a PostgreSQL URL such as postgres://user:password@host:5432/database, got ';

/** What `openPostgresStorage(url)` threw (it must throw). */
async function failure(url: string | undefined): Promise<Error> {
  const result = await openPostgresStorage(url as string).then(
    async (opened) => {
      await opened.close();
      return null;
    },
    (error: unknown) => error,
  );
  expect(result).toBeInstanceOf(Error);
  return result as Error;
}

describe('openPostgresStorage: the connection string is checked before anything connects', () => {
  it.each([
    [undefined, 'nothing (is DATABASE_URL set?)'],
    ['', 'an empty string'],
    ['   ', 'an empty string'],
    ['not-a-url', 'a string with no postgres:// in front'],
    ['localhost:5432/app', 'a URL of scheme "localhost:"'],
    ['mysql://user@db.example/app', 'a URL of scheme "mysql:"'],
    ['http://[bad', 'a URL of scheme "http:"'],
    ['postgres://[bad', 'a URL that does not parse or names no host'],
    ['postgres:///app', 'a URL that does not parse or names no host'],
  ])('%j: ConfigError, got %s', async (url, got) => {
    const error = await failure(url);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).option).toBe('connectionString');
    expect(error.message).toBe(EXPECTED + got);
  });

  it('the message never shows the string, which may hold a password', async () => {
    const error = await failure('postgres//ada:hunter2@db.example/app');
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).not.toContain('hunter2');
  });
});

describe('openPostgresStorage: a database that cannot be opened is one line with where and why', () => {
  it('nothing listening: host:port, database, user and the driver reason, never the password; the driver error in cause', async () => {
    const port = await freePort();
    const error = await failure(`postgres://ada:hunter2@127.0.0.1:${port}/app`);
    expect(error).toBeInstanceOf(PostgresStorageError);
    expect(error.message).toBe(
      `authgate openPostgresStorage: PostgreSQL at 127.0.0.1:${port} (database "app", user "ada"): the database could not be reached or the connection was lost (ECONNREFUSED): connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect((error as PostgresStorageError).kind).toBe('database');
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });

  it('a host that does not resolve', async () => {
    const error = await failure('postgres://ada@nowhere.invalid:6543/app');
    expect(error.message).toMatch(
      /^authgate openPostgresStorage: PostgreSQL at nowhere\.invalid:6543 \(database "app", user "ada"\): the database could not be reached or the connection was lost \((ENOTFOUND|EAI_AGAIN)\): getaddrinfo \1 nowhere\.invalid$/,
    );
  });

  describe.skipIf(!DATABASE_URL)('on the test server (DATABASE_URL)', () => {
    const at = () => {
      const url = new URL(DATABASE_URL!);
      return { url, where: `${url.hostname}:${url.port || 5432}` };
    };

    it('a role that does not exist: the sign-in refused (SQLSTATE 28000), with the server own words', async () => {
      const { url, where } = at();
      url.username = 'no_such_role_i27';
      const error = await failure(url.href);
      expect(error).toBeInstanceOf(PostgresStorageError);
      expect(error.message).toBe(
        `authgate openPostgresStorage: PostgreSQL at ${where} (database "${url.pathname.slice(1)}", user "no_such_role_i27"): the database refused the user or password (SQLSTATE 28000): role "no_such_role_i27" does not exist`,
      );
    });

    it('a database that does not exist (SQLSTATE 3D000)', async () => {
      const { url, where } = at();
      url.pathname = '/no_such_db_i27';
      const error = await failure(url.href);
      expect(error.message).toMatch(
        new RegExp(
          `^authgate openPostgresStorage: PostgreSQL at ${where.replace(/\./g, '\\.')} \\(database "no_such_db_i27", user "[^"]+"\\): the database named in the connection string does not exist \\(SQLSTATE 3D000\\): database "no_such_db_i27" does not exist$`,
        ),
      );
    });
  });
});

/** Run `npm run demo` (examples/demo.ts) with `DATABASE_URL`; its exit code and output. */
async function demo(databaseUrl: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, PLATFORM_PORT: '0', APP_PORT: '0' };
  delete env['NODE_OPTIONS'];
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/demo.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
  const timer = setTimeout(() => child.kill(), 30_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

describe('npm run demo with a DATABASE_URL it cannot use: one line on stderr, exit 1, no stack trace', () => {
  it.each([
    [
      'not-a-url',
      `The demo cannot start: DATABASE_URL: ${EXPECTED}a string with no postgres:// in front (unset DATABASE_URL to keep everything in memory)`,
    ],
    ['', `The demo cannot start: DATABASE_URL: ${EXPECTED}an empty string (unset DATABASE_URL to keep everything in memory)`],
  ])('%j', { timeout: 60_000 }, async (url, line) => {
    const { code, stdout, stderr } = await demo(url);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(`${line}\n`);
  });

  it('nothing listening at the URL', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const { code, stderr } = await demo(`postgres://postgres:hunter2@127.0.0.1:${port}/nimbus`);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `The demo cannot start: DATABASE_URL: authgate openPostgresStorage: PostgreSQL at 127.0.0.1:${port} (database "nimbus", user "postgres"): the database could not be reached or the connection was lost (ECONNREFUSED): connect ECONNREFUSED 127.0.0.1:${port} (unset DATABASE_URL to keep everything in memory)\n`,
    );
  });
});
