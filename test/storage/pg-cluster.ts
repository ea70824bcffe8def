/**
 * A throwaway PostgreSQL cluster of a test's own, for fault tests that crash, restart or freeze
 * the database: never the shared server at DATABASE_URL, which other test files use meanwhile.
 *
 * `startCluster()` runs `initdb` in a temporary directory and starts the server on a free port of
 * 127.0.0.1 (and a Unix socket in that directory only). As root, every server command runs as the
 * `postgres` user, as `.ci/pg-start` does. The binaries are Debian's (`/usr/lib/postgresql/N/bin`,
 * the newest N); `PG_BIN` overrides the directory.
 *
 * In CI (CI=true) a missing PostgreSQL is an error, never a skip (CI installs Debian's
 * `postgresql`, see `.ci/setup-test`); locally the tests that need a cluster are skipped, with a
 * message that says how to run them (`clusterAvailable`).
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, chownSync, appendFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const inCI = /^(1|true|yes)$/i.test(process.env['CI'] ?? '');

/** The directory of the newest installed PostgreSQL's binaries, or undefined. */
function findBin(): string | undefined {
  const override = process.env['PG_BIN'];
  if (override) return existsSync(join(override, 'initdb')) ? override : undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(a) - Number(b));
  const newest = versions.at(-1);
  return newest ? join(root, newest, 'bin') : undefined;
}

const bin = findBin();

if (!bin && inCI) {
  throw new Error(
    "No PostgreSQL binaries (initdb, pg_ctl) in /usr/lib/postgresql/*/bin, and CI=true: the fault tests must run in CI, never skip. `npm run setup:test` installs Debian's postgresql.",
  );
}
if (!bin) {
  console.warn(
    "PostgreSQL fault tests skipped: no initdb in /usr/lib/postgresql/*/bin. `npm run setup:test` installs Debian's postgresql.",
  );
}

/** Whether a private cluster can be started here (the PostgreSQL binaries are installed). */
export const clusterAvailable = bin !== undefined;

/** As root, the uid and gid of `postgres` (initdb refuses to run as root); otherwise undefined. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** Run one of the server's programs (as `postgres` when root); rejects with its output on failure. */
function run(program: string, args: string[], cwd: string): Promise<string> {
  const user = serverUser();
  return new Promise((resolve, reject) => {
    execFile(
      join(bin!, program),
      args,
      { cwd, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C' }, ...user, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${program} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/** A port of 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** The pids whose parent is `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return children;
}

/** A running private cluster, and what a fault test does to it. */
export interface PgCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication). */
  readonly url: string;
  readonly port: number;
  /** The temporary directory: `data/`, the server's log `log`, its Unix socket. */
  readonly dir: string;
  /** The postmaster's pid while the server runs, else undefined. */
  pid(): number | undefined;
  /** Crash the server: `pg_ctl stop -m immediate` (every backend killed, crash recovery at the next start). */
  crash(): Promise<void>;
  /** Start the server again (after `crash` or `stop`), waiting until it accepts connections. */
  restart(): Promise<void>;
  /**
   * Freeze the server: SIGSTOP to the postmaster and every process of it. Connections stay open
   * and nothing answers: a hung database, as a network partition or a stalled disk looks.
   */
  freeze(): void;
  /** SIGCONT to every process `freeze` stopped. */
  thaw(): void;
  /** Stop the server (`-m fast`) and delete its directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** Stopped on the way out if a test forgot to (or its process ends early): no server is left behind. */
const live = new Set<PgCluster>();
process.once('exit', () => {
  for (const cluster of live) {
    try {
      cluster.thaw();
      const pid = cluster.pid();
      if (pid) process.kill(pid, 'SIGQUIT'); // an immediate shutdown, without waiting for it
    } catch {
      // Best effort.
    }
  }
});

/**
 * Create and start a private cluster. `settings` are added to its postgresql.conf
 * (`fsync = off` and `max_connections = 50` are set already).
 */
export async function startCluster(settings: Record<string, string | number> = {}): Promise<PgCluster> {
  if (!bin) throw new Error('no PostgreSQL binaries: check clusterAvailable first');
  const dir = mkdtempSync(join(tmpdir(), 'authgate-pgfault.'));
  const data = join(dir, 'data');
  const user = serverUser();
  if (user) chownSync(dir, user.uid, user.gid);
  await run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '--no-instructions'], dir);
  const port = await freePort();
  const conf: Record<string, string | number> = {
    listen_addresses: "'127.0.0.1'",
    port,
    unix_socket_directories: `'${dir}'`,
    fsync: 'off',
    max_connections: 50,
    shared_buffers: "'16MB'",
    ...settings,
  };
  appendFileSync(
    join(data, 'postgresql.conf'),
    `\n${Object.entries(conf)
      .map(([k, v]) => `${k} = ${v}`)
      .join('\n')}\n`,
  );
  const log = join(dir, 'log');
  const pgCtl = (...args: string[]) => run('pg_ctl', ['-D', data, ...args], dir);
  const postmasterPid = (): number | undefined => {
    try {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  };
  let frozen: number[] = [];
  let stopped = false;

  const cluster: PgCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    pid: postmasterPid,
    async crash() {
      await pgCtl('stop', '-m', 'immediate', '-w');
    },
    async restart() {
      await pgCtl('start', '-w', '-t', '30', '-l', log);
    },
    freeze() {
      const pid = postmasterPid();
      if (!pid) throw new Error('the cluster is not running');
      // The postmaster first, so that it forks no new backend while its children are stopped.
      process.kill(pid, 'SIGSTOP');
      frozen = [pid, ...childrenOf(pid)];
      for (const child of frozen.slice(1)) process.kill(child, 'SIGSTOP');
    },
    thaw() {
      for (const pid of frozen.reverse()) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // Gone meanwhile.
        }
      }
      frozen = [];
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      live.delete(cluster);
      cluster.thaw();
      if (postmasterPid()) await pgCtl('stop', '-m', 'fast', '-w').catch(() => pgCtl('stop', '-m', 'immediate', '-w').catch(() => {}));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  live.add(cluster);
  try {
    await cluster.restart();
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}
