/**
 * Rate limiting with Hono: `hono-rate-limiter` in front of the token, device authorization and
 * revocation endpoints, one budget per endpoint, keyed by client (`rateLimitKey` of `authgate`). On Node the
 * address comes from `@hono/node-server`'s connection info; other runtimes have their own
 * `getConnInfo` (`hono/bun`, `hono/deno`, `hono/cloudflare-workers`).
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono, type Context } from 'hono';
import { rateLimiter } from 'hono-rate-limiter';
import { createOAuthApp } from '../../adapters/hono/index.js';
import { RATE_LIMITED_ENDPOINTS, rateLimitKey, tooManyRequests, type AuthorizationServer } from '../../src/index.js';
import type { RateLimitOptions } from './express.js';

export function rateLimitedApp(
  server: AuthorizationServer,
  { limit = 30, windowMs = 60_000, basePath = '/v1/oauth', addressLimit = 10 * limit }: RateLimitOptions = {},
): Hono {
  const app = new Hono();
  const handler = (c: Context) => c.json(tooManyRequests(Number(c.res.headers.get('retry-after'))), 429, { 'cache-control': 'no-store' });
  for (const endpoint of RATE_LIMITED_ENDPOINTS) {
    // A ceiling per address: a claimed client id is anyone's to invent, so it must not open a fresh budget by itself.
    app.use(
      basePath + endpoint,
      rateLimiter({
        windowMs,
        limit: addressLimit,
        standardHeaders: 'draft-7',
        keyGenerator: (c) => `ceiling ${getConnInfo(c).remote.address ?? ''}`,
        handler,
      }),
    );
    app.use(
      basePath + endpoint,
      rateLimiter({
        windowMs,
        limit,
        standardHeaders: 'draft-7', // RateLimit headers, and Retry-After on a 429
        keyGenerator: (c) => rateLimitKey(c.req.header('authorization'), getConnInfo(c).remote.address ?? ''),
        handler,
      }),
    );
  }
  app.route('/', createOAuthApp(server, { basePath }));
  return app;
}
