/**
 * The `workerd` target of the shared HTTP suite: test/workerd/worker.ts (app.ts's hono host and
 * the core, as one Worker module) bundled with esbuild and run by workerd, the Cloudflare Workers
 * runtime, without `nodejs_compat`. One workerd per test file, started by the file's first app
 * and stopped after its last test; each app is a fresh world inside it (`POST /__test/reset`),
 * so there is one app at a time.
 *
 * The state the tests reach into lives in the worker, so the objects of the `Host` stand in for it:
 * - `clock` and `sessions` are a FakeClock and a FakeSessions of this process whose changes are
 *   queued and handed to the worker's before the next request (`sync`), so the tests go on calling
 *   them synchronously;
 * - `server` and `storage` forward each method call to the worker's (arguments and result as
 *   JSON), in order with that queue. Their methods therefore answer promises, the synchronous ones
 *   too (`storage.prune`, whose result no test reads); `server.metadataDocument()` answers the
 *   document the worker took at reset, which the options fix;
 * - what only the server side saw (a 5xx it finished, an `onError` call) is read by `close()`,
 *   which fails the test if there is any.
 *
 * Host hooks (`honoHost`, `fastifyHost`) and options that are functions cannot reach the worker:
 * asking for them throws, and the cases that need them run on `IN_PROCESS` only.
 */
import { afterAll, expect } from 'vitest';
import { AuthorizationServer, MemoryStorage } from '../../../src/index.js';
import { FakeClock, FakeSessions } from '../../../src/testing/index.js';
import { cachedWorkerBundle, startWorkerd, type Running } from '../../workerd/runtimes.js';
import type { Records, ResetBody, ResetInfo, Step, StepResult } from '../../workerd/worker.js';
import type { AppOptions } from '../app.js';
import type { Host } from './host.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** The file's workerd, once started. */
let running: Promise<Running> | undefined;
/** Whether an app (the worker's one world) is in use. */
let open = false;

/** Bundle and start the worker, and make sure it is workerd that answers. */
async function launch(): Promise<Running> {
  const worker = await startWorkerd(await cachedWorkerBundle());
  try {
    const { userAgent } = (await (await fetch(`${worker.base}/__test/runtime`)).json()) as { userAgent: string | null };
    if (userAgent !== 'Cloudflare-Workers')
      throw new Error(`workerd target: the worker reports user agent ${userAgent}, not Cloudflare-Workers`);
  } catch (error) {
    await worker.stop();
    throw error;
  }
  return worker;
}

/** Stop the file's workerd, if it started one: after each test file. A file that never starts a workerd app stops nothing. */
export async function stopWorkerdTarget(): Promise<void> {
  const started = running;
  running = undefined;
  open = false;
  await (await started?.catch(() => undefined))?.stop();
}

// Registered while the test file is collected (this module is imported by it, through app.ts),
// so it runs once that file's tests are done. Where files share modules (vitest.config.ts,
// `isolate: false`) this module loads once per worker, so test/per-file-setup.ts registers it for every file.
afterAll(stopWorkerdTarget);

/**
 * The changes to hand to the worker and the calls to make there, in the order the test made
 * them: changes wait for the next request (or call), calls go at once.
 */
class Remote {
  private queue: { step: Step; settle?: { resolve(value: unknown): void; reject(error: unknown): void } }[] = [];
  private last: Promise<void> = Promise.resolve();
  /** A change the worker refused, reported by the next `sync()`. */
  private failure: Error | undefined;

  constructor(private readonly base: string) {}

  /** Queue a change of the clock or the sessions. */
  push(step: Step): void {
    this.queue.push({ step });
  }

  /** Call a method of the worker's server or storage, after every change queued before it. */
  call(target: 'server' | 'storage', method: string, args: unknown[]): Promise<unknown> {
    const result = new Promise<unknown>((resolve, reject) => {
      this.queue.push({ step: { step: 'call', target, method, args }, settle: { resolve, reject } });
    });
    void this.flush();
    return result;
  }

  /** Hand every queued change to the worker; throws what it refused. */
  async sync(): Promise<void> {
    await this.flush();
    const failure = this.failure;
    this.failure = undefined;
    if (failure) throw failure;
  }

  /** Send the queue (one request), after any batch still under way; never rejects. */
  private flush(): Promise<void> {
    this.last = this.last
      .then(() => this.send())
      .catch((error: unknown) => {
        this.failure ??= error instanceof Error ? error : new Error(String(error));
      });
    return this.last;
  }

  private async send(): Promise<void> {
    const batch = this.queue.splice(0);
    if (batch.length === 0) return;
    let results: StepResult[];
    try {
      const reply = await fetch(`${this.base}/__test/run`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify(batch.map((b) => b.step)),
      });
      if (!reply.ok) throw new Error(`workerd target: /__test/run answered ${reply.status}: ${await reply.text()}`);
      results = (await reply.json()) as StepResult[];
    } catch (error) {
      for (const { settle } of batch) settle?.reject(error);
      this.failure ??= error instanceof Error ? error : new Error(String(error));
      return;
    }
    for (const [i, { step, settle }] of batch.entries()) {
      const result = results[i]!;
      if (!('error' in result)) {
        settle?.resolve(result.value);
        continue;
      }
      const error = Object.assign(new Error(result.error.message), result.error);
      if (settle) settle.reject(error);
      else this.failure ??= new Error(`workerd target: the worker refused ${JSON.stringify(step)}: ${error.message}`);
    }
  }
}

/** A FakeClock whose every move is handed to the worker's. */
class MirroredClock extends FakeClock {
  constructor(
    start: number,
    private readonly moved: (now: number) => void,
  ) {
    super(start);
  }

  override advance(ms: number): void {
    super.advance(ms);
    this.moved(this.now());
  }

  override set(ms: number): void {
    super.set(ms);
    this.moved(ms);
  }
}

/** A FakeSessions whose every sign-in and sign-out is handed to the worker's, under the same `sid`. */
class MirroredSessions extends FakeSessions {
  constructor(
    clock: FakeClock,
    private readonly remote: Remote,
  ) {
    super(clock);
  }

  override setSession(
    session: { account: { uuid: string; name: string; email: string }; authenticatedAt: unknown },
    cookie?: string,
  ): string {
    const { authenticatedAt } = session;
    // JSON would turn these into null, which is not what the test set.
    if (typeof authenticatedAt === 'number' && !Number.isFinite(authenticatedAt)) {
      throw new Error(`workerd target: authenticatedAt ${authenticatedAt} cannot be sent to the worker as JSON`);
    }
    const value = super.setSession(session, cookie);
    this.remote.push({
      step: 'session',
      sid: value.slice('sid='.length),
      account: session.account,
      authenticatedAt: authenticatedAt as number,
    });
    return value;
  }

  override signOut(cookie: string): void {
    super.signOut(cookie);
    this.remote.push({ step: 'signOut', sid: cookie.replace(/^sid=/, '') });
  }
}

/** An object with every method of `prototype`, each calling the worker's `target`. */
function forwarding<T>(prototype: object, target: 'server' | 'storage', remote: Remote, own: Record<string, unknown> = {}): T {
  const methods: Record<string, unknown> = {};
  for (const name of Object.getOwnPropertyNames(prototype)) {
    if (name === 'constructor' || typeof Object.getOwnPropertyDescriptor(prototype, name)?.value !== 'function') continue;
    methods[name] = (...args: unknown[]) => remote.call(target, name, args);
  }
  return Object.assign(methods, own) as T;
}

/** Throw unless `value` survives JSON as it is (plain objects, arrays, strings, finite numbers…). */
function assertJson(value: unknown, path: string): void {
  if (value === undefined || value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number' && Number.isFinite(value)) return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      assertJson(item, `${path}[${i}]`);
    });
    return;
  }
  const proto = typeof value === 'object' ? Object.getPrototypeOf(value) : undefined;
  if (proto === Object.prototype || proto === null) {
    for (const [key, item] of Object.entries(value as object)) assertJson(item, `${path}.${key}`);
    return;
  }
  throw new Error(`workerd target: ${path} (${typeof value}) cannot be sent to the worker; run this case on IN_PROCESS`);
}

/** What the worker's reset takes of the app options; throws for what it cannot take. */
function resetBody(options: AppOptions): ResetBody {
  for (const hook of ['hostParsers', 'fastifyHost', 'fastifyPrefix', 'honoHost', 'trustProxy'] as const) {
    if (options[hook] !== undefined) throw new Error(`workerd target: ${hook} is for an in-process host; run this case on IN_PROCESS`);
  }
  const body: ResetBody = {
    server: options.server ?? {},
    router: options.router ?? {},
    customInteractions: options.customInteractions ?? false,
    ...(options.resource !== undefined && { resource: options.resource }),
  };
  assertJson(body, 'options');
  return body;
}

/** A fresh world in the file's workerd (started on first use), as a `Host` for `startApp()`. */
export async function startWorkerdHost(options: AppOptions): Promise<Host> {
  const body = resetBody(options);
  if (open) throw new Error("workerd target: one app at a time (each is the one world of the file's worker); close the last one first");
  running ??= launch();
  const worker = await running;
  const reply = await fetch(`${worker.base}/__test/reset`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) });
  if (!reply.ok) throw new Error(`workerd target: reset answered ${reply.status}: ${await reply.text()}\n${worker.logs()}`);
  const info = (await reply.json()) as ResetInfo;
  open = true;

  const remote = new Remote(worker.base);
  const clock = new MirroredClock(info.now, (now) => remote.push({ step: 'clock', now }));
  const served: Host['served'] = [];
  const coreErrors: unknown[] = [];
  return {
    base: worker.base,
    clock,
    sessions: new MirroredSessions(clock, remote),
    storage: forwarding<MemoryStorage>(MemoryStorage.prototype, 'storage', remote),
    server: forwarding<AuthorizationServer>(AuthorizationServer.prototype, 'server', remote, {
      metadataDocument(...args: unknown[]) {
        if (args.length > 0)
          throw new Error("workerd target: metadataDocument(options) is not forwarded; only the document of the server's own options is");
        return structuredClone(info.metadata);
      },
    }),
    client: info.client,
    other: info.other,
    served,
    coreErrors,
    sync: () => remote.sync(),
    async close() {
      try {
        // Calls the test did not wait for (storage.prune) finish before the records are read.
        await remote.sync();
        const records = (await (await fetch(`${worker.base}/__test/records`)).json()) as Records;
        served.push(...records.served);
        coreErrors.push(...records.errors);
      } finally {
        open = false;
      }
      expect(
        served.filter((s) => s.status >= 500),
        `served by workerd\n${worker.logs()}`,
      ).toEqual([]);
      expect(coreErrors, 'reported in workerd').toEqual([]);
    },
  };
}
