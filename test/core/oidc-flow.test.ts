/**
 * OpenID Connect on the code flow (docs/reference.md#openid-connect): the `openid` option, its
 * scopes, the authorization request's parameters, the ID token at the code exchange and on
 * refresh, userinfo, discovery and the JWKS, driven through the core without HTTP.
 */
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { atHash } from '../../src/oidc/id-token.js';
import { generateSigningKey, interactionResponse } from '../../src/index.js';
import { OTHER_CALLBACK } from '../fixtures.js';
import { ADA, BOB, CALLBACK, json, setup } from '../helpers.js';

const ISSUER = 'https://auth.example.com';
const CLAIMS = (account: { uuid: string; name: string; email: string }) => ({
  name: account.name,
  email: account.email,
  email_verified: true,
  picture: 'https://auth.example.com/p.png',
  address: { locality: 'Paris' },
  phone_number: '+33 1 23 45 67 89',
  sub: 'never-from-the-host',
});

async function oidc(openid: Record<string, unknown> = {}, options: Record<string, unknown> = {}) {
  const t = await setup({ issuer: ISSUER, openid: { claims: CLAIMS, ...openid }, ...options });
  const keys = async () => createLocalJWKSet(json(await t.server.jwks({ method: 'GET' })) as never);
  const verify = async (idToken: string, nonce?: string) => {
    const { payload } = await jwtVerify(idToken, await keys(), {
      issuer: ISSUER,
      audience: t.client.clientId,
      currentDate: new Date(t.clock.now()),
    });
    if (nonce !== undefined) expect(payload.nonce).toBe(nonce);
    return payload;
  };
  const userinfo = (token: string, method = 'GET') =>
    t.server.userinfo({ method, url: '/v1/oauth/userinfo', headers: { authorization: `Bearer ${token}` } });
  return { ...t, keys, verify, userinfo };
}

describe('the openid option: a sign-in with the code flow', () => {
  it('code + nonce: the token response ends with an ID token whose claims verify with the JWKS', async () => {
    const t = await oidc();
    const signedInAt = t.clock.now();
    t.clock.advance(5_000);
    const code = await t.getCode({ scope: 'openid profile email', nonce: 'n-0S6_WzA2Mj' });
    const res = await t.exchange(code);
    expect(res.status).toBe(200);
    const body = json(res);
    expect(Object.keys(body)).toEqual(['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope', 'info', 'id_token']);
    expect(body.scope).toBe('openid profile email');
    const idToken = body.id_token as string;
    expect(decodeProtectedHeader(idToken)).toMatchObject({ alg: 'RS256', typ: 'JWT' });
    const claims = await t.verify(idToken, 'n-0S6_WzA2Mj');
    expect(claims).toMatchObject({ iss: ISSUER, sub: ADA.uuid, aud: t.client.clientId, auth_time: Math.floor(signedInAt / 1000) });
    expect(claims.at_hash).toBe(atHash(body.access_token as string, 'RS256'));
    expect(claims.exp! - claims.iat!).toBe(3600);
    // Core §5.4: an access token is issued, so the profile claims are at userinfo, not here.
    expect(claims.name).toBeUndefined();
    expect(claims.azp).toBeUndefined();
  });

  it('without a nonce the code flow succeeds and the ID token has none (oidcc-ensure-request-without-nonce-succeeds-for-code-flow)', async () => {
    const t = await oidc();
    const body = json(await t.exchange(await t.getCode({ scope: 'openid' })));
    expect((await t.verify(body.id_token as string)).nonce).toBeUndefined();
  });

  it('scope order does not matter, and read is kept with openid (oidcc-ensure-other-scope-order-succeeds)', async () => {
    const t = await oidc();
    const body = json(await t.exchange(await t.getCode({ scope: 'email read openid' })));
    expect(body.scope).toBe('read openid email');
    expect(body.id_token).toBeTypeOf('string');
    expect((await t.api('GET', body.access_token as string)).ok).toBe(true);
  });

  it('a sign-in only (openid profile) gives a token good for userinfo and for no resource request', async () => {
    const t = await oidc();
    const body = json(await t.exchange(await t.getCode({ scope: 'openid profile' })));
    const api = await t.api('GET', body.access_token as string);
    expect(api.ok).toBe(false);
    expect((await t.userinfo(body.access_token as string)).status).toBe(200);
  });

  it('an unknown scope value with openid is still invalid_scope; offline_access is ignored', async () => {
    const t = await oidc();
    const refused = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid bogus' }), t.ada));
    expect(refused).toMatchObject({ type: 'error', error: 'invalid_scope' });
    const body = json(await t.exchange(await t.getCode({ scope: 'openid offline_access' })));
    expect(body.scope).toBe('openid');
  });

  it('refresh gives a new ID token: same sub and aud, the original auth_time, no nonce (Core §12.2)', async () => {
    const t = await oidc();
    const signedInAt = t.clock.now();
    const first = json(await t.exchange(await t.getCode({ scope: 'openid email', nonce: 'abc' })));
    t.clock.advance(600_000);
    const res = await t.refresh(first.refresh_token as string);
    const body = json(res);
    expect(Object.keys(body).at(-1)).toBe('id_token');
    const claims = await t.verify(body.id_token as string);
    expect(claims).toMatchObject({ sub: ADA.uuid, aud: t.client.clientId, auth_time: Math.floor(signedInAt / 1000) });
    expect(claims.nonce).toBeUndefined();
    expect(claims.iat).toBe(Math.floor(t.clock.now() / 1000));
    expect(claims.at_hash).toBe(atHash(body.access_token as string, 'RS256'));
  });

  it('a refresh narrowed to a scope without openid has no ID token', async () => {
    const t = await oidc();
    const first = json(await t.exchange(await t.getCode({ scope: 'read openid' })));
    const narrowed = json(await t.refresh(first.refresh_token as string, { scope: 'read' }));
    expect(narrowed.scope).toBe('read');
    expect(Object.keys(narrowed)).toEqual(['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope', 'info']);
  });

  it('the code is single use: its replay is invalid_grant and revokes the tokens (oidcc-codereuse, oidcc-codereuse-30seconds)', async () => {
    const t = await oidc();
    const code = await t.getCode({ scope: 'openid' });
    const body = json(await t.exchange(code));
    t.clock.advance(30_000);
    const again = await t.exchange(code);
    expect(again.status).toBe(400);
    expect(json(again).error).toBe('invalid_grant');
    expect((await t.userinfo(body.access_token as string)).status).toBe(401);
  });

  it('the host claims are filtered by scope at userinfo, sub first and never the host own (oidcc-scope-profile, -email, -address, -phone, -all)', async () => {
    const t = await oidc();
    const token = (scope: string) => t.tokens({ scope }).then((b) => b.access_token);
    const profile = json(await t.userinfo(await token('openid profile')));
    expect(profile).toEqual({ sub: ADA.uuid, name: ADA.name, picture: 'https://auth.example.com/p.png' });
    expect(Object.keys(profile)[0]).toBe('sub');
    expect(json(await t.userinfo(await token('openid email')))).toEqual({ sub: ADA.uuid, email: ADA.email, email_verified: true });
    expect(json(await t.userinfo(await token('openid address')))).toEqual({ sub: ADA.uuid, address: { locality: 'Paris' } });
    expect(json(await t.userinfo(await token('openid phone')))).toEqual({ sub: ADA.uuid, phone_number: '+33 1 23 45 67 89' });
    const all = json(await t.userinfo(await token('openid profile email address phone')));
    expect(Object.keys(all).sort()).toEqual(['address', 'email', 'email_verified', 'name', 'phone_number', 'picture', 'sub']);
    expect(json(await t.userinfo(await token('openid')))).toEqual({ sub: ADA.uuid });
  });

  it('userinfo: GET, POST with the header, POST with the body; no-store (oidcc-userinfo-get, -post-header, -post-body)', async () => {
    const t = await oidc();
    const { access_token: token } = await t.tokens({ scope: 'openid email' });
    const get = await t.userinfo(token);
    expect(get.status).toBe(200);
    expect(get.headers['cache-control']).toBe('no-store');
    expect(json(await t.userinfo(token, 'POST')).sub).toBe(ADA.uuid);
    const body = await t.server.userinfo(t.post('/v1/oauth/userinfo', { access_token: token }));
    expect(json(body)).toMatchObject({ sub: ADA.uuid, email: ADA.email });
  });

  it('userinfo refuses a token without openid (403 insufficient_scope), no token (401), a bad one (401), other methods (405)', async () => {
    const t = await oidc();
    const { access_token: plain } = await t.tokens({ scope: 'read' });
    const lacking = await t.userinfo(plain);
    expect(lacking.status).toBe(403);
    expect(lacking.headers['www-authenticate']).toContain('error="insufficient_scope"');
    expect(lacking.headers['www-authenticate']).toContain('scope="openid"');
    const none = await t.server.userinfo(t.get('/v1/oauth/userinfo'));
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer realm=/);
    expect((await t.userinfo('not-a-token')).status).toBe(401);
    expect((await t.userinfo(plain, 'DELETE')).status).toBe(405);
  });

  it('a revoked grant: userinfo answers 401 at once', async () => {
    const t = await oidc();
    const { access_token: token } = await t.tokens({ scope: 'openid' });
    await t.server.revokeAccess({ accountUuid: ADA.uuid, clientId: t.client.clientId });
    expect((await t.userinfo(token)).status).toBe(401);
  });

  it('claimsInIdToken puts the scope claims in the ID token too', async () => {
    const t = await oidc({ claimsInIdToken: true });
    const body = json(await t.exchange(await t.getCode({ scope: 'openid email' })));
    const claims = await t.verify(body.id_token as string);
    expect(claims).toMatchObject({ email: ADA.email, email_verified: true, sub: ADA.uuid });
  });
});

describe('authorization request parameters with openid', () => {
  it('max_age=0 forces a sign-in, and auth_time is the new sign-in (oidcc-max-age-1)', async () => {
    const t = await oidc();
    t.clock.advance(2_000);
    const decision = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', max_age: '0' }), t.ada));
    expect(decision.type).toBe('login');
    t.clock.advance(1_000);
    const fresh = t.sessions.signIn(ADA);
    if (decision.type !== 'login') throw new Error('login expected');
    const consent = await t.server.resume(decision.interaction.id, t.get('/', fresh));
    if (consent.type !== 'consent') throw new Error(`consent expected: ${JSON.stringify(consent)}`);
    const approved = await t.server.approve(consent.interaction.id, t.get('/', fresh));
    if (approved.type !== 'redirect') throw new Error('redirect expected');
    const body = json(await t.exchange(new URL(approved.location).searchParams.get('code')!));
    expect((await t.verify(body.id_token as string)).auth_time).toBe(Math.floor(t.clock.now() / 1000));
  });

  it('max_age=10000 lets a recent session through (oidcc-max-age-10000)', async () => {
    const t = await oidc();
    t.clock.advance(60_000);
    const decision = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', max_age: '10000' }), t.ada));
    expect(decision.type).toBe('consent');
  });

  it("the client's default_max_age applies when max_age is absent", async () => {
    const t = await oidc();
    const record = (await t.storage.findClient(t.client.clientId))!;
    await t.storage.saveClient({ ...record, openid: { defaultMaxAge: 1 } });
    t.clock.advance(5_000);
    expect((await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid' }), t.ada))).type).toBe('login');
    // Not for a plain OAuth request of the same client.
    expect((await t.server.authorize(t.get(t.authorizeUrl({ scope: 'read' }), t.ada))).type).toBe('consent');
  });

  it('prompt=login asks to sign in again; prompt=consent shows the consent (oidcc-prompt-login)', async () => {
    const t = await oidc();
    expect((await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', prompt: 'login' }), t.ada))).type).toBe('login');
    expect((await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', prompt: 'consent' }), t.ada))).type).toBe('consent');
    // Without openid, consent stays an unknown prompt value, as before.
    const plain = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'read', prompt: 'consent' }), t.ada));
    expect(plain.type).toBe('redirect');
    if (plain.type === 'redirect') expect(new URL(plain.location).searchParams.get('error')).toBe('invalid_request');
  });

  it('prompt=none: login_required without a session, consent_required without a consent, a code with both (oidcc-prompt-none-*)', async () => {
    const t = await oidc();
    const none = (cookie?: string) => t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', prompt: 'none', state: 's1' }), cookie));
    const error = (d: Awaited<ReturnType<typeof none>>): Record<string, string> =>
      d.type === 'redirect' ? Object.fromEntries(new URL(d.location).searchParams) : { type: d.type };
    expect(error(await none())).toMatchObject({ error: 'login_required', state: 's1', iss: ISSUER });
    expect(error(await none(t.ada))).toMatchObject({ error: 'consent_required' });
    await t.getCode({ scope: 'openid' });
    const ok = error(await none(t.ada));
    expect(ok.code).toBeTypeOf('string');
    const body = json(await t.exchange(ok.code as string));
    expect(await t.verify(body.id_token as string)).toMatchObject({ sub: ADA.uuid });
  });

  it('id_token_hint: the signed-in account passes; another account, a foreign key, another client are refused (oidcc-id-token-hint)', async () => {
    const t = await oidc();
    const { id_token: hint } = json(await t.exchange(await t.getCode({ scope: 'openid' }))) as { id_token: string };
    // Expired hints still count (Core §3.1.2.1).
    t.clock.advance(2 * 3600_000);
    const silent = (params: Record<string, string>, cookie?: string) =>
      t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', prompt: 'none', ...params }), cookie));
    const query = (d: Awaited<ReturnType<typeof silent>>): Record<string, string> =>
      d.type === 'redirect' ? Object.fromEntries(new URL(d.location).searchParams) : { type: d.type };
    expect(query(await silent({ id_token_hint: hint }, t.ada)).code).toBeTypeOf('string');
    // Bob signed in: the hint names Ada.
    const bob = t.sessions.signIn(BOB);
    expect(query(await silent({ id_token_hint: hint }, bob))).toMatchObject({ error: 'login_required' });
    // Without prompt=none, Bob's browser is asked to sign in.
    expect((await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', id_token_hint: hint }), bob))).type).toBe('login');
    // Signed by a key of ours it is not: refused.
    const other = await oidc({ signingKeys: [await generateSigningKey('RS256', 'foreign')] });
    const { id_token: foreign } = json(await other.exchange(await other.getCode({ scope: 'openid' }))) as { id_token: string };
    expect(query(await silent({ id_token_hint: foreign }, t.ada))).toMatchObject({ error: 'invalid_request' });
    expect(query(await silent({ id_token_hint: 'garbage' }, t.ada))).toMatchObject({ error: 'invalid_request' });
    // Our ID token for another client.
    const otherAuthorize = `/v1/oauth/authorize?${new URLSearchParams({ client_id: t.other.clientId, redirect_uri: OTHER_CALLBACK, response_type: 'code', scope: 'openid', prompt: 'none', id_token_hint: hint })}`;
    const forOther = await t.server.authorize(t.get(otherAuthorize, t.ada));
    if (forOther.type !== 'redirect') throw new Error(`redirect expected: ${JSON.stringify(forOther)}`);
    expect(new URL(forOther.location).searchParams.get('error')).toBe('invalid_request');
  });

  it('id_token_hint over time: a sign-in as another account at the resume is login_required to the client; the hinted account goes on (Core §3.1.2.1)', async () => {
    const t = await oidc();
    const { id_token: hint } = json(await t.exchange(await t.getCode({ scope: 'openid' }))) as { id_token: string };
    const params = { scope: 'openid', id_token_hint: hint, state: 's-hint' };
    const callback = (d: Awaited<ReturnType<typeof t.server.resume>>): Record<string, string> => {
      if (d.type !== 'redirect') throw new Error(`redirect expected: ${JSON.stringify(d)}`);
      return Object.fromEntries(new URL(d.location).searchParams);
    };
    // 1. A browser without a session: the sign-in page.
    const first = await t.server.authorize(t.get(t.authorizeUrl(params)));
    if (first.type !== 'login') throw new Error(`login expected: ${JSON.stringify(first)}`);
    // 2. The user signs in as Bob, not the hint's Ada, and the host resumes: refused to the client.
    t.clock.advance(20_000);
    const bob = t.sessions.signIn(BOB);
    const resumed = await t.server.resume(first.interaction.id, t.get('/', bob));
    expect(callback(resumed)).toEqual({ error: 'login_required', error_description: expect.any(String), state: 's-hint', iss: ISSUER });
    // The interaction is spent: resuming it again, even as Ada, does not issue anything.
    expect((await t.server.resume(first.interaction.id, t.get('/', t.ada))).type).toBe('error');
    // 3. The same request signed in as Ada goes on to the consent and a code for Ada.
    const again = await t.server.authorize(t.get(t.authorizeUrl(params)));
    if (again.type !== 'login') throw new Error('login expected');
    const consent = await t.server.resume(again.interaction.id, t.get('/', t.ada));
    if (consent.type !== 'consent') throw new Error(`consent expected: ${JSON.stringify(consent)}`);
    const code = callback(await t.server.approve(consent.interaction.id, t.get('/', t.ada))).code as string;
    expect(await t.verify(json(await t.exchange(code)).id_token as string)).toMatchObject({ sub: ADA.uuid });
    // 4. "Use another account" from Ada's consent page, then Bob resumes it: refused too.
    const shown = await t.server.authorize(t.get(t.authorizeUrl(params), t.ada));
    if (shown.type !== 'consent') throw new Error('consent expected');
    expect(callback(await t.server.resume(shown.interaction.id, t.get('/', bob)))).toMatchObject({
      error: 'login_required',
      state: 's-hint',
    });
  });

  it('request, request_uri and registration are refused with their own errors (oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported)', async () => {
    const t = await oidc();
    for (const [name, error] of [
      ['request', 'request_not_supported'],
      ['request_uri', 'request_uri_not_supported'],
      ['registration', 'registration_not_supported'],
    ] as const) {
      const d = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', state: 'x', [name]: 'eyJhbGciOiJub25lIn0.e30.' }), t.ada));
      expect(d.type).toBe('redirect');
      if (d.type === 'redirect') expect(Object.fromEntries(new URL(d.location).searchParams)).toMatchObject({ error, state: 'x' });
    }
  });

  it('login_hint, ui_locales, claims_locales, acr_values, display, claims and unknown parameters are accepted (oidcc-login-hint, -ui-locales, -claims-locales, -display-page, -display-popup, -claims-essential, -ensure-request-with-acr-values-succeeds, -ensure-request-with-unknown-parameter-succeeds)', async () => {
    const t = await oidc();
    const params = {
      scope: 'openid',
      login_hint: 'ada@example.com',
      ui_locales: 'fr-CA fr en',
      claims_locales: 'fr',
      acr_values: 'urn:mace:incommon:iap:silver',
      display: 'popup',
      claims: JSON.stringify({ userinfo: { name: { essential: true } } }),
      extra_unknown: '1',
    };
    const code = await t.getCode(params);
    expect(json(await t.exchange(code)).id_token).toBeTypeOf('string');
    expect(await t.getCode({ scope: 'openid', display: 'page' })).toBeTypeOf('string');
    const bad = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', display: 'hologram' }), t.ada));
    if (bad.type === 'redirect') expect(new URL(bad.location).searchParams.get('error')).toBe('invalid_request');
    else throw new Error('redirect expected');
  });

  it('a nonce over 512 characters, or sent twice, is invalid_request at the callback', async () => {
    const t = await oidc();
    const long = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', nonce: 'n'.repeat(513) }), t.ada));
    if (long.type !== 'redirect') throw new Error('redirect expected');
    expect(new URL(long.location).searchParams.get('error')).toBe('invalid_request');
    const twice = await t.server.authorize(t.get(`${t.authorizeUrl({ scope: 'openid', nonce: 'a' })}&nonce=b`, t.ada));
    if (twice.type !== 'redirect') throw new Error('redirect expected');
    expect(new URL(twice.location).searchParams.get('error')).toBe('invalid_request');
  });

  it('a missing response_type is invalid_request at the callback (oidcc-response-type-missing); token with openid is unsupported_response_type', async () => {
    const t = await oidc();
    const url = `/v1/oauth/authorize?${new URLSearchParams({ client_id: t.client.clientId, redirect_uri: CALLBACK, scope: 'openid' })}`;
    const missing = await t.server.authorize(t.get(url, t.ada));
    if (missing.type !== 'redirect') throw new Error('redirect expected');
    expect(new URL(missing.location).searchParams.get('error')).toBe('invalid_request');
    const token = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', response_type: 'token' }), t.ada));
    if (token.type !== 'redirect') throw new Error('redirect expected');
    expect(new URL(token.location.replace('#', '?')).searchParams.get('error')).toBe('unsupported_response_type');
  });

  it('an unregistered redirect_uri is an error page, never a redirect (oidcc-ensure-registered-redirect-uri)', async () => {
    const t = await oidc();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', redirect_uri: 'https://evil.example/cb' }), t.ada));
    expect(d).toMatchObject({ type: 'error', error: 'invalid_redirect_uri' });
  });

  it('PKCE with openid works, a wrong verifier is invalid_grant (oidcc-ensure-request-with-valid-pkce-succeeds)', async () => {
    const t = await oidc();
    const verifier = 'v'.repeat(50);
    const { createHash } = await import('node:crypto');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const code = await t.getCode({ scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' });
    expect((await t.exchange(code, { code_verifier: 'w'.repeat(50) })).status).toBe(400);
    expect(json(await t.exchange(code, { code_verifier: verifier })).id_token).toBeTypeOf('string');
  });
});

describe('signing keys, per-client algorithm, JWKS and discovery', () => {
  it("the client's id_token_signed_response_alg picks the key; the JWKS publishes every key", async () => {
    const rs = await generateSigningKey('RS256', 'rs-1');
    const es = await generateSigningKey('ES256', 'es-1');
    const t = await oidc({ signingKeys: [rs, es] });
    const record = (await t.storage.findClient(t.client.clientId))!;
    await t.storage.saveClient({ ...record, openid: { idTokenSignedResponseAlg: 'ES256' } });
    const body = json(await t.exchange(await t.getCode({ scope: 'openid' })));
    expect(decodeProtectedHeader(body.id_token as string)).toMatchObject({ alg: 'ES256', kid: 'es-1' });
    const claims: JWTPayload = await t.verify(body.id_token as string);
    expect(claims.at_hash).toBe(atHash(body.access_token as string, 'ES256'));
    const jwks = json(await t.server.jwks({ method: 'GET' })) as { keys: { kid: string; d?: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toEqual(['rs-1', 'es-1']);
    expect(jwks.keys.every((k) => k.d === undefined)).toBe(true);
  });

  it('keys without RS256 are a ConfigError, as is openid without an issuer', async () => {
    await expect(oidc({ signingKeys: [await generateSigningKey('ES256', 'e')] })).rejects.toThrow(/RS256/);
    await expect(setup({ openid: {} })).rejects.toThrow(/issuer/);
  });

  it('key rotation across two instances sharing a store: publish, switch, retire; old ID tokens still verify (oidcc-server-rotate-keys)', async () => {
    const old = await generateSigningKey('RS256', 'k-old');
    const next = await generateSigningKey('RS256', 'k-new');
    const t = await oidc({ signingKeys: [old] });
    const { AuthorizationServer } = await import('../../src/index.js');
    const instance = (keys: unknown[]) =>
      new AuthorizationServer({ storage: t.storage, sessions: t.sessions, clock: t.clock, issuer: ISSUER, openid: { signingKeys: keys } });
    const before = json(await t.exchange(await t.getCode({ scope: 'openid' }))).id_token as string;
    // 1. Publish: the new key at the end, on a second instance; it still signs with the old one.
    const b = instance([old, next]);
    const published = json(await b.jwks({ method: 'GET' })) as { keys: { kid: string }[] };
    expect(published.keys.map((k) => k.kid)).toEqual(['k-old', 'k-new']);
    // 2. Switch: the new key first. A refresh on the switched instance signs with k-new.
    const c = instance([next, old]);
    const first = json(await t.exchange(await t.getCode({ scope: 'openid' })));
    const refreshed = json(
      await c.token(t.post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: first.refresh_token as string })),
    );
    expect(decodeProtectedHeader(refreshed.id_token as string).kid).toBe('k-new');
    const set = createLocalJWKSet(json(await c.jwks({ method: 'GET' })) as never);
    await jwtVerify(before, set, { currentDate: new Date(t.clock.now()) });
    await jwtVerify(refreshed.id_token as string, set, { currentDate: new Date(t.clock.now()) });
    // The old instance's id_token_hint check accepts the new instance's tokens once it publishes k-new.
    const hinted = await b.authorize(
      t.get(t.authorizeUrl({ scope: 'openid', prompt: 'none', id_token_hint: refreshed.id_token as string }), t.ada),
    );
    expect(hinted.type).toBe('redirect');
    if (hinted.type === 'redirect') expect(new URL(hinted.location).searchParams.get('error')).not.toBe('invalid_request');
    // 3. Retire: without k-old, a hint it signed is refused.
    const d = instance([next]);
    const stale = await d.authorize(t.get(t.authorizeUrl({ scope: 'openid', prompt: 'none', id_token_hint: before }), t.ada));
    if (stale.type !== 'redirect') throw new Error('redirect expected');
    expect(new URL(stale.location).searchParams.get('error')).toBe('invalid_request');
  });

  it('discovery: the openid-configuration document has every required field, issuer equal, https (oidcc-discovery-endpoint-verification, oidcc-idtoken-rs256, oidcc-idtoken-unsigned)', async () => {
    const t = await oidc();
    const res = t.server.openidConfiguration({ method: 'GET' });
    expect(res.status).toBe(200);
    const doc = json(res);
    expect(doc).toMatchObject({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/v1/oauth/authorize`,
      token_endpoint: `${ISSUER}/v1/oauth/token`,
      userinfo_endpoint: `${ISSUER}/v1/oauth/userinfo`,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      claims_parameter_supported: false,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    });
    expect(doc.response_types_supported).toContain('code');
    expect(doc.scopes_supported).toEqual(['read', 'write', 'openid', 'profile', 'email', 'address', 'phone']);
    expect(doc.claims_supported).toContain('email_verified');
    expect(doc.id_token_signing_alg_values_supported).not.toContain('none');
    expect(doc.end_session_endpoint).toBe(`${ISSUER}/v1/oauth/logout`);
    // The RFC 8414 document describes the same server.
    expect(json(t.server.metadata({ method: 'GET' }))).toEqual(doc);
    for (const key of ['issuer', 'authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri'])
      expect(String(doc[key])).toMatch(/^https:\/\//);
  });

  it('with the option off: no openid-configuration, no userinfo, and openid is an unknown scope as before', async () => {
    const t = await setup({ issuer: ISSUER });
    expect(t.server.openidConfiguration({ method: 'GET' }).status).toBe(404);
    expect((await t.server.userinfo(t.get('/v1/oauth/userinfo'))).status).toBe(404);
    expect(await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid' }), t.ada))).toMatchObject({
      type: 'error',
      error: 'invalid_scope',
    });
    expect(json(t.server.metadata({ method: 'GET' })).userinfo_endpoint).toBeUndefined();
  });
});

describe("a client's OpenID Connect fields: registerClient and dynamic registration", () => {
  it('registerClient keeps them (getClient shows them); a bad one is invalid_request naming the field; without the option they are refused', async () => {
    const rs = await generateSigningKey('RS256', 'rs');
    const es = await generateSigningKey('ES256', 'es');
    const t = await oidc({ signingKeys: [rs, es] });
    const registered = await t.server.registerClient({
      name: 'OIDC App',
      redirectUri: 'https://oidc.example/cb',
      openid: { idTokenSignedResponseAlg: 'ES256', defaultMaxAge: 300, requireAuthTime: true },
    });
    expect((await t.server.getClient(registered.clientId))?.openid).toEqual({
      idTokenSignedResponseAlg: 'ES256',
      defaultMaxAge: 300,
      requireAuthTime: true,
    });
    for (const openid of [
      { idTokenSignedResponseAlg: 'EdDSA' },
      { idTokenSignedResponseAlg: 'none' },
      { defaultMaxAge: -1 },
      { subjectType: 'pairwise' },
      { nope: 1 },
    ]) {
      await expect(
        t.server.registerClient({ name: 'X', redirectUri: 'https://x.example/cb', openid: openid as never }),
      ).rejects.toMatchObject({ code: 'invalid_request', field: 'openid' });
    }
    const off = await setup({ issuer: ISSUER });
    await expect(off.server.registerClient({ name: 'X', redirectUri: 'https://x.example/cb', openid: {} })).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });

  it('dynamic registration stores id_token_signed_response_alg and default_max_age and answers them; a bad one is invalid_client_metadata', async () => {
    const t = await oidc(
      { signingKeys: [await generateSigningKey('RS256', 'rs'), await generateSigningKey('EdDSA', 'ed')] },
      { allowDynamicRegistration: true },
    );
    const register = (metadata: Record<string, unknown>) =>
      t.server.registerDynamic({
        method: 'POST',
        url: '/v1/oauth/register',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'CLI', redirect_uris: ['http://127.0.0.1/cb'], ...metadata }),
      });
    const res = await register({
      id_token_signed_response_alg: 'EdDSA',
      default_max_age: 60,
      post_logout_redirect_uris: ['http://127.0.0.1/out'],
    });
    expect(res.status).toBe(201);
    const body = json(res);
    expect(body).toMatchObject({ id_token_signed_response_alg: 'EdDSA', default_max_age: 60 });
    expect(body.post_logout_redirect_uris).toEqual(['http://127.0.0.1/out']);
    expect((await t.server.getClient(body.client_id as string))?.openid).toEqual({
      idTokenSignedResponseAlg: 'EdDSA',
      defaultMaxAge: 60,
      postLogoutRedirectUris: ['http://127.0.0.1/out'],
    });
    const bad = await register({ id_token_signed_response_alg: 'HS256' });
    expect(bad.status).toBe(400);
    expect(json(bad).error).toBe('invalid_client_metadata');
  });

  it('pairwise subjects: a pairwise client sees its own sub, the same in the ID token and at userinfo, another than a public client', async () => {
    const t = await oidc({ pairwise: { salt: 's'.repeat(32) } });
    const record = (await t.storage.findClient(t.client.clientId))!;
    await t.storage.saveClient({ ...record, openid: { subjectType: 'pairwise' } });
    const body = json(await t.exchange(await t.getCode({ scope: 'openid' })));
    const { sub } = await t.verify(body.id_token as string);
    expect(sub).not.toBe(ADA.uuid);
    expect(json(await t.userinfo(body.access_token as string)).sub).toBe(sub);
    expect(json(t.server.openidConfiguration({ method: 'GET' })).subject_types_supported).toEqual(['public', 'pairwise']);
    // Its id_token_hint names the pairwise sub: the signed-in account matches it.
    const silent = await t.server.authorize(
      t.get(t.authorizeUrl({ scope: 'openid', prompt: 'none', id_token_hint: body.id_token as string }), t.ada),
    );
    if (silent.type !== 'redirect') throw new Error('redirect expected');
    expect(new URL(silent.location).searchParams.get('code')).toBeTypeOf('string');
  });
});

describe('the hints reach the host and the pages', () => {
  it('login_hint, acr_values, ui_locales, display are on the Interaction and describeInteraction; nonce and max_age are not', async () => {
    const t = await oidc();
    const decision = await t.server.authorize(
      t.get(
        t.authorizeUrl({
          scope: 'openid',
          login_hint: 'ada@example.com',
          acr_values: 'silver gold',
          ui_locales: 'fr-CA en',
          display: 'page',
          nonce: 'secret-n',
          max_age: '0',
        }),
      ),
    );
    if (decision.type !== 'login') throw new Error('login expected');
    expect(decision.interaction.openid).toEqual({
      loginHint: 'ada@example.com',
      acrValues: ['silver', 'gold'],
      uiLocales: ['fr-CA', 'en'],
      display: 'page',
    });
    expect(JSON.stringify(decision.interaction)).not.toContain('secret-n');
    expect(await t.server.describeInteraction(decision.interaction.id)).toMatchObject({ loginHint: 'ada@example.com' });
    const plain = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'read', login_hint: 'ada@example.com' })));
    if (plain.type !== 'login') throw new Error('login expected');
    expect(plain.interaction.openid).toBeUndefined();
  });

  it('ui_locales picks the consent page language before Accept-Language; the openid scopes are described in it', async () => {
    const { interactionResponse } = await import('../../src/index.js');
    const t = await oidc({}, { pages: { messages: { fr: {} } } });
    const decision = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid email', ui_locales: 'fr-CA en' }), t.ada));
    if (decision.type !== 'consent') throw new Error('consent expected');
    const request = { method: 'GET', url: '/v1/oauth/authorize', headers: { 'accept-language': 'en' } };
    const page = interactionResponse(decision, request, {}, t.server.options.pages);
    expect(page.body).toContain('lang="fr"');
    expect(page.body).toContain('Voir votre adresse e-mail.');
    expect(page.body).toContain('Vous connecter avec votre compte');
    const english = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid email' }), t.ada));
    if (english.type !== 'consent') throw new Error('consent expected');
    const en = interactionResponse(english, request, {}, t.server.options.pages);
    expect(en.body).toContain('See your email address.');
  });
});

describe('userinfo and personal access tokens', () => {
  it('a personal access token, even with openid in its scope, is refused at userinfo (it has no client to answer a sub for)', async () => {
    const t = await oidc();
    const personal = await t.server.createPersonalToken({ account: ADA, name: 'script', scope: ['read'] });
    expect((await t.userinfo(personal.token)).status).toBe(403);
    const withOpenId = await t.server.createPersonalToken({ account: ADA, name: 'script', scope: ['openid'] });
    const res = await t.userinfo(withOpenId.token);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  });
});

describe('a client ID metadata document with OpenID Connect fields', () => {
  it('its id_token_signed_response_alg picks the key of its ID tokens; an invalid one makes the document unusable', async () => {
    const url = 'https://agent.example/client.json';
    const callback = 'https://agent.example/cb';
    let alg = 'ES256';
    const fetch = async () => ({
      status: 200,
      headers: new Headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({ client_id: url, client_name: 'Agent', redirect_uris: [callback], id_token_signed_response_alg: alg }),
    });
    const keys = [await generateSigningKey('RS256', 'rs'), await generateSigningKey('ES256', 'es')];
    const t = await oidc({ signingKeys: keys }, { clientMetadataDocuments: { fetch, maxCacheSeconds: 0 } });
    const { createHash } = await import('node:crypto');
    const verifier = 'v'.repeat(43);
    const params = {
      client_id: url,
      redirect_uri: callback,
      response_type: 'code',
      scope: 'openid',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    };
    const consent = await t.server.authorize(t.get(`/v1/oauth/authorize?${new URLSearchParams(params)}`, t.ada));
    if (consent.type !== 'consent') throw new Error(`consent expected: ${JSON.stringify(consent)}`);
    const approved = await t.server.approve(consent.interaction.id, t.get('/', t.ada));
    if (approved.type !== 'redirect') throw new Error('redirect expected');
    const code = new URL(approved.location).searchParams.get('code')!;
    const res = await t.server.token(
      t.post('/v1/oauth/token', {
        grant_type: 'authorization_code',
        code,
        redirect_uri: callback,
        client_id: url,
        code_verifier: verifier,
      }),
    );
    expect(decodeProtectedHeader(json(res).id_token as string)).toMatchObject({ alg: 'ES256', kid: 'es' });
    alg = 'HS256';
    const refused = await t.server.authorize(t.get(`/v1/oauth/authorize?${new URLSearchParams(params)}`, t.ada));
    expect(refused).toMatchObject({ type: 'error', error: 'invalid_client' });
  });
});

describe('response_mode=form_post (OAuth 2.0 Form Post Response Mode)', () => {
  it('the code, state and iss are posted to the callback, never in a URL; the page sends itself and allows nothing else', async () => {
    const t = await oidc();
    const decision = await t.server.authorize(
      t.get(t.authorizeUrl({ scope: 'openid', response_mode: 'form_post', state: '"><s&' }), t.ada),
    );
    if (decision.type !== 'consent') throw new Error('consent expected');
    const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
    if (approved.type !== 'form_post') throw new Error(`form_post expected: ${JSON.stringify(approved)}`);
    expect(approved.action).toBe(CALLBACK);
    expect(Object.keys(approved.fields)).toEqual(['code', 'state', 'iss']);
    expect(approved.fields).toMatchObject({ state: '"><s&', iss: ISSUER });
    expect((await t.exchange(approved.fields.code!)).status).toBe(200);

    const page = interactionResponse(approved, t.post('/v1/oauth/authorize/decision', {}));
    expect(page.status).toBe(200);
    expect(page.headers).toMatchObject({
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-type': 'text/html; charset=utf-8',
    });
    expect(page.headers.location).toBeUndefined();
    expect(page.body).toContain(`<form method="post" action="${CALLBACK}">`);
    expect(page.body).toContain('<input type="hidden" name="state" value="&#34;&#62;&#60;s&#38;">');
    expect(page.body).toContain('<noscript><button type="submit">');
    // The CSP allows the page's one inline script by its hash and nothing else; no form-action,
    // which Chromium applies to the callback's own redirects too (test/e2e/form-post.test.ts).
    const script = /<script>([^<]*)<\/script>/.exec(page.body)![1]!;
    const hash = createHash('sha256').update(script).digest('base64');
    expect(page.headers['content-security-policy']).toBe(
      `default-src 'none'; script-src 'sha256-${hash}'; frame-ancestors 'none'; base-uri 'none'`,
    );
    expect(page.body.match(/<script/g)).toHaveLength(1);
  });

  it('errors of a valid request are posted too: login_required, consent_required, the hint refused at resume', async () => {
    const t = await oidc();
    const silent = await t.server.authorize(
      t.get(t.authorizeUrl({ scope: 'openid', prompt: 'none', response_mode: 'form_post', state: 's' })),
    );
    expect(silent).toEqual({
      type: 'form_post',
      action: CALLBACK,
      fields: { error: 'login_required', error_description: 'The user is not signed in.', state: 's', iss: ISSUER },
    });
    const noConsent = await t.server.authorize(
      t.get(t.authorizeUrl({ scope: 'openid', prompt: 'none', response_mode: 'form_post' }), t.ada),
    );
    expect(noConsent).toMatchObject({ type: 'form_post', fields: { error: 'consent_required' } });
    // A request without openid: response_mode is an unknown parameter there, ignored (SPEC), so a redirect.
    const plain = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'read', prompt: 'none', response_mode: 'form_post' })));
    expect(plain.type).toBe('redirect');
    // An unknown mode with openid is still refused (in the query: the request is not valid).
    const bad = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', response_mode: 'web_message' }), t.ada));
    if (bad.type !== 'redirect') throw new Error('redirect expected');
    expect(new URL(bad.location).searchParams.get('error')).toBe('invalid_request');
  });

  it('a request asking form_post keeps it across the sign-in (the interaction stores it)', async () => {
    const t = await oidc();
    const first = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', response_mode: 'form_post' })));
    if (first.type !== 'login') throw new Error('login expected');
    const consent = await t.server.resume(first.interaction.id, t.get('/', t.ada));
    if (consent.type !== 'consent') throw new Error('consent expected');
    expect((await t.server.approve(consent.interaction.id, t.get('/', t.ada))).type).toBe('form_post');
  });
});

describe('every value the discovery document advertises is served', () => {
  it('each display, prompt, scope, response mode and ID token algorithm it lists works', async () => {
    const keys = [
      await generateSigningKey('RS256', 'rs'),
      await generateSigningKey('ES256', 'es'),
      await generateSigningKey('EdDSA', 'ed'),
    ];
    const t = await oidc({ signingKeys: keys }, { pages: { messages: { fr: {} } } });
    const doc = json(t.server.openidConfiguration({ method: 'GET' })) as Record<string, string[]>;
    for (const display of doc.display_values_supported!) expect(await t.getCode({ scope: 'openid', display })).toBeTypeOf('string');
    for (const scope of doc.scopes_supported!) {
      // `write` goes with `read` (docs/reference.md#metadata-endpoint), as without openid.
      const requested = scope === 'openid' ? 'openid' : scope === 'write' ? 'openid read write' : `openid ${scope}`;
      const body = json(await t.exchange(await t.getCode({ scope: requested })));
      expect(body.id_token, scope).toBeTypeOf('string');
    }
    expect(doc.response_modes_supported).toContain('form_post');
    for (const mode of doc.response_modes_supported!) {
      const decision = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', response_mode: mode }), t.ada));
      if (decision.type !== 'consent') throw new Error(`consent expected: ${JSON.stringify(decision)}`);
      const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
      const code =
        approved.type === 'form_post'
          ? approved.fields.code
          : approved.type === 'redirect'
            ? mode === 'fragment'
              ? new URLSearchParams(new URL(approved.location).hash.slice(1)).get('code')
              : new URL(approved.location).searchParams.get('code')
            : null;
      expect(approved.type, mode).toBe(mode === 'form_post' ? 'form_post' : 'redirect');
      expect((await t.exchange(code!)).status, mode).toBe(200);
    }
    for (const prompt of doc.prompt_values_supported!) {
      const decision = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', prompt }), t.ada));
      expect(decision.type, prompt).toBe(prompt === 'none' ? 'redirect' : prompt === 'login' ? 'login' : 'consent');
    }
    for (const lang of doc.ui_locales_supported!) expect(await t.getCode({ scope: 'openid', ui_locales: lang })).toBeTypeOf('string');
    expect(doc.id_token_signing_alg_values_supported).toEqual(['RS256', 'ES256', 'EdDSA']);
    const record = (await t.storage.findClient(t.client.clientId))!;
    for (const alg of doc.id_token_signing_alg_values_supported as ('RS256' | 'ES256' | 'EdDSA')[]) {
      await t.storage.saveClient({ ...record, openid: { idTokenSignedResponseAlg: alg } });
      const body = json(await t.exchange(await t.getCode({ scope: 'openid' })));
      expect(decodeProtectedHeader(body.id_token as string).alg).toBe(alg);
      const claims = await t.verify(body.id_token as string);
      expect(claims.at_hash).toBe(atHash(body.access_token as string, alg));
    }
  });
});
