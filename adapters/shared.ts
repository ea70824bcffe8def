/**
 * What the adapters do alike besides serving the kit's routes (src/adapter-kit.ts): read the
 * options they share, pick the bearer check of `requireToken`, answer a body the framework
 * refused. No Node module here: the Hono entry imports it and runs on edge runtimes. Internal:
 * not an entry point of the package.
 */
import {
  ConfigError,
  DEFAULT_BODY_LIMIT,
  checkAdapterOptions,
  checkServer,
  bodyErrorResponse,
  bodyTooLarge,
  bodyUnreadable,
  oauthRoutes,
  routeWhere,
  type AdapterOptions,
  type AuthenticateResult,
  type AuthorizationServer,
  type OAuthRequest,
  type OAuthResponse,
  type OAuthRoute,
  type ResourceCheck,
  type RouteWhere,
} from '../src/index.js';

/**
 * The form type as clients send it: the core reads a body of exactly this type without parsing
 * the Content-Type (src/http.ts), and an adapter's fast path may pass it on as it came.
 */
export const FORM = 'application/x-www-form-urlencoded';

/** What an adapter mounts, from the options every adapter takes (`AdapterOptions`). */
export interface Mount {
  /** The kit's routes under `basePath` (default `/v1/oauth`), the server's resource documents included. */
  readonly routes: OAuthRoute[];
  /** Where they are under the adapter's mount point (`routeWhere`). */
  readonly where: RouteWhere;
  /** The largest body read (`bodyLimit`, default 64 KiB). */
  readonly limit: number;
}

/** What each adapter takes besides `ADAPTER_OPTIONS` (Fastify: its own register options), and what it calls the server. */
const ADAPTERS = {
  createOAuthRouter: { extra: [], serverName: 'server' },
  oauthPlugin: { extra: ['server', 'prefix', 'logLevel', 'logSerializers'], serverName: 'options.server' },
  createOAuthApp: { extra: ['trustProxy'], serverName: 'server' },
  createOAuthHandler: { extra: ['trustProxy'], serverName: 'server' },
} as const;

/**
 * The routes of `server` with `options`, mounted under `prefix` (an Express mount path, a Fastify
 * `prefix`), once both are checked (`checkAdapterOptions`: a `ConfigError` names what is wrong).
 */
export function mount(adapter: keyof typeof ADAPTERS, server: AuthorizationServer, options: AdapterOptions, prefix = ''): Mount {
  const { extra, serverName } = ADAPTERS[adapter];
  checkAdapterOptions(adapter, server, options, extra, serverName);
  return {
    routes: oauthRoutes(options.basePath, server),
    where: routeWhere(options, prefix),
    limit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
  };
}

/**
 * Check the arguments of an adapter's `requireToken` as `mount` checks the routes': `server` an
 * `AuthorizationServer`, and no option but `known`.
 * @throws ConfigError naming the first wrong one.
 */
export function checkRequireToken(server: AuthorizationServer, options: object, known: readonly string[] = ['resource']): void {
  checkServer('requireToken', server);
  for (const key of Object.keys(options))
    if (!known.includes(key))
      throw new ConfigError(key, `unknown option of requireToken, which takes ${known.map((k) => `"${k}"`).join(', ')}`);
}

/** Lower case for A-Z only, as Express's case-insensitive route patterns fold (no other letters). */
const asciiLower = (path: string): string => (/[A-Z]/.test(path) ? path.replace(/[A-Z]/g, (c) => c.toLowerCase()) : path);

/**
 * Whether a request path is one of `routes`' paths, compared as Express and connect-style routers
 * compare them by default (ASCII case folded, one trailing slash optional): for a router mounted
 * in front of every route of the host, to pass a request that is for none of them on at once.
 * `null` when `basePath` holds route syntax (`/t/:tenant/oauth`): only the framework's own
 * matching can tell then.
 */
export function caseFoldedPaths(routes: readonly OAuthRoute[], basePath: string): ((path: string) => boolean) | null {
  if (!/^[\w\-./~%]*$/.test(basePath)) return null;
  const paths = new Set(routes.map((route) => asciiLower(route.path)));
  return (path) => {
    let folded = asciiLower(path);
    if (folded.length > 1 && folded.endsWith('/')) folded = folded.slice(0, -1);
    return paths.has(folded);
  };
}

/**
 * The check of a `requireToken(server, { resource })`, its protected resource resolved once, when
 * the middleware is made (`server.resourceCheck`); undefined without `resource` (the plain bearer
 * check).
 * @throws ConfigError when `server` is none, an option is unknown, or `resource` is not one of the
 *   server's `protectedResources`.
 */
export function resourceOf(
  server: AuthorizationServer,
  options: { resource?: string | undefined },
  known?: readonly string[],
): ResourceCheck | undefined {
  checkRequireToken(server, options, known);
  return options.resource === undefined ? undefined : server.resourceCheck(options.resource);
}

/**
 * The bearer check of `requireToken`: without a resource, the plain one, with no options object
 * (every protected request takes it); else the check of the resource
 * (docs/reference.md#protected-resources-rfc-9728), whose scope rule is given `body`, the body the
 * framework parsed, if any (the stream is never read here).
 */
export function checkToken(
  server: AuthorizationServer,
  request: OAuthRequest,
  resource: ResourceCheck | undefined,
  body: unknown,
): Promise<AuthenticateResult> {
  return resource === undefined ? server.authenticate(request) : resource(request, { body });
}

/**
 * The answer to a body the framework refused while reading it, before any handler ran (Fastify
 * reads bodies itself): over `limit` bytes when `tooLarge`, else broken off or malformed. The
 * same OAuth errors as a body the kit reads (`bodyErrorResponse`).
 */
export function refusedBody(tooLarge: boolean, limit: number): OAuthResponse {
  return bodyErrorResponse(tooLarge ? bodyTooLarge(limit) : bodyUnreadable());
}
