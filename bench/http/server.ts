/**
 * One host app per framework for the HTTP section: the adapter's OAuth routes, a `requireToken`
 * protected `GET /v2/me`, a trivial `GET /ping` JSON route of the same framework as the
 * baseline, `GET /noop` (the same JSON as `/v2/me` behind a middleware that does nothing: the
 * framework's own price of a middleware), and `POST /echo`, which reads a form body the
 * framework's usual way and answers a small JSON (what any route that takes a body costs before
 * it does any work). Started in a child process by the HTTP section (so the load generator and
 * the server do not share a core), or in the bench's own process (smoke mode).
 *
 * As a child: `node --import tsx bench/http/server.ts <framework> [--dist]`; it reports
 * `{ type: 'ready', ... }` or `{ type: 'skip', reason }` over IPC, answers `{ type: 'codes', n }`
 * with n fresh authorization codes and `{ type: 'cpu' }` with the CPU time it has used, profiles
 * between `profile-start` and `profile-stop` (with --profile), and exits on `{ type: 'close' }`.
 */
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type * as ExpressModule from '../../adapters/express/index.js';
import type * as FastifyModule from '../../adapters/fastify/index.js';
import type * as HonoModule from '../../adapters/hono/index.js';
import type { VerifiedToken } from '../../src/index.js';
import { ACCOUNT, authgateFixture, FORM } from '../lib/fixture.js';
import { loadCore, loadOptional } from '../lib/load.js';

export type Framework = 'express' | 'fastify' | 'hono';
export const FRAMEWORKS: Framework[] = ['express', 'fastify', 'hono'];

/** The exports the bench needs of each adapter (docs/reference.md#adapters-over-http). */
export const ADAPTER_EXPORTS: Record<Framework, string[]> = {
  express: ['createOAuthRouter', 'requireToken'],
  fastify: ['oauthPlugin', 'requireToken'],
  hono: ['createOAuthApp', 'requireToken'],
};

export interface Target {
  port: number;
  clientId: string;
  clientSecret: string;
  accessToken: string;
}

export interface RunningServer extends Target {
  codes(n: number): Promise<string[]>;
  close(): Promise<void>;
}

// The adapters as the bench uses them, typed as their sources (the --dist build exports the same).
type ExpressAdapter = Pick<typeof ExpressModule, 'createOAuthRouter' | 'requireToken'>;
type FastifyAdapter = Pick<typeof FastifyModule, 'oauthPlugin' | 'requireToken'>;
type HonoAdapter = Pick<typeof HonoModule, 'createOAuthApp' | 'requireToken'>;

async function listen(server: Server): Promise<number> {
  if (!server.listening) await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** Start `framework`'s app on 127.0.0.1 (a free port), or say why it cannot run. */
export async function startServer(framework: Framework, dist: boolean): Promise<RunningServer | { skip: string }> {
  const adapter = await loadOptional<ExpressAdapter | FastifyAdapter | HonoAdapter>(framework, ADAPTER_EXPORTS[framework], dist);
  if (!adapter.ok) return { skip: adapter.reason };
  const core = await loadCore(dist);
  const fixture = await authgateFixture(core, new core.MemoryStorage());
  const { server } = fixture;
  const { accessToken } = await fixture.issuePair();
  const ping = { ok: true };
  let port: number;
  let close: () => Promise<void>;

  if (framework === 'express') {
    const { default: express } = await import('express');
    const { createOAuthRouter, requireToken } = adapter.module as ExpressAdapter;
    const app = express();
    app.use(createOAuthRouter(server));
    app.get('/ping', (_req, res) => {
      res.json(ping);
    });
    app.get(
      '/noop',
      (_req, _res, next) => {
        next();
      },
      (_req, res) => {
        res.json({ uuid: ACCOUNT.uuid });
      },
    );
    app.post('/echo', express.text({ type: () => true }), (req, res) => {
      res.json({ length: (req.body as string).length });
    });
    app.get('/v2/me', requireToken(server), (_req, res) => {
      res.json({ uuid: (res.locals.oauth as VerifiedToken).account.uuid });
    });
    const http = app.listen(0, '127.0.0.1');
    port = await listen(http);
    close = () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      });
  } else if (framework === 'fastify') {
    const { default: Fastify } = await import('fastify');
    const { oauthPlugin, requireToken } = adapter.module as FastifyAdapter;
    const app = Fastify();
    await app.register(oauthPlugin, { server });
    app.get('/ping', async () => ping);
    app.get('/noop', { preHandler: async () => {} }, async () => ({ uuid: ACCOUNT.uuid }));
    await app.register(async (echo) => {
      echo.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, body, done) => done(null, body));
      echo.post('/echo', async (request) => ({ length: (request.body as string).length }));
    });
    app.get('/v2/me', { preHandler: requireToken(server) }, async (request) => ({
      uuid: (request as unknown as { oauth: VerifiedToken }).oauth.account.uuid,
    }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
    close = () => app.close();
  } else {
    const { Hono } = await import('hono');
    const { serve } = await import('@hono/node-server');
    const { createOAuthApp, requireToken } = adapter.module as HonoAdapter;
    const app = new Hono<{ Variables: { oauth: VerifiedToken } }>();
    app.route('/', createOAuthApp(server));
    app.get('/ping', (c) => c.json(ping));
    app.get(
      '/noop',
      async (_c, next) => {
        await next();
      },
      (c) => c.json({ uuid: ACCOUNT.uuid }),
    );
    app.post('/echo', async (c) => c.json({ length: (await c.req.text()).length }));
    app.get('/v2/me', requireToken(server), (c) => c.json({ uuid: c.get('oauth').account.uuid }));
    const http = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    port = await listen(http);
    close = () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      });
  }

  return {
    port,
    clientId: fixture.clientId,
    clientSecret: fixture.clientSecret,
    accessToken,
    async codes(n) {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push(await fixture.issueCode());
      return out;
    },
    close,
  };
}

/** CPU time this process has used, µs (user + system, all threads). */
export function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

// Child process mode.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && process.send) {
  const framework = process.argv[2] as Framework;
  const started = await startServer(framework, process.argv.includes('--dist'));
  if ('skip' in started) {
    process.send({ type: 'skip', reason: started.skip });
    process.disconnect();
  } else {
    const { codes, close, ...target } = started;
    // --profile: a CPU profile of each measured run, started and stopped by the parent around it.
    const session = process.argv.includes('--profile') ? new Session() : undefined;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 250 });
    }
    process.on('message', async (message: { type: string; n?: number; file?: string }) => {
      if (message.type === 'codes') process.send!({ type: 'codes', codes: await codes(message.n!) });
      if (message.type === 'cpu') process.send!({ type: 'cpu', micros: cpuMicros() });
      if (message.type === 'profile-start') {
        await session?.post('Profiler.start');
        process.send!({ type: 'profile-start' });
      }
      if (message.type === 'profile-stop') {
        const result = (await session?.post('Profiler.stop')) as { profile: unknown } | undefined;
        if (result) await writeFile(message.file!, JSON.stringify(result.profile));
        process.send!({ type: 'profile-stop' });
      }
      if (message.type === 'close') {
        await close();
        session?.disconnect();
        process.disconnect();
      }
    });
    process.send({ type: 'ready', ...target });
  }
}
