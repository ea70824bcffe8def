/**
 * Managing clients and accounts (docs/reference.md#managing-clients), as sequences through the
 * server on both stores: register with an owner, list, rename, move the callback while codes and
 * consent pages are pending, delete a client, revoke everything of an account.
 */
import { describe, expect, it } from 'vitest';
import { AuthorizationServer, ConfigError, isOAuthError, MemoryStorage, type AuditEvent, type Storage } from '../../src/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA, BOB, CALLBACK, json, setup } from '../helpers.js';
import { storesUnderTest } from './pg.js';

const stores = storesUnderTest('clientmgmt');

const NEW_CALLBACK = 'https://client.example/new-callback';

/** What a promise rejected with (an OAuthError's code), or 'resolved'. */
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: unknown) => (isOAuthError(error) ? error.code : error instanceof ConfigError ? 'ConfigError' : String(error)),
  );

describe.each(stores)('%s: managing clients and accounts', (_name, makeStorage) => {
  async function setupWithAudit() {
    const events: AuditEvent[] = [];
    const t = await setup({ storage: makeStorage(), onAudit: (event) => events.push(event) });
    return { ...t, events };
  }

  it('registerClient keeps an owner and metadata; getClient and listClients({ owner }) show them, oldest first', async () => {
    const t = await setupWithAudit();
    const first = await t.server.registerClient({
      name: 'Ada CLI',
      redirectUri: 'http://127.0.0.1/cb',
      public: true,
      owner: ADA.uuid,
      metadata: { team: 'platform', tags: ['cli'] },
    });
    t.clock.advance(1000);
    const second = await t.server.registerClient({ name: 'Ada Web', redirectUri: CALLBACK, owner: ADA.uuid });
    await t.server.registerClient({ name: 'Bob App', redirectUri: CALLBACK, owner: BOB.uuid });

    const mine = await t.server.listClients({ owner: ADA.uuid });
    expect(mine.map((c) => c.name)).toEqual(['Ada CLI', 'Ada Web']);
    expect(mine[0]).toEqual({
      clientId: first.clientId,
      name: 'Ada CLI',
      redirectUri: 'http://127.0.0.1/cb',
      public: true,
      createdAt: t.clock.now() - 1000,
      owner: ADA.uuid,
      metadata: { team: 'platform', tags: ['cli'] },
    });
    expect(JSON.stringify(mine)).not.toContain(second.clientSecret);
    expect((await t.server.getClient(second.clientId))?.owner).toBe(ADA.uuid);
    // Without a filter: every registered client (a shared database holds other tests' too), oldest first.
    const all = (await t.server.listClients()).map((c) => c.clientId);
    for (const id of [t.client.clientId, t.other.clientId, first.clientId, second.clientId]) expect(all).toContain(id);
    expect(all.indexOf(first.clientId)).toBeLessThan(all.indexOf(second.clientId));
    expect(await t.server.listClients({ owner: 'nobody' })).toEqual([]);
  });

  it('refuses an owner or metadata it cannot keep faithfully, with invalid_request', async () => {
    const t = await setupWithAudit();
    const register = (extra: Record<string, unknown>) =>
      failure(t.server.registerClient({ name: 'App', redirectUri: CALLBACK, ...extra } as never));
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(await register({ owner: '' })).toBe('invalid_request');
    expect(await register({ owner: 'a\u0000b' })).toBe('invalid_request');
    expect(await register({ owner: 'x'.repeat(201) })).toBe('invalid_request');
    expect(await register({ metadata: ['a list'] })).toBe('invalid_request');
    expect(await register({ metadata: new Date() })).toBe('invalid_request');
    expect(await register({ metadata: cyclic })).toBe('invalid_request');
    expect(await register({ metadata: { big: 'x'.repeat(4096) } })).toBe('invalid_request');
    expect(await register({ metadata: { n: 1n } })).toBe('invalid_request');
    expect(await failure(t.server.listClients({ owner: 5 as never }))).toBe('invalid_request');
    // Nothing half-made: no client was stored.
    expect(t.events.filter((e) => e.type === 'client.registered')).toHaveLength(2);
  });

  it('updateClient renames: the next consent page shows the new name; reported with callbackChanged false', async () => {
    const t = await setupWithAudit();
    const info = await t.server.updateClient(t.client.clientId, { name: '  Example App 2  ', metadata: { plan: 'pro' } });
    expect(info).toMatchObject({ name: 'Example App 2', redirectUri: CALLBACK, metadata: { plan: 'pro' } });
    const decision = await t.server.authorize(t.get(t.authorizeUrl(), t.ada));
    expect(decision.type === 'consent' && decision.interaction.client.name).toBe('Example App 2');
    expect(t.events.find((e) => e.type === 'client.updated')).toMatchObject({ clientId: t.client.clientId, callbackChanged: false });
    expect((await t.server.updateClient(t.client.clientId, { metadata: null })).metadata).toBeUndefined();
    // The secret still works: an update changes nothing else.
    expect((await t.exchange(await t.getCode())).status).toBe(200);
  });

  it('updateClient sets, keeps and removes the OpenID Connect section (postLogoutRedirectUris), read back from the store', async () => {
    const t = await setup({ storage: makeStorage(), issuer: 'https://auth.example.com', openid: {} });
    const openid = { postLogoutRedirectUris: ['https://client.example/bye', 'http://127.0.0.1:9/bye'], defaultMaxAge: 30 };
    expect((await t.server.updateClient(t.client.clientId, { openid })).openid).toEqual(openid);
    expect((await t.server.getClient(t.client.clientId))?.openid).toEqual(openid);
    // Another change leaves it as it is.
    await t.server.updateClient(t.client.clientId, { name: 'Renamed' });
    expect((await t.server.getClient(t.client.clientId))?.openid).toEqual(openid);
    await t.server.updateClient(t.client.clientId, { openid: null });
    expect((await t.server.getClient(t.client.clientId))?.openid).toBeUndefined();
    expect(
      await failure(t.server.updateClient(t.client.clientId, { openid: { postLogoutRedirectUris: ['http://client.example/'] } })),
    ).toBe('invalid_request');
  });

  it('updateClient with a new callback URL: a pending code, consent and sign-in of the old one die; the new one works', async () => {
    const t = await setupWithAudit();
    const code = await t.getCode();
    const consent = await t.server.authorize(t.get(t.authorizeUrl({ state: 's1' }), t.ada));
    const denied = await t.server.authorize(t.get(t.authorizeUrl({ state: 's2' }), t.ada));
    const login = await t.server.authorize(t.get(t.authorizeUrl({ state: 's3' })));
    expect([consent.type, denied.type, login.type]).toEqual(['consent', 'consent', 'login']);
    if (consent.type !== 'consent' || denied.type !== 'consent' || login.type !== 'login') return;

    await t.server.updateClient(t.client.clientId, { redirectUri: NEW_CALLBACK });
    expect(t.events.find((e) => e.type === 'client.updated')).toMatchObject({ callbackChanged: true });

    // The code issued to the old callback: refused, even with the redirect_uri it was issued with.
    const exchanged = await t.exchange(code);
    expect([exchanged.status, json(exchanged)['error']]).toEqual([400, 'invalid_grant']);
    // Approve, deny and resume of requests made for the old callback: an error page, nothing sent there.
    for (const step of [
      t.server.approve(consent.interaction.id, t.get('/', t.ada)),
      t.server.deny(denied.interaction.id, t.get('/', t.ada)),
      t.server.resume(login.interaction.id, t.get('/', t.ada)),
    ]) {
      const decision = await step;
      expect(decision.type).toBe('error');
      expect(decision.type === 'error' && decision.description).toMatch(/callback URL changed/);
    }
    // The old callback is refused from now on; the new one works end to end.
    const old = await t.server.authorize(t.get(t.authorizeUrl(), t.ada));
    expect(old.type === 'error' && old.error).toBe('invalid_redirect_uri');
    const fresh = await t.getCode({ redirect_uri: NEW_CALLBACK });
    expect((await t.exchange(fresh, { redirect_uri: NEW_CALLBACK })).status).toBe(200);
  });

  it('updateClient refuses what registerClient refuses, and unknown clients, changing nothing', async () => {
    const t = await setupWithAudit();
    const update = (changes: Record<string, unknown>, id = t.client.clientId) => failure(t.server.updateClient(id, changes as never));
    expect(await update({ redirectUri: 'https://client.example/cb#frag' })).toBe('invalid_request');
    expect(await update({ redirectUri: 'http://client.example/cb' })).toBe('invalid_request');
    expect(await update({ name: ' ' })).toBe('invalid_request');
    expect(await update({ metadata: 'text' })).toBe('invalid_request');
    expect(await update({ name: 'X' }, 'unknown')).toBe('invalid_client');
    expect(await update({ name: 'X' }, 'https://app.example/client.json')).toBe('invalid_client');
    expect(await t.server.getClient(t.client.clientId)).toMatchObject({ name: 'Example App', redirectUri: CALLBACK });
  });

  it('a public loopback client moved to another loopback path keeps any-port matching on the new path only', async () => {
    const t = await setupWithAudit();
    const cli = await t.server.registerClient({ name: 'CLI', redirectUri: 'http://127.0.0.1/old', public: true });
    await t.server.updateClient(cli.clientId, { redirectUri: 'http://127.0.0.1/new' });
    const url = (redirect: string) =>
      `/v1/oauth/authorize?${new URLSearchParams({ client_id: cli.clientId, redirect_uri: redirect, response_type: 'code', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })}`;
    expect((await t.server.authorize(t.get(url('http://127.0.0.1:5173/new'), t.ada))).type).toBe('consent');
    const old = await t.server.authorize(t.get(url('http://127.0.0.1:5173/old'), t.ada));
    expect(old.type === 'error' && old.error).toBe('invalid_redirect_uri');
  });

  it('deleteClient: every token and code of it, for every user, dies at once; consents go; reported; a second delete is invalid_client', async () => {
    const t = await setupWithAudit();
    const ada = await t.tokens();
    const bobCookie = t.sessions.signIn(BOB);
    const bobCode = await t.getCode({}, bobCookie);
    const pending = await t.server.authorize(t.get(t.authorizeUrl(), t.ada));
    const otherCode = await t.getCode({ client_id: t.other.clientId, redirect_uri: 'https://other.example/cb' });
    const otherTokens = json(
      await t.exchange(otherCode, {
        client_id: t.other.clientId,
        client_secret: t.other.clientSecret,
        redirect_uri: 'https://other.example/cb',
      }),
    ) as { access_token: string };

    await t.server.deleteClient(t.client.clientId);
    expect(t.events.filter((e) => e.type === 'client.deleted')).toMatchObject([{ clientId: t.client.clientId }]);
    expect((await t.api('GET', ada.access_token)).ok).toBe(false);
    // A refresh without client credentials (allowed in the compatible profile) meets the revoked grant.
    expect(json(await t.refresh(ada.refresh_token))['error']).toBe('invalid_grant');
    expect(json(await t.refresh(ada.refresh_token, { client_id: t.client.clientId, client_secret: t.client.clientSecret }))['error']).toBe(
      'invalid_client',
    );
    expect((await t.exchange(bobCode)).status).toBe(401);
    expect(pending.type).toBe('consent');
    if (pending.type === 'consent') expect((await t.server.approve(pending.interaction.id, t.get('/', t.ada))).type).toBe('error');
    expect((await t.server.listAuthorizations(ADA.uuid)).map((a) => a.client.id)).not.toContain(t.client.clientId);
    expect(await t.server.getClient(t.client.clientId)).toBeNull();
    expect(await failure(t.server.deleteClient(t.client.clientId))).toBe('invalid_client');
    // Another client of the same user is untouched.
    expect((await t.api('GET', otherTokens.access_token)).ok).toBe(true);
    const authorized = (await t.server.listAuthorizations(ADA.uuid)).map((a) => a.client.id);
    expect(authorized).toContain(t.other.clientId);
    expect(authorized).not.toContain(t.client.clientId);
  });

  it('revokeAllForAccount: every grant of one account, to every client, dies; consents go (prompt=none asks again); others keep theirs', async () => {
    const t = await setupWithAudit();
    const adaOne = await t.tokens();
    const adaCode = await t.getCode();
    const bobCookie = t.sessions.signIn(BOB);
    const bob = json(await t.exchange(await t.getCode({}, bobCookie))) as { access_token: string };
    const adaPersonal = await t.server.createPersonalToken({ account: ADA, name: 'CI deploy' });
    const bobPersonal = await t.server.createPersonalToken({ account: BOB, name: 'CI deploy' });
    expect((await t.api('GET', adaPersonal.token)).ok).toBe(true);

    await t.server.revokeAllForAccount(ADA.uuid);
    // Personal access tokens are grants of the account too.
    expect((await t.api('GET', adaPersonal.token)).ok).toBe(false);
    expect((await t.api('GET', bobPersonal.token)).ok).toBe(true);
    expect(t.events.filter((e) => e.type === 'account.grants_revoked')).toMatchObject([{ accountUuid: ADA.uuid }]);
    expect((await t.api('GET', adaOne.access_token)).ok).toBe(false);
    expect(json(await t.refresh(adaOne.refresh_token))['error']).toBe('invalid_grant');
    expect(json(await t.exchange(adaCode))['error']).toBe('invalid_grant');
    expect(await t.server.listAuthorizations(ADA.uuid)).toEqual([]);
    const silent = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none' }), t.ada));
    expect(silent.type === 'redirect' && new URL(silent.location).searchParams.get('error')).toBe('consent_required');
    expect((await t.api('GET', bob.access_token)).ok).toBe(true);
    expect((await t.server.listAuthorizations(BOB.uuid)).map((a) => a.client.id)).toContain(t.client.clientId);
    expect(await failure(t.server.revokeAllForAccount(''))).toBe('invalid_request');
  });

  it('a store without the optional methods: the calls that need them are a ConfigError naming the method; the rest works', async () => {
    const memory = new MemoryStorage();
    const storage: Storage = {
      saveClient: (c) => memory.saveClient(c),
      findClient: (id) => memory.findClient(id),
      saveInteraction: (i) => memory.saveInteraction(i),
      findInteraction: (h) => memory.findInteraction(h),
      takeInteraction: (h, n) => memory.takeInteraction(h, n),
      saveConsent: (c) => memory.saveConsent(c),
      findConsent: (a, c) => memory.findConsent(a, c),
      listConsents: (a) => memory.listConsents(a),
      createGrant: (g, i) => memory.createGrant(g, i),
      findCode: (h) => memory.findCode(h),
      redeemCode: (h, n, t) => memory.redeemCode(h, n, t),
      findToken: (h) => memory.findToken(h),
      rotateRefreshToken: (h, n, t) => memory.rotateRefreshToken(h, n, t),
      findRefreshFamily: (f) => memory.findRefreshFamily(f),
      revokeGrant: (g, n) => memory.revokeGrant(g, n),
      revokeAccess: (a, c, n) => memory.revokeAccess(a, c, n),
      revokeClientGrants: (c, n) => memory.revokeClientGrants(c, n),
    };
    const clock = new FakeClock();
    const server = new AuthorizationServer({ storage, sessions: new FakeSessions(clock), clock });
    const client = await server.registerClient({ name: 'App', redirectUri: CALLBACK, owner: 'team-1' });
    expect(await failure(server.listClients({ owner: 'team-1' }))).toBe('ConfigError');
    expect(await failure(server.deleteClient(client.clientId))).toBe('ConfigError');
    expect(await failure(server.revokeAllForAccount(ADA.uuid))).toBe('ConfigError');
    const error = await server.listClients().catch((e: unknown) => e);
    expect(String((error as Error).message)).toContain('listClients');
    expect((await server.updateClient(client.clientId, { name: 'Renamed' })).name).toBe('Renamed');
  });
});
