import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { requireToken as expressRequireToken } from '../../adapters/express/index.js';
import { requireToken as nodeRequireToken } from '../../adapters/node/index.js';
import { json, setup } from '../helpers.js';
import { exchangeRequest, proof, proofKey } from './fixtures.js';

/**
 * The `htu` of a proof at a resource whose `requireToken` is mounted under a path (RFC 9449 §4.3
 * point 9, §7.1): the URL the client sent the request to, mount path included. Connect-style
 * hosts (connect, polka, Express, the `router` package) strip the mount path from `req.url` and
 * keep the URL as received in `req.originalUrl`; the node:http `requireToken` is documented to
 * fit them. Compared with the stripped path, a real client's proof would be refused, and a proof
 * made for another URL of the host (the path without the mount) accepted.
 */
const ISSUER = 'https://as.example';
const TOKEN_URL = `${ISSUER}/v1/oauth/token`;

let servers: Server[] = [];
afterEach(async () => {
  for (const server of servers) await new Promise((done) => server.close(done));
  servers = [];
});

const MOUNTS = {
  // authgate/node's requireToken in a connect-style host (Express is one: `app.use(path, fn)`).
  'node:http requireToken': nodeRequireToken,
  'Express requireToken': expressRequireToken,
} as const;

describe.each(Object.keys(MOUNTS) as (keyof typeof MOUNTS)[])('%s mounted under /api', (name) => {
  it('the proof names the URL as sent, /api included; a proof of the path without the mount is refused', async () => {
    const t = await setup({ issuer: ISSUER, dpop: {} });
    const key = await proofKey();
    const res = await t.server.token(exchangeRequest(t, await t.getCode(), await proof(key, 'POST', TOKEN_URL, t.clock.now())));
    const token = json(res).access_token as string;

    const app = express();
    app.use('/api', MOUNTS[name](t.server) as express.RequestHandler, (_req, res) => void res.json({ ok: true }));
    const http = createServer(app);
    servers.push(http);
    await new Promise<void>((listening) => http.listen(0, '127.0.0.1', listening));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

    const call = async (htu: string) => {
      const response = await fetch(`${base}/api/things?page=2`, {
        headers: { authorization: `DPoP ${token}`, dpop: await proof(key, 'GET', htu, t.clock.now(), { accessToken: token }) },
      });
      return { status: response.status, challenge: response.headers.get('www-authenticate') };
    };
    expect((await call(`${base}/api/things`)).status).toBe(200);
    const elsewhere = await call(`${base}/things`);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.challenge).toContain('error="invalid_dpop_proof"');
  });
});
