/**
 * Refresh retries over time (docs/reference.md#refresh-token-rotation-and-families; SECURITY.md):
 * a rotated refresh token presented again within `refreshRetryWindowSeconds`, while nothing
 * minted from it was used, gets a new sibling pair (a lost response, parallel refreshes); the
 * first sibling used revokes the others; a replay after a child was used, after the window, or
 * of a revoked sibling revokes the family as before (RFC 9700 §4.14.2). Every case runs on
 * MemoryStorage and on PostgresStorage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStorage, type AuthorizationServerOptions, type AuditEvent } from '../../src/index.js';
import { PostgresStorage } from '../../src/postgres/index.js';
import { randomToken, sha256Base64url } from '../../src/crypto.js';
import { json, setup } from '../helpers.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from '../storage/pg.js';

type Pair = { access_token: string; refresh_token: string };

const pool = DATABASE_URL ? makePool(12) : undefined;
const schemas: string[] = [];

const stores: Array<[string, () => Promise<MemoryStorage | PostgresStorage>]> = [['MemoryStorage', async () => new MemoryStorage()]];
if (pool) {
  stores.push([
    'PostgresStorage',
    async () => {
      const schema = schemaName('retry');
      schemas.push(schema);
      const storage = new PostgresStorage(pool, { schema });
      await storage.migrate();
      return storage;
    },
  ]);
}

afterAll(async () => {
  if (!pool) return;
  for (const schema of schemas) await dropSchema(pool, schema);
  await pool.end();
});

describe.each(stores)('refresh retries on %s', (_name, makeStore) => {
  let storage: MemoryStorage | PostgresStorage;
  beforeAll(async () => {
    storage = await makeStore();
  });
  // An explicit window: retries for every client (the helper's client is confidential).
  const start = (options: Partial<AuthorizationServerOptions> = {}) => {
    const events: AuditEvent[] = [];
    return setup({ storage, onAudit: (e) => events.push(e), refreshRetryWindowSeconds: 60, ...options }).then((t) => ({ ...t, events }));
  };
  const works = async (t: Awaited<ReturnType<typeof start>>, pair: Pair) => (await t.api('GET', pair.access_token)).ok;

  it('a lost response: the retry gets a new working pair, no reuse fires, and the chain goes on', async () => {
    const t = await start();
    const first = await t.tokens();
    const lost = json(await t.refresh(first.refresh_token)) as Pair; // committed, response lost
    t.clock.advance(5_000);
    const retry = await t.refresh(first.refresh_token);
    expect(retry.status).toBe(200);
    const again = json(retry) as Pair;
    expect(again.refresh_token).not.toBe(lost.refresh_token);
    expect(again.refresh_token.slice(-43, -21)).toBe(first.refresh_token.slice(-43, -21)); // same family
    expect(await works(t, again)).toBe(true);
    expect(t.events.some((e) => e.type === 'refresh_token.reused')).toBe(false);
    expect(t.events.filter((e) => e.type === 'refresh_token.retried')).toHaveLength(1);
    // The client goes on with the retried pair: the lost sibling is revoked, the chain lives.
    const next = json(await t.refresh(again.refresh_token)) as Pair;
    expect(await works(t, next)).toBe(true);
    expect(await works(t, lost)).toBe(false);
    expect(await works(t, again)).toBe(false); // rotated: its access token is revoked
    const after = json(await t.refresh(next.refresh_token)) as Pair;
    expect(await works(t, after)).toBe(true);
  });

  it('a retry of a retry: each lost response in a row is survived while nothing newer was used', async () => {
    const t = await start();
    const first = await t.tokens();
    for (let i = 0; i < 4; i++) {
      expect((await t.refresh(first.refresh_token)).status).toBe(200);
      t.clock.advance(2_000);
    }
    const kept = json(await t.refresh(first.refresh_token)) as Pair;
    expect((await t.refresh(kept.refresh_token)).status).toBe(200);
  });

  for (const n of [2, 5, 10]) {
    it(`${n} parallel refreshes with one token all get working pairs; the first one used revokes the others, not the family`, async () => {
      const t = await start();
      const first = await t.tokens();
      const responses = await Promise.all(Array.from({ length: n }, () => t.refresh(first.refresh_token)));
      expect(responses.map((r) => r.status)).toEqual(Array(n).fill(200));
      const pairs = responses.map((r) => json(r) as Pair);
      expect(new Set(pairs.map((p) => p.refresh_token)).size).toBe(n);
      for (const pair of pairs) expect(await works(t, pair)).toBe(true);
      expect(t.events.some((e) => e.type === 'refresh_token.reused')).toBe(false);
      // One of them is used: the others are revoked with their access tokens; the family lives.
      const winner = pairs[n - 1]!;
      const next = json(await t.refresh(winner.refresh_token)) as Pair;
      expect(await works(t, next)).toBe(true);
      for (const pair of pairs.slice(0, -1)) expect(await works(t, pair)).toBe(false);
      expect(t.events.some((e) => e.type === 'refresh_token.reused')).toBe(false);
    });
  }

  it('the parents of parallel refreshes used at once: exactly one wins, the others are replays of revoked siblings', async () => {
    const t = await start();
    const first = await t.tokens();
    const pairs = (await Promise.all(Array.from({ length: 4 }, () => t.refresh(first.refresh_token)))).map((r) => json(r) as Pair);
    const used = await Promise.all(pairs.map((p) => t.refresh(p.refresh_token)));
    const ok = used.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    // Using a revoked sibling is presenting an invalidated token (RFC 9700 §4.14.2): the family ends.
    expect(t.events.filter((e) => e.type === 'refresh_token.reused').length).toBeGreaterThan(0);
    expect(await works(t, json(ok[0]!) as Pair)).toBe(false);
  });

  it('the thief after a child was used: a replay of the parent revokes the whole family', async () => {
    const t = await start();
    const first = await t.tokens();
    const mine = json(await t.refresh(first.refresh_token)) as Pair;
    const next = json(await t.refresh(mine.refresh_token)) as Pair; // the child was used
    const thief = await t.refresh(first.refresh_token); // within the window, but too late
    expect(json(thief).error).toBe('invalid_grant');
    expect(t.events).toContainEqual(expect.objectContaining({ type: 'refresh_token.reused', familyRevoked: true }));
    expect(await works(t, next)).toBe(false);
    expect(json(await t.refresh(next.refresh_token)).error).toBe('invalid_grant');
  });

  it('after the window: a replay revokes the whole family, even though no child was used', async () => {
    const t = await start();
    const first = await t.tokens();
    const mine = json(await t.refresh(first.refresh_token)) as Pair;
    t.clock.advance(60_000);
    expect((await t.refresh(first.refresh_token)).status).toBe(200); // 60 s: still inside
    t.clock.advance(1);
    expect(json(await t.refresh(first.refresh_token)).error).toBe('invalid_grant');
    expect(t.events).toContainEqual(expect.objectContaining({ type: 'refresh_token.reused', familyRevoked: true }));
    expect(await works(t, mine)).toBe(false);
  });

  it('the thief who races inside the window gets a sibling until the client uses its own; then its sibling is a replay', async () => {
    const t = await start();
    const first = await t.tokens();
    const mine = json(await t.refresh(first.refresh_token)) as Pair;
    const thief = json(await t.refresh(first.refresh_token)) as Pair; // the thief replays inside the window
    expect(await works(t, thief)).toBe(true);
    const next = json(await t.refresh(mine.refresh_token)) as Pair; // the client refreshes on
    expect(await works(t, thief)).toBe(false);
    // The thief's sibling presented again: an invalidated token, the family is revoked.
    expect(json(await t.refresh(thief.refresh_token)).error).toBe('invalid_grant');
    expect(t.events).toContainEqual(expect.objectContaining({ type: 'refresh_token.reused', familyRevoked: true }));
    expect(await works(t, next)).toBe(false);
  });

  it('the thief who uses its sibling first: the client’s next refresh revokes the family', async () => {
    const t = await start();
    const first = await t.tokens();
    const mine = json(await t.refresh(first.refresh_token)) as Pair;
    const thief = json(await t.refresh(first.refresh_token)) as Pair;
    const thiefNext = json(await t.refresh(thief.refresh_token)) as Pair;
    expect(await works(t, mine)).toBe(false); // revoked as a sibling
    expect(json(await t.refresh(mine.refresh_token)).error).toBe('invalid_grant');
    expect(await works(t, thiefNext)).toBe(false);
  });

  it('refreshRetryWindowSeconds: 0 keeps the strict behaviour: any replay revokes the family', async () => {
    const t = await start({ refreshRetryWindowSeconds: 0 });
    const first = await t.tokens();
    const mine = json(await t.refresh(first.refresh_token)) as Pair;
    expect(json(await t.refresh(first.refresh_token)).error).toBe('invalid_grant');
    expect(await works(t, mine)).toBe(false);
  });

  it('a retry survives prune: the rotated record is kept while it may be retried', async () => {
    const t = await start();
    const first = await t.tokens();
    await t.refresh(first.refresh_token);
    t.clock.advance(30_000);
    await storage.prune(t.clock.now());
    expect((await t.refresh(first.refresh_token)).status).toBe(200);
  });

  it('a retry is checked like a refresh: another client, or a scope wider than the token’s, is refused and revokes nothing', async () => {
    const t = await start();
    const first = await t.tokens();
    const mine = json(await t.refresh(first.refresh_token)) as Pair;
    const other = await t.refresh(first.refresh_token, { client_id: t.other.clientId, client_secret: t.other.clientSecret });
    expect(json(other).error).toBe('invalid_grant');
    expect(json(await t.refresh(first.refresh_token, { scope: 'read write admin' })).error).toMatch(/invalid_scope|invalid_grant/);
    expect(await works(t, mine)).toBe(true);
    expect((await t.refresh(first.refresh_token)).status).toBe(200);
  });
});

describe('the default window', () => {
  /** A public client's first pair: PKCE, no secret. */
  async function publicTokens(t: Awaited<ReturnType<typeof setup>>) {
    const cli = await t.server.registerClient({ name: 'CLI', redirectUri: 'http://127.0.0.1/cb', public: true });
    const verifier = randomToken();
    const query = new URLSearchParams({
      client_id: cli.clientId,
      redirect_uri: 'http://127.0.0.1/cb',
      response_type: 'code',
      code_challenge: sha256Base64url(verifier),
      code_challenge_method: 'S256',
    });
    const decision = await t.server.authorize(t.get(`/v1/oauth/authorize?${query}`, t.ada));
    if (decision.type !== 'consent') throw new Error(JSON.stringify(decision));
    const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
    if (approved.type !== 'redirect') throw new Error(JSON.stringify(approved));
    const code = new URL(approved.location).searchParams.get('code') ?? '';
    const res = await t.server.token(
      t.post('/v1/oauth/token', {
        grant_type: 'authorization_code',
        code,
        client_id: cli.clientId,
        redirect_uri: 'http://127.0.0.1/cb',
        code_verifier: verifier,
      }),
    );
    return { clientId: cli.clientId, pair: json(res) as Pair };
  }

  it('is 60 s for a public client, with or without its client_id', async () => {
    const t = await setup();
    const { clientId, pair } = await publicTokens(t);
    const lost = json(await t.refresh(pair.refresh_token, { client_id: clientId })) as Pair;
    t.clock.advance(60_000);
    const retry = await t.refresh(pair.refresh_token);
    expect(retry.status).toBe(200);
    expect((await t.api('GET', lost.access_token)).ok).toBe(true);
    t.clock.advance(1);
    expect(json(await t.refresh(pair.refresh_token, { client_id: clientId })).error).toBe('invalid_grant');
    expect((await t.api('GET', lost.access_token)).ok).toBe(false); // after the window: the family is revoked
  });

  it('is off for a confidential client: a replay revokes the family at once (RFC 9700 §4.14.2)', async () => {
    const t = await setup();
    const first = await t.tokens();
    const next = json(await t.refresh(first.refresh_token)) as Pair;
    expect(json(await t.refresh(first.refresh_token)).error).toBe('invalid_grant');
    expect((await t.api('GET', next.access_token)).ok).toBe(false);
  });
});

it('a store without the refresh retry group: retries are off by default, and asking for them is a ConfigError', async () => {
  // A MemoryStorage whose retryRefreshToken is hidden: a store without the group.
  const bare = new MemoryStorage();
  Object.defineProperty(bare, 'retryRefreshToken', { value: undefined });
  const t = await setup({ storage: bare, refreshRetryWindowSeconds: undefined });
  const first = await t.tokens();
  const mine = json(await t.refresh(first.refresh_token)) as Pair;
  expect(json(await t.refresh(first.refresh_token)).error).toBe('invalid_grant');
  expect((await t.api('GET', mine.access_token)).ok).toBe(false); // the family was revoked
  await expect(setup({ storage: bare, refreshRetryWindowSeconds: 30 })).rejects.toThrow(/refreshRetry/);
});
