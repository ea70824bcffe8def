/**
 * node:http-only host setups around `createOAuthHandler` (the shared cases are in the other
 * files, through the `node` host of app.ts, which always passes `next`): the handler alone as
 * the server's listener (404 for other paths, 500 for a failing hook), a failing hook handed to
 * `next(error)`, a host cookie set before the handler kept next to the adapter's, and a body a
 * host middleware already read.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createOAuthHandler, type OAuthHandlerOptions } from '../../adapters/node/index.js';
import { AuthorizationServer, MemoryStorage } from '../../src/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA, CALLBACK, FORM, setCookieValue } from './app.js';

let listener: Server | undefined;
afterEach(async () => {
  listener?.closeAllConnections();
  await new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve()));
  listener = undefined;
});

/** A core with one client and a signed-in Ada, and a server running `handler(oauth)`. */
async function start(options: OAuthHandlerOptions, handler: (oauth: ReturnType<typeof createOAuthHandler>) => RequestListener) {
  const clock = new FakeClock();
  const sessions = new FakeSessions(clock);
  const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions, clock });
  const client = await server.registerClient({ name: 'Example App', redirectUri: CALLBACK });
  listener = createServer(handler(createOAuthHandler(server, { loginUrl: '/login', ...options })));
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  const authorize = `${base}/v1/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: CALLBACK, response_type: 'code', state: 's' })}`;
  return { base, authorize, sid: sessions.signIn(ADA) };
}

const failing = () => {
  throw new Error('host hook failed');
};

describe('node:http: createOAuthHandler as the whole listener (no next)', () => {
  it('answers the OAuth paths and 404 for any other', async () => {
    const { base } = await start({}, (oauth) => (req, res) => oauth(req, res));
    const revoked = await fetch(`${base}/v1/oauth/revoke`, { method: 'POST', headers: { 'content-type': FORM }, body: 'token=x' });
    expect([revoked.status, await revoked.text()]).toEqual([200, '{}']);
    const other = await fetch(`${base}/elsewhere`);
    expect([other.status, await other.text()]).toEqual([404, 'Not Found']);
    // Paths match exactly, as in Fastify and Hono.
    expect((await fetch(`${base}/v1/oauth/revoke/`, { method: 'POST' })).status).toBe(404);
  });

  it('a hook that throws is answered 500 (and logged), without its message', async () => {
    const { authorize, sid } = await start({ onConsent: failing }, (oauth) => (req, res) => oauth(req, res));
    const errors: unknown[] = [];
    const original = console.error;
    console.error = (error: unknown) => errors.push(error);
    try {
      const reply = await fetch(authorize, { headers: { cookie: sid } });
      expect(reply.status).toBe(500);
      expect(await reply.text()).not.toContain('host hook failed');
    } finally {
      console.error = original;
    }
    expect(errors).toEqual([new Error('host hook failed')]);
  });
});

describe('node:http: with next', () => {
  it('a hook that throws goes to next(error)', async () => {
    const passed: unknown[] = [];
    const { authorize, sid } = await start(
      { onConsent: failing },
      (oauth) => (req, res) =>
        oauth(req, res, (error) => {
          passed.push(error);
          res.statusCode = 418;
          res.end();
        }),
    );
    expect((await fetch(authorize, { headers: { cookie: sid } })).status).toBe(418);
    expect(passed).toEqual([new Error('host hook failed')]);
  });

  it('a cookie the host set before stays, next to the binding and CSRF cookies of the consent page', async () => {
    const { authorize, sid } = await start({}, (oauth) => (req, res) => {
      res.appendHeader('set-cookie', 'host=1; Path=/');
      oauth(req, res);
    });
    const reply = await fetch(authorize, { headers: { cookie: sid } });
    expect(reply.status).toBe(200);
    expect(setCookieValue(reply.headers, 'host')?.value).toBe('1');
    expect(setCookieValue(reply.headers, 'authgate_browser')).toBeDefined();
    expect(setCookieValue(reply.headers, 'authgate_csrf')).toBeDefined();
  });

  it('onLogin gets the response with the binding cookie already on it', async () => {
    const onLogin = (_req: IncomingMessage, res: ServerResponse) =>
      res.writeHead(200, { 'content-type': 'text/plain' }).end('custom login');
    const { authorize } = await start({ onLogin }, (oauth) => (req, res) => oauth(req, res));
    const reply = await fetch(authorize);
    expect([reply.status, await reply.text()]).toEqual([200, 'custom login']);
    expect(setCookieValue(reply.headers, 'authgate_browser')).toBeDefined();
  });

  it('a body a host middleware already read (connect-style req.body) is used, and still limited', async () => {
    const { base } = await start({ bodyLimit: 100 }, (oauth) => (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        Object.assign(req, { body: Buffer.concat(chunks).toString('utf8'), _body: true });
        oauth(req, res);
      });
    });
    const revoked = await fetch(`${base}/v1/oauth/revoke`, { method: 'POST', headers: { 'content-type': FORM }, body: 'token=x' });
    expect([revoked.status, await revoked.text()]).toEqual([200, '{}']);
    const big = await fetch(`${base}/v1/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': FORM },
      body: `token=${'x'.repeat(200)}`,
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ error: 'invalid_request' });
  });
});
