/**
 * authgate for Fastify 5: register `oauthPlugin` for the OAuth endpoints and protect a resource
 * API with `requireToken(server)`. Translation only: the protocol is in the core. Fastify is only
 * imported for its types, so this entry loads no framework code of its own.
 * @packageDocumentation
 */
import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import {
  handleAuthorize,
  handleDecisionForm,
  handleResume,
  interactionResponse,
  PATHS,
  type AuthorizationServer,
  type AuthorizeDecision,
  type AuthorizeHandling,
  type Interaction,
  type InteractionUiOptions,
  type MetadataOptions,
  type OAuthRequest,
  type OAuthResponse,
  type VerifiedToken,
} from '../../src/index.js';
import { coreHeaders } from '../node-headers.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified access token, set by `requireToken`. */
    oauth?: VerifiedToken;
  }
}

/** Options of `oauthPlugin`. */
export interface OAuthPluginOptions extends InteractionUiOptions {
  /** The authorization server the endpoints answer for. */
  server: AuthorizationServer;
  /** Largest accepted request body in bytes; bigger bodies get 413. Default 64 KiB. */
  bodyLimit?: number;
  /** Replace the default sign-in redirect: sign the user in, then send them to `resume`. */
  onLogin?: (request: FastifyRequest, reply: FastifyReply, interaction: Interaction) => unknown;
  /** Replace the built-in consent page: show it, then call `server.approve` / `server.deny`. */
  onConsent?: (request: FastifyRequest, reply: FastifyReply, interaction: Interaction) => unknown;
}

const toOAuthRequest = (request: FastifyRequest, body?: string): OAuthRequest => ({
  method: request.method,
  url: `${request.protocol}://${request.host}${request.url}`,
  // request.headers is a fresh merged copy on each read once a hook has set headers: read it once.
  headers: coreHeaders(request.headers, request.raw),
  ...(body !== undefined && { body }),
});

// An empty string would make Fastify add `content-type: text/plain`; Express sends none.
const send = (reply: FastifyReply, response: OAuthResponse) =>
  reply.code(response.status).headers(response.headers).send(response.body === '' ? undefined : response.body);

const sendBodyError = (reply: FastifyReply, status: number, message: string) =>
  reply.code(status).headers({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', connection: 'close' })
    .send(JSON.stringify({ error: 'invalid_request', error_description: message }));

/** Paths under `basePath`, the core method behind each, and whether a POST carries a body (a form; JSON for register). */
const ROUTES: ReadonlyArray<[
  path: string,
  form: boolean,
  run: (server: AuthorizationServer, request: OAuthRequest, ui: InteractionUiOptions) => Promise<AuthorizeDecision | AuthorizeHandling | OAuthResponse>,
]> = [
  ['/authorize', false, handleAuthorize],
  ['/authorize/resume', false, handleResume],
  ['/authorize/decision', true, handleDecisionForm],
  ['/token', true, (server, request) => server.token(request)],
  ['/revoke', true, (server, request) => server.revoke(request)],
  ['/introspect', true, (server, request) => server.introspect(request)],
  ['/register', true, (server, request) => server.registerDynamic(request)],
];

/** Documents at fixed paths (not under `basePath`); the core answers 405 to methods other than GET and HEAD. */
const DOCUMENTS: ReadonlyArray<[path: string, run: (server: AuthorizationServer, request: OAuthRequest, where: MetadataOptions) => Promise<OAuthResponse>]> = [
  [PATHS.metadata, async (server, request, where) => server.metadata(request, where)],
  [PATHS.jwks, (server, request) => server.jwks(request)],
];

const FORM = 'application/x-www-form-urlencoded';

/** The headers as they were before the Content-Type was hidden from Fastify (see the onRequest hook). */
const hidden = new WeakMap<FastifyRequest, FastifyRequest['headers']>();

/**
 * A Fastify plugin with `GET {basePath}/authorize`, `POST {basePath}/token`,
 * `POST {basePath}/revoke`, `POST {basePath}/introspect`, `POST {basePath}/register` (when
 * enabled), and the interaction routes `GET {basePath}/authorize/resume` and
 * `POST {basePath}/authorize/decision`; every other method reaches the core too (405 or an error
 * page). `GET /.well-known/oauth-authorization-server` and `GET /.well-known/jwks.json` answer
 * GET and HEAD (405 otherwise, from the core), and the metadata names the routes where they are. It reads its own
 * raw bodies in its own encapsulated context: the host registers no body parser for it, and its
 * parsers do not leak to the host's routes. A `prefix` is honoured (for every route, the
 * well-known ones included, as when an Express router is mounted under a path). Each
 * interaction is bound to the browser that started it (the `authgate_browser` cookie, scoped to
 * `{prefix}{basePath}/authorize`, set on the reply before `onLogin` / `onConsent` run): resume
 * and decision refuse any other browser.
 *
 * @example
 * await app.register(oauthPlugin, { server, loginUrl: '/login' });
 * app.get('/v2/account', { preHandler: requireToken(server) }, (request) => request.oauth);
 */
export const oauthPlugin: FastifyPluginAsync<OAuthPluginOptions> = async (fastify, options) => {
  const { server } = options;
  const basePath = options.basePath ?? '/v1/oauth';
  const limit = options.bodyLimit ?? 64 * 1024;
  // The pages link to where the routes really are, prefix included.
  const ui: InteractionUiOptions = {
    ...(options.loginUrl !== undefined && { loginUrl: options.loginUrl }),
    ...(options.siteName !== undefined && { siteName: options.siteName }),
    ...(options.browserCookiePath !== undefined && { browserCookiePath: options.browserCookiePath }),
    basePath: fastify.prefix + basePath,
  };

  // The core judges content types (anything but a form is invalid_request); Fastify would answer
  // a malformed or empty Content-Type with its own 415 before any handler. So the header is hidden
  // from Fastify's body parsing and handed back before the handler runs.
  // Callback-style hooks: no promise per request for what is two property writes. A form's
  // own type, as clients send it, is one Fastify reads without complaint: that one stays (a copy
  // of the headers and two lookups were about 2 µs of every token request).
  fastify.addHook('onRequest', (request, _reply, done) => {
    const headers = request.headers;
    const type = headers['content-type'];
    // Fastify itself refuses a QUERY without a Content-Type: leave that one as it came.
    if (type !== undefined && type !== FORM && request.method !== 'QUERY') {
      hidden.set(request, headers);
      request.headers = { ...headers, 'content-type': undefined };
    }
    done();
  });
  fastify.addHook('preValidation', (request, _reply, done) => {
    const headers = hidden.get(request);
    if (headers) request.headers = headers;
    done();
  });

  fastify.setErrorHandler((error: FastifyError, _request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendBodyError(reply, 413, `The request body is larger than ${limit} bytes.`);
    if (error.code?.startsWith('FST_ERR_CTP_')) return sendBodyError(reply, 400, 'The request body could not be read.');
    throw error; // not ours: the host's error handler
  });

  // `withBody`: a POST to a route that reads its body. Fastify runs no parser for an empty body;
  // Express and Hono hand the core '' then, and so does this (register tells '' from no body).
  const handler = (run: (request: OAuthRequest) => Promise<AuthorizeDecision | AuthorizeHandling | OAuthResponse>, withBody = false) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      const body = typeof request.body === 'string' ? request.body : withBody ? '' : undefined;
      let oauthRequest = toOAuthRequest(request, body);
      let result = await run(oauthRequest);
      if ('decision' in result) {
        // The authorize route: a new browser binding goes with whatever answers (Fastify appends
        // a second Set-Cookie, the consent page's, rather than replacing it).
        if (result.setCookie) reply.header('set-cookie', result.setCookie);
        oauthRequest = result.request;
        result = result.decision;
      }
      if (!('type' in result)) return send(reply, result);
      if (result.type === 'login' && options.onLogin) await options.onLogin(request, reply, result.interaction);
      else if (result.type === 'consent' && options.onConsent) await options.onConsent(request, reply, result.interaction);
      else return send(reply, interactionResponse(result, oauthRequest, ui));
      return reply;
    };

  // POST to the form endpoints: the raw body as a string, up to the limit, whatever its type.
  await fastify.register(async (forms: FastifyInstance) => {
    forms.removeAllContentTypeParsers();
    forms.addContentTypeParser('*', { parseAs: 'string', bodyLimit: limit }, (_request, body, done) => done(null, body));
    for (const [path, form, run] of ROUTES) if (form) forms.post(basePath + path, handler((request) => run(server, request, ui), true));
  });
  // Everything else reaches the core with its body unread, as in Express.
  await fastify.register(async (rest: FastifyInstance) => {
    rest.removeAllContentTypeParsers();
    rest.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    for (const [path, form, run] of ROUTES) {
      const method = form ? rest.supportedMethods.filter((m) => m !== 'POST') : rest.supportedMethods;
      rest.route({ method, url: basePath + path, handler: handler((request) => run(server, request, ui)) });
    }
    const where: MetadataOptions = { basePath: fastify.prefix + basePath, ...(fastify.prefix && { documentsPath: fastify.prefix }) };
    for (const [path, run] of DOCUMENTS) {
      rest.route({ method: rest.supportedMethods, url: path, handler: handler((request) => run(server, request, where)) });
    }
  });
};

/**
 * A preHandler hook for the resource API: answers 401/403 with an RFC 6750 `WWW-Authenticate`
 * challenge, or puts the verified token on `request.oauth` and continues.
 *
 * @example
 * app.register(async (api) => {
 *   api.addHook('preHandler', requireToken(server));
 *   api.get('/v2/account', async (request) => request.oauth!.account);
 * });
 */
export function requireToken(server: AuthorizationServer): preHandlerAsyncHookHandler {
  return async (request, reply) => {
    const result = await server.authenticate(toOAuthRequest(request));
    if (!result.ok) return send(reply, result.response);
    request.oauth = result.token;
  };
}
