import { describe, expect, it } from 'vitest';
import { json, setup } from '../helpers.js';
import { exchangeRequest, proof, proofKey } from './fixtures.js';

/**
 * DPoP at the OpenID Connect userinfo endpoint (Core §5.3, RFC 9449 §7): it takes the token
 * through the resource check (`requireBearerScope`), so a DPoP-bound token is accepted there with
 * `Authorization: DPoP` and a proof of the userinfo request, as openid-client's `fetchUserInfo`
 * and oauth4webapi's `userInfoRequest` send it, and refused in every other form.
 */
const ISSUER = 'https://as.example';
const USERINFO = `${ISSUER}/v1/oauth/userinfo`;

async function boundOpenIdToken() {
  const t = await setup({ issuer: ISSUER, dpop: {}, openid: {} });
  const key = await proofKey();
  const code = await t.getCode({ scope: 'openid' });
  const res = await t.server.token(exchangeRequest(t, code, await proof(key, 'POST', `${ISSUER}/v1/oauth/token`, t.clock.now())));
  expect(json(res).token_type).toBe('DPoP');
  return { ...t, key, token: json(res).access_token as string };
}

describe('userinfo with a DPoP-bound access token', () => {
  it('GET and POST with Authorization: DPoP and a proof of the request: the answer (sub)', async () => {
    const t = await boundOpenIdToken();
    for (const method of ['GET', 'POST']) {
      const dpop = await proof(t.key, method, USERINFO, t.clock.now(), { accessToken: t.token });
      const res = await t.server.userinfo({ method, url: '/v1/oauth/userinfo', headers: { authorization: `DPoP ${t.token}`, dpop } });
      expect(res.status, method).toBe(200);
      expect(json(res)).toEqual({ sub: expect.stringMatching(/./) });
    }
  });

  it('refused as Bearer, in the form body, with a proof of another URL or another key', async () => {
    const t = await boundOpenIdToken();
    const asBearer = await t.server.userinfo({ method: 'GET', url: '/v1/oauth/userinfo', headers: { authorization: `Bearer ${t.token}` } });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers['www-authenticate']).toMatch(
      /^Bearer realm="authgate", error="invalid_token".*, DPoP realm="authgate", algs="/,
    );

    const inBody = await t.server.userinfo(t.post('/v1/oauth/userinfo', { access_token: t.token }));
    expect(inBody.status).toBe(401);
    expect(json(inBody).error).toBe('invalid_token');

    const tokenUrlProof = await proof(t.key, 'GET', `${ISSUER}/v1/oauth/token`, t.clock.now(), { accessToken: t.token });
    const elsewhere = await t.server.userinfo({
      method: 'GET',
      url: '/v1/oauth/userinfo',
      headers: { authorization: `DPoP ${t.token}`, dpop: tokenUrlProof },
    });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers['www-authenticate']).toContain('DPoP realm="authgate", error="invalid_dpop_proof"');

    const otherKey = await proof(await proofKey(), 'GET', USERINFO, t.clock.now(), { accessToken: t.token });
    const stolen = await t.server.userinfo({
      method: 'GET',
      url: '/v1/oauth/userinfo',
      headers: { authorization: `DPoP ${t.token}`, dpop: otherKey },
    });
    expect(stolen.status).toBe(401);
    expect(stolen.headers['www-authenticate']).toContain('DPoP realm="authgate", error="invalid_token"');
  });
});
