/**
 * Rate limiting with Express: `express-rate-limit` in front of the token, device authorization
 * and revocation endpoints, one budget per endpoint, keyed by client (shared.ts). The limiters
 * are mounted on the same paths as the router, before it: Express matches them the same way
 * (case-insensitive, trailing slash optional), so no spelling of a path goes around its limiter.
 */
import express, { type Express } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { createOAuthRouter } from '../../adapters/express/index.js';
import type { AuthorizationServer } from '../../src/index.js';
import { LIMITED_ENDPOINTS, rateLimitKey, tooManyRequests } from './shared.js';

export interface RateLimitOptions {
  /** Requests per window, per endpoint and client. Default 30. */
  limit?: number;
  /** Requests per window, per endpoint and address, whatever client ids they claim. Default 10 × `limit`. */
  addressLimit?: number;
  /** Default one minute. */
  windowMs?: number;
  /** Where the OAuth routes are. Default `/v1/oauth`. */
  basePath?: string;
}

export function rateLimitedApp(
  server: AuthorizationServer,
  { limit = 30, windowMs = 60_000, basePath = '/v1/oauth', addressLimit = 10 * limit }: RateLimitOptions = {},
): Express {
  // #region limiter
  const app = express();
  // Behind a reverse proxy, `req.ip` is the proxy's unless Express trusts it:
  // app.set('trust proxy', 'loopback');
  const handler = (_req: express.Request, res: express.Response) => {
    res
      .status(429)
      .set('cache-control', 'no-store')
      .json(tooManyRequests(Number(res.get('retry-after'))));
  };
  for (const endpoint of LIMITED_ENDPOINTS) {
    // A ceiling per address: a claimed client id is anyone's to invent, so it must not open a fresh budget by itself.
    app.use(
      basePath + endpoint,
      rateLimit({
        windowMs,
        limit: addressLimit,
        standardHeaders: 'draft-8',
        legacyHeaders: false,
        keyGenerator: (req) => `ceiling ${ipKeyGenerator(req.ip ?? '')}`,
        handler,
      }),
    );
    app.use(
      basePath + endpoint,
      rateLimit({
        windowMs,
        limit,
        standardHeaders: 'draft-8', // RateLimit headers, and Retry-After on a 429
        legacyHeaders: false,
        keyGenerator: (req) => rateLimitKey(req.get('authorization'), ipKeyGenerator(req.ip ?? '')),
        handler: (_req, res) => {
          res
            .status(429)
            .set('cache-control', 'no-store')
            .json(tooManyRequests(Number(res.get('retry-after'))));
        },
      }),
    );
  }
  app.use(createOAuthRouter(server, { basePath }));
  // #endregion limiter
  return app;
}
