/**
 * authgate for Express 4 and 5: `createOAuthRouter(server)` mounts the OAuth endpoints and
 * `requireToken(server)` protects a resource API. Translation only: the protocol is in the core.
 * @packageDocumentation
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import {
  handleAuthorize,
  handleDecisionForm,
  handleResume,
  interactionResponse,
  type AuthorizationServer,
  type AuthorizeDecision,
  type Interaction,
  type InteractionUiOptions,
  type OAuthRequest,
  type OAuthResponse,
  type VerifiedToken,
} from '../../src/index.js';
import { coreHeaders } from '../node-headers.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** The verified access token, set by `requireToken`. */
      oauth?: VerifiedToken;
    }
  }
}

/** Options of `createOAuthRouter`. */
export interface OAuthRouterOptions extends InteractionUiOptions {
  /** Largest accepted request body in bytes; bigger bodies get 413. Default 64 KiB. */
  bodyLimit?: number;
  /**
   * Replace the default sign-in redirect: sign the user in, then send them to `resume`. `res`
   * already carries the browser-binding cookie when it is new: add cookies of your own with
   * `res.cookie()` or `res.append('Set-Cookie', ...)`, not `res.set('Set-Cookie', ...)`.
   */
  onLogin?: (req: Request, res: Response, interaction: Interaction) => unknown;
  /** Replace the built-in consent page: show it, then call `server.approve` / `server.deny`. */
  onConsent?: (req: Request, res: Response, interaction: Interaction) => unknown;
}

class BodyError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** The raw body (a host parser may already have consumed it: then its result). */
function readBody(req: Request, limit: number): Promise<OAuthRequest['body']> {
  // The limit holds even when a host parser (with its own, larger limit) read the body first.
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.reject(new BodyError(413, `The request body is larger than ${limit} bytes.`));
  if (req.readableEnded || (req as { _body?: boolean })._body) {
    const parsed: unknown = req.body;
    // express.raw() leaves a Buffer, express.json() an object the core would not read as JSON:
    // hand both over as the text they were.
    if (Buffer.isBuffer(parsed)) return Promise.resolve(parsed.toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && /json/i.test(req.headers['content-type'] ?? '')) return Promise.resolve(JSON.stringify(parsed));
    return Promise.resolve(typeof parsed === 'string' || (typeof parsed === 'object' && parsed !== null) ? (parsed as OAuthRequest['body']) : undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(new BodyError(413, `The request body is larger than ${limit} bytes.`));
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => reject(new BodyError(400, 'The request body could not be read.')));
  });
}

function toOAuthRequest(req: Request, body?: OAuthRequest['body']): OAuthRequest {
  return {
    method: req.method,
    url: `${req.protocol}://${req.get('host') ?? 'localhost'}${req.originalUrl}`,
    headers: coreHeaders(req.headers, req),
    ...(body !== undefined && { body }),
  };
}

/** Lower case for A-Z only, as Express's case-insensitive route patterns fold (no other letters). */
const asciiLower = (path: string): string => (/[A-Z]/.test(path) ? path.replace(/[A-Z]/g, (c) => c.toLowerCase()) : path);

function send(res: Response, response: OAuthResponse): void {
  res.status(response.status).set(response.headers).end(response.body);
}

function sendBodyError(res: Response, error: BodyError): void {
  res.status(error.status).set({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', connection: 'close' })
    .end(JSON.stringify({ error: 'invalid_request', error_description: error.message }));
}

/**
 * An Express router with `GET {basePath}/authorize`, `POST {basePath}/token`,
 * `POST {basePath}/revoke`, `POST {basePath}/introspect`, `POST {basePath}/register` (when
 * enabled), `GET /.well-known/oauth-authorization-server` and `GET /.well-known/jwks.json`,
 * and the interaction routes `GET {basePath}/authorize/resume` and
 * `POST {basePath}/authorize/decision`. It parses its own bodies: mount no body parser for it.
 * Each interaction is bound to the browser that started it (the `authgate_browser` cookie,
 * scoped to `{mount path}{basePath}/authorize`): resume and decision refuse any other browser.
 *
 * @example
 * app.use(createOAuthRouter(server, { loginUrl: '/login' }));
 * app.use('/v2', requireToken(server));
 */
export function createOAuthRouter(server: AuthorizationServer, options: OAuthRouterOptions = {}): Router {
  const basePath = options.basePath ?? '/v1/oauth';
  const limit = options.bodyLimit ?? 64 * 1024;

  // Mounted under a path (app.use('/auth', router)): the pages link there, and the cookies are scoped there.
  const ui = (req: Request): InteractionUiOptions => ({ ...options, basePath: req.baseUrl + basePath });

  /** `setCookie`: a new browser binding (authorize route), sent whoever answers. */
  const decide = async (req: Request, res: Response, decision: AuthorizeDecision, request: OAuthRequest, setCookie?: string) => {
    if (setCookie) res.append('Set-Cookie', setCookie);
    if (decision.type === 'login' && options.onLogin) return options.onLogin(req, res, decision.interaction);
    if (decision.type === 'consent' && options.onConsent) return options.onConsent(req, res, decision.interaction);
    const response = interactionResponse(decision, request, ui(req));
    // res.set() replaces a Set-Cookie appended before: the page's own cookie goes on with append.
    const { 'set-cookie': pageCookie, ...headers } = response.headers;
    res.status(response.status).set(headers);
    if (pageCookie) res.append('Set-Cookie', pageCookie);
    res.end(response.body);
  };

  const authorize: RequestHandler = async (req, res, next) => {
    try {
      const handled = await handleAuthorize(server, toOAuthRequest(req), ui(req));
      await decide(req, res, handled.decision, handled.request, handled.setCookie);
    } catch (error) {
      next(error);
    }
  };

  const handle = (withBody: boolean, run: (request: OAuthRequest) => Promise<AuthorizeDecision | OAuthResponse>): RequestHandler =>
    async (req, res, next) => {
      try {
        const body = withBody && req.method === 'POST' ? await readBody(req, limit) : undefined;
        const request = toOAuthRequest(req, body);
        const result = await run(request);
        if ('type' in result) await decide(req, res, result, request);
        else send(res, result);
      } catch (error) {
        if (error instanceof BodyError) sendBodyError(res, error);
        else next(error);
      }
    };

  const metadata: RequestHandler = (req, res, next) =>
    handle(false, async (request) => server.metadata(request, { basePath: req.baseUrl + basePath, ...(req.baseUrl && { documentsPath: req.baseUrl }) }))(req, res, next);
  const routes: [path: string, handler: RequestHandler][] = [
    [`${basePath}/token`, handle(true, (request) => server.token(request))],
    [`${basePath}/authorize`, authorize],
    [`${basePath}/authorize/resume`, handle(false, (request) => handleResume(server, request))],
    [`${basePath}/authorize/decision`, handle(true, (request) => handleDecisionForm(server, request))],
    [`${basePath}/revoke`, handle(true, (request) => server.revoke(request))],
    [`${basePath}/introspect`, handle(true, (request) => server.introspect(request))],
    [`${basePath}/register`, handle(true, (request) => server.registerDynamic(request))],
    ['/.well-known/oauth-authorization-server', metadata],
    ['/.well-known/jwks.json', handle(false, (request) => server.jwks(request))],
  ];

  // The routes live on an inner router, so Express still sets `req.route` for them (hosts label
  // metrics with it). Hosts mount the returned router in front of their own routes, so every
  // request of the app comes through it: with a literal basePath, one that is for none of the
  // OAuth paths, compared as Express compares them (ASCII case folded, one optional trailing
  // slash), goes on at once instead of past nine path patterns tried in turn, to the host's
  // routes on this router or on the app. Route syntax in basePath (`/t/:tenant/oauth`) leaves
  // every request to Express's own matching.
  const inner = express.Router();
  for (const [path, handler] of routes) inner.all(path, handler);
  const paths = /^[\w\-./~%]*$/.test(basePath) ? new Set(routes.map(([path]) => asciiLower(path))) : null;
  const router = express.Router();
  router.use((req, res, next) => {
    if (paths === null) return inner(req, res, next);
    let path = asciiLower(req.path);
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    return paths.has(path) ? inner(req, res, next) : next();
  });
  return router;
}

/**
 * Middleware for the resource API: answers 401/403 with an RFC 6750 `WWW-Authenticate`
 * challenge, or puts the verified token on `res.locals.oauth` and continues.
 */
export function requireToken(server: AuthorizationServer): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    server.authenticate(toOAuthRequest(req)).then((result) => {
      if (!result.ok) return send(res, result.response);
      res.locals.oauth = result.token;
      next();
    }, next);
  };
}
