/**
 * Personal access tokens (docs/reference.md#personal-access-tokens): created by the account,
 * shown once, stored hashed, used like an OAuth access token at the bearer check, listed with
 * their last use (written at most once a minute), revoked by the account or by whoever holds
 * them at the revocation endpoint, and pruned once dead.
 */
import { describe, expect, it, vi } from 'vitest';
import { ConfigError, MemoryStorage, OAuthError, type AuditEvent, type Storage } from '../../src/index.js';
import { sha256Base64url } from '../../src/crypto.js';
import { ADA, BOB, json, setup } from '../helpers.js';
import { ISSUER } from '../fixtures.js';

const MINUTE = 60_000;

/** A server whose audit events are kept. */
async function withAudit(options: Parameters<typeof setup>[0] = {}) {
  const events: AuditEvent[] = [];
  const errors: unknown[] = [];
  const t = await setup({ onAudit: (e) => events.push(e), onError: (e) => errors.push(e), ...options });
  const personal = (over: { name?: string; scope?: string[] | string; expiresIn?: number | null } = {}) =>
    t.server.createPersonalToken({ account: ADA, name: 'CI deploy', scope: ['read', 'write'], ...over });
  return { ...t, events, errors, personal };
}

describe('personal access tokens', () => {
  it('create → use → list (last used) → revoke → use refused (401), with the audit events and no secret in them', async () => {
    const t = await withAudit();
    const created = await t.personal({ scope: ['read'] });
    expect(created).toEqual({
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      name: 'CI deploy',
      scope: ['read'],
      createdAt: t.clock.now(),
      expiresAt: null,
      lastUsedAt: null,
    });

    t.clock.advance(5_000);
    const used = await t.api('GET', created.token);
    expect(used).toEqual({
      ok: true,
      token: {
        kind: 'personal',
        account: ADA,
        scope: ['read'],
        expiresAt: Number.MAX_SAFE_INTEGER,
        personalToken: { id: created.id, name: 'CI deploy' },
      },
    });
    // A personal token belongs to no client: the verified token has no clientId, not even ''.
    expect(used.ok && Object.keys(used.token)).not.toContain('clientId');
    await vi.waitFor(async () => expect((await t.server.listPersonalTokens(ADA.uuid))[0]?.lastUsedAt).toBe(t.clock.now()));
    const { token: _value, ...shown } = created;
    expect(await t.server.listPersonalTokens(ADA.uuid)).toEqual([{ ...shown, lastUsedAt: t.clock.now() }]);

    expect(await t.server.revokePersonalToken(ADA.uuid, created.id)).toBe(true);
    const refused = await t.api('GET', created.token);
    expect(!refused.ok && refused.response.status).toBe(401);
    expect(!refused.ok && refused.response.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(await t.server.listPersonalTokens(ADA.uuid)).toEqual([]);
    expect(await t.server.revokePersonalToken(ADA.uuid, created.id)).toBe(false);

    const personalEvents = t.events.filter((e) => e.type.startsWith('personal_token.'));
    expect(personalEvents).toEqual([
      {
        type: 'personal_token.created',
        accountUuid: ADA.uuid,
        tokenId: created.id,
        scope: ['read'],
        expiresAt: null,
        at: expect.any(Number),
      },
      { type: 'personal_token.revoked', accountUuid: ADA.uuid, tokenId: created.id, via: 'account', at: expect.any(Number) },
    ]);
    const logged = JSON.stringify(t.events);
    expect(logged).not.toContain(created.token);
    expect(logged).not.toContain(sha256Base64url(created.token));
    expect(t.errors).toEqual([]);
  });

  it("is stored only as its hash, and the verified token is the host's own copy", async () => {
    const t = await withAudit();
    const created = await t.personal();
    const stored = await t.storage.findToken(sha256Base64url(created.token));
    // A personal grant and token of no client: no client id at all, not an empty one.
    expect(stored?.token).toMatchObject({ kind: 'personal', grantId: created.id });
    expect(stored?.grant).toMatchObject({ id: created.id, kind: 'personal', name: 'CI deploy', account: ADA });
    expect(stored?.token).not.toHaveProperty('clientId');
    expect(stored?.grant).not.toHaveProperty('clientId');
    expect(JSON.stringify(stored)).not.toContain(created.token);
    const first = await t.api('GET', created.token);
    if (!first.ok) throw new Error('refused');
    first.token.account.name = 'Mallory';
    first.token.scope.push('admin');
    const second = await t.api('GET', created.token);
    expect(second.ok && second.token.account).toEqual(ADA);
    expect(second.ok && second.token.scope).toEqual(['read', 'write']);
  });

  it('follows the scope rules of OAuth access tokens: read allows GET, write the other methods (403 insufficient_scope)', async () => {
    const t = await withAudit();
    const read = await t.personal({ scope: 'read' });
    const both = await t.personal({ scope: ['read', 'write'] });
    expect((await t.api('GET', read.token)).ok).toBe(true);
    const denied = await t.api('POST', read.token);
    expect(!denied.ok && denied.response.status).toBe(403);
    expect(!denied.ok && denied.response.headers['www-authenticate']).toContain('error="insufficient_scope", error_description');
    expect(!denied.ok && denied.response.headers['www-authenticate']).toContain('scope="read write"');
    expect((await t.api('DELETE', both.token)).ok).toBe(true);
    // Absent scope: the server's default (`read`).
    const byDefault = await t.server.createPersonalToken({ account: ADA, name: 'default' });
    expect(byDefault.scope).toEqual(['read']);
  });

  it("validates the scope against the server's own vocabulary, and its rule decides the requests", async () => {
    const scopes = {
      values: ['account:read', 'droplet:read', 'droplet:create'],
      default: ['account:read'],
      allows: (scope: readonly string[], request: { method: string; url: string }) =>
        request.url.startsWith('/v2/droplets')
          ? scope.includes(request.method === 'GET' ? 'droplet:read' : 'droplet:create')
          : scope.includes('account:read'),
    };
    const t = await withAudit({ scopes });
    await expect(t.personal({ scope: ['read'] })).rejects.toMatchObject({ code: 'invalid_scope' });
    const created = await t.personal({ scope: ['droplet:create', 'droplet:read'] });
    expect(created.scope).toEqual(['droplet:read', 'droplet:create']);
    const call = (method: string, url: string) =>
      t.server.authenticate({ method, url, headers: { authorization: `Bearer ${created.token}` } });
    expect((await call('POST', '/v2/droplets')).ok).toBe(true);
    const denied = await call('GET', '/v2/account');
    expect(!denied.ok && denied.response.status).toBe(403);
  });

  it.each([
    ['an empty name', { name: '  ' }, 'invalid_request'],
    ['a name of 101 characters', { name: 'x'.repeat(101) }, 'invalid_request'],
    ['a name with a control character', { name: 'ci\ndeploy' }, 'invalid_request'],
    ['a name that is no string', { name: 42 as unknown as string }, 'invalid_request'],
    ['an unknown scope value', { scope: ['admin'] }, 'invalid_scope'],
    ['write without read (not of the default vocabulary)', { scope: ['write'] }, 'invalid_scope'],
    ['an empty scope', { scope: [] }, 'invalid_scope'],
    ['a scope that is no string', { scope: 7 as unknown as string }, 'invalid_scope'],
    ['expiresIn 0', { expiresIn: 0 }, 'invalid_request'],
    ['a negative expiresIn', { expiresIn: -60 }, 'invalid_request'],
    ['a fractional expiresIn', { expiresIn: 1.5 }, 'invalid_request'],
    ['expiresIn beyond ten years', { expiresIn: 10 * 365 * 86400 + 1 }, 'invalid_request'],
    ['expiresIn as a string', { expiresIn: '3600' as unknown as number }, 'invalid_request'],
  ])('refuses %s with an OAuthError (%s), storing nothing', async (_name, over, code) => {
    const t = await withAudit();
    const error = await t.personal(over).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toMatchObject({ code });
    expect(await t.server.listPersonalTokens(ADA.uuid)).toEqual([]);
    expect(t.events.filter((e) => e.type === 'personal_token.created')).toEqual([]);
  });

  it('refuses an account without a uuid, name and email', async () => {
    const t = await withAudit();
    for (const account of [
      undefined,
      null,
      {},
      { uuid: '', name: 'a', email: 'b' },
      { uuid: 'x\u0000', name: 'a', email: 'b' },
      { uuid: 'u', name: 'a' },
    ]) {
      await expect(t.server.createPersonalToken({ account: account as never, name: 'n' })).rejects.toMatchObject({
        code: 'invalid_request',
      });
    }
  });

  it('a storage without listPersonalTokens / touchPersonalToken: a ConfigError that names the method', async () => {
    const memory = new MemoryStorage();
    const {
      listPersonalTokens: _l,
      touchPersonalToken: _t,
      ...rest
    } = Object.fromEntries(
      Object.getOwnPropertyNames(MemoryStorage.prototype).map((name) => [name, (memory as unknown as Record<string, unknown>)[name]]),
    );
    const plain = Object.fromEntries(
      Object.entries(rest)
        .filter(([name]) => name !== 'constructor')
        .map(([name, fn]) => [name, (fn as (...args: unknown[]) => unknown).bind(memory)]),
    ) as unknown as Storage;
    const t = await withAudit({ storage: plain });
    for (const call of [
      () => t.personal(),
      () => t.server.listPersonalTokens(ADA.uuid),
      () => t.server.revokePersonalToken(ADA.uuid, 'x'),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/listPersonalTokens\(\)/);
    }
    const onlyList = { ...plain, listPersonalTokens: memory.listPersonalTokens.bind(memory) } as Storage;
    const u = await withAudit({ storage: onlyList });
    await expect(u.personal()).rejects.toThrow(/touchPersonalToken\(\)/);
    // OAuth tokens go on working.
    expect((await t.api('GET', (await t.tokens()).access_token)).ok).toBe(true);
  });

  it('expiry: usable until expiresIn has passed, then 401 and personal_token.used_after_expiry, at most once a minute', async () => {
    const t = await withAudit();
    const created = await t.personal({ expiresIn: 3600 });
    expect(created.expiresAt).toBe(t.clock.now() + 3_600_000);
    t.clock.advance(3_600_000 - 1);
    const last = await t.api('GET', created.token);
    expect(last.ok && last.token.expiresAt).toBe(created.expiresAt);
    t.clock.advance(1);
    const refused = await t.api('GET', created.token);
    expect(!refused.ok && refused.response.status).toBe(401);
    expect(!refused.ok && refused.response.headers['www-authenticate']).toContain('error="invalid_token"');
    t.clock.advance(30_000);
    expect((await t.api('GET', created.token)).ok).toBe(false);
    const expired = () => t.events.filter((e) => e.type === 'personal_token.used_after_expiry');
    expect(expired()).toEqual([
      {
        type: 'personal_token.used_after_expiry',
        accountUuid: ADA.uuid,
        tokenId: created.id,
        expiresAt: created.expiresAt,
        at: created.expiresAt,
      },
    ]);
    t.clock.advance(MINUTE);
    expect((await t.api('GET', created.token)).ok).toBe(false);
    expect(expired()).toHaveLength(2);
    // Listed as expired until storage is pruned.
    expect((await t.server.listPersonalTokens(ADA.uuid)).map((p) => p.id)).toEqual([created.id]);
  });

  it('revokePersonalToken of an expired token: false and nothing changes (no event, the grant unrevoked, listed until prune)', async () => {
    const t = await withAudit();
    const created = await t.personal({ expiresIn: 60 });
    const other = await t.personal({ name: 'other', expiresIn: 60 });
    t.clock.advance(60_000 - 1);
    expect(await t.server.revokePersonalToken(ADA.uuid, other.id)).toBe(true); // still live a millisecond before
    t.clock.advance(1); // now === expiresAt: expired, as at the bearer check
    expect(await t.server.revokePersonalToken(ADA.uuid, created.id)).toBe(false);
    expect(
      t.events.filter((e) => e.type === 'personal_token.revoked').map((e) => e.type === 'personal_token.revoked' && e.tokenId),
    ).toEqual([other.id]);
    expect((await t.storage.findToken(sha256Base64url(created.token)))?.grant.revokedAt).toBeNull();
    expect((await t.server.listPersonalTokens(ADA.uuid)).map((p) => p.id)).toEqual([created.id]);
    t.clock.advance(MINUTE);
    expect(await t.server.revokePersonalToken(ADA.uuid, created.id)).toBe(false);
    t.storage.prune(t.clock.now());
    expect(await t.server.listPersonalTokens(ADA.uuid)).toEqual([]);
    expect(await t.server.revokePersonalToken(ADA.uuid, created.id)).toBe(false);
  });

  it('last used: two uses within a minute write once, a use a minute later writes again; the request never waits for it', async () => {
    const t = await withAudit();
    const created = await t.personal();
    const touch = vi.spyOn(t.storage, 'touchPersonalToken');
    const t0 = t.clock.now();
    expect((await t.api('GET', created.token)).ok).toBe(true);
    t.clock.advance(MINUTE - 1);
    expect((await t.api('GET', created.token)).ok).toBe(true);
    expect(touch.mock.calls).toEqual([[created.id, t0]]);
    expect((await t.server.listPersonalTokens(ADA.uuid))[0]?.lastUsedAt).toBe(t0);
    t.clock.advance(1);
    expect((await t.api('GET', created.token)).ok).toBe(true);
    expect(touch.mock.calls).toEqual([
      [created.id, t0],
      [created.id, t0 + MINUTE],
    ]);
    expect((await t.server.listPersonalTokens(ADA.uuid))[0]?.lastUsedAt).toBe(t0 + MINUTE);

    // A store that never answers does not hold the request up; one that fails reaches onError.
    t.clock.advance(MINUTE);
    touch.mockImplementationOnce(() => new Promise<void>(() => {}));
    expect((await t.api('GET', created.token)).ok).toBe(true);
    t.clock.advance(MINUTE);
    touch.mockImplementationOnce(() => Promise.reject(new Error('database down')));
    expect((await t.api('GET', created.token)).ok).toBe(true);
    t.clock.advance(MINUTE);
    touch.mockImplementationOnce(() => {
      throw new Error('sync failure');
    });
    expect((await t.api('GET', created.token)).ok).toBe(true);
    await vi.waitFor(() => expect(t.errors.map((e) => (e as Error).message)).toEqual(['database down', 'sync failure']));
    t.errors.length = 0;
  });

  it('each token has its own minute, and an OAuth access token never writes a last use', async () => {
    const t = await withAudit();
    const a = await t.personal({ name: 'a' });
    const b = await t.personal({ name: 'b' });
    const touch = vi.spyOn(t.storage, 'touchPersonalToken');
    const oauth = await t.tokens();
    for (const token of [a.token, b.token, a.token, b.token, oauth.access_token]) expect((await t.api('GET', token)).ok).toBe(true);
    expect(touch.mock.calls.map(([id]) => id).sort()).toEqual([a.id, b.id].sort());
  });

  it("revokePersonalToken only revokes a token of that account: another account's id, or an unknown id, changes nothing", async () => {
    const t = await withAudit();
    const ada = await t.personal();
    const bob = await t.server.createPersonalToken({ account: BOB, name: 'bob', scope: 'read' });
    expect(await t.server.revokePersonalToken(BOB.uuid, ada.id)).toBe(false);
    expect(await t.server.revokePersonalToken(ADA.uuid, bob.id)).toBe(false);
    expect(await t.server.revokePersonalToken(ADA.uuid, 'f'.repeat(32))).toBe(false);
    expect(await t.server.revokePersonalToken('', ada.id)).toBe(false);
    expect(await t.server.revokePersonalToken(ADA.uuid, 42 as unknown as string)).toBe(false);
    expect((await t.api('GET', ada.token)).ok).toBe(true);
    expect((await t.api('GET', bob.token)).ok).toBe(true);
    expect((await t.server.listPersonalTokens(ADA.uuid)).map((p) => p.id)).toEqual([ada.id]);
    expect((await t.server.listPersonalTokens(BOB.uuid)).map((p) => p.id)).toEqual([bob.id]);
    expect(t.events.filter((e) => e.type === 'personal_token.revoked')).toEqual([]);
  });

  it('lists newest first, never an OAuth grant, and nothing for an unknown or implausible account', async () => {
    const t = await withAudit();
    await t.tokens();
    const first = await t.personal({ name: 'first' });
    t.clock.advance(1000);
    const second = await t.personal({ name: 'second' });
    expect((await t.server.listPersonalTokens(ADA.uuid)).map((p) => p.name)).toEqual(['second', 'first']);
    expect(await t.server.listPersonalTokens(BOB.uuid)).toEqual([]);
    expect(await t.server.listPersonalTokens('')).toEqual([]);
    // Nor is a personal token an authorized application.
    expect((await t.server.listAuthorizations(ADA.uuid)).map((a) => a.client.name)).toEqual(['Example App']);
    expect([first.id, second.id]).not.toContain(undefined);
  });

  it("the revocation endpoint: whoever holds the token may revoke it, with no client credentials or with any client's", async () => {
    const t = await withAudit();
    const leaked = await t.personal();
    const res = await t.server.revoke(t.post('/v1/oauth/revoke', { token: leaked.token }));
    expect(res.status).toBe(200);
    expect(res.body).toBe('{}');
    const after = await t.api('GET', leaked.token);
    expect(!after.ok && after.response.status).toBe(401);
    expect(t.events.filter((e) => e.type === 'personal_token.revoked')).toEqual([
      { type: 'personal_token.revoked', accountUuid: ADA.uuid, tokenId: leaked.id, via: 'revocation_endpoint', at: expect.any(Number) },
    ]);
    // Again: 200 {}, and no second event.
    expect((await t.server.revoke(t.post('/v1/oauth/revoke', { token: leaked.token }))).status).toBe(200);
    expect(t.events.filter((e) => e.type === 'personal_token.revoked')).toHaveLength(1);

    const other = await t.personal({ name: 'other' });
    const byClient = await t.server.revoke(
      t.post('/v1/oauth/revoke', { token: other.token, client_id: t.other.clientId, client_secret: t.other.clientSecret }),
    );
    expect(byClient.status).toBe(200);
    expect((await t.api('GET', other.token)).ok).toBe(false);

    // Credentials that are sent must still be right.
    const third = await t.personal({ name: 'third' });
    const wrong = await t.server.revoke(
      t.post('/v1/oauth/revoke', { token: third.token, client_id: t.client.clientId, client_secret: 'wrong' }),
    );
    expect(wrong.status).toBe(401);
    expect(json(wrong).error).toBe('invalid_client');
    expect((await t.api('GET', third.token)).ok).toBe(true);
  });

  it('introspection: inactive for every client, so a client learns nothing of the account (RFC 7662 §2.2)', async () => {
    const t = await withAudit();
    const created = await t.personal();
    for (const client of [t.client, t.other]) {
      const res = await t.server.introspect(
        t.post('/v1/oauth/introspect', { token: created.token, client_id: client.clientId, client_secret: client.clientSecret }),
      );
      expect(res.status).toBe(200);
      expect(json(res)).toEqual({ active: false });
    }
  });

  it('is no refresh token: the token endpoint refuses it (invalid_grant), and it still works', async () => {
    const t = await withAudit();
    const created = await t.personal();
    const res = await t.refresh(created.token, { client_id: t.client.clientId, client_secret: t.client.clientSecret });
    expect(json(res).error).toBe('invalid_grant');
    expect((await t.api('GET', created.token)).ok).toBe(true);
  });

  it('prune: removes expired and revoked tokens, keeps live ones; nothing comes back', async () => {
    const t = await withAudit();
    const expiring = await t.personal({ name: 'expiring', expiresIn: 60 });
    const revoked = await t.personal({ name: 'revoked' });
    const kept = await t.personal({ name: 'kept' });
    await t.server.revokePersonalToken(ADA.uuid, revoked.id);
    t.clock.advance(61_000);
    const removed = t.storage.prune(t.clock.now());
    expect(removed).toMatchObject({ tokens: 2, grants: 2 });
    expect((await t.server.listPersonalTokens(ADA.uuid)).map((p) => p.name)).toEqual(['kept']);
    for (const token of [expiring.token, revoked.token]) {
      const res = await t.api('GET', token);
      expect(!res.ok && res.response.status).toBe(401);
    }
    expect(await t.server.revokePersonalToken(ADA.uuid, expiring.id)).toBe(false);
    expect((await t.api('GET', kept.token)).ok).toBe(true);
    t.clock.advance(365 * 86_400_000);
    t.storage.prune(t.clock.now());
    expect((await t.api('GET', kept.token)).ok).toBe(true);
  });

  it('revocation racing uses: every use after the revocation is refused', async () => {
    const t = await withAudit();
    const created = await t.personal();
    const uses = Array.from({ length: 20 }, () => t.api('GET', created.token));
    const results = await Promise.all([...uses.slice(0, 10), t.server.revokePersonalToken(ADA.uuid, created.id), ...uses.slice(10)]);
    expect(results[10]).toBe(true);
    expect((await t.api('GET', created.token)).ok).toBe(false);
  });

  it('with a prefix: tokenPrefixes.personalToken, for secret scanners', async () => {
    const t = await withAudit({ tokenPrefixes: { personalToken: 'dop_v1_' } });
    const created = await t.personal();
    expect(created.token).toMatch(/^dop_v1_[A-Za-z0-9_-]{43}$/);
    expect((await t.api('GET', created.token)).ok).toBe(true);
    await expect(setup({ tokenPrefixes: { personalToken: 'bad prefix!' } })).rejects.toThrow(/tokenPrefixes.personalToken/);
  });

  it('with JWT access tokens: a personal token stays opaque and is accepted; its hash is no credential', async () => {
    const t = await withAudit({ accessTokenFormat: 'jwt', issuer: ISSUER });
    const created = await t.personal();
    expect(created.token).not.toContain('.');
    expect((await t.api('GET', created.token)).ok).toBe(true);
    expect((await t.api('GET', sha256Base64url(created.token))).ok).toBe(false);
    // A refresh token, opaque too, is still no bearer token.
    expect((await t.api('GET', (await t.tokens()).refresh_token)).ok).toBe(false);
    expect((await t.server.revoke(t.post('/v1/oauth/revoke', { token: created.token }))).status).toBe(200);
    expect((await t.api('GET', created.token)).ok).toBe(false);
  });

  it('protected resources: accepted by every resource, as an OAuth token issued without a resource', async () => {
    const API = 'https://api.example/v2';
    const t = await withAudit({ issuer: ISSUER, protectedResources: [{ resource: API }] });
    const created = await t.personal({ scope: 'read' });
    const call = (method: string) =>
      t.server.authenticate({ method, url: '/v2/account', headers: { authorization: `Bearer ${created.token}` } }, { resource: API });
    const ok = await call('GET');
    expect(ok.ok && ok.token.kind).toBe('personal');
    const denied = await call('POST');
    expect(!denied.ok && denied.response.status).toBe(403);
    await t.server.revokePersonalToken(ADA.uuid, created.id);
    const refused = await call('GET');
    expect(!refused.ok && refused.response.status).toBe(401);
    expect(!refused.ok && refused.response.headers['www-authenticate']).toContain('resource_metadata=');
  });
});

describe('personal access tokens and the OAuth management methods', () => {
  it("revokeClientTokens('') and revokeAccess with clientId '' revoke no personal token (no client has the empty id)", async () => {
    const t = await withAudit();
    const created = await t.personal();
    await t.server.revokeClientTokens('');
    await t.server.revokeAccess({ accountUuid: ADA.uuid, clientId: '' });
    expect((await t.api('GET', created.token)).ok).toBe(true);
    expect(t.events.map((e) => e.type).filter((type) => type !== 'client.registered')).toEqual(['personal_token.created']);
    // Revoking every application keeps personal tokens too.
    await t.server.revokeClientTokens(t.client.clientId);
    await t.server.revokeAccess({ accountUuid: ADA.uuid, clientId: t.other.clientId });
    expect((await t.api('GET', created.token)).ok).toBe(true);
  });

  it('isAccountActive: no personal token is created for an inactive account', async () => {
    const inactive = new Set([BOB.uuid]);
    const t = await withAudit({ isAccountActive: async (uuid) => !inactive.has(uuid) });
    await expect(t.server.createPersonalToken({ account: BOB, name: 'x' })).rejects.toMatchObject({ code: 'invalid_request' });
    expect(await t.server.listPersonalTokens(BOB.uuid)).toEqual([]);
    expect((await t.personal()).token).toBeTruthy();
  });
});
