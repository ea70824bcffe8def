/**
 * authgate for Node's own `node:http`, no framework: `createOAuthHandler(server)` answers the
 * OAuth endpoints and `requireToken(server)` protects a resource API. Both are connect-style
 * `(req, res, next)` functions, so they also fit connect, polka and the like. Translation only:
 * the protocol is in the core.
 * @packageDocumentation
 * @module authgate/node
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  fromTrustedProxy,
  serveRoute,
  type AdapterHooks,
  type AdapterIo,
  type AdapterOptions,
  type AuthorizationServer,
  type Interaction,
  type OAuthRequest,
  type OAuthResponse,
  type TrustProxyOptions,
  type VerifiedToken,
} from '../../src/index.js';
import { readNodeBody } from '../node-body.js';
import { coreHeaders, requestHost } from '../node-headers.js';
import { checkToken, mount, resourceOf } from '../shared.js';

declare module 'http' {
  interface IncomingMessage {
    /** The verified access token, set by `requireToken` of `authgate/node`. */
    oauth?: VerifiedToken;
  }
}

/**
 * Connect-style `next`: no argument to pass the request on, an error to fail it.
 * @group Authorization
 * @group Resource
 */
export type NextFunction = (error?: unknown) => void;

/** A host hook of `createOAuthHandler`. */
type Hook = (req: IncomingMessage, res: ServerResponse, interaction: Interaction) => unknown;

/**
 * Options of `createOAuthHandler`.
 * @group Authorization
 */
export interface OAuthHandlerOptions extends AdapterOptions, AdapterHooks<Hook>, TrustProxyOptions {
  /**
   * Replace the default sign-in redirect: sign the user in, then send them to `resume`. `res`
   * already carries the browser-binding cookie when it is new: add cookies of your own with
   * `res.appendHeader('set-cookie', ...)`, not `res.setHeader`.
   */
  onLogin?: Hook;
}

/**
 * What `createOAuthHandler` returns.
 * @group Authorization
 */
export type OAuthHandler = (req: IncomingMessage, res: ServerResponse, next?: NextFunction) => void;

/** The request for the core, sent to `path` (path and query). */
const requestTo = (req: IncomingMessage, path: string | undefined): OAuthRequest => ({
  method: req.method ?? 'GET',
  url: `${'encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http'}://${requestHost(req.headers.host)}${path ?? '/'}`,
  headers: coreHeaders(req.headers, req),
});

const toOAuthRequest = (req: IncomingMessage): OAuthRequest => requestTo(req, req.url);

/**
 * The request of `requireToken` for the core, with the URL the client sent it to: a
 * connect-style host (connect, polka, Express) mounting the middleware under a path strips that
 * path from `req.url` and keeps the URL as received in `req.originalUrl`. A DPoP proof's `htu`
 * names that URL (RFC 9449 §4.3 point 9), and must not match the path without the mount, another
 * URL of the host.
 */
const toResourceRequest = (req: IncomingMessage & { originalUrl?: unknown }): OAuthRequest =>
  requestTo(req, typeof req.originalUrl === 'string' ? req.originalUrl : req.url);

/** Cookies go on with append, after any the host set: setHeader would replace them. */
function send(res: ServerResponse, response: OAuthResponse, setCookie?: string): void {
  res.statusCode = response.status;
  if (setCookie) res.appendHeader('set-cookie', setCookie);
  for (const name in response.headers) {
    if (name === 'set-cookie') res.appendHeader(name, response.headers[name]!);
    else res.setHeader(name, response.headers[name]!);
  }
  res.end(response.body);
}

/** A bare `text/plain` answer, for what no route answers and what fails without a `next`. */
function plain(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent) return void res.destroy();
  res.statusCode = status;
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  res.end(text);
}

/**
 * A request handler for every route of the kit's route table, {@link authgate!oauthRoutes}
 * (the OAuth endpoints under `basePath`, the interaction and device routes, the well-known
 * documents), each for every method: the core answers those it does not take (405 or an error
 * page).
 * Paths match exactly (case and trailing slash count, as in Fastify and Hono). Any other path
 * goes to `next()`, or is answered 404 without one. An error of a host hook goes to
 * `next(error)`, or is logged and answered 500 without one. It reads its own bodies; serve it at
 * the root and move it with `basePath`. Each interaction is bound to the browser that started it
 * (the `authgate_browser` cookie, scoped to `{basePath}/authorize`): resume and decision refuse
 * any other browser.
 *
 * @example
 * const oauth = createOAuthHandler(server, { loginUrl: '/login' });
 * const protect = requireToken(server);
 * createServer((req, res) => oauth(req, res, () => protect(req, res, () => res.end(req.oauth!.account.uuid))));
 * @throws ConfigError for a missing server or a wrong or unknown option (`checkAdapterOptions`).
 * @group Authorization
 */
export function createOAuthHandler(server: AuthorizationServer, options: OAuthHandlerOptions = {}): OAuthHandler {
  const { routes: list, where, limit } = mount('createOAuthHandler', server, options);
  const routes = new Map(list.map((route) => [route.path, route]));
  const io: AdapterIo<IncomingMessage, ServerResponse, unknown, Hook> = {
    server,
    hooks: options,
    readBody: (req) => readNodeBody(req, limit),
    // Chosen once: without a trusted proxy, no request pays for reading its headers.
    toRequest: options.trustProxy ? (req) => fromTrustedProxy(toOAuthRequest(req)) : toOAuthRequest,
    where: () => where,
    send,
    callHook(hook, req, res, interaction, setCookie) {
      if (setCookie) res.appendHeader('set-cookie', setCookie);
      return hook(req, res, interaction);
    },
    fail(error, res) {
      console.error(error);
      plain(res, 500, 'Internal Server Error');
    },
  };
  return (req, res, next) => {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const route = routes.get(query < 0 ? url : url.slice(0, query));
    if (route) void serveRoute(io, route, req, res, next);
    else if (next) next();
    else plain(res, 404, 'Not Found');
  };
}

/**
 * Options of `requireToken`.
 * @group Resource
 */
export interface RequireTokenOptions {
  /**
   * The identifier of one of the server's `protectedResources`: its scope rule decides (given
   * `req.body` when a connect-style body parser set it), and every challenge names its metadata
   * (docs/reference.md#protected-resources-rfc-9728). A DPoP proof's `htu` must then be on the
   * identifier's origin, whatever the `Host` header says.
   */
  resource?: string;
  /**
   * Behind a reverse proxy, as `createOAuthHandler`'s option: the request URL has the scheme it
   * reports, which a DPoP proof's `htu` must name (RFC 9449 §7) when no `resource` is named (a
   * resource's own origin decides otherwise). Default `false`.
   */
  trustProxy?: boolean;
}

/**
 * Middleware for the resource API: answers 401/403 with an RFC 6750 `WWW-Authenticate`
 * challenge, or puts the verified token on `req.oauth` and calls `next()`. With `resource`, the
 * request is checked as one to that protected resource (RFC 9728).
 * @throws ConfigError when `resource` is not one of the server's `protectedResources`.
 * @group Resource
 */
export function requireToken(
  server: AuthorizationServer,
  options: RequireTokenOptions = {},
): (req: IncomingMessage, res: ServerResponse, next: NextFunction) => void {
  const resource = resourceOf(server, options, ['resource', 'trustProxy']);
  const toRequest = options.trustProxy ? (req: IncomingMessage) => fromTrustedProxy(toResourceRequest(req)) : toResourceRequest;
  return (req, res, next) => {
    // With a resource, its scope rule is given a body a connect-style parser left on `req.body`, if any.
    const body = (req as IncomingMessage & { body?: unknown }).body;
    checkToken(server, toRequest(req), resource, body).then((result) => {
      if (!result.ok) return send(res, result.response);
      req.oauth = result.token;
      next();
    }, next);
  };
}
