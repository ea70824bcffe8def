import { describe, expect, it } from 'vitest';
import { MemoryStorage, type Storage } from '../../src/index.js';
import { json, setup } from '../helpers.js';

/**
 * A storage that fails at each of its calls in turn (SECURITY.md, the storage-fault row;
 * docs/reference.md#failures-and-outages). After every fault the client gets a clean server error
 * (no detail), and the state is consistent: the old credential still works on retry (the fault
 * happened instead of the write), never neither and never both.
 */
class FaultyStorage {
  calls = 0;
  failAt = 0; // 1-based call number to fail; 0 = never
  readonly storage: Storage;
  constructor(inner: Storage = new MemoryStorage()) {
    this.storage = new Proxy(inner, {
      get: (target, name, receiver) => {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          this.calls++;
          if (this.calls === this.failAt) throw new Error('storage unavailable: db-7.internal (detail that must not leak)');
          return value.apply(target, args);
        };
      },
    });
  }
  arm(at: number) {
    this.calls = 0;
    this.failAt = at;
  }
  disarm() {
    this.failAt = 0;
  }
}

/** How many storage calls an operation makes, measured on a healthy run. */
type T = Awaited<ReturnType<typeof setup>>;
async function countCalls(op: (t: T, state: unknown) => Promise<unknown>, prepare: (t: T) => Promise<unknown>) {
  const faulty = new FaultyStorage();
  const t = await setup({ storage: faulty.storage });
  const state = await prepare(t);
  faulty.arm(0);
  await op(t, state);
  return faulty.calls;
}

describe('storage faults leave no half-written state', () => {
  it('code exchange: a fault at any storage call → 500 server_error, and a retry redeems the code', async () => {
    const prepare = (t: Awaited<ReturnType<typeof setup>>) => t.getCode();
    const op = (t: Awaited<ReturnType<typeof setup>>, code: unknown) => t.exchange(code as string);
    const total = await countCalls(op, prepare);
    // The client read with the code (combinedReads), then the redemption with the new tokens.
    expect(total).toBeGreaterThanOrEqual(2);
    for (let k = 1; k <= total; k++) {
      const faulty = new FaultyStorage();
      const errors: unknown[] = [];
      const t = await setup({ storage: faulty.storage, onError: (e) => errors.push(e) });
      const code = await prepare(t);
      faulty.arm(k);
      const res = await op(t, code);
      expect(res.status, `fault at call ${k}`).toBe(500);
      expect(json(res)).toEqual({
        error: 'server_error',
        error_description: 'The server could not complete the request. Try again later.',
      });
      expect(errors).toHaveLength(1);
      faulty.disarm();
      expect((await op(t, code)).status, `retry after fault at call ${k}`).toBe(200);
    }
  });

  it('refresh: a fault at any storage call → 500, the old pair still works, the new pair was never stored', async () => {
    const prepare = (t: Awaited<ReturnType<typeof setup>>) => t.tokens();
    const op = (t: Awaited<ReturnType<typeof setup>>, tokens: unknown) => t.refresh((tokens as { refresh_token: string }).refresh_token);
    const total = await countCalls(op, prepare);
    for (let k = 1; k <= total; k++) {
      const faulty = new FaultyStorage();
      const t = await setup({ storage: faulty.storage });
      const tokens = await prepare(t);
      faulty.arm(k);
      const res = await op(t, tokens);
      expect(res.status, `fault at call ${k}`).toBe(500);
      expect(res.body).not.toContain('db-7');
      faulty.disarm();
      expect((await t.api('GET', tokens.access_token)).ok, `old access token after fault ${k}`).toBe(true);
      const retry = await op(t, tokens);
      expect(retry.status, `retry after fault at call ${k}`).toBe(200);
      // Exactly one live pair: the retried one; the old access token is now invalidated.
      expect((await t.api('GET', tokens.access_token)).ok).toBe(false);
      expect((await t.api('GET', json(retry).access_token as string)).ok).toBe(true);
    }
  });

  it('revocation: a fault at any storage call → 503 (never 200 {}), the token still works, a retry revokes it', async () => {
    const prepare = (t: Awaited<ReturnType<typeof setup>>) => t.tokens();
    const op = (t: Awaited<ReturnType<typeof setup>>, tokens: unknown) =>
      t.server.revoke(t.post('/v1/oauth/revoke', { token: (tokens as { access_token: string }).access_token }));
    const total = await countCalls(op, prepare);
    expect(total).toBe(2);
    for (let k = 1; k <= total; k++) {
      const faulty = new FaultyStorage();
      const t = await setup({ storage: faulty.storage });
      const tokens = await prepare(t);
      faulty.arm(k);
      const res = await op(t, tokens);
      expect(res.status).toBe(503);
      expect(json(res).error).toBe('temporarily_unavailable');
      faulty.disarm();
      expect((await t.api('GET', tokens.access_token)).ok).toBe(true);
      expect((await op(t, tokens)).status).toBe(200);
      expect((await t.api('GET', tokens.access_token)).ok).toBe(false);
    }
  });

  it('authorization: a fault at any storage call → an error page (500), never a redirect with a half-made code', async () => {
    const faulty = new FaultyStorage();
    const t = await setup({ storage: faulty.storage });
    for (let k = 1; k <= 4; k++) {
      faulty.arm(k);
      const d = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none' }), t.ada));
      expect(['error', 'redirect']).toContain(d.type);
      if (d.type === 'redirect') expect(new URL(d.location).searchParams.has('code')).toBe(false);
    }
  });
  it('every authorization step (authorize, resume, approve, deny): a fault at any storage call → a 500 error page, reported to onError', async () => {
    const errors: unknown[] = [];
    const faulty = new FaultyStorage();
    const t = await setup({ storage: faulty.storage, onError: (error) => errors.push(error) });
    const interactionId = async (cookie?: string) => {
      faulty.disarm();
      const d = await t.server.authorize(t.get(t.authorizeUrl({ state: 's' }), cookie));
      if (d.type !== 'consent' && d.type !== 'login') throw new Error(`unexpected ${d.type}`);
      return d.interaction.id;
    };
    const steps: Record<string, () => Promise<() => Promise<unknown>>> = {
      authorize: async () => () => t.server.authorize(t.get(t.authorizeUrl({ state: 's' }), t.ada)),
      resume: async () => {
        const id = await interactionId();
        return () => t.server.resume(id, t.get('/', t.ada));
      },
      'resume, still signed out': async () => {
        const id = await interactionId();
        return () => t.server.resume(id, t.get('/'));
      },
      approve: async () => {
        const id = await interactionId(t.ada);
        return () => t.server.approve(id, t.get('/', t.ada));
      },
      deny: async () => {
        const id = await interactionId(t.ada);
        return () => t.server.deny(id, t.get('/', t.ada));
      },
    };
    for (const [name, prepare] of Object.entries(steps)) {
      const healthy = await prepare();
      faulty.arm(0);
      await healthy();
      const calls = faulty.calls;
      expect(calls, name).toBeGreaterThan(0);
      for (let k = 1; k <= calls; k++) {
        const step = await prepare();
        const before = errors.length;
        faulty.arm(k);
        const decision = await step();
        expect(decision, `${name}, fault at storage call ${k}`).toEqual({
          type: 'error',
          status: 500,
          error: 'server_error',
          description: 'The server could not complete the request. Try again later.',
        });
        expect(errors.length, `${name}: the fault reached onError`).toBe(before + 1);
      }
    }
  });

  it('introspection: a fault at any storage call → 500 server_error, reported to onError', async () => {
    const errors: unknown[] = [];
    const faulty = new FaultyStorage();
    const t = await setup({ storage: faulty.storage, onError: (error) => errors.push(error) });
    const { access_token } = json(await t.exchange(await t.getCode())) as { access_token: string };
    const introspect = () =>
      t.server.introspect(
        t.post('/v1/oauth/introspect', { token: access_token, client_id: t.client.clientId, client_secret: t.client.clientSecret }),
      );
    faulty.arm(0);
    expect(json(await introspect()).active).toBe(true);
    const calls = faulty.calls;
    for (let k = 1; k <= calls; k++) {
      faulty.arm(k);
      const res = await introspect();
      expect(res.status).toBe(500);
      expect(json(res)).toEqual({
        error: 'server_error',
        error_description: 'The server could not complete the request. Try again later.',
      });
    }
    expect(errors).toHaveLength(calls);
  });
});
