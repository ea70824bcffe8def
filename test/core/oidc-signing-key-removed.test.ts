/**
 * A client's ID token algorithm (`idTokenSignedResponseAlg`) whose key the server no longer has
 * (docs/reference.md#client-fields): the client was registered while an ES256 key was in
 * `openid.signingKeys`, then the server restarted with RS256 keys only. Nothing single-use is
 * used up for an ID token that cannot be signed: the authorization endpoint issues no code
 * (`server_error` to the callback, RFC 6749 §4.1.2.1), and a code or refresh token issued before
 * the restart is answered `500 server_error` (docs/reference.md#failures-and-outages) and stays
 * usable, so that once the key is back the same code and the same refresh token work.
 */
import { decodeProtectedHeader } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { sha256Base64url } from '../../src/crypto.js';
import { AuthorizationServer, ConfigError, generateSigningKey, type AuthorizeDecision, type SigningJwk } from '../../src/index.js';
import { ADA, CALLBACK, json, setup } from '../helpers.js';

const ISSUER = 'https://auth.example.com';

/** A server that signs ID tokens with RS256 and ES256, its client registered for ES256; `restart` builds another instance over the same store. */
async function twoKeys() {
  const rs = await generateSigningKey('RS256', 'rs');
  const es = await generateSigningKey('ES256', 'es');
  const t = await setup({ issuer: ISSUER, openid: { signingKeys: [rs, es] } });
  await t.server.updateClient(t.client.clientId, { openid: { idTokenSignedResponseAlg: 'ES256' } });
  const faults: unknown[] = [];
  const restart = (signingKeys: SigningJwk[]) =>
    new AuthorizationServer({
      storage: t.storage,
      sessions: t.sessions,
      clock: t.clock,
      issuer: ISSUER,
      openid: { signingKeys },
      onError: (error) => faults.push(error),
    });
  const exchangeOn = (server: AuthorizationServer, code: string) =>
    server.token(
      t.post('/v1/oauth/token', {
        grant_type: 'authorization_code',
        code,
        client_id: t.client.clientId,
        client_secret: t.client.clientSecret,
        redirect_uri: CALLBACK,
      }),
    );
  const refreshOn = (server: AuthorizationServer, refreshToken: string, extra: Record<string, string> = {}) =>
    server.token(
      t.post('/v1/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: t.client.clientId,
        client_secret: t.client.clientSecret,
        ...extra,
      }),
    );
  return { ...t, rs, es, faults, restart, exchangeOn, refreshOn };
}

/** The parameters a redirect decision carries, or the decision itself when it is none. */
function redirected(decision: AuthorizeDecision): Record<string, string> {
  if (decision.type !== 'redirect') throw new Error(`redirect expected: ${JSON.stringify(decision)}`);
  return Object.fromEntries(new URL(decision.location).searchParams);
}

/** The one fault reported: a ConfigError naming the option, the client and the algorithm. */
function expectReported(faults: unknown[], clientId: string) {
  expect(faults).toHaveLength(1);
  expect(faults[0]).toBeInstanceOf(ConfigError);
  expect(String((faults[0] as Error).message)).toMatch(/openid\.signingKeys/);
  expect(String((faults[0] as Error).message)).toContain(clientId);
  expect(String((faults[0] as Error).message)).toContain('ES256');
  faults.length = 0;
}

describe('a code issued for ES256, exchanged on an instance without an ES256 key', () => {
  it('is answered 500 server_error and not used up; with the key back, the same code gives an ES256 ID token', async () => {
    const t = await twoKeys();
    const code = await t.getCode({ scope: 'openid', nonce: 'n1' });
    const without = t.restart([t.rs]);

    const refused = await t.exchangeOn(without, code);
    expect(refused.status).toBe(500);
    expect(json(refused)).toEqual({
      error: 'server_error',
      error_description: 'The server could not complete the request. Try again later.',
    });
    expect(refused.headers['cache-control']).toBe('no-store');
    expectReported(t.faults, t.client.clientId);
    // The code is as it was: not used, no token issued from it.
    expect((await t.storage.findCode(sha256Base64url(code)))?.usedAt).toBeNull();
    // Asked again on the same instance: the same answer, still nothing used up.
    expect((await t.exchangeOn(without, code)).status).toBe(500);
    expect((await t.storage.findCode(sha256Base64url(code)))?.usedAt).toBeNull();
    t.faults.length = 0;

    // The key is back (a rollback, or the rotation done right): the same code works, once.
    const restored = t.restart([t.rs, t.es]);
    const ok = await t.exchangeOn(restored, code);
    expect(ok.status).toBe(200);
    expect(decodeProtectedHeader(json(ok).id_token as string)).toMatchObject({ alg: 'ES256', kid: 'es' });
    expect(json(await t.exchangeOn(restored, code)).error).toBe('invalid_grant');
    expect(t.faults).toEqual([]);
  });

  it('a code without openid, or a client on RS256, is exchanged as before on that instance', async () => {
    const t = await twoKeys();
    const plain = await t.getCode({ scope: 'read' });
    const without = t.restart([t.rs]);
    expect((await t.exchangeOn(without, plain)).status).toBe(200);
    await t.server.updateClient(t.client.clientId, { openid: null });
    const rsCode = await t.getCode({ scope: 'openid' });
    const body = json(await t.exchangeOn(without, rsCode));
    expect(decodeProtectedHeader(body.id_token as string).alg).toBe('RS256');
    expect(t.faults).toEqual([]);
  });
});

describe('a refresh whose new ID token needs the missing key (Core §12.2)', () => {
  it('is answered 500 server_error without rotating: the refresh token is no replay afterwards, and works once the key is back', async () => {
    const t = await twoKeys();
    const first = json(await t.exchange(await t.getCode({ scope: 'openid read' })));
    expect(decodeProtectedHeader(first.id_token as string).alg).toBe('ES256');
    const refreshToken = first.refresh_token as string;
    const without = t.restart([t.rs]);

    t.clock.advance(60_000);
    const refused = await t.refreshOn(without, refreshToken);
    expect(refused.status).toBe(500);
    expect(json(refused).error).toBe('server_error');
    expectReported(t.faults, t.client.clientId);
    // Not rotated: the access token of the first exchange still works, the grant is not revoked.
    expect((await t.storage.findToken(sha256Base64url(refreshToken)))?.token.rotatedAt).toBeNull();
    expect((await without.authenticate({ method: 'GET', url: '/x', headers: { authorization: `Bearer ${first.access_token}` } })).ok).toBe(
      true,
    );
    // Presented again once the key is back: a refresh, not a replay (the family lives on).
    t.clock.advance(60_000);
    const restored = t.restart([t.rs, t.es]);
    const ok = await t.refreshOn(restored, refreshToken);
    expect(ok.status).toBe(200);
    expect(decodeProtectedHeader(json(ok).id_token as string)).toMatchObject({ alg: 'ES256', kid: 'es' });
    expect(t.faults).toEqual([]);
    // And the next refresh goes on from the new token.
    expect((await t.refreshOn(restored, json(ok).refresh_token as string)).status).toBe(200);
  });

  it('a refresh narrowed to a scope without openid has no ID token to sign, and works on that instance', async () => {
    const t = await twoKeys();
    const first = json(await t.exchange(await t.getCode({ scope: 'openid read' })));
    const without = t.restart([t.rs]);
    const res = await t.refreshOn(without, first.refresh_token as string, { scope: 'read' });
    expect(res.status).toBe(200);
    expect(json(res).id_token).toBeUndefined();
    expect(t.faults).toEqual([]);
  });

  it('a public client refreshing without credentials is refused the same way, nothing rotated', async () => {
    const t = await twoKeys();
    const pub = await t.server.registerClient({ name: 'Public', redirectUri: 'https://public.example/cb', public: true });
    await t.server.updateClient(pub.clientId, { openid: { idTokenSignedResponseAlg: 'ES256' } });
    const verifier = 'v'.repeat(43);
    const challenge = sha256Base64url(verifier);
    const query = new URLSearchParams({
      client_id: pub.clientId,
      redirect_uri: 'https://public.example/cb',
      response_type: 'code',
      scope: 'openid read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const consent = await t.server.authorize(t.get(`/v1/oauth/authorize?${query}`, t.ada));
    if (consent.type !== 'consent') throw new Error('consent expected');
    const code = redirected(await t.server.approve(consent.interaction.id, t.get('/', t.ada))).code!;
    const tokens = json(
      await t.server.token(
        t.post('/v1/oauth/token', {
          grant_type: 'authorization_code',
          code,
          client_id: pub.clientId,
          redirect_uri: 'https://public.example/cb',
          code_verifier: verifier,
        }),
      ),
    );
    const without = t.restart([t.rs]);
    const refused = await without.token(
      t.post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string }),
    );
    expect(refused.status).toBe(500);
    expectReported(t.faults, pub.clientId);
    expect((await t.storage.findToken(sha256Base64url(tokens.refresh_token as string)))?.token.rotatedAt).toBeNull();
  });
});

describe('the authorization endpoint knows at once that it cannot sign the ID token: no code is issued', () => {
  it('a new request is redirected server_error with its state and iss, before any sign-in or consent; the key back, it works', async () => {
    const t = await twoKeys();
    const without = t.restart([t.rs]);
    const stored = vi.spyOn(t.storage, 'createGrant');
    const interactions = vi.spyOn(t.storage, 'saveInteraction');
    for (const cookie of [t.ada, undefined]) {
      for (const prompt of [{}, { prompt: 'none' }, { prompt: 'login' }] as Record<string, string>[]) {
        const decision = await without.authorize(t.get(t.authorizeUrl({ scope: 'openid', state: 's1', ...prompt }), cookie));
        const params = redirected(decision);
        expect(params).toMatchObject({ error: 'server_error', state: 's1', iss: ISSUER });
        expect(params.code).toBeUndefined();
        expectReported(t.faults, t.client.clientId);
      }
    }
    expect(stored).not.toHaveBeenCalled();
    expect(interactions).not.toHaveBeenCalled();
    // form_post: the error is posted, as every error of a valid request is.
    const posted = await without.authorize(t.get(t.authorizeUrl({ scope: 'openid', state: 's2', response_mode: 'form_post' }), t.ada));
    expect(posted).toMatchObject({ type: 'form_post', action: CALLBACK, fields: { error: 'server_error', state: 's2', iss: ISSUER } });
    t.faults.length = 0;
    // Without openid the request needs no ID token: it goes on as always.
    expect((await without.authorize(t.get(t.authorizeUrl({ scope: 'read' }), t.ada))).type).toBe('consent');
    vi.restoreAllMocks();

    const restored = t.restart([t.rs, t.es]);
    const consent = await restored.authorize(t.get(t.authorizeUrl({ scope: 'openid' }), t.ada));
    if (consent.type !== 'consent') throw new Error('consent expected');
    const code = redirected(await restored.approve(consent.interaction.id, t.get('/', t.ada))).code!;
    expect(decodeProtectedHeader(json(await t.exchangeOn(restored, code)).id_token as string).alg).toBe('ES256');
    expect(t.faults).toEqual([]);
  });

  it('a request started before the restart and approved after it: server_error, no code, nothing stored', async () => {
    const t = await twoKeys();
    const consent = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', state: 's3' }), t.ada));
    if (consent.type !== 'consent') throw new Error('consent expected');
    const login = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', state: 's4' })));
    if (login.type !== 'login') throw new Error('login expected');
    const without = t.restart([t.rs]);
    const stored = vi.spyOn(t.storage, 'createGrant');
    const approvedInOneStep = vi.spyOn(t.storage, 'approveInteraction');

    const approved = redirected(await without.approve(consent.interaction.id, t.get('/', t.ada)));
    expect(approved).toMatchObject({ error: 'server_error', state: 's3', iss: ISSUER });
    expect(approved.code).toBeUndefined();
    expectReported(t.faults, t.client.clientId);
    // The sign-in done, resume asks no consent that could not be honoured.
    const resumed = redirected(await without.resume(login.interaction.id, t.get('/', t.ada)));
    expect(resumed).toMatchObject({ error: 'server_error', state: 's4' });
    expectReported(t.faults, t.client.clientId);
    expect(stored).not.toHaveBeenCalled();
    expect(approvedInOneStep).not.toHaveBeenCalled();
    expect(await t.storage.findConsent(ADA.uuid, t.client.clientId)).toBeNull();
    // A denial needs no ID token: access_denied as always.
    const again = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', state: 's5' }), t.ada));
    if (again.type !== 'consent') throw new Error('consent expected');
    expect(redirected(await without.deny(again.interaction.id, t.get('/', t.ada)))).toMatchObject({ error: 'access_denied', state: 's5' });
    vi.restoreAllMocks();
  });
});
