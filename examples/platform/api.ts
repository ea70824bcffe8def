/**
 * The platform's resource API under /v2 (RFC 6750; docs/reference.md#resource-check). authgate's
 * `requireToken` checks the bearer token and its scope: `read` allows GET and HEAD, `read write`
 * also POST, PUT, PATCH and DELETE. It answers 401 / 403 with a `WWW-Authenticate` challenge
 * itself; the routes only see good tokens, on `res.locals.oauth`.
 */
import { randomInt } from 'node:crypto';
import express, { type ErrorRequestHandler, type Router } from 'express';
import type { AuthorizationServer } from '../../src/index.js';
import { requireToken } from '../../adapters/express/index.js';

interface Droplet {
  id: number;
  name: string;
  region: string;
  status: 'new';
  created_at: string;
}

export function resourceApi(server: AuthorizationServer): Router {
  const droplets = new Map<string, Droplet[]>(); // account UUID → droplets
  const api = express.Router();

  // Browser apps (implicit flow) call the API from their own origin. The API takes bearer tokens
  // only, never cookies, so allowing every origin gives a malicious page nothing it did not have.
  api.use((req, res, next) => {
    res.set({ 'access-control-allow-origin': '*', 'access-control-expose-headers': 'WWW-Authenticate', 'cache-control': 'no-store' });
    if (req.method !== 'OPTIONS') return next();
    res
      .set({ 'access-control-allow-headers': 'Authorization, Content-Type', 'access-control-allow-methods': 'GET, POST' })
      .status(204)
      .end();
  });
  api.use(requireToken(server));

  api.get('/account', (_req, res) => {
    const { account, scope } = res.locals.oauth!;
    res.json({ account: { uuid: account.uuid, email: account.email, name: account.name, status: 'active' }, scope: scope.join(' ') });
  });

  api.get('/droplets', (_req, res) => {
    res.json({ droplets: droplets.get(res.locals.oauth!.account.uuid) ?? [] });
  });

  // A write: needs a token with scope `read write`.
  api.post('/droplets', express.json({ limit: '4kb' }), (req, res) => {
    const name: unknown = req.body?.name;
    if (typeof name !== 'string' || !/^[a-z0-9][a-z0-9.-]{0,62}$/.test(name)) {
      return res
        .status(422)
        .json({ id: 'unprocessable_entity', message: 'name must be 1-63 lower-case letters, digits, dots or hyphens.' });
    }
    const mine = droplets.get(res.locals.oauth!.account.uuid) ?? [];
    const droplet: Droplet = { id: randomInt(1e8, 1e9), name, region: 'ams3', status: 'new', created_at: new Date().toISOString() };
    droplets.set(res.locals.oauth!.account.uuid, [droplet, ...mine].slice(0, 20));
    res.status(201).json({ droplet });
  });

  api.use((_req, res) => {
    res.status(404).json({ id: 'not_found', message: 'The resource you requested could not be found.' });
  });
  const onError: ErrorRequestHandler = (error, _req, res, _next) => {
    const status = typeof error?.status === 'number' && error.status < 500 ? error.status : 500;
    res.status(status).json({
      id: status === 500 ? 'server_error' : 'bad_request',
      message: status === 500 ? 'Something went wrong.' : 'The request is malformed.',
    });
  };
  api.use(onError);
  return api;
}
