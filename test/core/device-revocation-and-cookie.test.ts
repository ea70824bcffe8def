/**
 * The device pages' CSRF cookie (also the browser secret the confirmation is bound to)
 * and "sign out everywhere" against an approved device authorization not yet polled.
 */
import { describe, expect, it } from 'vitest';
import { DEVICE_CODE_GRANT } from '../../src/storage/types.js';
import { handleDeviceVerification } from '../../src/ui/device-routes.js';
import { ADA, json, setup } from '../helpers.js';

const VERIFY = '/v1/oauth/device/verify';

describe('device pages behind a TLS proxy', () => {
  it('with an https issuer, the device pages CSRF cookie is Secure, as the consent page one is', async () => {
    const t = await setup({ issuer: 'https://auth.example', deviceAuthorization: {} });
    // What Express without `trust proxy` hands the core behind a TLS-terminating proxy.
    const res = await handleDeviceVerification(
      t.server,
      { method: 'GET', url: `http://auth.example${VERIFY}`, headers: { cookie: t.ada } },
      { basePath: '/v1/oauth' },
    );
    expect('status' in res && res.status).toBe(200);
    const cookie = (res as { headers: Record<string, string> }).headers['set-cookie']!;
    expect(cookie).toMatch(/^authgate_csrf=/);
    expect(cookie).toContain('; Secure');
  });
});

describe('revokeAllForAccount and the device grant', () => {
  it('a device authorization approved before revokeAllForAccount gets no tokens after it', async () => {
    const t = await setup({ deviceAuthorization: {} });
    const cli = await t.server.registerClient({
      name: 'CLI',
      redirectUri: 'http://127.0.0.1/cb',
      public: true,
      grantTypes: [DEVICE_CODE_GRANT],
    });
    const started = json(
      await t.server.deviceAuthorization(t.post('/v1/oauth/device', { client_id: cli.clientId }), `https://a.example${VERIFY}`),
    );
    const outcome = await t.server.enterUserCode(started['user_code'] as string, t.get(VERIFY, t.ada), VERIFY);
    if (outcome.type !== 'decision' || outcome.decision.type !== 'consent') throw new Error('expected a confirmation');
    await t.server.approve(outcome.decision.interaction.id, t.get(VERIFY, t.ada));
    // The user notices the phishing and signs out everywhere before the device polls.
    await t.server.revokeAllForAccount(ADA.uuid);
    t.clock.advance(5000);
    const res = await t.server.token(
      t.post('/v1/oauth/token', { grant_type: DEVICE_CODE_GRANT, device_code: started['device_code'] as string, client_id: cli.clientId }),
    );
    expect(res.status, res.body).not.toBe(200);
  });
});
