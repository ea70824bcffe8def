/**
 * Rate limiting with Fastify: `@fastify/rate-limit` in front of the token, device authorization
 * and revocation endpoints, one budget per endpoint, keyed by client (`rateLimitKey` of `authgate`). The OAuth
 * plugin declares its own routes, so the limit is not a route option: an `onRequest` hook on the
 * root instance asks the limiter for the routes it matched (by their declared path, so no
 * spelling of a URL goes around it).
 */
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyInstance } from 'fastify';
import { oauthPlugin } from '../../adapters/fastify/index.js';
import { RATE_LIMITED_ENDPOINTS, rateLimitKey, tooManyRequests, type AuthorizationServer } from '../../src/index.js';
import type { RateLimitOptions } from './express.js';

export async function rateLimitedApp(
  server: AuthorizationServer,
  { limit = 30, windowMs = 60_000, basePath = '/v1/oauth', addressLimit = 10 * limit }: RateLimitOptions = {},
): Promise<FastifyInstance> {
  // Behind a reverse proxy, `request.ip` is the proxy's unless Fastify trusts it: Fastify({ trustProxy: '127.0.0.1' }).
  const app = Fastify();
  await app.register(rateLimit, { global: false });
  const limited = new Set(RATE_LIMITED_ENDPOINTS.map((endpoint) => basePath + endpoint));
  const check = app.createRateLimit({
    max: limit,
    timeWindow: windowMs,
    // One budget per endpoint: the route is part of the key.
    keyGenerator: (request) => `${request.routeOptions.url} ${rateLimitKey(request.headers.authorization, request.ip)}`,
  });
  // A ceiling per address: a claimed client id is anyone's to invent, so it must not open a fresh budget by itself.
  const ceiling = app.createRateLimit({
    max: addressLimit,
    timeWindow: windowMs,
    keyGenerator: (request) => `${request.routeOptions.url} ceiling ${request.ip}`,
  });
  app.addHook('onRequest', async (request, reply) => {
    if (!limited.has(request.routeOptions.url ?? '')) return;
    let result = await ceiling(request);
    if (result.isAllowed || !result.isExceeded) result = await check(request);
    if (result.isAllowed || !result.isExceeded) return;
    return reply
      .code(429)
      .headers({ 'retry-after': String(result.ttlInSeconds), 'cache-control': 'no-store' })
      .send(tooManyRequests(result.ttlInSeconds));
  });
  await app.register(oauthPlugin, { server, basePath });
  return app;
}
