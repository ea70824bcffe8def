import * as client from 'openid-client';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Base64url } from '../../src/crypto.js';
import { CALLBACK, IN_PROCESS, startApp, type TestApp } from '../adapters/app.js';

/**
 * DPoP with openid-client (v6), unmodified, over HTTP on every in-process adapter, beside
 * oauth4webapi's (http-clients.test.ts): its `getDPoPHandle` and `randomDPoPKeyPair` for the code
 * flow of a public client, the refresh of its bound refresh token, a resource call with `ath`
 * (`fetchProtectedResource`), and the `use_dpop_nonce` round trips its own retry handles, with no
 * retry code in the test. The issuer (`https://as.example`) names the endpoints; the library's
 * `customFetch` sends them to the test app and records every answer, so the test sees the
 * round trips the library made.
 */
const ISSUER = 'https://as.example';
const SECRET = 'a nonce secret of at least thirty-two bytes';

interface Exchange {
  method: string;
  url: string;
  status: number;
  dpop: string | null;
  error: string | undefined;
}

let apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps) await app.close();
  apps = [];
});

async function start(framework: (typeof IN_PROCESS)[number], dpop: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const app = await startApp({ framework, server: { issuer: ISSUER, dpop, ...extra } });
  apps.push(app);
  // The proofs are signed at the real clock: the server's fake clock is set to it.
  app.clock.set(Date.now());
  const registered = await app.server.registerClient({ name: 'CLI', redirectUri: CALLBACK, public: true });
  const config = new client.Configuration(
    {
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/v1/oauth/authorize`,
      token_endpoint: `${ISSUER}/v1/oauth/token`,
      userinfo_endpoint: `${ISSUER}/v1/oauth/userinfo`,
      dpop_signing_alg_values_supported: ['ES256'],
    },
    registered.clientId,
    undefined,
    client.None(),
  );
  const seen: Exchange[] = [];
  config[client.customFetch] = async (url, init) => {
    const response = await fetch(url.replace(ISSUER, app.base), init as RequestInit);
    const headers = new Headers(init.headers as HeadersInit);
    const challenge = response.headers.get('www-authenticate') ?? '';
    const body = response.status === 400 ? ((await response.clone().json()) as { error?: string }) : {};
    seen.push({
      method: init.method ?? 'GET',
      url,
      status: response.status,
      dpop: headers.get('dpop'),
      error: body.error ?? /error="([^"]+)"/.exec(challenge)?.[1],
    });
    return response;
  };
  // The resource is the app's own http:// URL.
  client.allowInsecureRequests(config);
  const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
  return { app, config, DPoP, seen, clientId: registered.clientId };
}

/** The code flow with PKCE through the app, and the code exchange openid-client makes with `DPoP`. */
async function codeFlow(app: TestApp, config: client.Configuration, clientId: string, DPoP: client.DPoPHandle, scope?: string) {
  const verifier = client.randomPKCECodeVerifier();
  const challenge = await client.calculatePKCECodeChallenge(verifier);
  const state = client.randomState();
  const params = { client_id: clientId, code_challenge: challenge, code_challenge_method: 'S256', state, ...(scope && { scope }) };
  const callback = await app.authorizeAndApprove(params);
  return client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }, undefined, { DPoP });
}

/** The claims of a proof (RFC 9449 §4.2), read without checking. */
function proofClaims(proof: string | null): Record<string, unknown> {
  expect(proof).toBeTruthy();
  return JSON.parse(Buffer.from(proof!.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
}

describe.each(IN_PROCESS)('openid-client with DPoP on %s', (framework) => {
  it('code flow of a public client, a resource call with ath, a refresh bound to the key', async () => {
    const { app, config, DPoP, seen, clientId } = await start(framework);
    const tokens = await codeFlow(app, config, clientId, DPoP);
    expect(tokens.token_type).toBe('dpop');
    expect(tokens.refresh_token).toBeTruthy();
    expect(proofClaims(seen.at(-1)!.dpop).htu).toBe(`${ISSUER}/v1/oauth/token`);

    const account = new URL(`${app.base}/v2/account`);
    const api = await client.fetchProtectedResource(config, tokens.access_token, account, 'GET', undefined, undefined, { DPoP });
    expect(api.status).toBe(200);
    expect(((await api.json()) as { oauth: { clientId: string } }).oauth.clientId).toBe(clientId);
    const call = seen.at(-1)!;
    expect(proofClaims(call.dpop).ath).toBe(sha256Base64url(tokens.access_token));
    // The same token as Bearer, through the same library without its handle: refused (RFC 9449 §7.2).
    // The library raises the 401's challenges as an error.
    await expect(client.fetchProtectedResource(config, tokens.access_token, account, 'GET')).rejects.toMatchObject({ status: 401 });

    // The refresh token is bound (§5): without the handle, or with another key's, refused.
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_dpop_proof' });
    const otherKey = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: otherKey })).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    // Refused, neither rotated it: with the key's proofs it refreshes.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
    expect(refreshed.token_type).toBe('dpop');
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    const again = await client.fetchProtectedResource(config, refreshed.access_token, account, 'GET', undefined, undefined, { DPoP });
    expect(again.status).toBe(200);
    // The new access token with another key's proof: refused.
    await expect(
      client.fetchProtectedResource(config, refreshed.access_token, account, 'GET', undefined, undefined, { DPoP: otherKey }),
    ).rejects.toMatchObject({ status: 401 });
    expect(seen.at(-1)!.error).toBe('invalid_token');
  });

  it('userinfo with the bound token (fetchUserInfo): the proof names the URL discovery advertises, as at the token endpoint', async () => {
    const { app, config, DPoP, seen, clientId } = await start(framework, {}, { openid: {} });
    const tokens = await codeFlow(app, config, clientId, DPoP, 'openid');
    expect(tokens.token_type).toBe('dpop');
    const info = await client.fetchUserInfo(config, tokens.access_token, client.skipSubjectCheck, { DPoP });
    expect(info.sub).toBeTypeOf('string');
    const call = seen.at(-1)!;
    // Sent to the app's own http:// URL by customFetch, the proof names the issuer's (RFC 9449 §4.3 point 9).
    expect([call.status, proofClaims(call.dpop).htu]).toEqual([200, `${ISSUER}/v1/oauth/userinfo`]);
    // Without the handle, the bound token goes as Bearer: refused (§7.2).
    await expect(client.fetchUserInfo(config, tokens.access_token, client.skipSubjectCheck)).rejects.toMatchObject({ status: 401 });
  });

  it('use_dpop_nonce at the token endpoint and at the resource: the library’s own retry, no code of the test', async () => {
    const { app, config, DPoP, seen, clientId } = await start(framework, { nonceSecret: SECRET });
    const tokens = await codeFlow(app, config, clientId, DPoP);
    expect(tokens.token_type).toBe('dpop');
    const exchanges = seen.filter((e) => e.url.endsWith('/token'));
    expect(exchanges.map((e) => [e.status, e.error])).toEqual([
      [400, 'use_dpop_nonce'],
      [200, undefined],
    ]);
    expect(proofClaims(exchanges[0]!.dpop).nonce).toBeUndefined();
    expect(proofClaims(exchanges[1]!.dpop).nonce).toBeTypeOf('string');

    // The resource is another origin: the library holds no nonce for it, is answered
    // use_dpop_nonce (401 with DPoP-Nonce), and retries with the nonce it was given.
    const account = new URL(`${app.base}/v2/account`);
    const before = seen.length;
    const api = await client.fetchProtectedResource(config, tokens.access_token, account, 'GET', undefined, undefined, { DPoP });
    expect(api.status).toBe(200);
    expect(seen.slice(before).map((e) => [e.status, e.error])).toEqual([
      [401, 'use_dpop_nonce'],
      [200, undefined],
    ]);
    // The nonces are remembered: a refresh and the next resource call pass at once.
    const mark = seen.length;
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
    const next = await client.fetchProtectedResource(config, refreshed.access_token, account, 'GET', undefined, undefined, { DPoP });
    expect(next.status).toBe(200);
    expect(seen.slice(mark).map((e) => e.status)).toEqual([200, 200]);
  });
});
