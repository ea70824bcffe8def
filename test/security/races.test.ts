import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createOAuthRouter, requireToken } from '../../adapters/express/index.js';
import { MemoryStorage, type Storage } from '../../src/index.js';
import { CALLBACK, setup } from '../helpers.js';

/**
 * SECURITY.md C-11, RT-03, U-10: single use under concurrency, through real HTTP on 127.0.0.1
 * (level 4) and with a barrier that forces the worst interleaving (level 1).
 */
const N = 50;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function serve(t: Awaited<ReturnType<typeof setup>>) {
  const app = express();
  app.use(createOAuthRouter(t.server));
  app.get('/v2/account', requireToken(t.server), (_req, res) => res.json({ ok: true }));
  const listener = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => listener.once('listening', resolve));
  close = () =>
    new Promise((resolve) => {
      listener.closeAllConnections();
      listener.close(() => resolve());
    });
  return `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
}

const form = (params: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(params).toString(),
});

describe('races over HTTP', () => {
  it(`C-11: ${N} concurrent redemptions of one code give exactly one 200; the winner's tokens die with the replays`, async () => {
    const t = await setup();
    const base = await serve(t);
    const code = await t.getCode();
    const responses = await Promise.all(
      Array.from({ length: N }, () =>
        fetch(
          `${base}/v1/oauth/token`,
          form({
            grant_type: 'authorization_code',
            code,
            client_id: t.client.clientId,
            client_secret: t.client.clientSecret,
            redirect_uri: CALLBACK,
          }),
        ),
      ),
    );
    const bodies = await Promise.all(responses.map(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> })));
    const winners = bodies.filter((b) => b.status === 200);
    expect(winners).toHaveLength(1);
    expect(bodies.filter((b) => b.status === 400 && b.body.error === 'invalid_grant')).toHaveLength(N - 1);
    // The losers were valid replays: RFC 6749 §4.1.2 revokes what the code produced.
    const api = await fetch(`${base}/v2/account`, { headers: { authorization: `Bearer ${winners[0]!.body.access_token}` } });
    expect(api.status).toBe(401);
  });

  it(`RT-03: ${N} concurrent refreshes with one refresh token give exactly one 200, and no live refresh token remains`, async () => {
    const t = await setup();
    const base = await serve(t);
    const tokens = await t.tokens();
    const responses = await Promise.all(
      Array.from({ length: N }, () =>
        fetch(`${base}/v1/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })),
      ),
    );
    const bodies = await Promise.all(responses.map(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> })));
    const winners = bodies.filter((b) => b.status === 200);
    expect(winners).toHaveLength(1);
    expect(bodies.filter((b) => b.body.error === 'invalid_grant')).toHaveLength(N - 1);
    // Strict reuse detection: the replays revoked the family, the winner's new pair included.
    expect((await t.refresh(winners[0]!.body.refresh_token!)).status).toBe(400);
  });
});

/** A storage whose chosen method waits until `n` callers have arrived, then lets them all through at once. */
function withBarrier(inner: Storage, method: keyof Storage, n: number): Storage {
  let arrived = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      if (name !== method) return value.bind(target);
      return async (...args: unknown[]) => {
        if (++arrived === n) release();
        await gate;
        return value.apply(target, args);
      };
    },
  });
}

describe('races with a barrier (every caller has read the record before any writes)', () => {
  it('C-11: two exchanges that both found the unused code: one wins', async () => {
    const t = await setup({ storage: withBarrier(new MemoryStorage(), 'redeemCode', 2) });
    const code = await t.getCode();
    const [a, b] = await Promise.all([t.exchange(code), t.exchange(code)]);
    expect([a.status, b.status].sort()).toEqual([200, 400]);
  });

  it('RT-03: two refreshes that both found the unrotated token: one wins', async () => {
    const storage = new MemoryStorage();
    const t = await setup({ storage });
    const tokens = await t.tokens();
    const racing = await setup({ storage: withBarrier(storage, 'rotateRefreshToken', 2) });
    const [a, b] = await Promise.all([racing.refresh(tokens.refresh_token), racing.refresh(tokens.refresh_token)]);
    expect([a.status, b.status].sort()).toEqual([200, 400]);
  });

  it('U-10: two approvals of one consent: one code', async () => {
    const t = await setup({ storage: withBarrier(new MemoryStorage(), 'takeInteraction', 2) });
    const d = await t.server.authorize(t.get(t.authorizeUrl(), t.ada));
    if (d.type !== 'consent') throw new Error(d.type);
    const results = await Promise.all([
      t.server.approve(d.interaction.id, t.get('/', t.ada)),
      t.server.approve(d.interaction.id, t.get('/', t.ada)),
    ]);
    expect(results.map((r) => r.type).sort()).toEqual(['error', 'redirect']);
  });

  it('a revocation racing a refresh leaves no live token in the family', async () => {
    const storage = new MemoryStorage();
    const t = await setup({ storage });
    const tokens = await t.tokens();
    const [refreshed] = await Promise.all([
      t.refresh(tokens.refresh_token),
      t.server.revoke(t.post('/v1/oauth/revoke', { token: tokens.access_token })),
    ]);
    if (refreshed.status === 200) {
      const body = JSON.parse(refreshed.body) as Record<string, string>;
      expect((await t.api('GET', body.access_token!)).ok).toBe(false);
      expect((await t.refresh(body.refresh_token!)).status).toBe(400);
    }
  });
});
