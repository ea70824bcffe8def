import { describe, expect, it } from 'vitest';
import { DEVICE_CODE_GRANT } from '../../src/index.js';
import { json, setup } from '../helpers.js';
import { proof, proofKey } from './fixtures.js';

/**
 * DPoP with the device code grant (RFC 8628, RFC 9449 §5): a CLI polls with a proof and gets
 * tokens bound to its key, its refresh token too (a public client).
 */
const ISSUER = 'https://as.example';
const TOKEN_URL = `${ISSUER}/v1/oauth/token`;
const VERIFY = '/v1/oauth/device/verify';

describe('device code grant with DPoP', () => {
  it('a public device client polling with a proof gets DPoP-bound tokens and a bound refresh token', async () => {
    const t = await setup({ issuer: ISSUER, dpop: {}, deviceAuthorization: {} });
    const cli = await t.server.registerClient({
      name: 'Terminal CLI',
      redirectUri: 'http://127.0.0.1/cb',
      public: true,
      grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'],
    });
    const key = await proofKey();
    const started = json(
      await t.server.deviceAuthorization(t.post('/v1/oauth/device', { client_id: cli.clientId }), `${ISSUER}${VERIFY}`),
    ) as { device_code: string; user_code: string };
    const outcome = await t.server.enterUserCode(started.user_code, t.get(VERIFY, t.ada), VERIFY);
    if (outcome.type !== 'decision' || outcome.decision.type !== 'consent') throw new Error(JSON.stringify(outcome));
    await t.server.approve(outcome.decision.interaction.id, t.get(VERIFY, t.ada));
    // A bad proof is refused and uses nothing up: the device code still works afterwards.
    const poll = (dpop: string) =>
      t.server.token(
        t.post('/v1/oauth/token', { grant_type: DEVICE_CODE_GRANT, device_code: started.device_code, client_id: cli.clientId }, { dpop }),
      );
    expect(json(await poll(await proof(key, 'GET', TOKEN_URL, t.clock.now()))).error).toBe('invalid_dpop_proof');
    const res = await poll(await proof(key, 'POST', TOKEN_URL, t.clock.now()));
    expect(res.status).toBe(200);
    const body = json(res) as { token_type: string; refresh_token: string; access_token: string };
    expect(body.token_type).toBe('DPoP');
    expect((await t.storage.findToken((await import('../../src/crypto.js')).sha256Base64url(body.refresh_token)))?.token).toMatchObject({
      dpop: { jkt: key.jkt },
    });
    const refresh = await t.server.token(
      t.post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: body.refresh_token, client_id: cli.clientId }),
    );
    expect(json(refresh).error).toBe('invalid_dpop_proof');
  });

  it('a client registered with dpopBoundAccessTokens polling without a proof: invalid_dpop_proof, the device code not used up', async () => {
    const t = await setup({ issuer: ISSUER, dpop: {}, deviceAuthorization: {} });
    const cli = await t.server.registerClient({
      name: 'Terminal CLI',
      redirectUri: 'http://127.0.0.1/cb',
      public: true,
      grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'],
      dpopBoundAccessTokens: true,
    });
    const started = json(
      await t.server.deviceAuthorization(t.post('/v1/oauth/device', { client_id: cli.clientId }), `${ISSUER}${VERIFY}`),
    ) as { device_code: string; user_code: string };
    const poll = (dpop?: string) =>
      t.server.token(
        t.post(
          '/v1/oauth/token',
          { grant_type: DEVICE_CODE_GRANT, device_code: started.device_code, client_id: cli.clientId },
          dpop === undefined ? {} : { dpop },
        ),
      );
    // Before the user decides, and after: a poll without a proof is refused, whatever the device code's state.
    expect(json(await poll())).toMatchObject({ error: 'invalid_dpop_proof' });
    const outcome = await t.server.enterUserCode(started.user_code, t.get(VERIFY, t.ada), VERIFY);
    if (outcome.type !== 'decision' || outcome.decision.type !== 'consent') throw new Error(JSON.stringify(outcome));
    await t.server.approve(outcome.decision.interaction.id, t.get(VERIFY, t.ada));
    const refused = await poll();
    expect(refused.status).toBe(400);
    expect(json(refused).error).toBe('invalid_dpop_proof');
    // Refused, it used nothing up: the next poll, with a proof, gets bound tokens.
    const key = await proofKey();
    const res = await poll(await proof(key, 'POST', TOKEN_URL, t.clock.now()));
    expect(res.status).toBe(200);
    expect(json(res).token_type).toBe('DPoP');
  });
});
