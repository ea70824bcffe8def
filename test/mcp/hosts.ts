/**
 * The MCP example's server (examples/mcp/mcp-server.ts) behind authgate on each framework: the
 * OAuth routes (with `issuer` and dynamic registration on), `requireToken` in front of `POST /mcp`,
 * on a free loopback port, with a `FakeClock` and `FakeSessions` (sessions keyed by the `sid=`
 * cookie) so the test can sign a user in and move time. The issuer is the host's own URL, so the
 * listening socket is opened first and the app attached to it afterwards.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { createOAuthRouter, requireToken as expressRequireToken } from '../../adapters/express/index.js';
import { oauthPlugin, requireToken as fastifyRequireToken } from '../../adapters/fastify/index.js';
import { createOAuthApp, requireToken as honoRequireToken, type OAuthVariables } from '../../adapters/hono/index.js';
import { createOAuthHandler, requireToken as nodeRequireToken } from '../../adapters/node/index.js';
import { MCP_PATH, MCP_SCOPES, answerMcp, serveMcp, type Status } from '../../examples/mcp/mcp-server.js';
import { AuthorizationServer, MemoryStorage, type AuthorizationServerOptions, type Storage } from '../../src/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { LOGIN_URL } from '../fixtures.js';

export type McpFramework = 'express' | 'fastify' | 'hono' | 'node';
export const MCP_FRAMEWORKS: readonly McpFramework[] = ['express', 'fastify', 'hono', 'node'];

/** A served request, as the host saw it: what the SDK client did, in order. */
export interface Seen {
  method: string;
  path: string;
  status: number;
}

export interface McpHost {
  framework: McpFramework;
  /** `http://127.0.0.1:<port>`: the issuer, and where the MCP endpoint is (`${base}/mcp`). */
  base: string;
  mcpUrl: URL;
  server: AuthorizationServer;
  clock: FakeClock;
  sessions: FakeSessions;
  statuses: Status[];
  /** Every request the host answered, in order. */
  seen: Seen[];
  /** Unexpected errors the core reported through `onError`. */
  coreErrors: unknown[];
  close(): Promise<void>;
}

export interface McpHostOptions {
  storage?: Storage;
  server?: Partial<AuthorizationServerOptions>;
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** Start the MCP host on `framework`. */
export async function startMcpHost(framework: McpFramework, options: McpHostOptions = {}): Promise<McpHost> {
  const socket = createServer();
  socket.listen(0, '127.0.0.1');
  await once(socket, 'listening');
  const base = `http://127.0.0.1:${(socket.address() as AddressInfo).port}`;

  const clock = new FakeClock();
  const sessions = new FakeSessions(clock);
  const coreErrors: unknown[] = [];
  const server = new AuthorizationServer({
    storage: options.storage ?? new MemoryStorage(),
    sessions,
    clock,
    issuer: base,
    allowDynamicRegistration: true,
    // TODO(lead): protectedResources + requireToken({ resource }) instead of this scope rule.
    scopes: MCP_SCOPES,
    lifetimes: { accessToken: 3600 },
    onError: (error) => coreErrors.push(error),
    ...options.server,
  });
  const statuses: Status[] = [];
  const seen: Seen[] = [];

  let closeApp = async () => {};
  let listener: Listener;
  switch (framework) {
    case 'express': {
      const app = express();
      app.use(createOAuthRouter(server, { loginUrl: LOGIN_URL }));
      app.all(MCP_PATH, expressRequireToken(server), (req, res, next) => {
        serveMcp(req, res, res.locals.oauth!, statuses).catch(next);
      });
      listener = app;
      break;
    }
    case 'fastify': {
      let handler: Listener | undefined;
      const app = Fastify({
        serverFactory: (h) => {
          handler = h;
          return socket;
        },
      });
      await app.register(oauthPlugin, { server, loginUrl: LOGIN_URL });
      await app.register(async (api) => {
        api.addHook('preHandler', fastifyRequireToken(server));
        // Fastify parses the JSON body itself: hand it over, and let the transport write the reply.
        api.all(MCP_PATH, async (request, reply) => {
          reply.hijack();
          await serveMcp(request.raw, reply.raw, request.oauth!, statuses, request.body);
        });
      });
      await app.ready();
      listener = handler!;
      closeApp = () => app.close();
      break;
    }
    case 'hono': {
      const app = new Hono<{ Variables: OAuthVariables }>();
      app.route('/', createOAuthApp(server, { loginUrl: LOGIN_URL }));
      app.use(MCP_PATH, honoRequireToken(server));
      app.all(MCP_PATH, (c) => answerMcp(c.req.raw, c.get('oauth'), statuses));
      listener = getRequestListener(app.fetch);
      break;
    }
    case 'node': {
      const oauth = createOAuthHandler(server, { loginUrl: LOGIN_URL });
      const protect = nodeRequireToken(server);
      listener = (req, res) =>
        oauth(req, res, () => {
          if ((req.url ?? '/').split('?')[0] !== MCP_PATH) return void res.writeHead(404).end('Not Found');
          protect(req, res, () => {
            serveMcp(req, res, req.oauth!, statuses).catch((error: unknown) => {
              coreErrors.push(error);
              if (!res.headersSent) res.writeHead(500).end();
            });
          });
        });
      break;
    }
  }
  socket.on('request', (req: IncomingMessage, res: ServerResponse) => {
    res.on('finish', () => seen.push({ method: req.method ?? '', path: (req.url ?? '').split('?')[0]!, status: res.statusCode }));
  });
  // With a `serverFactory`, Fastify leaves attaching its handler to the factory (here, to us).
  socket.on('request', listener);

  return {
    framework,
    base,
    mcpUrl: new URL(`${base}${MCP_PATH}`),
    server,
    clock,
    sessions,
    statuses,
    seen,
    coreErrors,
    async close() {
      await closeApp().catch(() => {});
      socket.closeAllConnections();
      if (socket.listening) await new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}
