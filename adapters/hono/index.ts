/**
 * authgate for Hono 4: `createOAuthApp(server)` serves the OAuth endpoints and
 * `requireToken(server)` protects a resource API. Web-standard `Request`/`Response` only, so it
 * runs on Node (`@hono/node-server`), Bun, Deno and edge runtimes. Translation only: the protocol
 * is in the core.
 * @packageDocumentation
 * @module authgate/hono
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import {
  DEFAULT_BODY_LIMIT,
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
import { jsonForRule, readFetchBody } from '../fetch-body.js';
import { checkRequireToken, mount } from '../shared.js';
import { sentUrl } from './sent-url.js';

/**
 * The variables `requireToken` sets: `new Hono<{ Variables: OAuthVariables }>()` types
 * `c.get('oauth')`.
 * @group Resource
 */
export type OAuthVariables = { oauth: VerifiedToken };

/** A host hook of `createOAuthApp`. */
type Hook = (c: Context, interaction: Interaction) => Response | Promise<Response>;

/**
 * Options of `createOAuthApp`.
 * @group Authorization
 */
export interface OAuthAppOptions extends AdapterOptions, AdapterHooks<Hook>, TrustProxyOptions {}

function toOAuthRequest(c: Context): OAuthRequest {
  // Repeated headers arrive joined by ", " (Fetch): a repeated Authorization is then malformed.
  const headers: OAuthRequest['headers'] = {};
  c.req.raw.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { method: c.req.method, url: c.req.url, headers };
}

/**
 * `response` with one more `Set-Cookie` (a new browser binding): appended in place, or on a copy
 * when its headers are immutable (a `Response.redirect()` of a host's `onLogin`).
 */
function withCookie(response: Response, setCookie: string | undefined): Response {
  if (!setCookie) return response;
  try {
    response.headers.append('set-cookie', setCookie);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.append('set-cookie', setCookie);
    return copy;
  }
}

// `c.body` keeps headers other middleware set; an empty body is null, so no content-type is added.
const send = (c: Context, response: OAuthResponse): Response =>
  response.body === ''
    ? c.body(null, response.status as 302, response.headers)
    : c.body(response.body, response.status as 200, response.headers);

/**
 * A Hono app with every route of the kit's route table, {@link authgate!oauthRoutes} (the
 * OAuth endpoints under `basePath`, the interaction and device routes, the well-known
 * documents), each for every method: the core answers those it does not take (405 or an error
 * page). It reads its own bodies: mount it at the root
 * (`app.route('/', ...)`) and move it with `basePath`, so the pages it serves link to the right
 * place. Each interaction is bound to the browser that started it (the `authgate_browser`
 * cookie, scoped to `{basePath}/authorize` and added to whatever response `onLogin` /
 * `onConsent` return): resume and decision refuse any other browser.
 *
 * @example
 * app.route('/', createOAuthApp(server, { loginUrl: '/login' }));
 * app.use('/v2/*', requireToken(server));
 * @throws ConfigError for a missing server or a wrong or unknown option (`checkAdapterOptions`).
 * @group Authorization
 */
export function createOAuthApp(server: AuthorizationServer, options: OAuthAppOptions = {}): Hono {
  const { routes, where, limit } = mount('createOAuthApp', server, options);
  const io: AdapterIo<Context, Context, Response, Hook> = {
    server,
    hooks: options,
    readBody: (c) => readFetchBody(c.req, limit),
    // Chosen once: without a trusted proxy, no request pays for reading its headers.
    toRequest: options.trustProxy ? (c) => fromTrustedProxy(toOAuthRequest(c)) : toOAuthRequest,
    where: () => where,
    // The binding cookie goes on whatever answers: the built-in page or the host's hook.
    send: (c, response, setCookie) => withCookie(send(c, response), setCookie),
    callHook: async (hook, c, _c, interaction, setCookie) => withCookie(await hook(c, interaction), setCookie),
  };
  const app = new Hono();
  // Hono answers HEAD with the GET route, without the body.
  for (const route of routes) app.all(route.path, (c) => serveRoute(io, route, c, c));
  return app;
}

/**
 * Options of `requireToken`.
 * @group Resource
 */
export interface RequireTokenOptions {
  /**
   * The identifier of one of the server's `protectedResources`: its scope rule decides, and
   * every challenge names its metadata (docs/reference.md#protected-resources-rfc-9728). When
   * the resource has a `requiredScope` of its own, the rule gets the JSON body of a request that
   * declares one (`Content-Type` JSON, `Content-Length` at most `bodyLimit`), read from a clone
   * of the request: the handler still reads `c.req.raw` (or `c.req.json()`) as usual. A DPoP
   * proof's `htu` must then be on the identifier's origin, whatever the `Host` header says.
   */
  resource?: string;
  /** The largest body read for the scope rule, in bytes; a larger one reaches the rule as no body. Default 64 KiB. */
  bodyLimit?: number;
  /**
   * Behind a reverse proxy, as `createOAuthApp`'s option: the scheme it reports is that of the
   * URL a DPoP proof must name (`htu`, RFC 9449 §7) when no `resource` is named (a resource's
   * own origin decides otherwise). Default `false`.
   */
  trustProxy?: boolean;
}

/**
 * The request as the bearer check reads it: the method, the URL and Authorization only (and the
 * `DPoP` proof of a request with the DPoP scheme). Copying
 * every header out of the Fetch Headers object weighed on every protected request (see
 * BENCHMARKS.md). Repeated lines come joined by ", ", as the core expects from Fetch.
 */
function bearerRequest(c: Context, trustProxy?: boolean): OAuthRequest {
  const authorization = c.req.raw.headers.get('authorization');
  const request: OAuthRequest = { method: c.req.method, url: sentUrl(c), headers: authorization === null ? {} : { authorization } };
  // A DPoP proof (RFC 9449 §7) comes with the DPoP scheme only: looked for then, not on every
  // bearer request, and so is the proxy's scheme, which only the proof's `htu` needs.
  if (authorization !== null && authorization.length > 4 && /^dpop /i.test(authorization)) {
    const headers = c.req.raw.headers;
    for (const name of trustProxy ? ['dpop', 'x-forwarded-proto', 'forwarded'] : ['dpop']) {
      const value = headers.get(name);
      if (value !== null) request.headers[name] = value;
    }
    if (trustProxy) fromTrustedProxy(request);
  }
  return request;
}

/**
 * Middleware for the resource API: answers 401/403 with an RFC 6750 `WWW-Authenticate`
 * challenge, or sets the verified token as `c.get('oauth')` and continues. With `resource`, the
 * request is checked as one to that protected resource (RFC 9728).
 * @throws ConfigError when `server` is none, an option is unknown, or `resource` is not one of the
 *   server's `protectedResources`.
 * @group Resource
 */
export function requireToken(
  server: AuthorizationServer,
  options: RequireTokenOptions = {},
): MiddlewareHandler<{ Variables: OAuthVariables }> {
  checkRequireToken(server, options, ['resource', 'bodyLimit', 'trustProxy']);
  const trustProxy = options.trustProxy === true;
  if (options.resource !== undefined) {
    // Resolved once, here: the check is handed the resource, never looks it up per request.
    const entry = server.protectedResource(options.resource);
    const check = server.resourceCheck(options.resource);
    const limit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
    return async (c, next) => {
      // Only a rule of the resource's own looks at the body (a clone), and only when it runs.
      const result = await check(bearerRequest(c, trustProxy), entry.requiredScope && { readBody: () => jsonForRule(c.req, limit) });
      if (!result.ok) return send(c, result.response);
      c.set('oauth', result.token);
      await next();
    };
  }
  return async (c, next) => {
    const result = await server.authenticate(bearerRequest(c, trustProxy));
    if (!result.ok) return send(c, result.response);
    c.set('oauth', result.token);
    await next();
  };
}
