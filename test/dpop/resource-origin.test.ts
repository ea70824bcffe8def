import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { IN_PROCESS, startApp, type TestApp } from '../adapters/app.js';
import { json, setup } from '../helpers.js';
import { boundTokenAnswer, exchangeRequest, proof, proofKey, type ProofKey } from './fixtures.js';

/**
 * The `htu` a resource expects (RFC 9449 §4.3 point 9, §11.1), when `requireToken` names a
 * protected resource: that resource's origin and the path the request came to, never the
 * request's `Host` header. A malicious resource a client was lured to holds the client's token
 * and a fresh proof the client made for the malicious resource's own URL; relayed with `Host`
 * set to the malicious resource's name, to an API that answers any host, that proof must not
 * pass. Without a resource there is no configured origin: the Host header still decides
 * (docs/reference.md#dpop-rfc-9449 says so, and recommends naming the resource).
 */
const ISSUER = 'https://as.example';
const RESOURCE = 'https://api.example';

let apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps) await app.close();
  apps = [];
});

/** A GET of `path` on the app with the given `Host` header (fetch cannot set one), the token with the DPoP scheme and `dpop`. */
function getWithHost(app: TestApp, path: string, host: string, token: string, dpop: string) {
  const { port } = new URL(app.base);
  return new Promise<{ status: number; challenge: string | undefined }>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method: 'GET', headers: { host, authorization: `DPoP ${token}`, dpop } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, challenge: res.headers['www-authenticate'] }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The app with `requireToken(server, { resource: RESOURCE })` on `/r`, and a token bound to `key`. */
async function start(framework: (typeof IN_PROCESS)[number]) {
  const app = await startApp({
    framework,
    resource: RESOURCE,
    server: { issuer: ISSUER, dpop: {}, protectedResources: [{ resource: RESOURCE }] },
  });
  apps.push(app);
  app.clock.set(Date.now());
  const key = await proofKey();
  const tokenRes = await boundTokenAnswer(app, key, ISSUER);
  expect(tokenRes.status).toBe(200);
  const token = ((await tokenRes.json()) as { access_token: string }).access_token;
  const call = async (path: string, host: string, htu: string, signer: ProofKey = key) =>
    getWithHost(app, path, host, token, await proof(signer, 'GET', htu, Date.now(), { accessToken: token }));
  return { app, call };
}

describe.each(IN_PROCESS)('requireToken(server, { resource }) on %s: htu on the resource’s origin, not the Host header', (framework) => {
  it('a proof made for the attacker’s URL, relayed with Host set to the attacker’s name, is refused (401 invalid_dpop_proof)', async () => {
    const { call } = await start(framework);
    // What the adapter would make of the Host header (no trusted proxy: http), and the https one a real attacker serves.
    for (const htu of ['http://evil.example/r/account', 'https://evil.example/r/account']) {
      const relayed = await call('/r/account', 'evil.example', htu);
      expect(relayed.status).toBe(401);
      expect(relayed.challenge).toContain('DPoP realm="authgate", error="invalid_dpop_proof"');
      expect(relayed.challenge).toContain('htu does not match');
    }
  });

  it('the client’s proof for the resource’s own URL passes, whatever Host the request arrived with', async () => {
    const { call, app } = await start(framework);
    const appHost = new URL(app.base).host;
    expect((await call('/r/account', 'api.example', `${RESOURCE}/r/account`)).status).toBe(200);
    // Behind a proxy that rewrites Host, or reached on the loopback address: the origin is the configured one.
    expect((await call('/r/account', appHost, `${RESOURCE}/r/account`)).status).toBe(200);
    // Another path of the resource's origin, or the app's own address: not this request.
    expect((await call('/r/account', 'api.example', `${RESOURCE}/other`)).status).toBe(401);
    expect((await call('/r/account', appHost, `http://${appHost}/r/account`)).status).toBe(401);
  });

  it('without a resource (no configured origin) the Host header still decides, as documented', async () => {
    const { call, app } = await start(framework);
    const appHost = new URL(app.base).host;
    expect((await call('/v2/account', appHost, `${app.base}/v2/account`)).status).toBe(200);
    expect((await call('/v2/account', 'evil.example', 'http://evil.example/v2/account')).status).toBe(200);
  });
});

describe('server.authenticate(request, { resource }) and resourceCheck: the same rule in the core', () => {
  it('an absolute URL of another host is taken for its path only; a bare path on the resource’s origin, not the issuer’s', async () => {
    const t = await setup({ issuer: ISSUER, dpop: {}, protectedResources: [{ resource: `${RESOURCE}/v2` }] });
    const key = await proofKey();
    const res = await t.server.token(
      exchangeRequest(t, await t.getCode(), await proof(key, 'POST', `${ISSUER}/v1/oauth/token`, t.clock.now())),
    );
    const token = json(res).access_token as string;
    const check = t.server.resourceCheck(`${RESOURCE}/v2`);
    const call = async (url: string, htu: string, named = true) => {
      const request = {
        method: 'GET',
        url,
        headers: { authorization: `DPoP ${token}`, dpop: await proof(key, 'GET', htu, t.clock.now(), { accessToken: token }) },
      };
      return (named ? await check(request) : await t.server.authenticate(request, { resource: `${RESOURCE}/v2` })).ok;
    };
    expect(await call('https://evil.example/v2/things?page=2', 'https://evil.example/v2/things')).toBe(false);
    expect(await call('https://evil.example/v2/things?page=2', `${RESOURCE}/v2/things`)).toBe(true);
    expect(await call('/v2/things', `${ISSUER}/v2/things`, false)).toBe(false);
    expect(await call('/v2/things', `${RESOURCE}/v2/things`, false)).toBe(true);
  });
});
