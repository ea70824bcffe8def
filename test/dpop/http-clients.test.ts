import * as oauth from 'oauth4webapi';
import { afterEach, describe, expect, it } from 'vitest';
import { CALLBACK, IN_PROCESS, startApp, type TestApp } from '../adapters/app.js';
import { boundTokenAnswer, proof, proofKey } from './fixtures.js';

/**
 * DPoP with a real client library, unmodified, over HTTP on every in-process adapter:
 * oauth4webapi's own DPoP support (RFC 9449) for the code flow of a public client, its refresh,
 * a resource call with `ath`, and the `use_dpop_nonce` round trip its retry handles. The
 * authorization server's endpoints are named by the issuer (`https://as.example`), which the
 * library's fetch reaches on the test app; resources are called at the app's own URL.
 */
const ISSUER = 'https://as.example';
const as: oauth.AuthorizationServer = {
  issuer: ISSUER,
  authorization_endpoint: `${ISSUER}/v1/oauth/authorize`,
  token_endpoint: `${ISSUER}/v1/oauth/token`,
  dpop_signing_alg_values_supported: ['ES256'],
};
const SECRET = 'a nonce secret of at least thirty-two bytes';

let apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps) await app.close();
  apps = [];
});

async function start(framework: (typeof IN_PROCESS)[number], dpop: Record<string, unknown> = {}) {
  const app = await startApp({ framework, server: { issuer: ISSUER, dpop } });
  apps.push(app);
  // The clock of the proofs is the real one: the server's fake clock is set to it.
  app.clock.set(Date.now());
  const options = {
    [oauth.customFetch]: (url: string, init: oauth.CustomFetchOptions<string, oauth.ProtectedResourceRequestBody>) =>
      fetch(url.replace(ISSUER, app.base), init as RequestInit),
    [oauth.allowInsecureRequests]: true,
  };
  return { app, options };
}

/** A public client's code flow with PKCE through the app, up to the callback parameters oauth4webapi validated. */
async function authorize(app: TestApp, client: oauth.Client) {
  const verifier = oauth.generateRandomCodeVerifier();
  const challenge = await oauth.calculatePKCECodeChallenge(verifier);
  const url = await app.authorizeAndApprove({ client_id: client.client_id, code_challenge: challenge, code_challenge_method: 'S256' });
  return { params: oauth.validateAuthResponse(as, client, url, oauth.skipStateCheck), verifier };
}

describe.each(IN_PROCESS)('oauth4webapi with DPoP on %s', (framework) => {
  it('code flow of a public client, a resource call with ath, a refresh bound to the key', async () => {
    const { app, options } = await start(framework);
    const registered = await app.server.registerClient({ name: 'CLI', redirectUri: CALLBACK, public: true });
    const client: oauth.Client = { client_id: registered.clientId };
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const { params, verifier } = await authorize(app, client);
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, CALLBACK, verifier, { ...options, DPoP });
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
    expect(tokens.token_type).toBe('dpop');
    const api = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${app.base}/v2/account`), undefined, undefined, {
      ...options,
      DPoP,
    });
    expect(api.status).toBe(200);
    expect(((await api.json()) as { oauth: { clientId: string } }).oauth.clientId).toBe(registered.clientId);
    // The same token as Bearer is refused (RFC 9449 §7.2).
    const asBearer = await fetch(`${app.base}/v2/account`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get('www-authenticate')).toMatch(/, DPoP realm="authgate", algs="/);

    // Refresh: without a proof refused, with another key refused, with the library's proof accepted.
    const plain = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, options);
    expect(plain.status).toBe(400);
    expect(((await plain.json()) as { error: string }).error).toBe('invalid_dpop_proof');
    const otherKey = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const stolen = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, { ...options, DPoP: otherKey });
    expect(((await stolen.json()) as { error: string }).error).toBe('invalid_grant');
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, { ...options, DPoP }),
    );
    expect(refreshed.token_type).toBe('dpop');
    const again = await oauth.protectedResourceRequest(
      refreshed.access_token,
      'GET',
      new URL(`${app.base}/v2/account`),
      undefined,
      undefined,
      {
        ...options,
        DPoP,
      },
    );
    expect(again.status).toBe(200);
  });

  it('use_dpop_nonce at the token endpoint and at the resource, each handled by the library’s retry', async () => {
    const { app, options } = await start(framework, { nonceSecret: SECRET });
    const registered = await app.server.registerClient({ name: 'CLI', redirectUri: CALLBACK, public: true });
    const client: oauth.Client = { client_id: registered.clientId };
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const { params, verifier } = await authorize(app, client);
    const exchange = () => oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, CALLBACK, verifier, { ...options, DPoP });
    let tokens: oauth.TokenEndpointResponse;
    let retried = 0;
    try {
      tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange());
    } catch (error) {
      if (!oauth.isDPoPNonceError(error)) throw error;
      retried++;
      tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange());
    }
    expect(retried).toBe(1);
    expect(tokens.token_type).toBe('dpop');
    // The resource is another origin: the library holds no nonce for it yet, is answered
    // use_dpop_nonce (401, DPoP-Nonce), and retries with the nonce it was given.
    const call = () =>
      oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${app.base}/v2/account`), undefined, undefined, {
        ...options,
        DPoP,
      });
    let response: Response;
    try {
      response = await call();
    } catch (error) {
      if (!oauth.isDPoPNonceError(error)) throw error;
      retried++;
      response = await call();
    }
    expect(retried).toBe(2);
    expect(response.status).toBe(200);
    // The nonce is remembered: the next call passes at once.
    expect((await call()).status).toBe(200);
  });
});

describe.each(IN_PROCESS)('hand-built proofs over HTTP on %s', (framework) => {
  it('replays, wrong htu, and 50 concurrent requests replaying one proof: exactly one accepted', async () => {
    const { app, options } = await start(framework);
    void options;
    const key = await proofKey();
    const code = await app.getCode();
    const tokenRes = await fetch(`${app.base}/v1/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        dpop: await proof(key, 'POST', `${ISSUER}/v1/oauth/token`, Date.now()),
      },
      body: new URLSearchParams(app.codeParams(code)).toString(),
    });
    expect(tokenRes.status).toBe(200);
    const { access_token: token, token_type } = (await tokenRes.json()) as { access_token: string; token_type: string };
    expect(token_type).toBe('DPoP');
    const url = `${app.base}/v2/account`;
    const wrongHtu = await fetch(url, {
      headers: {
        authorization: `DPoP ${token}`,
        dpop: await proof(key, 'GET', 'http://elsewhere.example/v2/account', Date.now(), { accessToken: token }),
      },
    });
    expect(wrongHtu.status).toBe(401);
    expect(wrongHtu.headers.get('www-authenticate')).toContain('error="invalid_dpop_proof"');
    const one = await proof(key, 'GET', url, Date.now(), { accessToken: token });
    const statuses = await Promise.all(
      Array.from({ length: 50 }, () => fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: one } }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 401)).toHaveLength(49);
  });
});

describe.each(IN_PROCESS)('htu behind a TLS-terminating proxy on %s', (framework) => {
  it('a trusted proxy’s scheme is the htu’s; an untrusted X-Forwarded-Proto changes nothing', async () => {
    for (const trustProxy of [true, false]) {
      const app = await startApp({ framework, trustProxy, server: { issuer: ISSUER, dpop: {} } });
      apps.push(app);
      app.clock.set(Date.now());
      const key = await proofKey();
      const tokenRes = await boundTokenAnswer(app, key, ISSUER);
      const { access_token: token } = (await tokenRes.json()) as { access_token: string };
      const https = app.base.replace('http:', 'https:');
      const call = async (htuBase: string) =>
        (
          await fetch(`${app.base}/v2/account`, {
            headers: {
              authorization: `DPoP ${token}`,
              'x-forwarded-proto': 'https',
              dpop: await proof(key, 'GET', `${htuBase}/v2/account`, Date.now(), { accessToken: token }),
            },
          })
        ).status;
      expect(await call(https)).toBe(trustProxy ? 200 : 401);
      expect(await call(app.base)).toBe(trustProxy ? 401 : 200);
    }
  });
});
