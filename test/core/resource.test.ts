import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../src/index.js';
import { ADA, setup } from '../helpers.js';

/**
 * The bearer check (RFC 6750; docs/reference.md#resource-check) and the scope each method needs
 * (docs/reference.md#scope).
 */
describe('resource API bearer check', () => {
  const table: Array<[string, 'read' | 'read write', boolean]> = [
    ['GET', 'read', true],
    ['HEAD', 'read', true],
    ['POST', 'read', false],
    ['PUT', 'read', false],
    ['PATCH', 'read', false],
    ['DELETE', 'read', false],
    ['OPTIONS', 'read', false],
    ['PURGE', 'read', false],
    ['GET', 'read write', true],
    ['HEAD', 'read write', true],
    ['POST', 'read write', true],
    ['PUT', 'read write', true],
    ['PATCH', 'read write', true],
    ['DELETE', 'read write', true],
    ['get', 'read', true],
  ];
  it.each(table)('%s with a %s token → allowed: %s', async (method, scope, allowed) => {
    const t = await setup();
    const tokens = await t.tokens({ scope });
    const result = await t.api(method, tokens.access_token);
    expect(result.ok).toBe(allowed);
    if (!result.ok) {
      expect(result.response.status).toBe(403);
      expect(result.response.headers['www-authenticate']).toBe(
        'Bearer realm="authgate", error="insufficient_scope", error_description="The access token does not allow this request method.", scope="read write"',
      );
    }
  });

  it('a valid token gives the client, the account, the scope and the expiry time', async () => {
    const t = await setup();
    const tokens = await t.tokens({ scope: 'read write' });
    const result = await t.api('GET', tokens.access_token);
    expect(result).toEqual({
      ok: true,
      token: {
        kind: 'oauth',
        clientId: t.client.clientId,
        account: ADA,
        scope: ['read', 'write'],
        expiresAt: t.clock.now() + 2_592_000_000,
      },
    });
  });

  it('no Authorization header: 401 with a Bearer challenge and no error code (RFC 6750 §3.1)', async () => {
    const t = await setup();
    for (const headers of [{}, { authorization: 'Basic abc' }]) {
      const result = await t.server.authenticate({ method: 'GET', url: '/v2/account', headers });
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.response.status).toBe(401);
      expect(result.response.headers['www-authenticate']).toBe('Bearer realm="authgate"');
    }
  });

  it('a token in the query string is ignored (treated as no credentials)', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    const result = await t.server.authenticate({ method: 'GET', url: `/v2/account?access_token=${tokens.access_token}`, headers: {} });
    expect(!result.ok && result.response.status).toBe(401);
  });

  it('unknown, malformed, revoked or expired tokens: 401 invalid_token', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    await t.server.revoke(t.post('/v1/oauth/revoke', { token: tokens.access_token }));
    const expired = await t.tokens();
    t.clock.advance(2_592_000_000);
    for (const token of ['unknown', 'bad!chars"', tokens.access_token, expired.access_token, 'x'.repeat(600)]) {
      const result = await t.api('GET', token);
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.response.status).toBe(401);
      expect(result.response.headers['www-authenticate']).toMatch(/^Bearer realm="authgate", error="invalid_token"/);
      expect(JSON.parse(result.response.body).error).toBe('invalid_token');
    }
  });

  it('a refresh token or a code used as a bearer token: 401 invalid_token', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    for (const token of [tokens.refresh_token, await t.getCode()]) {
      const result = await t.api('GET', token);
      expect(!result.ok && result.response.status).toBe(401);
    }
  });

  it('the scheme name is case-insensitive', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    for (const scheme of ['bearer', 'BEARER', 'Bearer', 'bEaReR', 'Bearer ']) {
      const result = await t.server.authenticate({
        method: 'GET',
        url: '/v2',
        headers: { authorization: `${scheme} ${tokens.access_token}` },
      });
      expect(result.ok).toBe(true);
      if (result.ok) expect(result.token.clientId).toBe(t.client.clientId);
    }
  });

  it('malformed requests: 400 invalid_request', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    const cases = [
      { authorization: 'Bearer' },
      { authorization: `Bearer ${tokens.access_token} extra` },
      { authorization: [`Bearer ${tokens.access_token}`, `Bearer ${tokens.access_token}`] },
    ];
    for (const headers of cases) {
      const result = await t.server.authenticate({ method: 'GET', url: '/v2', headers });
      expect(!result.ok && result.response.status).toBe(400);
    }
    const both = await t.server.authenticate({
      method: 'GET',
      url: `/v2?access_token=${tokens.access_token}`,
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(!both.ok && both.response.status).toBe(400);
  });

  it("the scope in the result is the caller's own, even from a store that hands out its stored arrays", async () => {
    const inner = new MemoryStorage();
    let kept: Awaited<ReturnType<MemoryStorage['findToken']>> | undefined;
    // A store that caches lookups and returns the same objects every time (it skips the copies).
    const storage = new Proxy(inner, {
      get(target, name) {
        if (name === 'findToken') return async (hash: string) => (kept ??= await target.findToken(hash));
        if (name === 'readToken') return undefined; // a store without the optional method: the core uses findToken
        const value = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const t = await setup({ storage });
    const tokens = await t.tokens();
    const first = await t.api('GET', tokens.access_token);
    expect(first.ok).toBe(true);
    if (first.ok) first.token.scope.push('write');
    expect((await t.api('POST', tokens.access_token)).ok).toBe(false);
  });
  it('the token a bearer check hands the host is its own: changing its account or scope changes nothing stored', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    const first = await t.api('GET', tokens.access_token);
    if (!first.ok) throw new Error('the live token was refused');
    const account = { ...first.token.account };
    first.token.account.uuid = 'someone-else';
    first.token.account.name = 'Mallory';
    first.token.scope.push('write');
    const again = await t.api('GET', tokens.access_token);
    if (!again.ok) throw new Error('the live token was refused');
    expect(again.token.account).toEqual(account);
    expect(again.token.scope).toEqual(['read']);
    expect((await t.api('POST', tokens.access_token)).ok).toBe(false);
    const introspected = await t.server.introspect(
      t.post('/v1/oauth/introspect', { token: tokens.access_token, client_id: t.client.clientId, client_secret: t.client.clientSecret }),
    );
    expect(JSON.parse(introspected.body)).toMatchObject({ active: true, sub: account.uuid, username: account.email, scope: 'read' });
  });
});
