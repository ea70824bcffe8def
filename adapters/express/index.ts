/**
 * authgate for Express 4 and 5: `createOAuthRouter(server)` mounts the OAuth endpoints and
 * `requireToken(server)` protects a resource API. Translation only: the protocol is in the core.
 * @packageDocumentation
 * @module authgate/express
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import {
  DEFAULT_BASE_PATH,
  forwardedScheme,
  routeWhere,
  serveRoute,
  type AdapterHooks,
  type AdapterIo,
  type AdapterOptions,
  type AuthorizationServer,
  type Interaction,
  type OAuthRequest,
  type OAuthResponse,
  type VerifiedToken,
} from '../../src/index.js';
import { readNodeBody } from '../node-body.js';
import { coreHeaders, requestHost } from '../node-headers.js';
import { caseFoldedPaths, checkToken, mount, resourceOf } from '../shared.js';

declare global {
  namespace Express {
    interface Locals {
      /** The verified access token, set by `requireToken`. */
      oauth?: VerifiedToken;
    }
  }
}

/** A host hook of `createOAuthRouter`. */
type Hook = (req: Request, res: Response, interaction: Interaction) => unknown;

/**
 * Options of `createOAuthRouter`.
 * @group Authorization
 */
export interface OAuthRouterOptions extends AdapterOptions, AdapterHooks<Hook> {
  /**
   * Replace the default sign-in redirect: sign the user in, then send them to `resume`. `res`
   * already carries the browser-binding cookie when it is new: add cookies of your own with
   * `res.cookie()` or `res.append('Set-Cookie', ...)`, not `res.set('Set-Cookie', ...)`.
   */
  onLogin?: Hook;
}

/**
 * The scheme of the request: the connection's, or, when Express's `trust proxy` trusts the peer,
 * the right-most `X-Forwarded-Proto` value, the one that proxy appended (SECURITY.md,
 * docs/reference.md#behind-a-proxy). Not `req.protocol`: it believes the left-most value, which
 * the client may have sent.
 */
function scheme(req: Request): string {
  const own = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const trust = req.app.get('trust proxy fn') as ((address: string | undefined, hop: number) => boolean) | undefined;
  if (req.headers['x-forwarded-proto'] === undefined || !trust?.(req.socket.remoteAddress, 0)) return own;
  return forwardedScheme(req.headers) ?? own;
}

function toOAuthRequest(req: Request): OAuthRequest {
  return {
    method: req.method,
    url: `${scheme(req)}://${requestHost(req.get('host'))}${req.originalUrl}`,
    headers: coreHeaders(req.headers, req),
  };
}

/** `res.set()` would replace a Set-Cookie appended before (the binding's, a host's): cookies go on with append. */
function send(res: Response, response: OAuthResponse, setCookie?: string): void {
  res.status(response.status);
  if (setCookie) res.append('Set-Cookie', setCookie);
  for (const name in response.headers) {
    if (name === 'set-cookie') res.append('Set-Cookie', response.headers[name]);
    else res.set(name, response.headers[name]);
  }
  res.end(response.body);
}

/**
 * An Express router with every route of the kit's route table, {@link authgate!oauthRoutes}
 * (the OAuth endpoints under `basePath`, the interaction and device routes, the well-known
 * documents), each for every method: the core answers those it does not take. It parses its own
 * bodies: mount no body parser for it.
 * Each interaction is bound to the browser that started it (the `authgate_browser` cookie,
 * scoped to `{mount path}{basePath}/authorize`): resume and decision refuse any other browser.
 *
 * @example
 * app.use(createOAuthRouter(server, { loginUrl: '/login' }));
 * app.use('/v2', requireToken(server));
 * @throws ConfigError for a missing server or a wrong or unknown option (`checkAdapterOptions`).
 * @group Authorization
 */
export function createOAuthRouter(server: AuthorizationServer, options: OAuthRouterOptions = {}): Router {
  const { routes, limit, where: atRoot } = mount('createOAuthRouter', server, options);
  // Mounted under a path (app.use('/auth', router)): the pages link there, and the cookies are
  // scoped there. The last mount point seen is kept: a router is mostly mounted once.
  let mounted = atRoot;
  const io: AdapterIo<Request, Response, unknown, Hook> = {
    server,
    hooks: options,
    readBody: (req) => readNodeBody(req, limit),
    toRequest: toOAuthRequest,
    where(req) {
      if (req.baseUrl !== mounted.prefix) mounted = routeWhere(options, req.baseUrl);
      return mounted;
    },
    send,
    callHook(hook, req, res, interaction, setCookie) {
      if (setCookie) res.append('Set-Cookie', setCookie);
      return hook(req, res, interaction);
    },
  };

  // The routes live on an inner router, so Express still sets `req.route` for them (hosts label
  // metrics with it). Hosts mount the returned router in front of their own routes, so every
  // request of the app comes through it: one that is for none of the OAuth paths goes on at
  // once (`caseFoldedPaths`) instead of past nine path patterns tried in turn, to the host's
  // routes on this router or on the app.
  const inner = express.Router();
  // The handler returns nothing: Express 5 would chain a promise it returned.
  for (const route of routes) inner.all(route.path, (req, res, next) => void serveRoute(io, route, req, res, next));
  const isOAuthPath = caseFoldedPaths(routes, options.basePath ?? DEFAULT_BASE_PATH);
  const router = express.Router();
  router.use((req, res, next) => (isOAuthPath === null || isOAuthPath(req.path) ? inner(req, res, next) : next()));
  return router;
}

/**
 * Options of `requireToken`.
 * @group Resource
 */
export interface RequireTokenOptions {
  /**
   * The identifier of one of the server's `protectedResources`: its scope rule decides (given
   * `req.body` when a body parser ran before), and every challenge names its metadata
   * (docs/reference.md#protected-resources-rfc-9728). A DPoP proof's `htu` must then be on the
   * identifier's origin, whatever the `Host` header says.
   */
  resource?: string;
}

/**
 * Middleware for the resource API: answers 401/403 with an RFC 6750 `WWW-Authenticate`
 * challenge, or puts the verified token on `res.locals.oauth` and continues. With `resource`,
 * the request is checked as one to that protected resource (RFC 9728).
 * @throws ConfigError when `resource` is not one of the server's `protectedResources`.
 * @group Resource
 */
export function requireToken(server: AuthorizationServer, options: RequireTokenOptions = {}): RequestHandler {
  const resource = resourceOf(server, options);
  return (req: Request, res: Response, next: NextFunction) => {
    // With a resource, its scope rule is given what the host's body parser made of the body, if one ran.
    checkToken(server, toOAuthRequest(req), resource, req.body as unknown).then((result) => {
      if (!result.ok) return send(res, result.response);
      res.locals.oauth = result.token;
      next();
    }, next);
  };
}
