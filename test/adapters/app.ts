/**
 * Shared setup of the adapters' HTTP conformance suite: the same host app built with each
 * framework (Express 5, Fastify 5, Hono 4 on @hono/node-server, bare node:http), listening on
 * 127.0.0.1:0, and once more with Hono inside workerd, the Cloudflare Workers runtime
 * (targets/workerd.ts); the
 * core on MemoryStorage + FakeClock + FakeSessions (sessions keyed by the `sid=` cookie, which the
 * tests send themselves); and `fetch` with `redirect: 'manual'`, from a simulated browser that
 * keeps the adapters' browser-binding cookie (`Browser`; tests make others). Every case runs against every
 * target (`describe.each(FRAMEWORKS)`): a difference between them is a failing test. The few that
 * need what cannot reach into workerd (a host hook, a synchronous call into the core) run on the
 * `IN_PROCESS` ones.
 *
 * Every reply is recorded, and `useApp()` checks after each test that nothing answered 5xx,
 * that no body carried a stack trace, and that the core's `onError` hook was never called.
 */
import { once } from 'node:events';
import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import formbody from '@fastify/formbody';
import { serve } from '@hono/node-server';
import express, { type Request, type Response } from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { Hono } from 'hono';
import { afterEach, beforeEach, expect } from 'vitest';
import { createOAuthRouter, requireToken as expressRequireToken } from '../../adapters/express/index.js';
import { oauthPlugin, requireToken as fastifyRequireToken } from '../../adapters/fastify/index.js';
import { createOAuthApp, requireToken as honoRequireToken, type OAuthVariables } from '../../adapters/hono/index.js';
import { createOAuthHandler, requireToken as nodeRequireToken } from '../../adapters/node/index.js';
import {
  AuthorizationServer,
  MemoryStorage,
  type Account,
  type AuthorizationServerOptions,
  type Interaction,
  type InteractionUiOptions,
} from '../../src/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import type { Host, ServedResponse } from './targets/host.js';
import { selectTargets } from './targets/select.js';
import { startWorkerdHost } from './targets/workerd.js';

export type Framework = 'express' | 'fastify' | 'hono' | 'node' | 'workerd';
/**
 * Every target the suite runs against; `workerd` is the Hono adapter in a Worker
 * (targets/workerd.ts). The `express4` project of vitest.config.ts narrows it (targets/select.ts)
 * to Express, there Express 4, and node:http, the one it is compared with in same-answers.test.ts.
 */
export const FRAMEWORKS: readonly Framework[] = selectTargets(['express', 'fastify', 'hono', 'node', 'workerd']);
type InProcess = Exclude<Framework, 'workerd'>;
/**
 * The targets whose server runs in this process: for the cases that need what cannot cross to the
 * worker (a host hook, which is a closure, or a synchronous call into the core).
 */
export const IN_PROCESS: readonly InProcess[] = FRAMEWORKS.filter((f): f is InProcess => f !== 'workerd');

import { ADA, BOB, CALLBACK, LOGIN_URL } from '../fixtures.js';
export { ADA, BOB, CALLBACK, LOGIN_URL }; // the shared fixtures (test/fixtures.ts), as the suite's cases import them
export const ACCESS_TOKEN_SECONDS = 2_592_000;
export const FORM = 'application/x-www-form-urlencoded';

/** One HTTP reply, read in full. */
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The raw `Location` header (relative or absolute), or null. */
  location: string | null;
  json<T = Record<string, unknown>>(): T;
}

export interface TokenBody {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  scope: string;
  info: { name: string; email: string; uuid: string };
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** A `cookie` header value (e.g. `sid=s1; authgate_csrf=...`). */
  cookie?: string;
  /** A Uint8Array is sent without a content type of its own. */
  body?: string | Uint8Array | ReadableStream<Uint8Array>;
  /**
   * The simulated browser whose binding cookie goes with the request and keeps what the reply
   * sets. Default: the app's one default browser; `null`: none (a client that keeps no cookies).
   */
  browser?: Browser | null;
}

/**
 * The browser-binding cookie the adapters set on the authorization route
 * (docs/reference.md#browser-binding).
 */
export const BROWSER_COOKIE = 'authgate_browser';

/**
 * A simulated browser's cookie jar, for the binding cookie only: kept from a reply's
 * `Set-Cookie` and sent, as a browser would, to the paths under its `Path`. The session (`sid=`)
 * and CSRF cookies are not kept here: the tests spell those out themselves, which is how they
 * test a missing or wrong one.
 */
export class Browser {
  private cookie: { value: string; path: string } | undefined;

  /** The binding cookie's value, if this browser has one. */
  get binding(): string | undefined {
    return this.cookie?.value;
  }

  /** Keep the binding cookie a reply sets. */
  keep(headers: Headers): void {
    const set = setCookieValue(headers, BROWSER_COOKIE);
    if (!set) return;
    const path = /(?:^|;)\s*path=([^;]*)/i.exec(set.attributes)?.[1]?.trim() ?? '/';
    this.cookie = { value: set.value, path };
  }

  /** `name=value` for a request to `path`, when the cookie's Path covers it (RFC 6265 §5.1.4). */
  cookieFor(path: string): string | undefined {
    if (!this.cookie) return undefined;
    const pathname = path.split(/[?#]/)[0]!;
    const p = this.cookie.path;
    const covered = pathname === p || pathname.startsWith(p.endsWith('/') ? p : `${p}/`);
    return covered ? `${BROWSER_COOKIE}=${this.cookie.value}` : undefined;
  }
}

export interface AppOptions {
  /** Default `express`. */
  framework?: Framework;
  /**
   * The host's own body parsers, registered before the OAuth routes. Express:
   * `express.urlencoded({ extended: true })` and `express.json()` for every route; Fastify:
   * `@fastify/formbody` at the root (JSON is built in). Both also get `POST /host/echo`, a host
   * route that answers `{ body }` as its parsers saw it.
   */
  hostParsers?: boolean;
  /** Options every adapter has. */
  router?: InteractionUiOptions & { bodyLimit?: number };
  /**
   * Replace the default interaction handling (`onLogin` / `onConsent`): the host answers 200
   * `text/plain` "custom login <interaction id>" or "custom consent <interaction id> <scope>".
   */
  customInteractions?: boolean;
  /** Fastify only: the host's own setup, run on the root instance before the plugin is registered. */
  fastifyHost?: (app: FastifyInstance) => void | Promise<void>;
  /** Fastify only: register the plugin with this `prefix`. */
  fastifyPrefix?: string;
  /** Hono only: the host's own setup, run on the root app before the OAuth app is mounted. */
  honoHost?: (app: Hono<{ Variables: OAuthVariables }>) => void;
  server?: Partial<AuthorizationServerOptions>;
  /**
   * One of `server.protectedResources`: the host also protects `/r` with
   * `requireToken(server, { resource })`, with `GET /r/account` answering `{ oauth }` and
   * `POST /r/echo` answering `{ body, oauth }`, `body` being the JSON the handler read itself
   * after the check (Express: `req.body` of `hostParsers`).
   */
  resource?: string;
  /**
   * In-process targets: the app sits behind a reverse proxy on loopback and believes its
   * `X-Forwarded-Proto` / `Forwarded`, each framework its own way (Express
   * `app.set('trust proxy', 'loopback')`, `Fastify({ trustProxy: '127.0.0.1' })`, the Hono and
   * node adapters' `trustProxy: true`). Default: no proxy is trusted.
   */
  trustProxy?: boolean;
}

/** What each framework's host app records of the responses it finished. */
type Served = ServedResponse[];

/** The body the custom `onLogin` / `onConsent` handlers answer with. */
export const customText = (kind: 'login' | 'consent' | 'device', interaction: Interaction) =>
  kind === 'login'
    ? `custom login ${interaction.id}`
    : kind === 'device'
      ? `custom device ${interaction.id} ${interaction.device?.userCode}`
      : `custom consent ${interaction.id} ${interaction.scope.join(' ')}`;

/**
 * The same host app in each framework: the OAuth routes, then `requireToken` on `/v2`, with
 * `GET /v2/account` answering `{ oauth }` and `POST /v2/things` answering 201
 * `{ created, oauth }`. No error handler of our own: each framework's default one answers 500
 * (Express's with a stack trace, NODE_ENV not being "production"), which the after-each check
 * then catches.
 */
const hosts: Record<InProcess, (server: AuthorizationServer, options: AppOptions, served: Served) => Promise<Server>> = {
  async express(server, options, served) {
    const app = express();
    if (options.trustProxy) app.set('trust proxy', 'loopback');
    app.use((req, res, next) => {
      res.on('finish', () => served.push({ method: req.method, url: req.originalUrl, status: res.statusCode }));
      next();
    });
    if (options.hostParsers) {
      app.use(express.urlencoded({ extended: true }));
      app.use(express.json());
    }
    app.use(
      createOAuthRouter(server, {
        loginUrl: LOGIN_URL,
        ...options.router,
        ...(options.customInteractions && {
          onLogin: (_req, res, interaction) => res.type('text/plain').send(customText('login', interaction)),
          onConsent: (_req, res, interaction) => res.type('text/plain').send(customText('consent', interaction)),
          onDeviceVerification: (_req, res, interaction) => res.type('text/plain').send(customText('device', interaction)),
        }),
      }),
    );
    app.use('/v2', expressRequireToken(server));
    app.get('/v2/account', (_req: Request, res: Response) => {
      res.json({ oauth: res.locals.oauth });
    });
    app.post('/v2/things', (_req: Request, res: Response) => {
      res.status(201).json({ created: true, oauth: res.locals.oauth });
    });
    if (options.resource !== undefined) {
      app.use('/r', expressRequireToken(server, { resource: options.resource }));
      app.get('/r/account', (_req: Request, res: Response) => {
        res.json({ oauth: res.locals.oauth });
      });
      app.post('/r/echo', (req: Request, res: Response) => {
        res.json({ body: req.body as unknown, oauth: res.locals.oauth });
      });
    }
    if (options.hostParsers) {
      app.post('/host/echo', (req: Request, res: Response) => {
        res.json({ body: req.body as unknown });
      });
    }
    const listener = app.listen(0, '127.0.0.1');
    await once(listener, 'listening');
    return listener;
  },

  async fastify(server, options, served) {
    const app = Fastify(options.trustProxy ? { trustProxy: '127.0.0.1' } : {});
    app.addHook('onResponse', async (request, reply) => {
      served.push({ method: request.method, url: request.url, status: reply.statusCode });
    });
    if (options.hostParsers) await app.register(formbody);
    await options.fastifyHost?.(app);
    await app.register(oauthPlugin, {
      server,
      ...(options.fastifyPrefix !== undefined && { prefix: options.fastifyPrefix }),
      loginUrl: LOGIN_URL,
      ...options.router,
      ...(options.customInteractions && {
        onLogin: (_request, reply, interaction) => reply.type('text/plain').send(customText('login', interaction)),
        onConsent: (_request, reply, interaction) => reply.type('text/plain').send(customText('consent', interaction)),
        onDeviceVerification: (_request, reply, interaction) => reply.type('text/plain').send(customText('device', interaction)),
      }),
    });
    await app.register(async (api) => {
      api.addHook('preHandler', fastifyRequireToken(server));
      api.get('/v2/account', async (request) => ({ oauth: request.oauth }));
      api.post('/v2/things', async (request, reply) => reply.code(201).send({ created: true, oauth: request.oauth }));
    });
    const resource = options.resource;
    if (resource !== undefined) {
      await app.register(async (api) => {
        api.addHook('preHandler', fastifyRequireToken(server, { resource }));
        api.get('/r/account', async (request) => ({ oauth: request.oauth }));
        api.post('/r/echo', async (request) => ({ body: request.body, oauth: request.oauth }));
      });
    }
    if (options.hostParsers) app.post('/host/echo', async (request) => ({ body: request.body }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    return app.server;
  },

  async hono(server, options, served) {
    if (options.hostParsers) throw new Error('hostParsers: Hono has no body parsers to mount');
    const app = new Hono<{ Variables: OAuthVariables }>();
    app.use(async (c, next) => {
      await next();
      served.push({ method: c.req.method, url: c.req.url, status: c.res.status });
    });
    options.honoHost?.(app);
    app.route(
      '/',
      createOAuthApp(server, {
        loginUrl: LOGIN_URL,
        ...options.router,
        ...(options.trustProxy && { trustProxy: true }),
        ...(options.customInteractions && {
          onLogin: (c, interaction) => c.text(customText('login', interaction)),
          onConsent: (c, interaction) => c.text(customText('consent', interaction)),
          onDeviceVerification: (c, interaction) => c.text(customText('device', interaction)),
        }),
      }),
    );
    app.use('/v2/*', honoRequireToken(server, options.trustProxy ? { trustProxy: true } : {}));
    app.get('/v2/account', (c) => c.json({ oauth: c.get('oauth') }));
    app.post('/v2/things', (c) => c.json({ created: true, oauth: c.get('oauth') }, 201));
    if (options.resource !== undefined) {
      app.use('/r/*', honoRequireToken(server, { resource: options.resource }));
      app.get('/r/account', (c) => c.json({ oauth: c.get('oauth') }));
      // The handler reads the request itself, as the MCP SDK's transport reads `c.req.raw`.
      app.post('/r/echo', async (c) => c.json({ body: await c.req.raw.json(), oauth: c.get('oauth') }));
    }
    const listener = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    await once(listener, 'listening');
    return listener;
  },

  async node(server, options, served) {
    if (options.hostParsers) throw new Error('hostParsers: node:http has no body parsers to mount');
    const oauth = createOAuthHandler(server, {
      loginUrl: LOGIN_URL,
      ...options.router,
      ...(options.trustProxy && { trustProxy: true }),
      ...(options.customInteractions && {
        onLogin: (_req, res, interaction) => text(res, 200, customText('login', interaction)),
        onConsent: (_req, res, interaction) => text(res, 200, customText('consent', interaction)),
        onDeviceVerification: (_req, res, interaction) => text(res, 200, customText('device', interaction)),
      }),
    });
    const protect = nodeRequireToken(server, options.trustProxy ? { trustProxy: true } : {});
    // The routes of the other hosts, by hand: `requireToken` in front of everything under /v2.
    const resource = (req: Parameters<typeof protect>[0], res: ServerResponse) => {
      const path = (req.url ?? '/').split('?')[0]!;
      if (path !== '/v2' && !path.startsWith('/v2/')) return text(res, 404, 'Not Found');
      protect(req, res, () => {
        if ((req.method === 'GET' || req.method === 'HEAD') && path === '/v2/account') return json(res, 200, { oauth: req.oauth });
        if (req.method === 'POST' && path === '/v2/things') return json(res, 201, { created: true, oauth: req.oauth });
        text(res, 404, 'Not Found');
      });
    };
    const guard = options.resource === undefined ? undefined : nodeRequireToken(server, { resource: options.resource });
    const protectedResource = (req: Parameters<typeof protect>[0], res: ServerResponse, path: string) =>
      guard!(req, res, async () => {
        if (req.method === 'GET' && path === '/r/account') return json(res, 200, { oauth: req.oauth });
        if (req.method !== 'POST' || path !== '/r/echo') return text(res, 404, 'Not Found');
        let raw = '';
        for await (const chunk of req) raw += String(chunk);
        json(res, 200, { body: JSON.parse(raw) as unknown, oauth: req.oauth });
      });
    const listener = createServer((req, res) => {
      res.on('finish', () => served.push({ method: req.method ?? '', url: req.url ?? '', status: res.statusCode }));
      const path = (req.url ?? '/').split('?')[0]!;
      if (guard && (path === '/r' || path.startsWith('/r/'))) return oauth(req, res, () => protectedResource(req, res, path));
      oauth(req, res, () => resource(req, res));
    });
    listener.listen(0, '127.0.0.1');
    await once(listener, 'listening');
    return listener;
  },
};

/** The bare node:http host's answers. */
function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(body);
}
function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(value));
}

/** The value of a hidden form field of an HTML page, HTML entities decoded. */
export function formValue(html: string, name: string): string | undefined {
  const match = new RegExp(`<input[^>]*\\bname="${name}"[^>]*\\bvalue="([^"]*)"`).exec(html);
  return match?.[1]?.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
}

/** The value a `Set-Cookie` header gives cookie `name`, or undefined. */
export function setCookieValue(headers: Headers, name: string): { value: string; attributes: string } | undefined {
  for (const line of headers.getSetCookie()) {
    const [pair = '', ...attributes] = line.split(';');
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return { value: pair.slice(eq + 1).trim(), attributes: attributes.join(';') };
  }
  return undefined;
}

/** Parameters of a callback URL's fragment. */
export const fragmentParams = (url: URL) => new URLSearchParams(url.hash.slice(1));

/** Looks like a stack trace or a source path leaked into a body. */
const STACK = /\n\s+at\s|\bat\s\S+\s\(|node_modules|\.ts:\d+:\d+|\.js:\d+:\d+/;

/** The core in this process, and a framework's host app for it on a free loopback port. */
async function startInProcess(framework: InProcess, options: AppOptions): Promise<Host> {
  const clock = new FakeClock();
  const sessions = new FakeSessions(clock);
  const storage = new MemoryStorage();
  const coreErrors: unknown[] = [];
  const server = new AuthorizationServer({ storage, sessions, clock, onError: (e) => coreErrors.push(e), ...options.server });
  const client = await server.registerClient({ name: 'Example App', redirectUri: CALLBACK });
  const other = await server.registerClient({ name: 'Other App', redirectUri: 'https://other.example/cb' });
  const served: Served = [];
  const listener = await hosts[framework](server, options, served);
  const { port } = listener.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    clock,
    sessions,
    storage,
    server,
    client,
    other,
    served,
    coreErrors,
    async close() {
      listener.closeAllConnections();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}

/** Start a fresh app on a free loopback port. */
export async function startApp(options: AppOptions = {}) {
  const framework = options.framework ?? 'express';
  const host = framework === 'workerd' ? await startWorkerdHost(options) : await startInProcess(framework, options);
  const { base, clock, sessions, storage, server, client, other, coreErrors } = host;
  /** Status of every response the app finished, seen from the server side. */
  const served = host.served;
  /** Every reply the tests read, seen from the client side. */
  const replies: { method: string; path: string; reply: Reply }[] = [];
  /** Where the OAuth routes are (the helpers below use it; most tests spell `/v1/oauth` out). */
  const paths = `${options.fastifyPrefix ?? ''}${options.router?.basePath ?? '/v1/oauth'}`;

  /** The browser every request goes from unless a test names another. */
  const defaultBrowser = new Browser();
  /** Another simulated browser, with a cookie jar of its own. */
  const browser = () => new Browser();

  async function request(method: string, path: string, opts: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.cookie !== undefined) headers['cookie'] = opts.cookie;
    const jar = opts.browser === undefined ? defaultBrowser : opts.browser;
    const bound = jar?.cookieFor(path);
    if (bound && !(headers['cookie'] ?? '').includes(`${BROWSER_COOKIE}=`)) {
      headers['cookie'] = headers['cookie'] ? `${headers['cookie']}; ${bound}` : bound;
    }
    const init: RequestInit & { duplex?: 'half' } = { method, headers, redirect: 'manual' };
    if (opts.body !== undefined) init.body = opts.body as BodyInit;
    if (opts.body instanceof ReadableStream) init.duplex = 'half';
    await host.sync?.();
    const res = await fetch(base + path, init);
    jar?.keep(res.headers);
    const text = await res.text();
    const reply: Reply = {
      status: res.status,
      headers: res.headers,
      text,
      location: res.headers.get('location'),
      json<T>() {
        return JSON.parse(text) as T;
      },
    };
    replies.push({ method, path, reply });
    return reply;
  }

  /**
   * A request written with node:http from a raw header list, for what fetch cannot send: a header
   * repeated on its own line (fetch joins them) or a body still outstanding.
   */
  const rawRequest = async (method: string, path: string, headers: Array<[string, string]>, body = '') => {
    await host.sync?.();
    return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
      const list = [['host', new URL(base).host], ['content-length', String(Buffer.byteLength(body))], ...headers].flat();
      const req = httpRequest(`${base}${path}`, { method, headers: list }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  };

  const get = (path: string, cookie?: string, opts: Omit<RequestOptions, 'cookie'> = {}) =>
    request('GET', path, cookie === undefined ? opts : { ...opts, cookie });

  /** POST a form: an object (URL-encoded here) or a raw string body. */
  const postForm = (path: string, form: Record<string, string> | string, opts: Omit<RequestOptions, 'body'> = {}) =>
    request('POST', path, {
      ...opts,
      headers: { 'content-type': FORM, ...opts.headers },
      body: typeof form === 'string' ? form : new URLSearchParams(form).toString(),
    });

  /** Sign an account in; returns the `cookie` header value `sid=…`. */
  const signIn = (account: Account = ADA, authenticatedAt?: number) => sessions.signIn(account, authenticatedAt);

  const authorizeUrl = (params: Record<string, string> = {}) =>
    `${paths}/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: CALLBACK, response_type: 'code', state: 'st-123', ...params })}`;

  /** The built-in consent page, and what its form and cookie carry. */
  async function readConsent(page: Reply) {
    expect(page.status, page.text).toBe(200);
    const interaction = formValue(page.text, 'interaction');
    const csrf = formValue(page.text, 'csrf');
    const cookie = setCookieValue(page.headers, 'authgate_csrf');
    expect(interaction).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookie?.value).toBe(csrf);
    return { page, interaction: interaction!, csrf: csrf!, csrfCookie: `authgate_csrf=${cookie!.value}` };
  }
  type Consent = Awaited<ReturnType<typeof readConsent>>;

  /** GET the authorization endpoint as a signed-in user and read the consent page. */
  const openConsent = async (params: Record<string, string> = {}, sid: string, from?: Browser) =>
    readConsent(await get(authorizeUrl(params), sid, from ? { browser: from } : {}));

  /** POST the consent form the way a browser would (session cookie + CSRF cookie + form fields). */
  const decide = (
    consent: Consent,
    decision: 'approve' | 'deny',
    sid: string,
    overrides: { cookie?: string; form?: Record<string, string>; browser?: Browser | null } = {},
  ) =>
    postForm(
      `${paths}/authorize/decision`,
      { interaction: consent.interaction, csrf: consent.csrf, decision, ...overrides.form },
      {
        cookie: overrides.cookie ?? `${sid}; ${consent.csrfCookie}`,
        ...(overrides.browser !== undefined && { browser: overrides.browser }),
      },
    );

  /** authorize → consent page → approve; returns the callback URL the browser is sent to. */
  async function authorizeAndApprove(params: Record<string, string> = {}, sid: string = signIn(ADA)): Promise<URL> {
    const consent = await openConsent(params, sid);
    const reply = await decide(consent, 'approve', sid);
    expect(reply.status, reply.text).toBe(303);
    return new URL(reply.location!);
  }

  async function getCode(params: Record<string, string> = {}, sid?: string): Promise<string> {
    const url = await authorizeAndApprove(params, sid);
    const code = url.searchParams.get('code');
    expect(code).toBeTruthy();
    return code!;
  }

  const codeParams = (code: string, extra: Record<string, string> = {}) => ({
    grant_type: 'authorization_code',
    code,
    client_id: client.clientId,
    client_secret: client.clientSecret,
    redirect_uri: CALLBACK,
    ...extra,
  });

  /** The code exchange with every parameter in the form body. */
  const exchange = (code: string, extra: Record<string, string> = {}, opts: Omit<RequestOptions, 'body'> = {}) =>
    postForm(`${paths}/token`, codeParams(code, extra), opts);

  /**
   * The code exchange with its parameters in the query string of a POST and no body, as some
   * clients send it (docs/reference.md#token-endpoint).
   */
  const exchangeInQuery = (code: string, extra: Record<string, string> = {}) =>
    request('POST', `${paths}/token?${new URLSearchParams(codeParams(code, extra))}`);

  /** A full code flow over HTTP; returns the token response body. */
  async function tokens(params: Record<string, string> = {}, sid?: string): Promise<TokenBody> {
    const reply = await exchange(await getCode(params, sid));
    expect(reply.status, reply.text).toBe(200);
    return reply.json<TokenBody>();
  }

  /** A resource API call with a bearer token (or none). */
  const api = (method: string, path: string, token?: string, headers: Record<string, string> = {}) =>
    request(method, path, { headers: { ...(token !== undefined && { authorization: `Bearer ${token}` }), ...headers } });

  const close = (): Promise<void> => host.close();

  /**
   * Nothing answered 5xx, no body leaked a stack trace, the core reported no unexpected error.
   * (workerd: what the worker recorded is checked by `close()`, the async step every caller takes.)
   */
  function checkHealthy(): void {
    expect(served.filter((s) => s.status >= 500)).toEqual([]);
    expect(replies.filter((r) => r.reply.status >= 500).map((r) => `${r.method} ${r.path} → ${r.reply.status}`)).toEqual([]);
    expect(replies.filter((r) => STACK.test(r.reply.text)).map((r) => `${r.method} ${r.path}: ${r.reply.text.slice(0, 200)}`)).toEqual([]);
    expect(coreErrors).toEqual([]);
  }

  return {
    framework,
    paths,
    base,
    clock,
    sessions,
    storage,
    server,
    client,
    other,
    served,
    replies,
    defaultBrowser,
    browser,
    request,
    rawRequest,
    get,
    postForm,
    signIn,
    authorizeUrl,
    readConsent,
    openConsent,
    decide,
    authorizeAndApprove,
    getCode,
    codeParams,
    exchange,
    exchangeInQuery,
    tokens,
    api,
    close,
    checkHealthy,
  };
}

export type TestApp = Awaited<ReturnType<typeof startApp>>;

/**
 * A fresh app for every test of the enclosing `describe`, with the health check after each.
 * @returns a getter for the current test's app.
 */
export function useApp(options: AppOptions = {}): () => TestApp {
  let current: TestApp | undefined;
  beforeEach(async () => {
    current = await startApp(options);
  });
  afterEach(async () => {
    const app = current;
    current = undefined;
    if (!app) return;
    try {
      app.checkHealthy();
    } finally {
      await app.close();
    }
  });
  return () => {
    if (!current) throw new Error('useApp(): no app outside a test');
    return current;
  };
}

/** Token-endpoint hygiene (RFC 6749 §5.1): JSON, not cacheable. */
export function expectNoStoreJson(reply: Reply): void {
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  expect(reply.headers.get('cache-control')).toBe('no-store');
  expect(reply.headers.get('pragma')).toBe('no-cache');
}

/** A JSON OAuth error with this status and code. */
export function expectJsonError(reply: Reply, status: number, error: string): void {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  const body = reply.json<{ error: string; error_description?: string }>();
  expect(body.error).toBe(error);
  expect(typeof body.error_description).toBe('string');
}

/** An HTML error page: 400 by default, never a redirect, framing forbidden. */
export function expectErrorPage(reply: Reply, error: string, status = 400): void {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.location).toBeNull();
  expect(reply.headers.get('content-type')).toMatch(/^text\/html/);
  expect(reply.headers.get('x-frame-options')).toBe('DENY');
  expect(reply.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  expect(reply.text).toContain(`<code>${error}</code>`);
  expect(reply.text).not.toMatch(/[?&#](code|access_token)=/);
}
