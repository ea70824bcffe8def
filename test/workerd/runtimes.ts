/**
 * Where test/workerd/worker.ts runs: in workerd, the Cloudflare Workers runtime (from the
 * `workerd` npm package: the binary ships in the per-platform package, nothing is downloaded),
 * listening on 127.0.0.1 on a free port.
 *
 * For workerd the worker is bundled with esbuild for the browser platform, so an import of a
 * `node:` module (or of a package that needs one) fails the build, and it runs without the
 * `nodejs_compat` flag: only the Web platform APIs workerd provides.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// esbuild comes with tsup (the package's build tool), so it is always installed with the devDependencies.
import { build } from 'esbuild';

/**
 * The `workerd` package (CommonJS, no types): `default` is the path of the binary for this
 * platform, `compatibilityDate` the newest date it supports. Loaded with `require` so that every
 * loader (vitest, tsx, node) sees the same shape.
 */
const { default: workerdBinary, compatibilityDate } = createRequire(import.meta.url)('workerd') as {
  default: string;
  compatibilityDate: string;
};

export interface Running {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** What the runtime printed (workerd: its stderr and stdout), for failure messages. */
  logs(): string;
  stop(): Promise<void>;
}

/** The repository: esbuild names the bundle's inputs relative to it. */
const ROOT = join(import.meta.dirname, '..', '..');

export interface WorkerBundle {
  code: string;
  bytes: number;
  /** Every module the bundle holds (paths relative to the repository). */
  inputs: string[];
  milliseconds: number;
}

/** Bundle the worker as a Workers deployment would: one ES module, browser platform, no Node built-ins. */
export async function bundleWorker(): Promise<WorkerBundle> {
  const started = performance.now();
  const result = await build({
    entryPoints: [join(import.meta.dirname, 'worker.ts')],
    absWorkingDir: ROOT,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]!.text;
  return {
    code,
    bytes: result.outputFiles[0]!.contents.byteLength,
    inputs: Object.keys(result.metafile.inputs),
    milliseconds: performance.now() - started,
  };
}

/** A hash of every input's name and content: the same as long as the bundle would be. */
async function fingerprint(inputs: string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const input of inputs)
    hash
      .update(input)
      .update('\0')
      .update(await readFile(join(ROOT, input)))
      .update('\0');
  return hash.digest('hex');
}

/**
 * The bundle, built by an earlier test file when none of its inputs changed since (every file of
 * the shared suite runs the worker, and building it costs more than the rest of workerd's start).
 * Kept in the system's temporary directory, one per checkout.
 */
export async function cachedWorkerBundle(): Promise<WorkerBundle> {
  const file = join(tmpdir(), `authgate-worker-${createHash('sha256').update(ROOT).digest('hex').slice(0, 16)}.json`);
  try {
    const cached = JSON.parse(await readFile(file, 'utf8')) as WorkerBundle & { fingerprint: string };
    if (cached.fingerprint === (await fingerprint(cached.inputs))) return cached;
  } catch {
    // None yet, unreadable, or an input is gone: build it.
  }
  const bundle = await bundleWorker();
  // Written aside and renamed, so a test file starting at the same time never reads half of it.
  const partial = `${file}.${process.pid}`;
  await writeFile(partial, JSON.stringify({ ...bundle, fingerprint: await fingerprint(bundle.inputs) }));
  await rename(partial, file);
  return bundle;
}

/** The workerd configuration: one worker, one HTTP socket on 127.0.0.1 (port chosen by the system). */
const capnpConfig = (date: string) => `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "authgate", worker = .authgateWorker) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "authgate") ],
);

const authgateWorker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "${date}",
);
`;

/** Run the bundle in workerd; resolves once it listens. The port comes back on the control fd. */
export async function startWorkerd(bundle: WorkerBundle): Promise<Running & { compatibilityDate: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'authgate-workerd-'));
  await writeFile(join(dir, 'worker.js'), bundle.code);
  await writeFile(join(dir, 'config.capnp'), capnpConfig(compatibilityDate));

  let output = '';
  const child = spawn(workerdBinary, ['serve', join(dir, 'config.capnp'), '--control-fd=3'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = once(child, 'exit');
  // Never leave a workerd behind, even when the test process ends without running afterAll.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const listening = new Promise<number>((resolve, reject) => {
    let control = '';
    const timer = setTimeout(() => reject(new Error(`workerd did not listen within 30 s:\n${output}`)), 30_000);
    // One JSON event per line, e.g. {"event":"listen","socket":"http","port":40123}.
    child.stdio[3]!.on('data', (chunk: Buffer) => {
      control += chunk.toString('utf8');
      const lines = control.split('\n');
      control = lines.pop()!;
      for (const line of lines) {
        if (!line.trim()) continue;
        const event = JSON.parse(line) as { event: string; socket?: string; port?: number };
        if (event.event === 'listen' && event.socket === 'http' && event.port) {
          clearTimeout(timer);
          resolve(event.port);
        }
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`workerd could not be started (${workerdBinary}): ${error.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`workerd exited before listening (code ${code}, signal ${signal}):\n${output}`));
    });
  });
  let port: number;
  try {
    port = await listening;
  } catch (error) {
    child.kill('SIGKILL');
    process.removeListener('exit', killOnExit);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }

  return {
    base: `http://127.0.0.1:${port}`,
    compatibilityDate,
    logs: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      process.removeListener('exit', killOnExit);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
