/**
 * Rate limiting with Express: `express-rate-limit` in front of the token, device authorization
 * and revocation endpoints, one budget per endpoint, keyed by client (`rateLimitKey` of
 * `authgate`). The limiters are mounted on the same paths as the router, before it: Express
 * matches them the same way (case-insensitive, trailing slash optional), so no spelling of a path
 * goes around its limiter. The region below is the README's recipe, word for word, with the
 * package's import names (test/docs/readme.test.ts).
 */
// #region limiter
import express from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { RATE_LIMITED_ENDPOINTS, rateLimitKey, tooManyRequests, type AuthorizationServer } from '../../src/index.js';
import { createOAuthRouter } from '../../adapters/express/index.js';

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
): express.Express {
  const app = express();
  // Behind a reverse proxy, `req.ip` is the proxy's unless Express trusts it:
  // app.set('trust proxy', 'loopback');
  const common = {
    windowMs,
    standardHeaders: 'draft-8', // RateLimit headers, and Retry-After on a 429
    legacyHeaders: false,
    handler: (_req: express.Request, res: express.Response) => {
      res
        .status(429)
        .set('cache-control', 'no-store')
        .json(tooManyRequests(Number(res.get('retry-after'))));
    },
  } as const;
  for (const endpoint of RATE_LIMITED_ENDPOINTS) {
    // A ceiling per address: a claimed client id is anyone's to invent, so it must not open a fresh budget by itself.
    const ceiling = (req: express.Request) => `ceiling ${ipKeyGenerator(req.ip ?? '')}`;
    app.use(basePath + endpoint, rateLimit({ ...common, limit: addressLimit, keyGenerator: ceiling }));
    // Then a budget per client id at that address, or per address for a request that names no client.
    const perClient = (req: express.Request) => rateLimitKey(req.get('authorization'), ipKeyGenerator(req.ip ?? ''));
    app.use(basePath + endpoint, rateLimit({ ...common, limit, keyGenerator: perClient }));
  }
  app.use(createOAuthRouter(server, { basePath }));
  return app;
}
// #endregion limiter
