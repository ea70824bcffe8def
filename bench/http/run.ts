/**
 * The HTTP section: for each adapter, autocannon against W1x (`POST /v1/oauth/token`, codes
 * issued beforehand by the server process, untimed), W3 (a `requireToken`-protected GET) and the
 * same framework's trivial JSON route, interleaved round by round. With W3 comes `GET /noop`, the
 * same JSON behind a middleware that does nothing: the framework's own price of the middleware
 * that `requireToken` is. With W1x comes `POST /echo`, the same framework reading the same forms,
 * sent the same way, and answering a small JSON: the part of W1x's cost that any route taking a
 * body pays. Each server runs in a child process, so the load generator (this process) and the
 * server each have a core of their own.
 * An adapter whose module is missing or lacks the exports the bench needs is skipped and named.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { CALLBACK, FORM } from '../lib/fixture.js';
import { fmtOps, series, type Series } from '../lib/measure.js';
import type { BenchOptions } from '../lib/options.js';
import { loadOptional } from '../lib/load.js';
import { summarize, type Hotspot } from '../profile.js';
import { cpuMicros, FRAMEWORKS, startServer, type Framework, type RunningServer, type Target } from './server.js';

export const ROUTES = {
  trivial: 'trivial GET /ping',
  W3: 'W3 GET /v2/me (requireToken)',
  W1x: 'W1x POST /v1/oauth/token',
  noop: 'GET /noop (a no-op middleware)',
  echo: 'POST /echo (reads the form)',
} as const;
type Route = keyof typeof ROUTES;

interface Handle {
  target: Target;
  codes(n: number): Promise<string[]>;
  /** CPU time the server has used so far, µs. */
  cpu(): Promise<number>;
  /** With --http-profile (child processes only): profile what happens until `stop(file)`. */
  profile?: { start(): Promise<void>; stop(file: string): Promise<void> };
  close(): Promise<void>;
}

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SERVER = fileURLToPath(new URL('./server.ts', import.meta.url));

/** The server of `framework` in a child process (or in this one), or why it was skipped. */
async function start(framework: Framework, options: BenchOptions): Promise<Handle | { skip: string }> {
  if (options.httpInProcess) {
    const running: RunningServer | { skip: string } = await startServer(framework, options.dist);
    if ('skip' in running) return running;
    // Same process (smoke): the CPU time includes the load generator's.
    return { target: running, codes: (n) => running.codes(n), cpu: async () => cpuMicros(), close: () => running.close() };
  }
  const flags = [...(options.dist ? ['--dist'] : []), ...(options.httpProfile ? ['--profile'] : [])];
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SERVER, framework, ...flags], {
    cwd: REPO,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [first] = (await Promise.race([once(child, 'message'), once(child, 'exit').then(() => [{ type: 'exit' }])])) as [
    { type: string; reason?: string } & Target,
  ];
  if (first.type === 'skip') return { skip: first.reason! };
  if (first.type !== 'ready') throw new Error(`the ${framework} server process did not start`);
  const { type: _type, ...target } = first;
  /** Send a message and wait for the child's answer of the same type. */
  const ask = async <T>(message: { type: string } & Record<string, unknown>): Promise<T> => {
    child.send(message);
    for (;;) {
      const [reply] = (await once(child, 'message')) as [{ type: string } & T];
      if (reply.type === message.type) return reply;
    }
  };
  return {
    target,
    codes: async (n) => (await ask<{ codes: string[] }>({ type: 'codes', n })).codes,
    cpu: async () => (await ask<{ micros: number }>({ type: 'cpu' })).micros,
    ...(options.httpProfile && {
      profile: {
        start: async () => void (await ask({ type: 'profile-start' })),
        stop: async (file: string) => void (await ask({ type: 'profile-stop', file })),
      },
    }),
    async close() {
      const exited = once(child, 'exit');
      child.send({ type: 'close' });
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      if (child.exitCode === null) child.kill();
    },
  };
}

/**
 * One autocannon run: 2xx answers per second of wall clock and per second of the server's CPU
 * time. Anything but 2xx is an error. `warmup` runs a short untimed run instead.
 */
async function load(
  handle: Handle,
  route: Route,
  options: BenchOptions,
  warmup = false,
  profileFile?: string,
): Promise<{ wall: number; cpu: number }> {
  const { target } = handle;
  const byAmount = warmup || route === 'W1x' || route === 'echo' || options.httpSeconds === 0;
  const amount = warmup ? Math.max(1, options.httpRequests >> 3) : options.httpRequests;
  const requests: autocannon.Request[] = [];
  if (route === 'trivial') requests.push({ method: 'GET', path: '/ping' });
  if (route === 'noop') requests.push({ method: 'GET', path: '/noop', headers: { authorization: `Bearer ${target.accessToken}` } });
  if (route === 'W3') requests.push({ method: 'GET', path: '/v2/me', headers: { authorization: `Bearer ${target.accessToken}` } });
  if (route === 'W1x' || route === 'echo') {
    const redirect = encodeURIComponent(CALLBACK);
    // The echo gets forms of the same length, one per request, without spending real codes.
    const codes = route === 'W1x' ? await handle.codes(amount) : Array.from({ length: amount }, (_, i) => String(i).padStart(43, 'x'));
    const forms = codes.map(
      (code) =>
        `grant_type=authorization_code&code=${code}&redirect_uri=${redirect}&client_id=${target.clientId}&client_secret=${target.clientSecret}`,
    );
    let next = 0;
    requests.push({
      method: 'POST',
      path: route === 'W1x' ? '/v1/oauth/token' : '/echo',
      headers: { 'content-type': FORM },
      setupRequest: (request) => ({ ...request, body: forms[next++] ?? 'exhausted' }),
    });
  }
  const cpuBefore = await handle.cpu();
  if (profileFile) await handle.profile?.start();
  const result = await autocannon({
    url: `http://127.0.0.1:${target.port}`,
    connections: options.httpConnections,
    pipelining: 1,
    // autocannon only notices the end of a run at its sampling tick (1 s by default): with a
    // fixed amount of requests that tick, not the server, would set the measured duration.
    sampleInt: 10,
    ...(byAmount ? { amount } : { duration: options.httpSeconds }),
    requests,
  });
  if (result.errors || result.non2xx || result.timeouts) {
    throw new Error(
      `HTTP ${route} on port ${target.port}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  if (profileFile) await handle.profile?.stop(profileFile);
  const cpuSeconds = ((await handle.cpu()) - cpuBefore) / 1e6;
  const seconds = (result.finish.getTime() - result.start.getTime()) / 1000;
  return { wall: result['2xx'] / seconds, cpu: result['2xx'] / cpuSeconds };
}

const profileDir = (options: BenchOptions) => join(options.out, 'profiles', 'http');

export interface HttpResult {
  series: Series[];
  skipped: string[];
  frameworks: Framework[];
  /** With --http-profile: the server's hottest functions over all its runs, per framework. */
  profiles?: { framework: Framework; route: string; file: string; functions: Hotspot[]; places: Hotspot[]; idle: number }[];
}

export async function httpSection(options: BenchOptions): Promise<HttpResult> {
  const routes: Route[] = ['trivial', ...(['W3', 'W1x'] as const).filter((w) => options.workloads.includes(w))];
  if (routes.includes('W3')) routes.push('noop');
  if (routes.includes('W1x')) routes.push('echo');
  const handles = new Map<Framework, Handle>();
  const skipped: string[] = [];
  for (const framework of FRAMEWORKS) {
    const started = await start(framework, options);
    if ('skip' in started) {
      skipped.push(`HTTP ${framework}: skipped, ${started.skip}.`);
      options.log(`  ${framework}: skipped (${started.skip})`);
    } else handles.set(framework, started);
  }
  const frameworks = [...handles.keys()];
  if (options.httpProfile) await mkdir(profileDir(options), { recursive: true });
  const runs = new Map<string, number[]>();
  const cpuRuns = new Map<string, number[]>();
  try {
    // Warm every server and route up (JIT) before the first measured round.
    if (!options.smoke)
      for (const framework of frameworks) for (const route of routes) await load(handles.get(framework)!, route, options, true);
    for (let round = 0; round < options.rounds; round++) {
      const line: string[] = [];
      for (let f = 0; f < frameworks.length; f++) {
        const framework = frameworks[(f + round) % frameworks.length]!;
        for (let r = 0; r < routes.length; r++) {
          const route = routes[(r + round) % routes.length]!;
          const profileFile = options.httpProfile ? join(profileDir(options), `${framework}-${route}-${round + 1}.cpuprofile`) : undefined;
          const rate = await load(handles.get(framework)!, route, options, false, profileFile);
          const key = `${framework}\u0000${route}`;
          runs.set(key, [...(runs.get(key) ?? []), rate.wall]);
          cpuRuns.set(key, [...(cpuRuns.get(key) ?? []), rate.cpu]);
          line.push(`${framework} ${route} ${fmtOps(rate.wall)}`);
        }
      }
      options.log(`  HTTP round ${round + 1}/${options.rounds}: ${line.join(', ')}`);
    }
  } finally {
    for (const handle of handles.values()) await handle.close();
  }
  let profiles: HttpResult['profiles'];
  if (options.httpProfile && !options.httpInProcess) {
    profiles = [];
    for (const framework of frameworks) {
      await loadOptional(framework, [], options.dist); // its source maps, for the profile's line numbers
      for (const route of routes) {
        // Every run of the route in one summary: the nodes of all its profiles together.
        const files = Array.from({ length: options.rounds }, (_, r) =>
          join(profileDir(options), `${framework}-${route}-${r + 1}.cpuprofile`),
        );
        const nodes = [];
        for (const file of files) nodes.push(...(JSON.parse(await readFile(file, 'utf8')) as { nodes: unknown[] }).nodes);
        profiles.push({
          framework,
          route: ROUTES[route],
          file: files.at(-1)!,
          ...summarize({ nodes, startTime: 0, endTime: 0 } as Parameters<typeof summarize>[0]),
        });
      }
    }
  }
  const out: Series[] = [];
  for (const framework of frameworks) {
    for (const route of routes) {
      const key = `${framework}\u0000${route}`;
      out.push(series(`HTTP ${framework}`, ROUTES[route], 'variant', runs.get(key)!, cpuRuns.get(key)!));
    }
  }
  return { series: out, skipped, frameworks, ...(profiles && { profiles }) };
}
