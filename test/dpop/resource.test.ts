import { describe, expect, it } from 'vitest';
import { AuthorizationServer, MemoryStorage } from '../../src/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA, json, setup } from '../helpers.js';
import { proof, proofKey, exchangeRequest } from './fixtures.js';

/**
 * DPoP at protected resources (RFC 9449 §7, §9): `authenticate` with `Authorization: DPoP` and a
 * proof of the request, the refusals of every mismatch, the challenges, resources that require
 * DPoP, and the replay check under concurrency and across instances sharing a store.
 */
const ISSUER = 'https://as.example';
const TOKEN_URL = `${ISSUER}/v1/oauth/token`;
const API = 'https://api.example/v2';

async function boundToken(options: Record<string, unknown> = {}) {
  const t = await setup({ issuer: ISSUER, dpop: {}, ...options });
  const key = await proofKey();
  const code = await t.getCode();
  const res = await t.server.token(exchangeRequest(t, code, await proof(key, 'POST', TOKEN_URL, t.clock.now())));
  const token = json(res).access_token as string;
  const call = (headers: Record<string, string>, method = 'GET', url = `${API}/things?page=2`) =>
    t.server.authenticate({ method, url, headers });
  const dpopCall = async (change: { method?: string; url?: string; htm?: string; htu?: string; key?: typeof key; ath?: string } = {}) =>
    call(
      {
        authorization: `DPoP ${token}`,
        dpop: await proof(change.key ?? key, change.htm ?? change.method ?? 'GET', change.htu ?? `${API}/things`, t.clock.now(), {
          accessToken: change.ath ?? token,
        }),
      },
      change.method,
      change.url,
    );
  return { ...t, key, token, call, dpopCall };
}

const wwwAuthenticate = (result: Awaited<ReturnType<AuthorizationServer['authenticate']>>) =>
  result.ok ? undefined : result.response.headers['www-authenticate'];

describe('Authorization: DPoP at a resource (RFC 9449 §7)', () => {
  it('accepts the bound token with a proof of the request (htu without its query), and the same token again with a new proof', async () => {
    const t = await boundToken();
    const first = await t.dpopCall();
    expect(first.ok).toBe(true);
    if (first.ok) expect(first.token).toMatchObject({ kind: 'oauth', clientId: t.client.clientId });
    expect((await t.dpopCall()).ok).toBe(true);
    // The scope rule as for Bearer: a read token may not POST, said on the DPoP challenge.
    const post = await t.dpopCall({ method: 'POST' });
    expect(post.ok).toBe(false);
    if (!post.ok) expect(post.response.status).toBe(403);
    expect(wwwAuthenticate(post)).toContain('DPoP realm="authgate", error="insufficient_scope"');
  });

  it('refuses each mismatch with invalid_dpop_proof on the DPoP challenge: htm, htu, ath, an old proof, no proof', async () => {
    const t = await boundToken();
    for (const change of [{ htm: 'POST' }, { htu: `${API}/other` }, { htu: `https://evil.example/v2/things` }, { ath: 'another token' }]) {
      const result = await t.dpopCall(change);
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.response.status).toBe(401);
        expect(result.response.headers['www-authenticate']).toMatch(
          /^Bearer realm="authgate", DPoP realm="authgate", error="invalid_dpop_proof", error_description="[^"]+", algs="ES256 EdDSA Ed25519 RS256 PS256"$/,
        );
      }
    }
    const old = await proof(t.key, 'GET', `${API}/things`, t.clock.now() - 61_000, { accessToken: t.token });
    expect((await t.call({ authorization: `DPoP ${t.token}`, dpop: old })).ok).toBe(false);
    expect(wwwAuthenticate(await t.call({ authorization: `DPoP ${t.token}` }))).toContain('error="invalid_dpop_proof"');
  });

  it('refuses a proof by another key (invalid_token), the bound token as Bearer, and a bearer token with the DPoP scheme', async () => {
    const t = await boundToken();
    const other = await proofKey();
    expect(wwwAuthenticate(await t.dpopCall({ key: other }))).toContain('DPoP realm="authgate", error="invalid_token"');
    const asBearer = await t.call({ authorization: `Bearer ${t.token}` });
    expect(asBearer.ok).toBe(false);
    expect(wwwAuthenticate(asBearer)).toMatch(/^Bearer realm="authgate", error="invalid_token".*, DPoP realm="authgate", algs="/);
    // A bearer token (no proof at the token endpoint) sent with the DPoP scheme and a valid proof.
    const bearerToken = json(await t.exchange(await t.getCode())).access_token as string;
    expect(json(await t.exchange(await t.getCode())).token_type).toBe('bearer');
    expect((await t.call({ authorization: `Bearer ${bearerToken}` })).ok).toBe(true);
    const asDpop = await t.call({
      authorization: `DPoP ${bearerToken}`,
      dpop: await proof(t.key, 'GET', `${API}/things`, t.clock.now(), { accessToken: bearerToken }),
    });
    expect(asDpop.ok).toBe(false);
    expect(wwwAuthenticate(asDpop)).toContain('DPoP realm="authgate", error="invalid_token"');
  });

  it('a replayed proof is refused; of 50 concurrent requests replaying one proof exactly one is accepted', async () => {
    const t = await boundToken();
    const dpop = await proof(t.key, 'GET', `${API}/things`, t.clock.now(), { accessToken: t.token });
    const results = await Promise.all(Array.from({ length: 50 }, () => t.call({ authorization: `DPoP ${t.token}`, dpop })));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    for (const r of results.filter((r) => !r.ok)) expect(wwwAuthenticate(r)).toContain('The DPoP proof was used before.');
  });

  it('two instances sharing one store refuse a proof the other accepted', async () => {
    const t = await boundToken();
    const second = new AuthorizationServer({ issuer: ISSUER, storage: t.storage, sessions: t.sessions, clock: t.clock, dpop: {} });
    const dpop = await proof(t.key, 'GET', `${API}/things`, t.clock.now(), { accessToken: t.token });
    const request = { method: 'GET', url: `${API}/things`, headers: { authorization: `DPoP ${t.token}`, dpop } };
    expect((await t.server.authenticate(request)).ok).toBe(true);
    const replay = await second.authenticate(request);
    expect(replay.ok).toBe(false);
    expect(wwwAuthenticate(replay)).toContain('used before');
    // A fresh proof is accepted by the second instance.
    expect(
      (
        await second.authenticate({
          ...request,
          headers: { ...request.headers, dpop: await proof(t.key, 'GET', `${API}/things`, t.clock.now(), { accessToken: t.token }) },
        })
      ).ok,
    ).toBe(true);
  });

  it('server nonces at a resource: use_dpop_nonce (401) with DPoP-Nonce, then accepted with it (§9)', async () => {
    const t = await boundToken({ dpop: {} });
    const nonced = new AuthorizationServer({
      issuer: ISSUER,
      storage: t.storage,
      sessions: t.sessions,
      clock: t.clock,
      dpop: { nonceSecret: 'a nonce secret of at least thirty-two bytes' },
    });
    const first = await nonced.authenticate({
      method: 'GET',
      url: `${API}/things`,
      headers: {
        authorization: `DPoP ${t.token}`,
        dpop: await proof(t.key, 'GET', `${API}/things`, t.clock.now(), { accessToken: t.token }),
      },
    });
    expect(first.ok).toBe(false);
    if (first.ok) return;
    expect(first.response.status).toBe(401);
    expect(first.response.headers['www-authenticate']).toContain('DPoP realm="authgate", error="use_dpop_nonce"');
    const nonce = first.response.headers['dpop-nonce']!;
    const retry = await nonced.authenticate({
      method: 'GET',
      url: `${API}/things`,
      headers: {
        authorization: `DPoP ${t.token}`,
        dpop: await proof(t.key, 'GET', `${API}/things`, t.clock.now(), { accessToken: t.token, nonce }),
      },
    });
    expect(retry.ok).toBe(true);
  });

  it('without credentials the challenge names both schemes; a malformed DPoP header is invalid_request on the DPoP challenge', async () => {
    const t = await boundToken();
    const none = await t.call({});
    expect(wwwAuthenticate(none)).toBe('Bearer realm="authgate", DPoP realm="authgate", algs="ES256 EdDSA Ed25519 RS256 PS256"');
    const malformed = await t.call({ authorization: 'DPoP a b' });
    expect(malformed.ok).toBe(false);
    if (!malformed.ok) expect(malformed.response.status).toBe(400);
    expect(wwwAuthenticate(malformed)).toContain('DPoP realm="authgate", error="invalid_request"');
  });
});

describe('a protected resource that requires DPoP', () => {
  const resources = [{ resource: API, dpopBoundAccessTokensRequired: true }, { resource: 'https://open.example/api' }];

  it('refuses bearer tokens, accepts a bound token with its proof, and says so in its RFC 9728 document', async () => {
    const t = await boundToken({ protectedResources: resources });
    // Tokens without an audience are accepted by resources too (issued without `resource`).
    const check = t.server.resourceCheck(API);
    const bearerToken = json(await t.exchange(await t.getCode())).access_token as string;
    const asBearer = await check({ method: 'GET', url: `${API}/things`, headers: { authorization: `Bearer ${bearerToken}` } });
    expect(asBearer.ok).toBe(false);
    if (!asBearer.ok) {
      expect(asBearer.response.status).toBe(401);
      expect(asBearer.response.headers['www-authenticate']).toMatch(
        /^DPoP realm="authgate", error="invalid_token", error_description="This resource accepts DPoP-bound access tokens only.", (scope="[^"]+", )?resource_metadata="https:\/\/api.example\/.well-known\/oauth-protected-resource\/v2", algs="/,
      );
    }
    const ok = await check({
      method: 'GET',
      url: `${API}/things`,
      headers: {
        authorization: `DPoP ${t.token}`,
        dpop: await proof(t.key, 'GET', `${API}/things`, t.clock.now(), { accessToken: t.token }),
      },
    });
    expect(ok.ok).toBe(true);
    expect(t.server.protectedResourceMetadataDocument(API)).toMatchObject({
      dpop_bound_access_tokens_required: true,
      dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256'],
    });
    expect(t.server.protectedResourceMetadataDocument('https://open.example/api')).not.toHaveProperty('dpop_bound_access_tokens_required');
  });

  it('is a configuration error without the dpop option', async () => {
    const clock = new FakeClock();
    expect(
      () =>
        new AuthorizationServer({
          issuer: ISSUER,
          storage: new MemoryStorage(),
          sessions: new FakeSessions(clock),
          clock,
          protectedResources: resources,
        }),
    ).toThrow(/dpop/);
    void ADA;
  });
});
