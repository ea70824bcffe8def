/**
 * A defect the model found (`SignInBroken, EnterUserCode`), a regression test now: a session
 * whose sign-in time is not a finite number counts as not signed in
 * (docs/reference.md#prompt-and-sign-in-requirements), so the verification page answers it with
 * the sign-in step, as `authorize` does. `enterUserCode` and `deviceVerification` asked only
 * whether there was a session: they counted such a session's wrong codes against its account
 * and showed it the device confirmation (which `approve` then refused, so nothing was issued).
 * These three failed on that core (written as `it.fails` first); `signedIn` fixed them.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage, type OAuthRequest } from '../../src/index.js';
import { ADA, VERIFY_PATH } from './model.js';
import { makeReal } from './run.js';

async function brokenSession() {
  const real = await makeReal({ storage: new MemoryStorage(), prune: () => undefined }, null);
  const cookie = real.sessions.setSession({ account: ADA, authenticatedAt: Number.NaN });
  const request: OAuthRequest = { method: 'POST', url: VERIFY_PATH, headers: { cookie } };
  return { real, request };
}

describe('device verification with a sign-in time that is not a finite number', () => {
  it('asks to sign in when a wrong code is entered (docs: not signed in), instead of counting it', async () => {
    const { real, request } = await brokenSession();
    const outcome = await real.server.enterUserCode('BCDF-GHJK', request, VERIFY_PATH, 'browser-secret');
    expect(outcome.type === 'decision' && outcome.decision.type).toBe('login');
  });

  it('asks to sign in when the right code is entered, instead of showing the confirmation', async () => {
    const { real, request } = await brokenSession();
    const started = await real.server.deviceAuthorization(
      {
        method: 'POST',
        url: '/v1/oauth/device',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `client_id=${real.clients.pub.clientId}&scope=read`,
      },
      `https://as.example${VERIFY_PATH}`,
    );
    expect(started.status).toBe(200);
    const userCode = String(JSON.parse(started.body).user_code);
    const outcome = await real.server.enterUserCode(userCode, request, VERIFY_PATH, 'browser-secret');
    expect(outcome.type === 'decision' && outcome.decision.type).toBe('login');
  });

  it('answers the first visit of the page with the sign-in step', async () => {
    const { real, request } = await brokenSession();
    const decision = await real.server.deviceVerification(request, VERIFY_PATH);
    expect(decision?.type).toBe('login');
  });
});
