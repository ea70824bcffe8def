import { describe, expect, it } from 'vitest';
import { AuthorizationServer, MAX_REFRESH_WINDOW_SECONDS, MemoryStorage, type OAuthRequest, type Storage } from '../../src/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA, CALLBACK, json, setup } from '../helpers.js';

/** Records every value written to storage, to prove no secret reaches it in clear. */
function spy(inner: Storage): { storage: Storage; writes: string[] } {
  const writes: string[] = [];
  const storage = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        writes.push(JSON.stringify(args));
        return value.apply(target, args);
      };
    },
  });
  return { storage, writes };
}

describe('secrets at rest', () => {
  it('no client secret, code, interaction id, access token or refresh token reaches storage in clear', async () => {
    const { storage, writes } = spy(new MemoryStorage());
    const t = await setup({ storage });
    const secrets = [t.client.clientSecret];
    const decision = await t.server.authorize(t.get(t.authorizeUrl(), t.ada));
    if (decision.type !== 'consent') throw new Error(decision.type);
    secrets.push(decision.interaction.id);
    const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
    if (approved.type !== 'redirect') throw new Error(approved.type);
    const code = new URL(approved.location).searchParams.get('code')!;
    secrets.push(code);
    const first = json(await t.exchange(code));
    const second = json(await t.refresh(first.refresh_token as string));
    const implicit = new URLSearchParams((await t.authorizeAndApprove({ response_type: 'token' })).hash.slice(1)).get('access_token')!;
    secrets.push(
      first.access_token as string,
      first.refresh_token as string,
      second.access_token as string,
      second.refresh_token as string,
      implicit,
    );
    await t.api('GET', second.access_token as string);
    await t.server.revoke(t.post('/v1/oauth/revoke', { token: second.access_token as string }));
    expect(writes.length).toBeGreaterThan(10);
    for (const secret of secrets) {
      for (const write of writes) expect(write).not.toContain(secret);
    }
  });
});

describe('MemoryStorage', () => {
  // The Storage contract runs as the conformance kit in test/storage/memory.test.ts; this case
  // also pins the exact shape of the failure outcomes ({ ok: false, reason } and nothing more).
  it('redeemCode is single use under concurrency and classifies failures', async () => {
    const storage = new MemoryStorage();
    const grant = { id: 'g', kind: 'oauth' as const, clientId: 'c', account: ADA, scope: ['read'], createdAt: 0, revokedAt: null };
    await storage.createGrant(grant, {
      code: {
        hash: 'h',
        grantId: 'g',
        clientId: 'c',
        redirectUri: CALLBACK,
        scope: ['read'],
        codeChallenge: null,
        codeChallengeMethod: null,
        expiresAt: 100,
        usedAt: null,
      },
    });
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => storage.redeemCode('h', 1, [])));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
    expect(outcomes.filter((o) => !o.ok && o.reason === 'used' && o.grantId === 'g')).toHaveLength(9);
    expect(await storage.redeemCode('nope', 1, [])).toEqual({ ok: false, reason: 'missing' });
    await storage.createGrant(
      { ...grant, id: 'g2' },
      {
        code: {
          hash: 'h2',
          grantId: 'g2',
          clientId: 'c',
          redirectUri: CALLBACK,
          scope: ['read'],
          codeChallenge: null,
          codeChallengeMethod: null,
          expiresAt: 100,
          usedAt: null,
        },
      },
    );
    expect(await storage.redeemCode('h2', 100, [])).toEqual({ ok: false, reason: 'expired' });
    await storage.revokeGrant('g2', 5);
    expect(await storage.redeemCode('h2', 5, [])).toEqual({ ok: false, reason: 'revoked' });
  });
});

describe('storage faults', () => {
  function failing(...methods: (keyof Storage)[]): Storage {
    const inner = new MemoryStorage();
    return new Proxy(inner, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (methods.includes(name as keyof Storage) && typeof value === 'function') {
          return async () => {
            throw new Error('connection to db-1.internal:5432 refused (SECRET-DETAIL)');
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  it('a failing storage gives server_error without detail, reports to onError, and never throws', async () => {
    const errors: unknown[] = [];
    const t = await setup({ storage: failing('redeemCode'), onError: (e) => errors.push(e) });
    const res = await t.exchange(await t.getCode());
    expect(res.status).toBe(500);
    expect(json(res)).toEqual({ error: 'server_error', error_description: 'The server could not complete the request. Try again later.' });
    expect(res.body).not.toContain('SECRET-DETAIL');
    expect(errors).toHaveLength(1);
  });

  it('a revocation storage could not record answers 503, never 200 {}', async () => {
    const t = await setup({ storage: failing('revokeGrant') });
    const tokens = await t.tokens();
    const res = await t.server.revoke(t.post('/v1/oauth/revoke', { token: tokens.access_token }));
    expect(res.status).toBe(503);
    expect(json(res).error).toBe('temporarily_unavailable');
  });

  it('the resource check answers 503 without invalid_token when storage fails', async () => {
    // The bearer check reads through readToken when the store has it (MemoryStorage does), else findToken.
    const withoutRead = new Proxy(failing('findToken'), {
      get: (target, name) => (name === 'readToken' ? undefined : Reflect.get(target, name)),
    });
    for (const storage of [failing('readToken'), failing('findToken', 'readToken'), withoutRead]) {
      const t = await setup({ storage });
      const result = await t.api('GET', 'sometoken');
      expect(!result.ok && result.response.status).toBe(503);
      if (!result.ok) expect(result.response.headers['www-authenticate']).toBeUndefined();
    }
  });

  it('a readToken that throws instead of rejecting: 503 from the bearer check, revocation and introspection, reported, never a rejection', async () => {
    const inner = new MemoryStorage();
    const storage = new Proxy(inner, {
      get: (target, name) =>
        name === 'readToken'
          ? () => {
              throw new Error('SECRET-DETAIL');
            }
          : Reflect.get(target, name),
    }) as Storage;
    const errors: unknown[] = [];
    const t = await setup({ storage, onError: (e) => errors.push(e) });
    const tokens = await t.tokens();
    const checked = await t.api('GET', tokens.access_token);
    expect(!checked.ok && checked.response.status).toBe(503);
    const credentials = { client_id: t.client.clientId, client_secret: t.client.clientSecret };
    for (const res of [
      await t.server.revoke(t.post('/v1/oauth/revoke', { token: tokens.access_token })),
      await t.server.introspect(t.post('/v1/oauth/introspect', { token: tokens.access_token, ...credentials })),
    ]) {
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(res.body).not.toContain('SECRET-DETAIL');
    }
    expect(errors).toHaveLength(3);
  });

  it('the resource check answers 503 and reports, never rejects, when a host hook throws or the request is malformed', async () => {
    const errors: unknown[] = [];
    const scopes = {
      values: ['read'],
      default: ['read'],
      allows: () => {
        throw new Error('scope rule bug');
      },
    };
    const t = await setup({ scopes, onError: (e) => errors.push(e) });
    const tokens = await t.tokens();
    const result = await t.api('GET', tokens.access_token);
    expect(!result.ok && result.response.status).toBe(503);
    const malformed = await t.server.authenticate({ method: 'GET', url: '/v2/account' } as unknown as OAuthRequest);
    expect(!malformed.ok && malformed.response.status).toBe(503);
    expect(errors).toHaveLength(2);
  });

  it('the authorization endpoint shows an error page (500) when storage fails', async () => {
    const clock = new FakeClock();
    const server = new AuthorizationServer({
      storage: failing('findClient'),
      sessions: new FakeSessions(clock),
      clock,
      onError: () => {
        throw new Error('hook fails too');
      },
    });
    const d = await server.authorize({
      method: 'GET',
      url: `/v1/oauth/authorize?client_id=x&redirect_uri=${CALLBACK}&response_type=code`,
      headers: {},
    });
    expect(d).toMatchObject({ type: 'error', status: 500, error: 'server_error' });
  });
});

describe('Storage.readToken answered at once, by a promise, by a foreign thenable, or absent', () => {
  type Read = NonNullable<Storage['readToken']>;
  const variants: [string, (inner: MemoryStorage) => Read | undefined][] = [
    ['at once (MemoryStorage)', (inner) => (hash) => inner.readToken(hash)],
    ['by a promise', (inner) => async (hash) => inner.readToken(hash)],
    [
      'by a thenable that is not a Promise',
      (inner) => (hash) =>
        ({
          // biome-ignore lint/suspicious/noThenProperty: a thenable store answer is what this test is about
          then: (resolve: (v: unknown) => void) => resolve(inner.readToken(hash)),
        }) as unknown as ReturnType<Read>,
    ],
    ['absent (findToken)', () => undefined],
  ];
  it.each(variants)('%s: the same answers from the bearer check, introspection and revocation', async (_name, read) => {
    const inner = new MemoryStorage();
    const storage = new Proxy(inner, {
      get: (target, name) => (name === 'readToken' ? read(target) : Reflect.get(target, name)),
    }) as Storage;
    const t = await setup({ storage });
    const tokens = await t.tokens();
    const credentials = { client_id: t.client.clientId, client_secret: t.client.clientSecret };
    const introspect = async (token: string) => json(await t.server.introspect(t.post('/v1/oauth/introspect', { token, ...credentials })));

    const checked = await t.api('GET', tokens.access_token);
    expect(checked.ok && checked.token).toEqual({
      kind: 'oauth',
      clientId: t.client.clientId,
      account: ADA,
      scope: ['read'],
      expiresAt: expect.any(Number),
    });
    expect(!(await t.api('GET', 'unknown-token')).ok).toBe(true);
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, client_id: t.client.clientId, scope: 'read' });
    expect(await introspect('unknown-token')).toEqual({ active: false });

    expect((await t.server.revoke(t.post('/v1/oauth/revoke', { token: tokens.refresh_token }))).status).toBe(200);
    const after = await t.api('GET', tokens.access_token);
    expect(!after.ok && after.response.status).toBe(401);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });

    // A personal access token (docs/reference.md#personal-access-tokens): the same, and the host's own copies.
    const personal = await t.server.createPersonalToken({ account: ADA, name: 'script' });
    const viaPersonal = await t.api('GET', personal.token);
    expect(viaPersonal.ok && viaPersonal.token).toEqual({
      kind: 'personal',
      account: ADA,
      scope: ['read'],
      expiresAt: Number.MAX_SAFE_INTEGER,
      personalToken: { id: personal.id, name: 'script' },
    });
    if (viaPersonal.ok) {
      viaPersonal.token.account.email = 'changed@example.com';
      viaPersonal.token.scope.push('write');
    }
    const again = await t.api('GET', personal.token);
    expect(again.ok && [again.token.account, again.token.scope]).toEqual([ADA, ['read']]);
    expect(await introspect(personal.token)).toEqual({ active: false });
    expect((await t.server.revoke(t.post('/v1/oauth/revoke', { token: personal.token }))).status).toBe(200);
    const revoked = await t.api('GET', personal.token);
    expect(!revoked.ok && revoked.response.status).toBe(401);
  });
});

describe('MemoryStorage.prune', () => {
  it('keeps everything live and replay-relevant, drops what can no longer matter, and stays flat over a refresh chain', async () => {
    const storage = new MemoryStorage();
    const t = await setup({ storage });
    const live = await t.tokens();
    const pendingCode = await t.getCode();
    let refresh = live.refresh_token;
    const rotated: string[] = [];
    for (let i = 0; i < 50; i++) {
      rotated.push(refresh);
      refresh = json(await t.refresh(refresh)).refresh_token as string;
    }
    const size = () => (storage as unknown as { tokens: Map<string, unknown> }).tokens.size;
    // Right after the chain: 49 rotated refresh tokens and the 50 access tokens their rotations
    // revoked go at once; the family keeps its newest pair, and the refresh token rotated last
    // while it may be retried (no child rotated, MAX_REFRESH_WINDOW_SECONDS).
    expect(storage.prune(t.clock.now()).tokens).toBe(99);
    expect(size()).toBe(3);
    t.clock.advance(MAX_REFRESH_WINDOW_SECONDS * 1000 + 1);
    expect(storage.prune(t.clock.now()).tokens).toBe(1);
    expect(size()).toBe(2);
    // 31 days later the pending code has expired, and so has the used one.
    t.clock.advance(31 * 24 * 3600 * 1000);
    const removed = storage.prune(t.clock.now());
    expect(removed.codes).toBe(2);
    expect(removed.tokens).toBe(1); // the newest access token expired; the newest refresh token stays (no lifetime)
    expect(json(await t.exchange(pendingCode)).error).toBe('invalid_grant');
    // A replay of a pruned rotated token is still a replay: refused, and the family is revoked.
    expect(json(await t.refresh(rotated[0]!)).error).toBe('invalid_grant');
    expect(json(await t.refresh(refresh)).error).toBe('invalid_grant');
    // Revoked grants go entirely.
    const doomed = await t.tokens();
    await t.server.revoke(t.post('/v1/oauth/revoke', { token: doomed.access_token }));
    expect(storage.prune(t.clock.now()).grants).toBeGreaterThanOrEqual(1);
    expect(await storage.findToken((await import('../../src/crypto.js')).sha256Base64url(doomed.refresh_token))).toBeNull();
  });

  it('drops pruned grants from the (account, client) index, and revokeAccess still reaches the grants left', async () => {
    const storage = new MemoryStorage();
    const t = await setup({ storage });
    const index = () => (storage as unknown as { grantsByPair: Map<string, string[]> }).grantsByPair;
    for (let i = 0; i < 5; i++) await t.getCode(); // five grants whose codes will expire unused
    expect([...index().values()].flat()).toHaveLength(5);
    t.clock.advance(3600 * 1000);
    expect(storage.prune(t.clock.now()).grants).toBe(5);
    expect(index().size).toBe(0);
    const kept = await t.tokens();
    await t.getCode();
    t.clock.advance(3600 * 1000);
    expect(storage.prune(t.clock.now()).grants).toBe(1);
    expect([...index().values()].flat()).toHaveLength(1);
    expect((await t.api('GET', kept.access_token)).ok).toBe(true);
    await t.server.revokeAccess({ accountUuid: ADA.uuid, clientId: t.client.clientId });
    expect((await t.api('GET', kept.access_token)).ok).toBe(false);
  });

  it('returns every field of every record it was given, optional ones included, and nothing more', async () => {
    const storage = new MemoryStorage();
    const account = { uuid: 'a'.repeat(32), name: 'Ada', email: 'ada@example.com' };
    const request = {
      clientId: 'c',
      redirectUri: 'https://a.example/cb',
      responseType: 'code' as const,
      scope: ['read'],
      state: 's',
      prompt: ['login'],
      maxAuthAge: 60,
      accountHint: 'aaaa',
      codeChallenge: 'x'.repeat(43),
      codeChallengeMethod: 'S256' as const,
    };
    const interaction = {
      idHash: 'i',
      kind: 'consent' as const,
      purpose: 'authorization' as const,
      request,
      requestedAt: 1,
      expiresAt: 2,
      loginAfter: 1,
      account,
    };
    await storage.saveInteraction(interaction);
    expect(await storage.findInteraction('i')).toStrictEqual(interaction);
    const bare = {
      idHash: 'j',
      kind: 'login' as const,
      purpose: 'authorization' as const,
      request: {
        clientId: 'c',
        redirectUri: 'https://a.example/cb',
        responseType: 'token' as const,
        scope: ['read'],
        prompt: ['select_account'],
      },
      requestedAt: 1,
      expiresAt: 2,
      loginAfter: null,
    };
    await storage.saveInteraction(bare);
    expect(await storage.findInteraction('j')).toStrictEqual(bare);
    const grant = { id: 'g', kind: 'oauth' as const, clientId: 'c', account, scope: ['read', 'write'], createdAt: 1, revokedAt: null };
    const code = {
      hash: 'h',
      grantId: 'g',
      clientId: 'c',
      redirectUri: 'https://a.example/cb',
      scope: ['read'],
      codeChallenge: 'x'.repeat(43),
      codeChallengeMethod: 'S256' as const,
      expiresAt: 9,
      usedAt: null,
    };
    const token = {
      hash: 't',
      kind: 'refresh' as const,
      grantId: 'g',
      clientId: 'c',
      scope: ['read'],
      issuedAt: 1,
      expiresAt: null,
      pairHash: 'p',
      rotatedAt: null,
      revokedAt: null,
    };
    await storage.createGrant(grant, { code, tokens: [token] });
    expect(await storage.findCode('h')).toStrictEqual(code);
    expect(await storage.findToken('t')).toStrictEqual({ token, grant });
    await storage.saveClient({ id: 'c', name: 'App', redirectUri: 'https://a.example/cb', secretHash: null, createdAt: 1 });
    expect(await storage.findClient('c')).toStrictEqual({
      id: 'c',
      name: 'App',
      redirectUri: 'https://a.example/cb',
      secretHash: null,
      createdAt: 1,
    });
  });
});
