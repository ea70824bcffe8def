/**
 * A Cloudflare Worker (module syntax) hosting authgate the way a platform on Workers would: the
 * core on MemoryStorage, the Hono adapter, and a resource API behind `requireToken`. Bundled with
 * esbuild and served by workerd (no `nodejs_compat`), it is the `workerd` target of the shared
 * HTTP suite (test/adapters/targets/workerd.ts): the same host app as test/adapters/app.ts builds
 * with Hono in-process, with the state that suite keeps in-process (FakeClock, FakeSessions,
 * MemoryStorage, the server) kept here instead and driven through test controls under `/__test/`:
 *
 * - `POST reset`: a fresh world (server, storage, clock, sessions, host app) from the JSON body
 *   `{ server, router, customInteractions, resource }` (JSON-serialisable options only); answers the two
 *   registered clients, the clock's time and the metadata document.
 * - `POST run`: a JSON list of steps run in order, each answered `{ value }` or `{ error }`: set
 *   the clock, put a session behind a `sid` cookie or end one, or call a method of the server or
 *   the storage with JSON arguments.
 * - `GET records`: what the world recorded: every response the host app finished, and every
 *   unexpected error (the core's `onError`, or one that reached Hono's error handler).
 * - `GET runtime`: `navigator.userAgent`, so a test can tell where it really ran.
 */
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { createOAuthApp, requireToken, type OAuthVariables } from '../../adapters/hono/index.js';
import {
  AuthorizationServer,
  MemoryStorage,
  type Account,
  type AuthorizationServerOptions,
  type Interaction,
  type InteractionUiOptions,
  type RegisteredClient,
} from '../../src/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import type { ServedResponse } from '../adapters/targets/host.js';
// Only the default export here: workerd takes every named export of the main module for an entry point.
import { CALLBACK, LOGIN_URL } from '../fixtures.js';

/** The body of `POST /__test/reset`: the host app's options that can travel as JSON. */
export interface ResetBody {
  server?: Partial<AuthorizationServerOptions>;
  router?: InteractionUiOptions & { bodyLimit?: number };
  /** The host answers `onLogin` / `onConsent` itself (as test/adapters/app.ts's `customInteractions`). */
  customInteractions?: boolean;
  /** One of `server.protectedResources`, protecting `/r` (as test/adapters/app.ts's `resource`). */
  resource?: string;
}

/** The answer to `POST /__test/reset`. */
export interface ResetInfo {
  client: RegisteredClient;
  other: RegisteredClient;
  /** The world's clock, at its start. */
  now: number;
  /** `server.metadataDocument()`: fixed by the options, so taken once. */
  metadata: Record<string, unknown> | null;
}

/** One step of `POST /__test/run`. */
export type Step =
  | { step: 'clock'; now: number }
  | { step: 'session'; sid: string; account: Account; authenticatedAt: number }
  | { step: 'signOut'; sid: string }
  | { step: 'call'; target: 'server' | 'storage'; method: string; args: unknown[] };

/** What one step answered: its value, or what it threw. */
export type StepResult = { value?: unknown } | { error: { name: string; message: string; [key: string]: unknown } };

/** What the world recorded, for the after-test check. */
export interface Records {
  served: ServedResponse[];
  errors: string[];
}

/** The body of the custom `onLogin` / `onConsent` handlers: the text test/adapters/app.ts's `customText` gives. */
const customText = (kind: 'login' | 'consent' | 'device', interaction: Interaction) =>
  kind === 'login'
    ? `custom login ${interaction.id}`
    : kind === 'device'
      ? `custom device ${interaction.id} ${interaction.device?.userCode}`
      : `custom consent ${interaction.id} ${interaction.scope.join(' ')}`;

interface World {
  server: AuthorizationServer;
  storage: MemoryStorage;
  clock: FakeClock;
  sessions: FakeSessions;
  app: Hono<{ Variables: OAuthVariables }>;
  records: Records;
}

let world: World | undefined;

const describeError = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

async function reset(body: ResetBody): Promise<ResetInfo> {
  const clock = new FakeClock();
  const sessions = new FakeSessions(clock);
  const storage = new MemoryStorage();
  const records: Records = { served: [], errors: [] };
  const server = new AuthorizationServer({
    storage,
    sessions,
    clock,
    onError: (error) => records.errors.push(describeError(error)),
    ...body.server,
  });
  const client = await server.registerClient({ name: 'Example App', redirectUri: CALLBACK });
  const other = await server.registerClient({ name: 'Other App', redirectUri: 'https://other.example/cb' });

  // The hono host of test/adapters/app.ts, route for route.
  const app = new Hono<{ Variables: OAuthVariables }>();
  app.use(async (c, next) => {
    await next();
    records.served.push({ method: c.req.method, url: c.req.url, status: c.res.status });
  });
  app.route(
    '/',
    createOAuthApp(server, {
      loginUrl: LOGIN_URL,
      ...body.router,
      ...(body.customInteractions && {
        onLogin: (c, interaction) => c.text(customText('login', interaction)),
        onConsent: (c, interaction) => c.text(customText('consent', interaction)),
        onDeviceVerification: (c, interaction) => c.text(customText('device', interaction)),
      }),
    }),
  );
  app.use('/v2/*', requireToken(server));
  app.get('/v2/account', (c) => c.json({ oauth: c.get('oauth') }));
  app.post('/v2/things', (c) => c.json({ created: true, oauth: c.get('oauth') }, 201));
  if (body.resource !== undefined) {
    app.use('/r/*', requireToken(server, { resource: body.resource }));
    app.get('/r/account', (c) => c.json({ oauth: c.get('oauth') }));
    app.post('/r/echo', async (c) => c.json({ body: await c.req.raw.json(), oauth: c.get('oauth') }));
  }
  // Hono's default error handler, with the error kept for the after-test check.
  app.onError((error, c) => {
    if (error instanceof HTTPException) {
      const response = error.getResponse();
      return c.newResponse(response.body, response);
    }
    records.errors.push(`unhandled: ${describeError(error)}`);
    return c.text('Internal Server Error', 500);
  });

  world = { server, storage, clock, sessions, app, records };
  return { client, other, now: clock.now(), metadata: server.metadataDocument() };
}

async function run(current: World, step: Step): Promise<unknown> {
  switch (step.step) {
    case 'clock':
      return current.clock.set(step.now);
    case 'session':
      return current.sessions.setSession({ account: step.account, authenticatedAt: step.authenticatedAt }, `sid=${step.sid}`);
    case 'signOut':
      return current.sessions.signOut(`sid=${step.sid}`);
    case 'call': {
      const target = (step.target === 'server' ? current.server : current.storage) as unknown as Record<string, unknown>;
      const method = target[step.method];
      if (typeof method !== 'function') throw new TypeError(`${step.target}.${step.method} is not a method`);
      return await (method as (...args: unknown[]) => unknown).apply(target, step.args);
    }
  }
}

async function runAll(current: World, steps: Step[]): Promise<StepResult[]> {
  const results: StepResult[] = [];
  for (const step of steps) {
    try {
      results.push({ value: await run(current, step) });
    } catch (error) {
      // An OAuthError's own fields (code, status, description) travel with its name and message.
      results.push({
        error: error instanceof Error ? { ...error, name: error.name, message: error.message } : { name: 'Error', message: String(error) },
      });
    }
  }
  return results;
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const noWorld = () => json({ error: 'no world: POST /__test/reset first' }, 409);

async function control(request: Request, path: string): Promise<Response> {
  if (path === 'reset' && request.method === 'POST') return json(await reset((await request.json()) as ResetBody));
  if (path === 'runtime') return json({ userAgent: globalThis.navigator?.userAgent ?? null });
  if (!world) return noWorld();
  if (path === 'run' && request.method === 'POST') return json(await runAll(world, (await request.json()) as Step[]));
  if (path === 'records') return json(world.records);
  return json({ error: 'unknown control' }, 404);
}

export default {
  async fetch(request: Request, env?: unknown, ctx?: unknown): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname.startsWith('/__test/')) return control(request, pathname.slice('/__test/'.length));
    if (!world) return noWorld();
    return world.app.fetch(request, env, ctx as never);
  },
};
