/**
 * authgate for Fastify 5: register `oauthPlugin` for the OAuth endpoints and protect a resource
 * API with `requireToken(server)`. Translation only: the protocol is in the core. Fastify is only
 * imported for its types, so this entry loads no framework code of its own.
 * @packageDocumentation
 * @module authgate/fastify
 */
import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import {
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
import { coreHeaders, requestHost } from '../node-headers.js';
import { FORM, checkToken, mount, refusedBody, resourceOf } from '../shared.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified access token, set by `requireToken`. */
    oauth?: VerifiedToken;
  }
}

/** A host hook of `oauthPlugin`. */
type Hook = (request: FastifyRequest, reply: FastifyReply, interaction: Interaction) => unknown;

/**
 * Options of `oauthPlugin`.
 * @group Authorization
 */
export interface OAuthPluginOptions extends AdapterOptions, AdapterHooks<Hook> {
  /** The authorization server the endpoints answer for. */
  server: AuthorizationServer;
}

const toOAuthRequest = (request: FastifyRequest): OAuthRequest => ({
  method: request.method,
  url: `${request.protocol}://${requestHost(request.host)}${request.url}`,
  // request.headers is a fresh merged copy on each read once a hook has set headers: read it once.
  headers: coreHeaders(request.headers, request.raw),
});

// An empty string would make Fastify add `content-type: text/plain`; Express sends none. The
// binding cookie goes first: Fastify appends the page's own Set-Cookie as a second one.
function send(reply: FastifyReply, response: OAuthResponse, setCookie?: string): FastifyReply {
  if (setCookie) reply.header('set-cookie', setCookie);
  reply.code(response.status).headers(response.headers);
  return reply.send(response.body === '' ? undefined : response.body);
}

/** The headers as they were before the Content-Type was hidden from Fastify (see the onRequest hook). */
const hidden = new WeakMap<FastifyRequest, FastifyRequest['headers']>();

/**
 * A Fastify plugin with every route of the kit's route table, {@link authgate!oauthRoutes}
 * (the OAuth endpoints under `basePath`, the interaction and device routes, the well-known
 * documents), each for every method: the core answers those it does not take (405 or an error
 * page), and the metadata names the routes where they are. It reads its own raw bodies in its own encapsulated context: the host registers no body parser for it, and its
 * parsers do not leak to the host's routes. A `prefix` is honoured (for every route, the
 * well-known ones included, as when an Express router is mounted under a path). Each
 * interaction is bound to the browser that started it (the `authgate_browser` cookie, scoped to
 * `{prefix}{basePath}/authorize`, set on the reply before `onLogin` / `onConsent` run): resume
 * and decision refuse any other browser.
 *
 * @example
 * await app.register(oauthPlugin, { server, loginUrl: '/login' });
 * app.get('/v2/account', { preHandler: requireToken(server) }, (request) => request.oauth);
 * @throws ConfigError for a missing server or a wrong or unknown option (`checkAdapterOptions`).
 * @group Authorization
 */
export const oauthPlugin: FastifyPluginAsync<OAuthPluginOptions> = async (fastify, options) => {
  // The pages link to where the routes really are, prefix included.
  const { routes, where, limit } = mount('oauthPlugin', options.server, options, fastify.prefix);
  const io: AdapterIo<FastifyRequest, FastifyReply, FastifyReply, Hook> = {
    server: options.server,
    hooks: options,
    // Fastify runs no parser for an empty body; Express and Hono hand the core '' then, and so
    // does this (register tells '' from no body).
    readBody: (request) => (typeof request.body === 'string' ? request.body : ''),
    toRequest: toOAuthRequest,
    where: () => where,
    send,
    async callHook(hook, request, reply, interaction, setCookie) {
      if (setCookie) reply.header('set-cookie', setCookie);
      await hook(request, reply, interaction);
      return reply;
    },
  };

  // The core judges content types (anything but a form is invalid_request); Fastify would answer
  // a malformed or empty Content-Type with its own 415 before any handler. So the header is hidden
  // from Fastify's body parsing and handed back before the handler runs.
  // Callback-style hooks: no promise per request for what is two property writes. A form's
  // own type, as clients send it, is one Fastify reads without complaint: that one stays, which
  // spares every token request a copy of the headers and two lookups (see BENCHMARKS.md).
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
    if (!error.code?.startsWith('FST_ERR_CTP_')) throw error; // not ours: the host's error handler
    return send(reply, refusedBody(error.code === 'FST_ERR_CTP_BODY_TOO_LARGE', limit));
  });

  // POST to the form endpoints: the raw body as a string, up to the limit, whatever its type.
  await fastify.register(async (forms: FastifyInstance) => {
    forms.removeAllContentTypeParsers();
    forms.addContentTypeParser('*', { parseAs: 'string', bodyLimit: limit }, (_request, body, done) => done(null, body));
    for (const route of routes.filter((r) => r.body === 'form'))
      forms.post(route.path, (request, reply) => serveRoute(io, route, request, reply));
  });
  // Everything else reaches the core with its body unread, as in Express.
  await fastify.register(async (rest: FastifyInstance) => {
    rest.removeAllContentTypeParsers();
    rest.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    for (const route of routes) {
      const method = route.body === 'form' ? rest.supportedMethods.filter((m) => m !== 'POST') : rest.supportedMethods;
      rest.route({ method, url: route.path, handler: (request, reply) => serveRoute(io, route, request, reply) });
    }
  });
};

/**
 * Options of `requireToken`.
 * @group Resource
 */
export interface RequireTokenOptions {
  /**
   * The identifier of one of the server's `protectedResources`: its scope rule decides (given
   * `request.body`, which Fastify has parsed by the time a preHandler runs), and every challenge
   * names its metadata (docs/reference.md#protected-resources-rfc-9728). A DPoP proof's `htu`
   * must then be on the identifier's origin, whatever the `Host` header says.
   */
  resource?: string;
}

/**
 * A preHandler hook for the resource API: answers 401/403 with an RFC 6750 `WWW-Authenticate`
 * challenge, or puts the verified token on `request.oauth` and continues. With `resource`, the
 * request is checked as one to that protected resource (RFC 9728).
 *
 * @example
 * app.register(async (api) => {
 *   api.addHook('preHandler', requireToken(server));
 *   api.get('/v2/account', async (request) => request.oauth!.account);
 * });
 * @throws ConfigError when `resource` is not one of the server's `protectedResources`.
 * @group Resource
 */
export function requireToken(server: AuthorizationServer, options: RequireTokenOptions = {}): preHandlerAsyncHookHandler {
  const resource = resourceOf(server, options);
  return async (request, reply) => {
    const result = await checkToken(server, toOAuthRequest(request), resource, request.body);
    if (!result.ok) return send(reply, result.response);
    request.oauth = result.token;
  };
}
