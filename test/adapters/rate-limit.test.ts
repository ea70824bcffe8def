/**
 * The README's rate-limit recipes (examples/rate-limit/): the token, device authorization and
 * revocation endpoints behind each framework's own limiter, one budget per endpoint and client
 * (the client id of HTTP Basic with the address, else the address), answering 429 with an OAuth
 * error body and `Retry-After`; every other route untouched.
 */
import { once } from 'node:events';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rateLimitedApp as expressApp } from '../../examples/rate-limit/express.js';
import { rateLimitedApp as fastifyApp } from '../../examples/rate-limit/fastify.js';
import { rateLimitedApp as honoApp } from '../../examples/rate-limit/hono.js';
import { alertingAudit } from '../../examples/rate-limit/alerts.js';
import {
  AuthorizationServer,
  MemoryStorage,
  basicClientId,
  oauthRoutes,
  rateLimitKey,
  tooManyRequests,
  type RegisteredClient,
} from '../../src/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { CALLBACK } from '../fixtures.js';
import { useApp } from './app.js';
import { selectTargets } from './targets/select.js';

const LIMIT = 3;
const FORM = 'application/x-www-form-urlencoded';

/** Each recipe's app on a free loopback port (all addresses of 127/8 reach it). */
const start: Record<'express' | 'fastify' | 'hono', (server: AuthorizationServer) => Promise<Server>> = {
  async express(server) {
    const listener = expressApp(server, { limit: LIMIT }).listen(0, '0.0.0.0');
    await once(listener, 'listening');
    return listener;
  },
  async fastify(server) {
    const app = await fastifyApp(server, { limit: LIMIT });
    await app.listen({ port: 0, host: '0.0.0.0' });
    return app.server;
  },
  async hono(server) {
    const listener = serve({ fetch: honoApp(server, { limit: LIMIT }).fetch, port: 0, hostname: '0.0.0.0' }) as Server;
    await once(listener, 'listening');
    return listener;
  },
};

const basic = (client: { clientId: string; clientSecret?: string }) =>
  `Basic ${btoa(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret ?? '')}`)}`;

/** Whether this build serves the device authorization endpoint (RFC 8628 §3.1): Fastify limits declared routes only. */
const DEVICE_ENDPOINT = oauthRoutes().some((route) => route.path === '/v1/oauth/device');

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** POST a form with node:http, from `localAddress` (any of 127/8 reaches a server on 0.0.0.0). */
function postFrom(url: string, body: string, headers: Record<string, string>, localAddress: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers, localAddress }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const answer = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') answer.set(name, value);
        resolve({ status: res.statusCode ?? 0, headers: answer, text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

// The express4 project of vitest.config.ts runs the Express recipe only (targets/select.ts).
describe.each(selectTargets(Object.keys(start) as Array<keyof typeof start>))('%s rate-limit recipe', (framework) => {
  let listener: Server;
  let base: string;
  let ada: RegisteredClient;
  let other: RegisteredClient;

  beforeEach(async () => {
    const clock = new FakeClock();
    const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions: new FakeSessions(clock), clock });
    ada = await server.registerClient({ name: 'Example App', redirectUri: CALLBACK });
    other = await server.registerClient({ name: 'Other App', redirectUri: 'https://other.example/cb' });
    listener = await start[framework](server);
    base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    listener.closeAllConnections();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  });

  /** POST a form from 127.0.0.1, or from another loopback address. */
  const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}, from = '127.0.0.1') =>
    postFrom(base + path, new URLSearchParams(form).toString(), { 'content-type': FORM, ...headers }, from);
  /** A refresh with a token that does not exist: the core answers 400 invalid_grant, not the limiter. */
  const refresh = (client: RegisteredClient, path = '/v1/oauth/token', from?: string) =>
    post(path, { grant_type: 'refresh_token', refresh_token: 'nope' }, { authorization: basic(client) }, from);

  function expectLimited(reply: Answer) {
    expect(reply.status, reply.text).toBe(429);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    const retryAfter = Number(reply.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(JSON.parse(reply.text)).toEqual({
      error: 'temporarily_unavailable',
      error_description: `Too many requests: try again in ${retryAfter} seconds.`,
    });
  }

  it(`token endpoint: ${LIMIT} requests of a client reach the core, the next is 429 with an OAuth error and Retry-After`, async () => {
    for (let i = 0; i < LIMIT; i++) {
      const reply = await refresh(ada);
      expect(reply.status, reply.text).toBe(400);
      expect(JSON.parse(reply.text).error).toBe('invalid_grant');
    }
    expectLimited(await refresh(ada));
    expectLimited(await refresh(ada));
  });

  it(`one address inventing a client id per request is held by the per-address ceiling (${LIMIT * 10} per window)`, async () => {
    const invented = (i: number) =>
      post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: 'nope' }, { authorization: `Basic ${btoa(`made-up-${i}:x`)}` });
    for (let i = 0; i < LIMIT * 10; i++) expect((await invented(i)).status).toBe(401);
    expectLimited(await invented(LIMIT * 10));
    // The ceiling is per address: another one still reaches the core.
    expect((await refresh(ada, '/v1/oauth/token', '127.0.0.3')).status).toBe(400);
  });

  it('another client id at the same address has its own budget; the same id from another address too', async () => {
    for (let i = 0; i < LIMIT; i++) await refresh(ada);
    expectLimited(await refresh(ada));
    expect((await refresh(other)).status).toBe(400);
    // Client ids are public: one claimed from elsewhere does not spend this client's budget.
    expect((await refresh(ada, '/v1/oauth/token', '127.0.0.2')).status).toBe(400);
  });

  it('without Basic auth the address is the key: form client_ids share its budget', async () => {
    for (let i = 0; i < LIMIT; i++) {
      const reply = await post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: 'nope', client_id: `c${i}` });
      expect(reply.status, reply.text).not.toBe(429);
    }
    expectLimited(await post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: 'nope', client_id: other.clientId }));
    // A client with Basic auth is counted apart.
    expect((await refresh(ada)).status).toBe(400);
  });

  it('revocation: its own budget, apart from the token endpoint', async () => {
    for (let i = 0; i < LIMIT; i++) await refresh(ada);
    expectLimited(await refresh(ada));
    const revoke = () => post('/v1/oauth/revoke', { token: 'nope' }, { authorization: basic(ada) });
    for (let i = 0; i < LIMIT; i++) expect((await revoke()).status).toBe(200);
    expectLimited(await revoke());
    // And the other way round: the token endpoint's budget was spent, not refilled.
    expectLimited(await refresh(ada));
  });

  it.skipIf(!DEVICE_ENDPOINT)('device authorization: its own budget', async () => {
    for (let i = 0; i < LIMIT; i++) await refresh(ada);
    const device = () => post('/v1/oauth/device', { client_id: ada.clientId }, { authorization: basic(ada) });
    for (let i = 0; i < LIMIT; i++) expect((await device()).status).not.toBe(429);
    expectLimited(await device());
  });

  it('no other spelling of the token path goes around the limit', async () => {
    for (let i = 0; i < LIMIT; i++) await refresh(ada);
    for (const path of ['/v1/oauth/token/', '/V1/OAuth/Token', '/v1/oauth/token?x=1', '/v1//oauth/token']) {
      // Limited, or not the token endpoint at all (the framework's own 404): never the core's answer.
      expect([404, 429], path).toContain((await refresh(ada, path)).status);
    }
  });

  it('other routes are not limited', async () => {
    for (let i = 0; i < LIMIT + 2; i++) {
      const introspect = await post('/v1/oauth/introspect', { token: 'nope' }, { authorization: basic(ada) });
      expect(introspect.status).toBe(200);
      const authorize = await fetch(`${base}/v1/oauth/authorize?client_id=${ada.clientId}`, { redirect: 'manual' });
      expect(authorize.status).not.toBe(429);
      await authorize.text();
    }
  });
});

describe('the key', () => {
  it('the client id of HTTP Basic, form-decoded (RFC 6749 §2.3.1); anything else is no id', () => {
    expect(basicClientId(`Basic ${btoa('my%20app:secret')}`)).toBe('my app');
    expect(basicClientId(`basic ${btoa('a+b:')}`)).toBe('a b');
    expect(basicClientId(`Basic ${btoa('id:se:cret')}`)).toBe('id');
    expect(basicClientId(undefined)).toBeUndefined();
    expect(basicClientId('Bearer abc')).toBeUndefined();
    expect(basicClientId('Basic !!!')).toBeUndefined();
    expect(basicClientId(`Basic ${btoa('%zz:x')}`)).toBeUndefined();
    expect(basicClientId(`Basic ${btoa(':x')}`)).toBeUndefined();
    expect(basicClientId(`Basic ${btoa(`${'a'.repeat(201)}:x`)}`)).toBeUndefined();
  });

  it('pairs the id with the address; ids cannot pose as an address or another id', () => {
    expect(rateLimitKey(undefined, '192.0.2.1')).toBe('address 192.0.2.1');
    expect(rateLimitKey(`Basic ${btoa('app:s')}`, '192.0.2.1')).toBe('client "app" at 192.0.2.1');
    expect(rateLimitKey(`Basic ${btoa('x" at 192.0.2.9:s')}`, '192.0.2.1')).toBe('client "x\\" at 192.0.2.9" at 192.0.2.1');
  });

  it('tooManyRequests: the OAuth error body of the 429, with the seconds when they are a number', () => {
    expect(tooManyRequests(12)).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'Too many requests: try again in 12 seconds.',
    });
    expect(tooManyRequests(0.2).error_description).toBe('Too many requests: try again in 1 seconds.');
    for (const unknown of [Number.NaN, Number(undefined), -1, Number.POSITIVE_INFINITY])
      expect(tooManyRequests(unknown).error_description).toBe('Too many requests: try again later.');
  });
});

describe('alerting on audit events (examples/rate-limit/alerts.ts), over HTTP on Express', () => {
  const alerts: Array<{ type: string; why: string }> = [];
  const app = useApp({
    framework: 'express',
    server: {
      refreshReuseGraceSeconds: 10,
      onAudit: alertingAudit((event, why) => alerts.push({ type: event.type, why }), { threshold: 3, windowMs: 60_000 }),
    },
  });
  beforeEach(() => {
    alerts.length = 0;
  });

  it('a replayed code alerts at once', async () => {
    const { getCode, exchange } = app();
    const code = await getCode();
    expect((await exchange(code)).status).toBe(200);
    expect(alerts).toEqual([]);
    expect((await exchange(code)).status).toBe(400);
    expect(alerts).toEqual([{ type: 'code.reused', why: 'code.reused' }]);
  });

  it('a refresh token reused: a retry within the grace period does not alert, a reuse after it does', async () => {
    const { tokens, postForm, client, clock } = app();
    const { refresh_token } = await tokens();
    const form = { grant_type: 'refresh_token', refresh_token, client_id: client.clientId, client_secret: client.clientSecret };
    expect((await postForm('/v1/oauth/token', form)).status).toBe(200);
    await postForm('/v1/oauth/token', form); // a retry, 0 s later
    expect(alerts).toEqual([]);
    clock.advance(11_000);
    expect((await postForm('/v1/oauth/token', form)).status).toBe(400);
    expect(alerts).toEqual([{ type: 'refresh_token.reused', why: 'refresh_token.reused' }]);
  });

  it('wrong secrets: one alert when a client reaches the threshold in a window, again in the next window', async () => {
    const { postForm, client, clock } = app();
    const guess = () =>
      postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: 'x', client_id: client.clientId, client_secret: 'guess' });
    for (let i = 0; i < 5; i++) expect((await guess()).status).toBe(401);
    expect(alerts).toEqual([{ type: 'client.authentication_failed', why: '3 × client.authentication_failed within 60 s' }]);
    clock.advance(60_000);
    for (let i = 0; i < 2; i++) await guess();
    expect(alerts).toHaveLength(1);
    await guess();
    expect(alerts).toHaveLength(2);
  });
});
