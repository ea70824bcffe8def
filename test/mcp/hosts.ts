/**
 * The MCP example's server (examples/mcp/mcp-server.ts) behind authgate on each framework: the
 * OAuth routes (with `issuer` and dynamic registration on), the MCP endpoint as a protected
 * resource (`mcpResource`: RFC 9728 metadata, per-tool scope rule) with
 * `requireToken(server, { resource })` in front of it, a second protected resource `/other` (whose
 * tokens `/mcp` must refuse; only its metadata is served, no route),
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
import { MCP_PATH, answerMcp, mcpResource, serveMcp, type Status } from '../../examples/mcp/mcp-server.js';
import { AuthorizationServer, MemoryStorage, type AuthorizationServerOptions, type Storage } from '../../src/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { selectTargets } from '../adapters/targets/select.js';
import { LOGIN_URL } from '../fixtures.js';

export type McpFramework = 'express' | 'fastify' | 'hono' | 'node';
/** Narrowed by the `express4` project of vitest.config.ts (test/adapters/targets/select.ts). */
export const MCP_FRAMEWORKS: readonly McpFramework[] = selectTargets(['express', 'fastify', 'hono', 'node']);

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
  /** `${base}/other`: another protected resource of the same host, with the default scope rule. */
  otherUrl: URL;
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

/**
 * The JSON body of a POST that declares one (at most 64 KiB), for the node host; undefined for
 * any other request, which the scope rule then treats as it must (a POST without a parsed body
 * needs `read write`). Throws on malformed JSON or a larger body.
 */
async function readJson(req: IncomingMessage): Promise<unknown> {
  if (req.method !== 'POST' || !/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 65536) throw new Error('body too large');
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** Start the MCP host on `framework`. */
export async function startMcpHost(framework: McpFramework, options: McpHostOptions = {}): Promise<McpHost> {
  const socket = createServer();
  socket.listen(0, '127.0.0.1');
  await once(socket, 'listening');
  const base = `http://127.0.0.1:${(socket.address() as AddressInfo).port}`;

  const clock = new FakeClock();
  const sessions = new FakeSessions(clock);
  const coreErrors: unknown[] = [];
  const mcp = mcpResource(base);
  const server = new AuthorizationServer({
    storage: options.storage ?? new MemoryStorage(),
    sessions,
    clock,
    issuer: base,
    allowDynamicRegistration: true,
    protectedResources: [mcp, { resource: `${base}/other`, name: 'Another API of the same host' }],
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
      // express.json() first: the scope rule reads the parsed JSON-RPC message from req.body.
      app.all(MCP_PATH, express.json(), expressRequireToken(server, { resource: mcp.resource }), (req, res, next) => {
        serveMcp(req, res, res.locals.oauth!, statuses, req.body).catch(next);
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
        // preHandler runs after Fastify parsed the JSON body: the scope rule reads request.body.
        api.addHook('preHandler', fastifyRequireToken(server, { resource: mcp.resource }));
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
      // Hono's requireToken reads the JSON body for the scope rule from a clone of the request.
      app.use(MCP_PATH, honoRequireToken(server, { resource: mcp.resource }));
      app.all(MCP_PATH, (c) => answerMcp(c.req.raw, c.get('oauth'), statuses));
      // Without replacing the global Request and Response: the SDK client runs in this process
      // and reads an OAuth error only from a `Response` it recognises (`instanceof`); with the
      // globals replaced it takes invalid_target for a server error and authorizes again.
      listener = getRequestListener(app.fetch, { overrideGlobalObjects: false });
      break;
    }
    case 'node': {
      const oauth = createOAuthHandler(server, { loginUrl: LOGIN_URL });
      const protect = nodeRequireToken(server, { resource: mcp.resource });
      listener = (req, res) =>
        oauth(req, res, async () => {
          if ((req.url ?? '/').split('?')[0] !== MCP_PATH) return void res.writeHead(404).end('Not Found');
          // Bare node:http parses nothing: read the JSON body here, as a connect-style parser
          // would, onto req.body, where requireToken hands it to the scope rule.
          try {
            (req as IncomingMessage & { body?: unknown }).body = await readJson(req);
          } catch {
            return void res.writeHead(400, { 'content-type': 'text/plain' }).end('Bad JSON body');
          }
          protect(req, res, () => {
            const { body } = req as IncomingMessage & { body?: unknown };
            serveMcp(req, res, req.oauth!, statuses, body).catch((error: unknown) => {
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
    otherUrl: new URL(`${base}/other`),
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
