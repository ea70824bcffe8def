/**
 * Every grant that issues tokens ends the same way (src/grants/issue-tokens.ts): the refresh-token
 * choice, the `lifetimes.grant` cap, the host's `isAccountActive` check at the token endpoint, and
 * one `token.issued` event. Walked here across all four (the code exchange, a refresh, a device
 * poll, the implicit flow) in one sequence per server, with time moving between them
 * (docs/reference.md#token-endpoint, #lifetimes, #device-authorization-grant-rfc-8628).
 */
import { describe, expect, it } from 'vitest';
import { DEVICE_CODE_GRANT, type AuditEvent, type AuthorizationServerOptions } from '../../src/index.js';
import { ADA, json, setup } from '../helpers.js';

const VERIFY = '/v1/oauth/device/verify';

async function issuing(options: Partial<AuthorizationServerOptions> = {}) {
  const events: AuditEvent[] = [];
  const asked: string[] = [];
  let active = true;
  const t = await setup({
    deviceAuthorization: {},
    onAudit: (e) => events.push(e),
    isAccountActive: (uuid) => {
      asked.push(uuid);
      return active;
    },
    ...options,
  });
  const device = await t.server.registerClient({
    name: 'TV App',
    redirectUri: 'https://tv.example/cb',
    grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'],
  });
  const credentials = (c: { clientId: string; clientSecret: string }) => ({ client_id: c.clientId, client_secret: c.clientSecret });
  /** A device authorization approved by Ada, then polled once: the token response. */
  async function devicePoll(client: { clientId: string; clientSecret: string } = device) {
    const started = json(
      await t.server.deviceAuthorization(t.post('/v1/oauth/device', credentials(client)), `https://auth.example${VERIFY}`),
    );
    const outcome = await t.server.enterUserCode(started['user_code'] as string, t.get(VERIFY, t.ada), VERIFY);
    if (outcome.type !== 'decision' || outcome.decision.type !== 'consent') throw new Error(JSON.stringify(outcome));
    await t.server.approve(outcome.decision.interaction.id, t.get(VERIFY, t.ada));
    return t.server.token(
      t.post('/v1/oauth/token', { grant_type: DEVICE_CODE_GRANT, device_code: started['device_code'] as string, ...credentials(client) }),
    );
  }
  const issuedEvents = () => events.filter((e) => e.type === 'token.issued');
  return {
    ...t,
    events,
    asked,
    device,
    devicePoll,
    issuedEvents,
    setActive: (value: boolean) => {
      active = value;
    },
  };
}

describe('the issuing tail', () => {
  it('each grant reports one token.issued naming its grant, client, account and scope; the account is asked once per token-endpoint use', async () => {
    const t = await issuing();
    const fragment = async () =>
      new URLSearchParams((await t.authorizeAndApprove({ response_type: 'token', scope: 'read' })).hash.slice(1));

    const pair = await t.tokens({ scope: 'read write' });
    t.clock.advance(60_000);
    const rotated = json(await t.refresh(pair.refresh_token, { scope: 'read' }));
    t.clock.advance(60_000);
    const polled = await t.devicePoll();
    expect(polled.status, polled.body).toBe(200);
    const implicit = await fragment();
    expect(implicit.get('access_token')).toBeTruthy();

    expect(t.issuedEvents().map(({ at: _at, grantId: _grantId, ...e }) => e)).toEqual([
      {
        type: 'token.issued',
        grantType: 'authorization_code',
        clientId: t.client.clientId,
        accountUuid: ADA.uuid,
        scope: ['read', 'write'],
      },
      { type: 'token.issued', grantType: 'refresh_token', clientId: t.client.clientId, accountUuid: ADA.uuid, scope: ['read'] },
      { type: 'token.issued', grantType: 'device_code', clientId: t.device.clientId, accountUuid: ADA.uuid, scope: ['read'] },
      { type: 'token.issued', grantType: 'implicit', clientId: t.client.clientId, accountUuid: ADA.uuid, scope: ['read'] },
    ]);
    // The code exchange and the refresh are one grant; the device poll and the implicit flow each start one.
    const [code, refresh, poll, token] = t.issuedEvents() as Extract<AuditEvent, { type: 'token.issued' }>[];
    expect(refresh!.grantId).toBe(code!.grantId);
    expect(new Set([code!.grantId, poll!.grantId, token!.grantId]).size).toBe(3);
    // Asked at the exchange, the refresh and the poll: each use of a grant at the token endpoint.
    // The implicit flow issues at the authorization endpoint, to the account signed in there
    // (the option is "checked at every code exchange and refresh", docs/reference.md).
    expect(t.asked).toEqual([ADA.uuid, ADA.uuid, ADA.uuid]);
    for (const value of [rotated['access_token'], json(polled)['access_token'], implicit.get('access_token')]) {
      expect((await t.api('GET', value as string)).ok).toBe(true);
    }
  });

  it('an inactive account: the exchange, a refresh and a poll answer invalid_grant, report no token.issued, and leave nothing usable', async () => {
    const t = await issuing();
    const before = await t.tokens();
    const code = await t.getCode();
    const started = await t.devicePoll(); // one device grant while active, to refresh later
    const deviceRefresh = json(started)['refresh_token'] as string;
    const issuedBefore = t.issuedEvents().length;

    t.clock.advance(5 * 60_000);
    t.setActive(false);
    for (const res of [
      await t.exchange(code),
      await t.refresh(before.refresh_token),
      await t.devicePoll(),
      await t.refresh(deviceRefresh),
    ]) {
      expect(res.status, res.body).toBe(400);
      expect(json(res).error).toBe('invalid_grant');
    }
    expect(t.issuedEvents()).toHaveLength(issuedBefore);
    expect(t.events.filter((e) => e.type === 'account.inactive')).toHaveLength(4);

    // Each grant was revoked: back to active, what was issued before does not work, nor does the code.
    t.setActive(true);
    expect((await t.api('GET', before.access_token)).ok).toBe(false);
    expect((await t.api('GET', json(started)['access_token'] as string)).ok).toBe(false);
    expect(json(await t.refresh(before.refresh_token)).error).toBe('invalid_grant');
    expect(json(await t.exchange(code)).error).toBe('invalid_grant');
  });

  it('the refresh-token choice: only a client allowed refresh_token gets one, at the exchange and at a poll; never in the implicit flow', async () => {
    const t = await issuing();
    const codeOnly = await t.server.registerClient({
      name: 'No refresh',
      redirectUri: 'https://app.example/cb',
      grantTypes: ['authorization_code'],
    });
    const tvOnly = await t.server.registerClient({
      name: 'TV only',
      redirectUri: 'https://tv.example/cb',
      grantTypes: [DEVICE_CODE_GRANT],
    });

    expect(Object.keys(await t.tokens())).toContain('refresh_token');
    const decision = await t.server.authorize(
      t.get(
        `/v1/oauth/authorize?${new URLSearchParams({ client_id: codeOnly.clientId, redirect_uri: 'https://app.example/cb', response_type: 'code' })}`,
        t.ada,
      ),
    );
    if (decision.type !== 'consent') throw new Error(JSON.stringify(decision));
    const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
    const code = new URL((approved as { location: string }).location).searchParams.get('code')!;
    const exchanged = json(
      await t.server.token(
        t.post('/v1/oauth/token', {
          grant_type: 'authorization_code',
          code,
          redirect_uri: 'https://app.example/cb',
          client_id: codeOnly.clientId,
          client_secret: codeOnly.clientSecret,
        }),
      ),
    );
    expect(exchanged['access_token']).toBeTruthy();
    expect(exchanged).not.toHaveProperty('refresh_token');

    expect(json(await t.devicePoll())).toHaveProperty('refresh_token');
    const tv = json(await t.devicePoll(tvOnly));
    expect(tv['access_token']).toBeTruthy();
    expect(tv).not.toHaveProperty('refresh_token');

    const fragment = new URLSearchParams((await t.authorizeAndApprove({ response_type: 'token' })).hash.slice(1));
    expect(fragment.get('access_token')).toBeTruthy();
    expect(fragment.has('refresh_token')).toBe(false);
  });

  it('lifetimes.grant caps what every grant issues, and a refresh as the end nears, until the family ends', async () => {
    const t = await issuing({ lifetimes: { grant: 3600, accessToken: 7200, refreshToken: 86_400 } });
    const introspect = async (token: string) =>
      json(
        await t.server.introspect(
          t.post('/v1/oauth/introspect', { token, client_id: t.client.clientId, client_secret: t.client.clientSecret }),
        ),
      );
    const start = t.clock.now();
    const code = await t.getCode();
    t.clock.advance(10_000);
    const pair = json(await t.exchange(code));
    expect(pair['expires_in']).toBe(3590);
    expect((await introspect(pair['refresh_token'] as string))['exp']).toBe(Math.floor((start + 3_600_000) / 1000));

    t.clock.advance(3000_000);
    const rotated = json(await t.refresh(pair['refresh_token'] as string));
    expect(rotated['expires_in']).toBe(590);
    expect((await introspect(rotated['refresh_token'] as string))['exp']).toBe(Math.floor((start + 3_600_000) / 1000));

    const polled = json(await t.devicePoll());
    expect(polled['expires_in']).toBe(3600);
    const implicit = new URLSearchParams((await t.authorizeAndApprove({ response_type: 'token' })).hash.slice(1));
    expect(implicit.get('expires_in')).toBe('3600');

    t.clock.advance(600_000);
    expect(json(await t.refresh(rotated['refresh_token'] as string)).error).toBe('invalid_grant');
    expect((await t.api('GET', rotated['access_token'] as string)).ok).toBe(false);
    expect((await t.api('GET', polled['access_token'] as string)).ok).toBe(true);
  });
});
