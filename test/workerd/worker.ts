/**
 * A Cloudflare Worker (module syntax) hosting authgate the way a platform on Workers would: the
 * core on MemoryStorage, the Hono adapter, and a resource API behind `requireToken`. The same
 * module is served by workerd (bundled with esbuild, no `nodejs_compat`) and by Node
 * (@hono/node-server), and test/workerd/cases.ts runs the same HTTP cases against both.
 *
 * Sign-in is faked: the `x-test-account` header names the signed-in account (`ada` or `bob`).
 * Test controls live under `/__test/`: `POST reset` (a fresh server, storage and clock, with the
 * server options in the JSON body; answers the two registered clients), `POST clock` (`{ advance:
 * ms }`), `GET errors` (what the core reported to `onError`) and `GET runtime`
 * (`navigator.userAgent`, so a test can tell where it really ran).
 */
import { Hono } from 'hono';
import { createOAuthApp, requireToken, type OAuthVariables } from '../../adapters/hono/index.js';
import {
  AuthorizationServer,
  MemoryStorage,
  type AuthorizationServerOptions,
  type OAuthRequest,
  type RegisteredClient,
  type UserSession,
  type UserSessions,
} from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';
// Only the default export here: workerd takes every named export of the main module for an entry point.
import { ACCOUNTS, CALLBACK, LOGIN_URL } from './fixtures.js';

/** The options a test may set on reset (JSON-serialisable ones only). */
export type WorldOptions = Pick<AuthorizationServerOptions, 'issuer' | 'accessTokenFormat' | 'allowDynamicRegistration' | 'profile'>;
export interface WorldInfo {
  client: RegisteredClient;
  other: RegisteredClient;
  now: number;
}

/** The host's sign-in, faked: whoever `x-test-account` names, signed in just now. */
class HeaderSessions implements UserSessions {
  constructor(private readonly clock: FakeClock) {}
  current(request: OAuthRequest): UserSession | null {
    const raw = request.headers['x-test-account'];
    const account = typeof raw === 'string' && Object.hasOwn(ACCOUNTS, raw) ? ACCOUNTS[raw as keyof typeof ACCOUNTS] : undefined;
    return account ? { account, authenticatedAt: this.clock.now() } : null;
  }
}

interface World {
  app: Hono<{ Variables: OAuthVariables }>;
  clock: FakeClock;
  errors: string[];
  info: WorldInfo;
}

let world: World | undefined;

async function reset(options: WorldOptions): Promise<WorldInfo> {
  const clock = new FakeClock();
  const errors: string[] = [];
  const server = new AuthorizationServer({
    ...options,
    storage: new MemoryStorage(),
    sessions: new HeaderSessions(clock),
    clock,
    onError: (error) => errors.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error)),
  });
  const client = await server.registerClient({ name: 'Example App', redirectUri: CALLBACK });
  const other = await server.registerClient({ name: 'Other App', redirectUri: 'https://other.example/cb' });

  const app = new Hono<{ Variables: OAuthVariables }>();
  app.route('/', createOAuthApp(server, { loginUrl: LOGIN_URL }));
  app.use('/v2/*', requireToken(server));
  app.get('/v2/account', (c) => c.json({ oauth: c.get('oauth') }));
  app.post('/v2/things', (c) => c.json({ created: true, oauth: c.get('oauth') }, 201));
  // Answer a crash as a bare 500, so a test sees the status and the message in `errors`.
  app.onError((error) => {
    errors.push(`unhandled: ${error.message}`);
    return new Response('internal error', { status: 500 });
  });

  const info = { client, other, now: clock.now() };
  world = { app, clock, errors, info };
  return info;
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

async function control(request: Request, path: string): Promise<Response> {
  if (path === 'reset' && request.method === 'POST') return json(await reset((await request.json()) as WorldOptions));
  if (path === 'runtime') return json({ userAgent: globalThis.navigator?.userAgent ?? null });
  if (!world) return json({ error: 'no world: POST /__test/reset first' }, 409);
  if (path === 'clock' && request.method === 'POST') {
    world.clock.advance(((await request.json()) as { advance: number }).advance);
    return json({ now: world.clock.now() });
  }
  if (path === 'errors') return json(world.errors);
  return json({ error: 'unknown control' }, 404);
}

export default {
  async fetch(request: Request, env?: unknown, ctx?: unknown): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname.startsWith('/__test/')) return control(request, pathname.slice('/__test/'.length));
    if (!world) return json({ error: 'no world: POST /__test/reset first' }, 409);
    return world.app.fetch(request, env, ctx as never);
  },
};
