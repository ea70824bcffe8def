/**
 * What every adapter does alike, so an adapter only translates: it reads a body, builds an
 * `OAuthRequest`, writes an `OAuthResponse`, mounts the routes of `oauthRoutes` in its
 * framework's syntax and calls `serveRoute` for each request. Everything of the protocol is
 * here or deeper in the core:
 * - the route table (which paths, which read a body, which core method answers), with the mount
 *   point each handler needs (`routeWhere`: where the pages link, where the cookies are scoped,
 *   what the metadata names);
 * - the OAuth error for a body that is too large or unreadable (`bodyErrorResponse`);
 * - what to do with a route's result (`answerRoute`): send a response (with the browser-binding
 *   cookie when there is one), render the built-in sign-in redirect or consent page
 *   (`interactionResponse`), or hand the interaction to the host's `onLogin` / `onConsent`.
 *
 * An adapter describes its framework once, as an `AdapterIo` built when the routes are mounted;
 * no closure or object is made per request.
 */
import { ConfigError } from './errors.js';
import { isMethod } from './http.js';
import { CONTROL, DEFAULT_BASE_PATH, plainLine } from './rules.js';
import { PATHS, type MetadataOptions } from './endpoints/metadata.js';
import { resourceAt } from './endpoints/resource-metadata.js';
import {
  handleAuthorize,
  handleDecisionForm,
  handleResume,
  interactionResponse,
  type AuthorizeHandling,
  type InteractionUiOptions,
} from './ui/interaction-routes.js';
import { secureCookies } from './proxy.js';
import { handleDeviceAuthorization, handleDeviceVerification } from './ui/device-routes.js';
import type { AuthorizationServer } from './server.js';
import type { AuthorizeDecision, Interaction, OAuthRequest, OAuthResponse } from './types.js';

/**
 * The options every adapter takes, besides its own `onLogin` / `onConsent`.
 * @group Adapter kit
 */
export interface AdapterOptions extends InteractionUiOptions {
  /** Largest accepted request body in bytes; bigger bodies get 413. Default 64 KiB. */
  bodyLimit?: number;
}

/**
 * The default `bodyLimit`: 64 KiB, far more than any form or registration of this server needs.
 * @group Adapter kit
 */
export const DEFAULT_BODY_LIMIT = 64 * 1024;

export { DEFAULT_BASE_PATH };

/**
 * The options every adapter takes (`AdapterOptions` and `AdapterHooks`), by name.
 * @group Adapter kit
 */
export const ADAPTER_OPTIONS: readonly string[] = [
  'loginUrl',
  'basePath',
  'siteName',
  'browserCookiePath',
  'bodyLimit',
  'onLogin',
  'onConsent',
  'onDeviceVerification',
];

/** Whitespace, a control character, `?`, `#` or a backslash: never in a path the kit mounts or scopes a cookie to. */
const NOT_IN_PATH = /[\s?#\\]/;

/** What each common option must be, as the text of the `ConfigError`, or '' when it is right. */
const CHECKS: Record<string, (value: unknown) => string> = {
  // Refused, not repaired: the host writes its basePath in other places too (a rate limiter in
  // front, its own links), which a repaired value here would not reach.
  basePath: (v) =>
    typeof v !== 'string' || (v !== '' && (!v.startsWith('/') || v.endsWith('/') || v.includes('//') || NOT_IN_PATH.test(v)))
      ? `expected '' or a path that starts with "/" and does not end with one, such as "/oauth" (the routes are basePath + "/token", ...), got ${shown(v)}`
      : '',
  loginUrl: (v) =>
    typeof v !== 'string' || !plainLine(v, 2000) || /\s/.test(v) || !(/^\/(?!\/)/.test(v) || /^https?:\/\/[^/]/i.test(v))
      ? `expected a path on this site such as "/login", or an absolute http(s) URL, got ${shown(v)}`
      : '',
  siteName: (v) => (typeof v !== 'string' || !plainLine(v.trim(), 200) ? `expected a name of 1 to 200 characters, got ${shown(v)}` : ''),
  browserCookiePath: (v) =>
    typeof v !== 'string' || !v.startsWith('/') || NOT_IN_PATH.test(v) || /[;,]/.test(v) || CONTROL.test(v)
      ? `expected a cookie path that starts with "/", such as "/", got ${shown(v)}`
      : '',
  bodyLimit: (v) => (Number.isSafeInteger(v) && (v as number) > 0 ? '' : `expected a whole number of bytes above 0, got ${shown(v)}`),
  trustProxy: (v) => (typeof v === 'boolean' ? '' : `expected true or false, got ${shown(v)}`),
};
for (const hook of ['onLogin', 'onConsent', 'onDeviceVerification'])
  CHECKS[hook] = (v) => (typeof v === 'function' ? '' : `expected a function, got ${shown(v)}`);

/** A value as a message may show it: strings quoted (and cut), anything else by its type. */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value).replace(/[^ -~]/g, '?');
  if (value === null || typeof value !== 'object') return String(value).slice(0, 60);
  return Array.isArray(value) ? 'an array' : 'an object';
}

/** The known name `key` is likely a slip of (`loginURL`, `basepath`, `onconsent`), if any. */
function slipOf(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase().replace(/[-_]/g, '');
  return known.find((name) => name.toLowerCase() === lower);
}

/**
 * Check what an adapter was given, once, when its routes are made, as `new AuthorizationServer()`
 * checks its own options: a `ConfigError` names the first wrong one. `server` must be an
 * `AuthorizationServer`; every option must be one of `ADAPTER_OPTIONS` or `extra` (an unknown
 * name, such as the slip `loginURL`, is refused rather than ignored), and each known one of its
 * type: `basePath` '' or `/a/path` (no trailing or double slash: `oauth/` would serve
 * `oauth//token`), `loginUrl` a path or an http(s) URL, `browserCookiePath` a cookie path,
 * `bodyLimit` a positive whole number, the hooks functions, `trustProxy` a boolean. A value of
 * `undefined` counts as absent.
 * @param adapter What the host called, named in every message: `createOAuthRouter`, `oauthPlugin`.
 * @param extra The adapter's own option names (`trustProxy`; Fastify's `server`, `prefix`, ...): a
 *   name here that the kit knows (`trustProxy`) is checked too.
 * @param serverName What the messages call the server: `server`, or `options.server` (Fastify).
 * @throws ConfigError for the first argument or option that is wrong.
 * @group Adapter kit
 */
export function checkAdapterOptions(
  adapter: string,
  server: unknown,
  options: unknown,
  extra: readonly string[] = [],
  serverName = 'server',
): void {
  checkServer(adapter, server, serverName);
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new ConfigError(`${adapter} options`, `expected an object of options, got ${shown(options)}`);
  const known = [...ADAPTER_OPTIONS, ...extra];
  for (const [key, value] of Object.entries(options)) {
    if (!known.includes(key)) {
      const slip = slipOf(key, known);
      const hint = slip ? `; did you mean "${slip}"?` : `; ${adapter} takes ${known.map((name) => `"${name}"`).join(', ')}`;
      throw new ConfigError(key, `unknown option of ${adapter}${hint}`);
    }
    const wrong = value === undefined ? '' : (CHECKS[key]?.(value) ?? '');
    if (wrong) throw new ConfigError(key, `${adapter}: ${wrong}`);
  }
}

/**
 * Check that `server` is an `AuthorizationServer` (by its shape, so that a second copy of the
 * package passes too), naming what the host called when it is not.
 * @throws ConfigError naming `name` (`server`, `options.server`).
 * @group Adapter kit
 */
export function checkServer(adapter: string, server: unknown, name = 'server'): void {
  const s = server as { options?: unknown; token?: unknown; authenticate?: unknown } | null | undefined;
  if (typeof s?.options === 'object' && typeof s.token === 'function' && typeof s.authenticate === 'function') return;
  throw new ConfigError(
    name,
    `${adapter}: expected an AuthorizationServer (new AuthorizationServer({ storage, sessions, ... })), got ${shown(server)}`,
  );
}

/**
 * Where an adapter's routes are: what the pages, the cookies and the metadata name.
 * @group Adapter kit
 */
export interface RouteWhere {
  /** The path the adapter is mounted under (an Express mount path, a Fastify `prefix`), or ''. */
  readonly prefix: string;
  /** The interaction options, with `basePath` the full path of the OAuth routes (prefix included). */
  readonly ui: InteractionUiOptions;
  /** What the metadata document names: the OAuth routes, and the documents under the prefix. */
  readonly documents: MetadataOptions;
}

/**
 * The mount point of routes with these options under `prefix`: the pages link to where the
 * routes really are, the browser-binding and CSRF cookies are scoped there, and the metadata
 * names them (the well-known documents move with the prefix too, as the routes do).
 * @group Adapter kit
 */
export function routeWhere(options: InteractionUiOptions, prefix = ''): RouteWhere {
  const basePath = prefix + (options.basePath ?? DEFAULT_BASE_PATH);
  return {
    prefix,
    ui: {
      ...(options.loginUrl !== undefined && { loginUrl: options.loginUrl }),
      ...(options.siteName !== undefined && { siteName: options.siteName }),
      ...(options.browserCookiePath !== undefined && { browserCookiePath: options.browserCookiePath }),
      basePath,
    },
    documents: { basePath, ...(prefix && { documentsPath: prefix }) },
  };
}

/**
 * What a route's handler returns: a response to send, a decision of the authorization
 * endpoint (resume, decision form), or the authorization endpoint's decision with the binding
 * cookie to set (`handleAuthorize`).
 * @group Adapter kit
 */
export type RouteResult = OAuthResponse | AuthorizeDecision | AuthorizeHandling;

/**
 * One OAuth route, as every adapter mounts it.
 * @group Adapter kit
 */
export interface OAuthRoute {
  /** The path: `{basePath}/...`, or a well-known document's fixed path (`PATHS.metadata`, `PATHS.jwks`). */
  readonly path: string;
  /**
   * `'form'`: a POST carries a body, read raw up to the limit whatever its content type (a form;
   * JSON for registration), and the core judges it. `'none'`: the body is never read, on any method.
   */
  readonly body: 'form' | 'none';
  /** The core's answer. Every method reaches it: the core answers 405 to the ones it does not take. */
  readonly handle: (server: AuthorizationServer, request: OAuthRequest, where: RouteWhere) => RouteResult | Promise<RouteResult>;
}

/** The mounted `basePath` (`routeWhere` always sets it). */
const deviceBase = (where: RouteWhere): string => where.ui.basePath ?? DEFAULT_BASE_PATH;

/** The routes under `basePath`, and the documents at fixed paths. */
const ROUTES: ReadonlyArray<Omit<OAuthRoute, 'path'> & { readonly suffix: string; readonly fixed?: true }> = [
  { suffix: '/authorize', body: 'none', handle: (server, request, where) => handleAuthorize(server, request, where.ui) },
  { suffix: '/authorize/resume', body: 'none', handle: handleResume },
  { suffix: '/authorize/decision', body: 'form', handle: handleDecisionForm },
  { suffix: '/token', body: 'form', handle: (server, request) => server.token(request) },
  { suffix: '/revoke', body: 'form', handle: (server, request) => server.revoke(request) },
  { suffix: '/introspect', body: 'form', handle: (server, request) => server.introspect(request) },
  { suffix: '/register', body: 'form', handle: (server, request) => server.registerDynamic(request) },
  { suffix: '/device', body: 'form', handle: (server, request, where) => handleDeviceAuthorization(server, request, deviceBase(where)) },
  {
    suffix: '/device/verify',
    body: 'form',
    handle: (server, request, where) =>
      handleDeviceVerification(server, request, {
        basePath: deviceBase(where),
        ...(where.ui.siteName !== undefined && { siteName: where.ui.siteName }),
      }),
  },
  { suffix: PATHS.metadata, fixed: true, body: 'none', handle: (server, request, where) => server.metadata(request, where.documents) },
  { suffix: PATHS.jwks, fixed: true, body: 'none', handle: (server, request) => server.jwks(request) },
];

/** OpenID Connect's routes, mounted only for a server with the `openid` option (otherwise every path answers as before). */
const OPENID_ROUTES: ReadonlyArray<Omit<OAuthRoute, 'path'> & { readonly suffix: string; readonly fixed?: true }> = [
  { suffix: '/userinfo', body: 'form', handle: (server, request) => server.userinfo(request) },
  {
    suffix: '/logout',
    body: 'form',
    handle: (server, request, where) =>
      server.endSession(request, { basePath: deviceBase(where), ...(where.ui.siteName !== undefined && { siteName: where.ui.siteName }) }),
  },
  {
    suffix: PATHS.openidConfiguration,
    fixed: true,
    body: 'none',
    handle: (server, request, where) => server.openidConfiguration(request, where.documents),
  },
];

/**
 * Every OAuth route with `basePath`: `{basePath}/authorize`, `/authorize/resume`,
 * `/authorize/decision`, `/token`, `/revoke`, `/introspect`, `/register` (the core answers 404
 * while dynamic registration is off), `/device` and `/device/verify` (RFC 8628; 404 while
 * `deviceAuthorization` is off), `/.well-known/oauth-authorization-server` and
 * `/.well-known/jwks.json`; with `server`, also the metadata document of each of its
 * `protectedResources` (RFC 9728 §3.1, `/.well-known/oauth-protected-resource{path}`), one route
 * per path (resources on several hosts may share one: the request's host picks). Mount every
 * method of each: the core answers the ones it does not take.
 * @group Adapter kit
 */
export function oauthRoutes(basePath: string = DEFAULT_BASE_PATH, server?: AuthorizationServer): OAuthRoute[] {
  const routes: OAuthRoute[] = (server?.options.openid ? [...ROUTES, ...OPENID_ROUTES] : ROUTES).map(({ suffix, fixed, body, handle }) => ({
    path: fixed ? suffix : basePath + suffix,
    body,
    handle,
  }));
  const resources = server?.options.protectedResources;
  for (const path of new Set(resources?.map((r) => r.metadataPath))) {
    routes.push({
      path,
      body: 'none',
      handle: (server, request) =>
        server.protectedResourceMetadata(resourceAt(server.options.protectedResources, path, request.url), request),
    });
  }
  return routes;
}

/**
 * A request body the adapter could not take: too large, or broken off.
 * @group Adapter kit
 */
export class BodyError extends Error {
  constructor(
    readonly status: 400 | 413,
    message: string,
  ) {
    super(message);
    this.name = 'BodyError';
  }
}

/**
 * A body over `limit` bytes (declared or counted).
 * @group Adapter kit
 */
export const bodyTooLarge = (limit: number): BodyError => new BodyError(413, `The request body is larger than ${limit} bytes.`);

/**
 * A body that could not be read to its end.
 * @group Adapter kit
 */
export const bodyUnreadable = (): BodyError => new BodyError(400, 'The request body could not be read.');

/**
 * The answer to a body the adapter could not take: an OAuth error (RFC 6749 §5.2
 * `invalid_request`), not cacheable, closing the connection (the rest of the body is not read).
 * @group Adapter kit
 */
export function bodyErrorResponse(error: BodyError): OAuthResponse {
  return {
    status: error.status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', connection: 'close' },
    body: JSON.stringify({ error: 'invalid_request', error_description: error.message }),
  };
}

/**
 * The host's hooks every adapter takes, `Hook` being its framework's handler type. Each replaces
 * a built-in step; the browser-binding cookie is set on the response before the hook runs.
 * @group Adapter kit
 */
export interface AdapterHooks<Hook> {
  /** Replace the default sign-in redirect: sign the user in, then send them to `resume`. */
  onLogin?: Hook | undefined;
  /** Replace the built-in consent page: show it, then call `server.approve` / `server.deny`. */
  onConsent?: Hook | undefined;
  /**
   * Replace the built-in confirmation page of a device verification (RFC 8628 §3.3; the
   * interaction's `device.userCode` is the code the user entered): show the application, the
   * scope, the code and the RFC 8628 §5.4 warning, then call `server.approve` / `server.deny`,
   * whose redirect leads to the outcome page.
   */
  onDeviceVerification?: Hook | undefined;
}

/**
 * One framework, as the kit needs it: `Req` and `Res` are what its handlers receive (Express's
 * `req` and `res`, Fastify's `request` and `reply`, Hono's `c` twice), `Out` what they return,
 * `Hook` the type of the host's `onLogin` / `onConsent`. Built once, when the routes are mounted.
 * @group Adapter kit
 */
export interface AdapterIo<Req, Res, Out, Hook> {
  readonly server: AuthorizationServer;
  /**
   * The host's replacements of the sign-in redirect (`onLogin`), of the consent page
   * (`onConsent`) and of the device confirmation page (`onDeviceVerification`), if any: the
   * adapter's options.
   */
  readonly hooks: Readonly<AdapterHooks<Hook>>;
  /** The raw body of a POST to a `'form'` route, at most the limit: throw or reject with a `BodyError`. */
  readBody(req: Req): OAuthRequest['body'] | Promise<OAuthRequest['body']>;
  /** The request as the core reads it, without a body (`serveRoute` adds the body it read). */
  toRequest(req: Req): OAuthRequest;
  /** Where the routes that answer `req` are mounted (`routeWhere`). */
  where(req: Req): RouteWhere;
  /**
   * Write `response`, with `setCookie` (a new browser binding) as one more `Set-Cookie` when
   * given. A `set-cookie` of `response.headers` (the consent page's CSRF cookie) is added to
   * those already set, never in their place.
   */
  send(res: Res, response: OAuthResponse, setCookie: string | undefined): Out;
  /**
   * Hand `interaction` to the host's hook, with `setCookie` (a new browser binding) on the
   * response whatever the hook answers.
   */
  callHook(hook: Hook, req: Req, res: Res, interaction: Interaction, setCookie: string | undefined): Out | Promise<Out>;
  /**
   * Answer an error (of a host hook: the core answers its own) when there is no `next` to hand
   * it to. Without it, `serveRoute` rejects (for a framework that takes a rejected handler to
   * its error handler).
   */
  fail?(error: unknown, res: Res): void;
}

/**
 * What to do with what a route returned: send a response as it is; hand a `login` or `consent`
 * decision to the host's `onLogin` / `onConsent` (`onDeviceVerification` for the confirmation of
 * a device verification) when it has one; answer any other decision
 * with `interactionResponse` (the sign-in redirect, the consent page, the redirect to the
 * client, an error page). The binding cookie of the authorization route goes with whichever.
 * `request` is the request the handler answered.
 * @group Adapter kit
 */
export function answerRoute<Req, Res, Out, Hook>(
  io: AdapterIo<Req, Res, Out, Hook>,
  req: Req,
  res: Res,
  result: RouteResult,
  request: OAuthRequest,
  where: RouteWhere,
): Out | Promise<Out> {
  let setCookie: string | undefined;
  let decision: AuthorizeDecision;
  if ('decision' in result) {
    // The authorization route: its decision was made on the request with the binding cookie.
    ({ decision, request, setCookie } = result);
  } else if ('type' in result) decision = result;
  else return io.send(res, result, undefined);
  if (decision.type === 'login' || decision.type === 'consent') {
    const { hooks } = io;
    const hook = decision.type === 'login' ? hooks.onLogin : decision.interaction.device ? hooks.onDeviceVerification : hooks.onConsent;
    if (hook !== undefined) return io.callHook(hook, req, res, decision.interaction, setCookie);
  }
  const server = io.server;
  const response = interactionResponse(decision, request, where.ui, server.options.pages, secureCookies(server.options.issuer, request));
  return io.send(res, response, setCookie);
}

/**
 * Answer one request on `route`: read the body (POST to a `'form'` route), ask the core, and
 * answer (`answerRoute`). A `BodyError` is answered with `bodyErrorResponse`. Any other error
 * goes to `next` (Express, connect), or else to `io.fail`, or else rejects the returned promise.
 * @group Adapter kit
 */
export async function serveRoute<Req, Res, Out, Hook>(
  io: AdapterIo<Req, Res, Out, Hook>,
  route: OAuthRoute,
  req: Req,
  res: Res,
  next?: (error: unknown) => void,
): Promise<Out | undefined> {
  try {
    const request = io.toRequest(req);
    if (route.body === 'form' && isMethod(request, 'POST')) {
      // Fastify hands over a body it already read: no await (no extra tick) for it.
      const read = io.readBody(req);
      const body = read instanceof Promise ? await read : read;
      if (body !== undefined) request.body = body;
    }
    const where = io.where(req);
    const result = await route.handle(io.server, request, where);
    // Awaited only when a host hook's answer is pending, so that its failure is caught here: a
    // response (the token endpoint's, every hot path's) is sent without a further tick.
    const answered = answerRoute(io, req, res, result, request, where);
    return answered instanceof Promise ? await answered : answered;
  } catch (error) {
    if (error instanceof BodyError) return io.send(res, bodyErrorResponse(error), undefined);
    if (next) next(error);
    else if (io.fail) io.fail(error, res);
    else throw error;
    return undefined;
  }
}
