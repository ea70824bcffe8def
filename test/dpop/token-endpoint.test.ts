import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { CALLBACK, json, setup } from '../helpers.js';
import { proof, proofKey, exchangeRequest } from './fixtures.js';

/**
 * DPoP at the token endpoint (RFC 9449 §5, §8, §10) and at the introspection endpoint (§6.2):
 * tokens bound to the key of a valid proof, refresh tokens of public clients bound, every refusal.
 */
const ISSUER = 'https://as.example';
const TOKEN_URL = `${ISSUER}/v1/oauth/token`;
const SECRET = 'a nonce secret of at least thirty-two bytes';

async function dpopSetup(dpop: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const t = await setup({ issuer: ISSUER, dpop, ...extra });
  const key = await proofKey();
  const tokenProof = (k = key, options: Parameters<typeof proof>[4] = {}) => proof(k, 'POST', TOKEN_URL, t.clock.now(), options);
  /** The code exchange of the confidential client, with `dpop` as its DPoP header when given. */
  const exchange = async (dpopHeader?: string, params: Record<string, string> = {}) => {
    const code = await t.getCode();
    return t.server.token(exchangeRequest(t, code, dpopHeader, params));
  };
  const api = (authorization: string, dpopHeader?: string, method = 'GET', url = `${ISSUER}/v2/account`) =>
    t.server.authenticate({ method, url, headers: { authorization, ...(dpopHeader !== undefined && { dpop: dpopHeader }) } });
  const resourceProof = (token: string, k = key, method = 'GET', url = `${ISSUER}/v2/account`) =>
    proof(k, method, url, t.clock.now(), { accessToken: token });
  return { ...t, key, tokenProof, exchange, api, resourceProof };
}

/** A public client and its code flow with PKCE, the code exchanged with `dpop` when given. */
async function publicFlow(t: Awaited<ReturnType<typeof dpopSetup>>, dpopHeader?: string) {
  const app = await t.server.registerClient({ name: 'CLI', redirectUri: CALLBACK, public: true });
  const verifier = 'v'.repeat(50);
  const { createHash } = await import('node:crypto');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const decision = await t.server.authorize(
    t.get(
      `/v1/oauth/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: CALLBACK, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' })}`,
      t.ada,
    ),
  );
  if (decision.type !== 'consent') throw new Error(JSON.stringify(decision));
  const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
  if (approved.type !== 'redirect') throw new Error(JSON.stringify(approved));
  const code = new URL(approved.location).searchParams.get('code')!;
  const res = await t.server.token(
    t.post(
      '/v1/oauth/token',
      { grant_type: 'authorization_code', code, client_id: app.clientId, redirect_uri: CALLBACK, code_verifier: verifier },
      dpopHeader === undefined ? {} : { dpop: dpopHeader },
    ),
  );
  return { app, res };
}

describe('DPoP off: nothing changes', () => {
  it('a DPoP header is ignored and the answers are those of a server without DPoP, byte for byte', async () => {
    const t = await setup({ issuer: ISSUER });
    const key = await proofKey();
    const code = await t.getCode();
    const res = await t.exchange(code, {});
    const withHeader = await t.server.token(exchangeRequest(t, await t.getCode(), await proof(key, 'POST', TOKEN_URL, t.clock.now())));
    for (const r of [res, withHeader]) {
      expect(r.status).toBe(200);
      expect(r.headers).toEqual({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', pragma: 'no-cache' });
      const body = json(r);
      expect(r.body).toBe(
        `{"access_token":"${body.access_token}","token_type":"bearer","expires_in":2592000,"refresh_token":"${body.refresh_token}","scope":"read","info":{"name":"Ada Lovelace","email":"ada@example.com","uuid":"${(body.info as { uuid: string }).uuid}"}}`,
      );
    }
    const metadata = t.server.metadataDocument()!;
    expect(metadata).not.toHaveProperty('dpop_signing_alg_values_supported');
    const refused = await t.server.authenticate({ method: 'GET', url: '/v2/account', headers: { authorization: 'DPoP abc' } });
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.response.headers['www-authenticate']).toBe('Bearer realm="authgate"');
  });
});

describe('DPoP on: configuration', () => {
  it('needs an issuer and the dpopProofs storage group', async () => {
    await expect(setup({ dpop: {} })).rejects.toThrow(/issuer/);
    const { MemoryStorage, AuthorizationServer } = await import('../../src/index.js');
    const { FakeSessions, FakeClock } = await import('../../src/testing/index.js');
    const storage = new MemoryStorage() as unknown as Record<string, unknown>;
    const partial = Object.create(storage) as Record<string, unknown>;
    partial.rememberDpopProof = undefined;
    const clock = new FakeClock();
    expect(
      () => new AuthorizationServer({ issuer: ISSUER, storage: partial as never, sessions: new FakeSessions(clock), clock, dpop: {} }),
    ).toThrow(/dpopProofs group.*rememberDpopProof/);
  });

  it('the metadata lists the proof algorithms (RFC 9449 §5.1)', async () => {
    const t = await dpopSetup({ algorithms: ['ES256', 'EdDSA'] });
    expect(t.server.metadataDocument()!.dpop_signing_alg_values_supported).toEqual(['ES256', 'EdDSA']);
  });

  it('with OpenID Connect on too, /.well-known/openid-configuration lists them as the RFC 8414 document does', async () => {
    const t = await dpopSetup({ algorithms: ['ES256', 'EdDSA'] }, { openid: { claims: () => ({}) } });
    const discovery = t.server.openidConfiguration({ method: 'GET' });
    expect(discovery.status).toBe(200);
    expect(json(discovery).dpop_signing_alg_values_supported).toEqual(['ES256', 'EdDSA']);
    expect(json(t.server.metadata({ method: 'GET' })).dpop_signing_alg_values_supported).toEqual(['ES256', 'EdDSA']);
  });
});

describe('token endpoint with a proof (RFC 9449 §5)', () => {
  it('binds the access token: token_type DPoP, usable with a proof of that key only, never as Bearer', async () => {
    const t = await dpopSetup();
    const res = await t.exchange(await t.tokenProof());
    expect(res.status).toBe(200);
    const body = json(res);
    expect(body.token_type).toBe('DPoP');
    const token = body.access_token as string;
    expect((await t.api(`DPoP ${token}`, await t.resourceProof(token))).ok).toBe(true);
    // Downgrade to Bearer (§7.2).
    const bearer = await t.api(`Bearer ${token}`);
    expect(bearer.ok).toBe(false);
    if (!bearer.ok) {
      expect(bearer.response.status).toBe(401);
      expect(bearer.response.headers['www-authenticate']).toMatch(
        /^Bearer realm="authgate", error="invalid_token".*, DPoP realm="authgate", algs="ES256 EdDSA Ed25519 RS256 PS256"$/,
      );
    }
    // Another key's proof.
    const other = await proofKey();
    const wrongKey = await t.api(`DPoP ${token}`, await t.resourceProof(token, other));
    expect(wrongKey.ok).toBe(false);
    if (!wrongKey.ok) expect(wrongKey.response.headers['www-authenticate']).toContain('DPoP realm="authgate", error="invalid_token"');
  });

  it('a confidential client gets a refresh token that is not bound; a refresh with a proof binds the new access token', async () => {
    const t = await dpopSetup();
    const body = json(await t.exchange(await t.tokenProof()));
    const plain = await t.refresh(body.refresh_token as string, { client_id: t.client.clientId, client_secret: t.client.clientSecret! });
    expect(plain.status).toBe(200);
    expect(json(plain).token_type).toBe('bearer');
    const again = await t.server.token(
      t.post(
        '/v1/oauth/token',
        {
          grant_type: 'refresh_token',
          refresh_token: json(plain).refresh_token as string,
          client_id: t.client.clientId,
          client_secret: t.client.clientSecret!,
        },
        { dpop: await t.tokenProof() },
      ),
    );
    expect(json(again).token_type).toBe('DPoP');
  });

  it('a public client’s refresh token is bound: refused without a proof or with another key, rotating nothing; accepted with its key', async () => {
    const t = await dpopSetup();
    const { app, res } = await publicFlow(t, await t.tokenProof());
    expect(res.status).toBe(200);
    const refreshToken = json(res).refresh_token as string;
    const refresh = async (dpopHeader?: string) =>
      t.server.token(
        t.post(
          '/v1/oauth/token',
          { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: app.clientId },
          dpopHeader === undefined ? {} : { dpop: dpopHeader },
        ),
      );
    const without = await refresh();
    expect(without.status).toBe(400);
    expect(json(without).error).toBe('invalid_dpop_proof');
    const other = await refresh(await t.tokenProof(await proofKey()));
    expect(other.status).toBe(400);
    expect(json(other).error).toBe('invalid_grant');
    const good = await refresh(await t.tokenProof());
    expect(good.status).toBe(200);
    expect(json(good).token_type).toBe('DPoP');
    // The rotated refresh token stays bound to the key.
    const next = json(good).refresh_token as string;
    const unbound = await t.server.token(
      t.post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: next, client_id: app.clientId }),
    );
    expect(json(unbound).error).toBe('invalid_dpop_proof');
  });

  it('a rotated bound refresh token replayed without its key revokes nothing; replayed with its key, the family is revoked (RFC 9700 §4.14.2)', async () => {
    const events: Array<{ type: string }> = [];
    const t = await dpopSetup({}, { onAudit: (e: { type: string }) => events.push(e) });
    const { app, res } = await publicFlow(t, await t.tokenProof());
    const first = json(res).refresh_token as string;
    const refresh = (refreshToken: string, dpopHeader?: string) =>
      t.server.token(
        t.post(
          '/v1/oauth/token',
          { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: app.clientId },
          dpopHeader === undefined ? {} : { dpop: dpopHeader },
        ),
      );
    const rotated = await refresh(first, await t.tokenProof());
    expect(rotated.status).toBe(200);
    const current = json(rotated) as { access_token: string; refresh_token: string };
    t.clock.advance(120_000); // past the default retry window of public clients: a replay, not a retry
    // A thief holding the rotated token but not the key: refused, the holder's family lives.
    const withoutProof = await refresh(first);
    expect(json(withoutProof).error).toBe('invalid_dpop_proof');
    const otherKey = await refresh(first, await t.tokenProof(await proofKey()));
    expect(json(otherKey).error).toBe('invalid_grant');
    expect(events.filter((e) => e.type === 'refresh_token.reused')).toHaveLength(0);
    expect((await t.api(`DPoP ${current.access_token}`, await t.resourceProof(current.access_token))).ok).toBe(true);
    const next = await refresh(current.refresh_token, await t.tokenProof());
    expect(next.status).toBe(200);
    const latest = json(next) as { access_token: string; refresh_token: string };
    // The key's holder presenting the rotated token: a replay, the whole family is revoked.
    const replayed = await refresh(first, await t.tokenProof());
    expect(json(replayed).error).toBe('invalid_grant');
    expect(events.filter((e) => e.type === 'refresh_token.reused')).toHaveLength(1);
    expect((await t.api(`DPoP ${latest.access_token}`, await t.resourceProof(latest.access_token))).ok).toBe(false);
    expect(json(await refresh(latest.refresh_token, await t.tokenProof())).error).toBe('invalid_grant');
  });

  it('a retry of a bound public-client refresh token (refreshRetryWindowSeconds) still needs its key’s proof', async () => {
    const events: Array<{ type: string }> = [];
    const t = await dpopSetup({}, { refreshRetryWindowSeconds: 60, onAudit: (e: { type: string }) => events.push(e) });
    const { app, res } = await publicFlow(t, await t.tokenProof());
    const first = json(res).refresh_token as string;
    const refresh = (dpopHeader?: string) =>
      t.server.token(
        t.post(
          '/v1/oauth/token',
          { grant_type: 'refresh_token', refresh_token: first, client_id: app.clientId },
          dpopHeader === undefined ? {} : { dpop: dpopHeader },
        ),
      );
    expect((await refresh(await t.tokenProof())).status).toBe(200); // committed, response lost
    t.clock.advance(5_000);
    // The retry without a proof, or with another key: refused, no sibling, no reuse, nothing revoked.
    expect(json(await refresh()).error).toBe('invalid_dpop_proof');
    expect(json(await refresh(await t.tokenProof(await proofKey()))).error).toBe('invalid_grant');
    expect(events.map((e) => e.type).filter((type) => type.startsWith('refresh_token.'))).toEqual([]);
    // With the key's proof: a sibling pair, bound to the key like its parent.
    const retried = await refresh(await t.tokenProof());
    expect(retried.status).toBe(200);
    expect(events.filter((e) => e.type === 'refresh_token.retried')).toHaveLength(1);
    const sibling = json(retried) as { token_type: string; access_token: string; refresh_token: string };
    expect(sibling.token_type).toBe('DPoP');
    expect((await t.api(`DPoP ${sibling.access_token}`, await t.resourceProof(sibling.access_token))).ok).toBe(true);
    const unbound = await t.server.token(
      t.post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: sibling.refresh_token, client_id: app.clientId }),
    );
    expect(json(unbound).error).toBe('invalid_dpop_proof');
  });

  it('refuses a bad proof with invalid_dpop_proof and uses nothing up: wrong htm, wrong htu, old iat, replayed jti', async () => {
    const t = await dpopSetup();
    const code = await t.getCode();
    const send = (dpop: string) => t.server.token(exchangeRequest(t, code, dpop));
    const now = t.clock.now();
    for (const bad of [
      await proof(t.key, 'GET', TOKEN_URL, now),
      await proof(t.key, 'POST', `${ISSUER}/v1/oauth/other`, now),
      await proof(t.key, 'POST', 'https://evil.example/v1/oauth/token', now),
      await proof(t.key, 'POST', TOKEN_URL, now - 61_000),
      await proof(t.key, 'POST', TOKEN_URL, now + 60_000),
    ]) {
      const res = await send(bad);
      expect(res.status).toBe(400);
      expect(json(res).error).toBe('invalid_dpop_proof');
    }
    const good = await t.tokenProof();
    expect((await send(good)).status).toBe(200);
    const replay = await t.exchange(good);
    expect(json(replay).error).toBe('invalid_dpop_proof');
    expect(json(replay).error_description).toBe('The DPoP proof was used before.');
  });

  it('server nonces: use_dpop_nonce with a DPoP-Nonce header, then the retry with the nonce passes (§8)', async () => {
    const t = await dpopSetup({ nonceSecret: SECRET });
    const first = await t.exchange(await t.tokenProof());
    expect(first.status).toBe(400);
    expect(json(first).error).toBe('use_dpop_nonce');
    const nonce = first.headers['dpop-nonce']!;
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const forged = await t.exchange(await t.tokenProof(t.key, { nonce: 'x'.repeat(43) }));
    expect(json(forged).error).toBe('use_dpop_nonce');
    const retry = await t.exchange(await t.tokenProof(t.key, { nonce }));
    expect(retry.status).toBe(200);
    expect(json(retry).token_type).toBe('DPoP');
  });

  it('a client registered with dpopBoundAccessTokens is refused without a proof', async () => {
    const t = await dpopSetup();
    const record = (await t.storage.findClient(t.client.clientId))!;
    await t.storage.saveClient({ ...record, dpopBoundAccessTokens: true });
    const res = await t.exchange();
    expect(res.status).toBe(400);
    expect(json(res).error).toBe('invalid_dpop_proof');
    expect((await t.exchange(await t.tokenProof())).status).toBe(200);
  });

  it('a client registered with dpopBoundAccessTokens that refreshes without credentials (compatible profile) is refused without a proof', async () => {
    const t = await dpopSetup({}, { requireClientAuthOnRefresh: false });
    const record = (await t.storage.findClient(t.client.clientId))!;
    await t.storage.saveClient({ ...record, dpopBoundAccessTokens: true });
    // A confidential client's refresh token is not bound (§5); the client record still says DPoP always.
    const refreshToken = json(await t.exchange(await t.tokenProof())).refresh_token as string;
    const refresh = (dpopHeader?: string) =>
      t.server.token(
        t.post(
          '/v1/oauth/token',
          { grant_type: 'refresh_token', refresh_token: refreshToken },
          dpopHeader === undefined ? {} : { dpop: dpopHeader },
        ),
      );
    const without = await refresh();
    expect(without.status).toBe(400);
    expect(json(without).error).toBe('invalid_dpop_proof');
    // Refused, it rotated nothing: the same token with a proof refreshes, bound.
    const good = await refresh(await t.tokenProof());
    expect(good.status).toBe(200);
    expect(json(good).token_type).toBe('DPoP');
  });

  it('introspection says token_type DPoP and cnf.jkt (§6.2)', async () => {
    const t = await dpopSetup();
    const token = json(await t.exchange(await t.tokenProof())).access_token as string;
    const res = await t.server.introspect(
      t.post('/v1/oauth/introspect', { token, client_id: t.client.clientId, client_secret: t.client.clientSecret! }),
    );
    expect(json(res)).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: t.key.jkt } });
  });

  it('a JWT access token carries cnf.jkt (§6.1)', async () => {
    const t = await dpopSetup({}, { accessTokenFormat: 'jwt' });
    const token = json(await t.exchange(await t.tokenProof())).access_token as string;
    expect(decodeJwt(token).cnf).toEqual({ jkt: t.key.jkt });
    expect((await t.api(`DPoP ${token}`, await t.resourceProof(token))).ok).toBe(true);
    const bearer = json(await t.exchange());
    expect(decodeJwt(bearer.access_token as string)).not.toHaveProperty('cnf');
  });
});

describe('clients that use DPoP always (RFC 9449 §5.2) and codes bound with dpop_jkt (§10)', () => {
  it('registerClient({ dpopBoundAccessTokens: true }): token requests without a proof are refused; refused without DPoP on', async () => {
    const t = await dpopSetup();
    const app = await t.server.registerClient({ name: 'Agent', redirectUri: CALLBACK, dpopBoundAccessTokens: true });
    expect((await t.storage.findClient(app.clientId))?.dpopBoundAccessTokens).toBe(true);
    const plain = await setup();
    await expect(plain.server.registerClient({ name: 'Agent', redirectUri: CALLBACK, dpopBoundAccessTokens: true })).rejects.toThrow(
      /dpopBoundAccessTokens needs DPoP/,
    );
  });

  it('dynamic registration keeps dpop_bound_access_tokens and says so', async () => {
    const t = await dpopSetup({}, { allowDynamicRegistration: true });
    const res = await t.server.registerDynamic({
      method: 'POST',
      url: '/v1/oauth/register',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Agent', redirect_uris: [CALLBACK], dpop_bound_access_tokens: true }),
    });
    expect(res.status).toBe(201);
    const body = json(res);
    expect(body.dpop_bound_access_tokens).toBe(true);
    expect((await t.storage.findClient(body.client_id as string))?.dpopBoundAccessTokens).toBe(true);
    const bad = await t.server.registerDynamic({
      method: 'POST',
      url: '/v1/oauth/register',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Agent', redirect_uris: [CALLBACK], dpop_bound_access_tokens: 'yes' }),
    });
    expect(json(bad).error).toBe('invalid_client_metadata');
  });

  it('a code bound with dpop_jkt is exchanged with a proof of that key only; a refused exchange uses nothing up', async () => {
    const t = await dpopSetup();
    const code = await t.getCode({ dpop_jkt: t.key.jkt });
    const send = (dpop?: string) => t.server.token(exchangeRequest(t, code, dpop));
    expect(json(await send()).error).toBe('invalid_dpop_proof');
    expect(json(await send(await t.tokenProof(await proofKey()))).error).toBe('invalid_grant');
    const good = await send(await t.tokenProof());
    expect(good.status).toBe(200);
    expect(json(good).token_type).toBe('DPoP');
  });

  it('a malformed dpop_jkt is invalid_request at the callback', async () => {
    const t = await dpopSetup();
    const decision = await t.server.authorize(t.get(t.authorizeUrl({ dpop_jkt: 'not a thumbprint' }), t.ada));
    expect(decision.type).toBe('redirect');
    if (decision.type === 'redirect') expect(new URL(decision.location).searchParams.get('error')).toBe('invalid_request');
  });
});

describe('hostile DPoP headers at the endpoints: a specified error, never a 500', () => {
  it('a 100 KB header, an HMAC or none alg, a private key in jwk, two headers: invalid_dpop_proof at the token endpoint and at a resource', async () => {
    const t = await dpopSetup();
    const { sign } = await import('../dpop-proofs.js');
    const now = Math.floor(t.clock.now() / 1000);
    const claims = { htm: 'POST', htu: TOKEN_URL, iat: now, jti: 'hostile' };
    // Signed with the ES256 key whatever the header says: each is refused before any signature check.
    const hmac = await sign({ typ: 'dpop+jwt', alg: 'HS256', jwk: { kty: 'oct', k: 'AAAA' } }, claims, t.key.privateKey);
    const none = await sign({ typ: 'dpop+jwt', alg: 'none', jwk: t.key.jwk }, claims, '');
    const leaked = await sign({ typ: 'dpop+jwt', alg: 'ES256', jwk: { ...t.key.jwk, d: 'AAAA' } }, claims, t.key.privateKey);
    const headers: (string | string[])[] = ['x'.repeat(100_000), hmac, none, leaked, [await t.tokenProof(), await t.tokenProof()], ''];
    for (const dpop of headers) {
      const res = await t.server.token(
        t.post(
          '/v1/oauth/token',
          {
            grant_type: 'authorization_code',
            code: 'unknown',
            client_id: t.client.clientId,
            client_secret: t.client.clientSecret!,
            redirect_uri: CALLBACK,
          },
          { dpop: dpop as string },
        ),
      );
      expect(res.status).toBe(400);
      expect(json(res).error).toBe('invalid_dpop_proof');
      const api = await t.server.authenticate({ method: 'GET', url: `${ISSUER}/v2/account`, headers: { authorization: 'DPoP abc', dpop } });
      expect(api.ok).toBe(false);
      if (!api.ok) {
        expect(api.response.status).toBe(401);
        expect(api.response.headers['www-authenticate']).toContain('error="invalid_dpop_proof"');
      }
    }
  });
});
