import { describe, expect, it } from 'vitest';
import { isOAuthError } from '../../src/index.js';
import { ADA, BOB, json, setup } from '../helpers.js';

/** The host's management API: authorized applications, secret reset, revoking an app's tokens. */
describe('management API', () => {
  it('listAuthorizations lists each app the user approved, with scope and date, and forgets revoked ones', async () => {
    const t = await setup();
    await t.authorizeAndApprove({ scope: 'read' });
    t.clock.advance(1000);
    await t.authorizeAndApprove({ client_id: t.other.clientId, redirect_uri: 'https://other.example/cb', scope: 'read write' });
    const list = await t.server.listAuthorizations(ADA.uuid);
    expect(list).toEqual([
      { client: { id: t.other.clientId, name: 'Other App' }, scope: ['read', 'write'], grantedAt: t.clock.now() },
      { client: { id: t.client.clientId, name: 'Example App' }, scope: ['read'], grantedAt: t.clock.now() - 1000 },
    ]);
    expect(await t.server.listAuthorizations(BOB.uuid)).toEqual([]);
    await t.server.revokeAccess({ accountUuid: ADA.uuid, clientId: t.other.clientId });
    expect((await t.server.listAuthorizations(ADA.uuid)).map((a) => a.client.id)).toEqual([t.client.clientId]);
  });

  it('getClient shows the application without its secret', async () => {
    const t = await setup();
    const info = await t.server.getClient(t.client.clientId);
    expect(info).toEqual({
      clientId: t.client.clientId,
      name: 'Example App',
      redirectUri: 'https://client.example/cb',
      public: false,
      createdAt: t.clock.now(),
    });
    expect(JSON.stringify(info)).not.toContain(t.client.clientSecret);
    expect(await t.server.getClient('unknown')).toBeNull();
  });

  it('resetClientSecret: the new secret works, the old one fails at once, issued tokens stay valid', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    const code = await t.getCode();
    const { clientSecret } = await t.server.resetClientSecret(t.client.clientId);
    expect(clientSecret).not.toBe(t.client.clientSecret);
    expect((await t.exchange(code)).status).toBe(401);
    expect((await t.exchange(code, { client_secret: clientSecret })).status).toBe(200);
    expect((await t.api('GET', tokens.access_token)).ok).toBe(true);
    expect(isOAuthError(await t.server.resetClientSecret('unknown').catch((e: unknown) => e))).toBe(true);
  });

  it('revokeClientTokens revokes every code and token of the app for every user, and nothing of other apps', async () => {
    const t = await setup();
    const ada = await t.tokens();
    const bobCookie = t.sessions.signIn(BOB);
    const bob = json(await t.exchange(await t.getCode({}, bobCookie)));
    const pending = await t.getCode();
    const otherUrl = await t.authorizeAndApprove({
      client_id: t.other.clientId,
      redirect_uri: 'https://other.example/cb',
      response_type: 'token',
    });
    const otherToken = new URLSearchParams(otherUrl.hash.slice(1)).get('access_token')!;
    await t.server.revokeClientTokens(t.client.clientId);
    expect((await t.api('GET', ada.access_token)).ok).toBe(false);
    expect((await t.api('GET', bob.access_token as string)).ok).toBe(false);
    expect(json(await t.refresh(ada.refresh_token)).error).toBe('invalid_grant');
    expect(json(await t.exchange(pending)).error).toBe('invalid_grant');
    expect((await t.api('GET', otherToken)).ok).toBe(true);
    // New authorizations work again.
    expect((await t.api('GET', (await t.tokens()).access_token)).ok).toBe(true);
  });
});

describe('interaction details for the host', () => {
  it('describeInteraction names the app and the hint without using the interaction up', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'read write', i: 'a1b2c3' })));
    if (d.type !== 'login') throw new Error(d.type);
    const described = await t.server.describeInteraction(d.interaction.id);
    expect(described).toEqual({
      kind: 'login',
      client: { id: t.client.clientId, name: 'Example App' },
      scope: ['read', 'write'],
      accountHint: 'a1b2c3',
      expiresAt: t.clock.now() + 600_000,
    });
    expect((await t.server.resume(d.interaction.id, t.get('/', t.ada))).type).toBe('consent');
    expect(await t.server.describeInteraction(d.interaction.id)).toBeNull();
    expect(await t.server.describeInteraction('nope')).toBeNull();
  });

  it('siteName puts the platform on the consent and error pages', async () => {
    const { interactionResponse } = await import('../../src/index.js');
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl(), t.ada));
    const consent = interactionResponse(d, t.get('/'), { siteName: 'Nimbus <Cloud>' });
    expect(consent.body).toContain('Nimbus &#60;Cloud&#62;');
    const error = interactionResponse({ type: 'error', status: 400, error: 'invalid_scope', description: 'x' }, t.get('/'), {
      siteName: 'Nimbus',
    });
    expect(error.body).toContain('<title>Authorization error · Nimbus</title>');
  });
});
