/**
 * Refresh-token reuse detection over time (docs/reference.md#refresh-token-rotation-and-families;
 * SECURITY.md RT-02, RT-05).
 *
 * A rotated refresh token must be recognised as a replay, and revoke its family, for as long as
 * any token of that family can still be used, whatever `prune()` ran in between. Only a dead
 * family (revoked, or its refresh token expired) may be forgotten. And a long rotation chain must
 * not keep one record per rotation. Every case runs on MemoryStorage and on PostgresStorage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REFRESH_WINDOW_SECONDS, MemoryStorage, type AuthorizationServerOptions } from '../../src/index.js';
import { PostgresStorage } from '../../src/postgres/index.js';
import { json, setup } from '../helpers.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from '../storage/pg.js';

const DAY = 24 * 3600 * 1000;

interface Store {
  storage: MemoryStorage | PostgresStorage;
  prune(now: number): Promise<unknown>;
  /** Token records (access and refresh, live, rotated or revoked) the store keeps. */
  tokenRecords(): Promise<number>;
}

const pool = DATABASE_URL ? makePool(5) : undefined;
const schemas: string[] = [];

const stores: Array<[string, () => Promise<Store>]> = [
  [
    'MemoryStorage',
    async () => {
      const storage = new MemoryStorage();
      return {
        storage,
        prune: async (now) => storage.prune(now),
        tokenRecords: async () => (storage as unknown as { tokens: Map<string, unknown> }).tokens.size,
      };
    },
  ],
];
if (pool) {
  stores.push([
    'PostgresStorage',
    async () => {
      const schema = schemaName('family');
      schemas.push(schema);
      const storage = new PostgresStorage(pool, { schema });
      await storage.migrate();
      return {
        storage,
        prune: (now) => storage.prune(now),
        tokenRecords: async () => Number((await pool.query(`SELECT count(*) AS n FROM "${schema}".authgate_tokens`)).rows[0].n),
      };
    },
  ]);
}

afterAll(async () => {
  if (!pool) return;
  for (const schema of schemas) await dropSchema(pool, schema);
  await pool.end();
});

describe.each(stores)('refresh token families on %s', (_name, makeStore) => {
  let store: Store;
  beforeAll(async () => {
    store = await makeStore();
  });
  const start = (options: Partial<AuthorizationServerOptions> = {}) => setup({ storage: store.storage, ...options });

  it('a token stolen and used after the access token expired, then replayed by its owner after prune, revokes the family', async () => {
    const t = await start();
    const first = await t.tokens();
    // Day 31: the access token issued with the first refresh token has expired.
    t.clock.advance(31 * DAY);
    const stolen = await t.refresh(first.refresh_token); // the thief refreshes first
    expect(stolen.status).toBe(200);
    const thief = json(stolen) as { access_token: string; refresh_token: string };
    await store.prune(t.clock.now());
    // The real client now presents the token it holds: a replay, whatever prune did.
    const replay = await t.refresh(first.refresh_token);
    expect(replay.status).toBe(400);
    expect(json(replay).error).toBe('invalid_grant');
    // The family is dead: the thief's tokens stop working.
    expect((await t.api('GET', thief.access_token)).ok).toBe(false);
    expect(json(await t.refresh(thief.refresh_token)).error).toBe('invalid_grant');
  });

  it('the replay is recognised after any number of rotations and prunes, and audited as a reuse', async () => {
    const events: Array<{ type: string; familyRevoked?: boolean }> = [];
    const t = await start({ onAudit: (event) => events.push(event as { type: string }) });
    const first = await t.tokens();
    let current = first.refresh_token;
    const old: string[] = [];
    for (let i = 0; i < 5; i++) {
      t.clock.advance(40 * DAY);
      old.push(current);
      current = (json(await t.refresh(current)) as { refresh_token: string }).refresh_token;
      await store.prune(t.clock.now());
    }
    const access = json(await t.refresh(current)) as { access_token: string; refresh_token: string };
    expect((await t.api('GET', access.access_token)).ok).toBe(true);
    expect(json(await t.refresh(old[2]!)).error).toBe('invalid_grant');
    expect(events.filter((e) => e.type === 'refresh_token.reused')).toEqual([expect.objectContaining({ familyRevoked: true })]);
    expect((await t.api('GET', access.access_token)).ok).toBe(false);
    expect(json(await t.refresh(access.refresh_token)).error).toBe('invalid_grant');
  });

  it("a rotated token sent with another client's credentials revokes nothing", async () => {
    const t = await start();
    const first = await t.tokens();
    t.clock.advance(31 * DAY);
    const next = json(await t.refresh(first.refresh_token)) as { access_token: string; refresh_token: string };
    await store.prune(t.clock.now());
    const other = await t.refresh(first.refresh_token, { client_id: t.other.clientId, client_secret: t.other.clientSecret });
    expect(json(other).error).toBe('invalid_grant');
    expect((await t.api('GET', next.access_token)).ok).toBe(true);
  });

  it('a dead family may be forgotten: after revocation and prune an old token is just invalid_grant', async () => {
    const t = await start();
    const first = await t.tokens();
    const next = json(await t.refresh(first.refresh_token)) as { access_token: string; refresh_token: string };
    await t.server.revoke(t.post('/v1/oauth/revoke', { token: next.refresh_token }));
    await store.prune(t.clock.now());
    expect(json(await t.refresh(first.refresh_token)).error).toBe('invalid_grant');
    expect(json(await t.refresh(next.refresh_token)).error).toBe('invalid_grant');
  });

  it('keeps one access and one refresh record of a family after a long rotation chain and prune', async () => {
    const t = await start();
    const rotations = store.storage instanceof MemoryStorage ? 50_000 : 300;
    await store.prune(t.clock.now());
    const before = await store.tokenRecords();
    let current = (await t.tokens()).refresh_token;
    for (let i = 0; i < rotations; i++) {
      current = (json(await t.refresh(current)) as { refresh_token: string }).refresh_token;
      if (i % 1000 === 999) await store.prune(t.clock.now());
    }
    // The refresh token rotated last is kept while it may be retried (MAX_REFRESH_WINDOW_SECONDS).
    await store.prune(t.clock.now());
    expect((await store.tokenRecords()) - before).toBe(3);
    t.clock.advance(MAX_REFRESH_WINDOW_SECONDS * 1000 + 1);
    await store.prune(t.clock.now());
    expect((await store.tokenRecords()) - before).toBe(2);
    expect((await t.refresh(current)).status).toBe(200);
  }, 120_000);

  it('a refresh token stored before families existed keeps working, and its rotation starts a family', async () => {
    const t = await start();
    const { randomToken, sha256Base64url, randomId } = await import('../../src/crypto.js');
    const legacy = randomToken();
    const now = t.clock.now();
    const grant = {
      id: randomId(),
      kind: 'oauth' as const,
      clientId: t.client.clientId,
      account: { uuid: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', name: 'Ada Lovelace', email: 'ada@example.com' },
      scope: ['read'],
      createdAt: now,
      revokedAt: null,
    };
    await store.storage.createGrant(grant, {
      tokens: [
        {
          hash: sha256Base64url(legacy),
          kind: 'refresh',
          grantId: grant.id,
          clientId: grant.clientId,
          scope: ['read'],
          issuedAt: now,
          expiresAt: null,
          pairHash: null,
          rotatedAt: null,
          revokedAt: null,
        },
      ],
    });
    const second = json(await t.refresh(legacy)) as { access_token: string; refresh_token: string };
    expect(second.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const third = json(await t.refresh(second.refresh_token)) as { access_token: string; refresh_token: string };
    expect(third.refresh_token.slice(0, 22)).toBe(second.refresh_token.slice(0, 22));
    await store.prune(t.clock.now());
    expect(json(await t.refresh(second.refresh_token)).error).toBe('invalid_grant');
    expect((await t.api('GET', third.access_token)).ok).toBe(false); // the replay revoked the family
  });

  it('lifetimes.grant caps an implicit-flow token too', async () => {
    const t = await start({ lifetimes: { grant: 3600 } });
    const url = await t.authorizeAndApprove({ response_type: 'token' });
    const fragment = new URLSearchParams(url.hash.slice(1));
    expect(fragment.get('expires_in')).toBe('3600');
    const token = fragment.get('access_token')!;
    t.clock.advance(3599_000);
    expect((await t.api('GET', token)).ok).toBe(true);
    t.clock.advance(1000);
    expect((await t.api('GET', token)).ok).toBe(false);
  });

  it('lifetimes.grant ends the family: no refresh after it, and no token outlives it', async () => {
    const t = await start({ lifetimes: { grant: 90 * 24 * 3600, accessToken: 30 * 24 * 3600 } });
    const first = await t.tokens();
    t.clock.advance(75 * DAY);
    const late = json(await t.refresh(first.refresh_token)) as { access_token: string; refresh_token: string; expires_in: number };
    // 15 days of the family are left: the new access token says so and lasts no longer.
    expect(late.expires_in).toBe(15 * 24 * 3600);
    t.clock.advance(15 * DAY);
    expect((await t.api('GET', late.access_token)).ok).toBe(false);
    const after = await t.refresh(late.refresh_token);
    expect(after.status).toBe(400);
    expect(json(after).error).toBe('invalid_grant');
  });
});
