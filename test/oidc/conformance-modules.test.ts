/**
 * The OpenID Foundation's conformance test plans for a Basic OP (oidcc-basic-certification-test-plan)
 * and a Config OP (oidcc-config-certification-test-plan): one test per module, named after it,
 * doing through the core what the module does over HTTP and checking what it checks (the module
 * names and their checks are public in the conformance suite). The relying-party harness
 * (test/oidc-rp) does the same flows with real client libraries over HTTP.
 */
import { createHash } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { generateSigningKey, type AuthorizeDecision } from '../../src/index.js';
import { atHash } from '../../src/oidc/id-token.js';
import { ADA, CALLBACK, json, setup } from '../helpers.js';

const ISSUER = 'https://op.example.com';
const CLAIMS = { email_verified: true, picture: 'https://op.example.com/ada.png', address: { country: 'FR' }, phone_number: '+33 1' };

async function op(openid: Record<string, unknown> = {}) {
  const t = await setup({
    issuer: ISSUER,
    openid: { claims: (a: { name: string; email: string }) => ({ name: a.name, email: a.email, ...CLAIMS }), ...openid },
  });
  const jwks = async () => createLocalJWKSet(json(await t.server.jwks({ method: 'GET' })) as never);
  const idToken = async (token: string, nonce?: string) => {
    const { payload } = await jwtVerify(token, await jwks(), {
      issuer: ISSUER,
      audience: t.client.clientId,
      currentDate: new Date(t.clock.now()),
      algorithms: ['RS256'],
    });
    expect(payload.nonce).toBe(nonce);
    return payload;
  };
  const query = (d: AuthorizeDecision): Record<string, string> =>
    d.type === 'redirect' ? Object.fromEntries(new URL(d.location).searchParams) : { type: d.type };
  const authorize = async (params: Record<string, string>) => t.server.authorize(t.get(t.authorizeUrl(params), t.ada));
  const userinfo = (request: { method: string; headers?: Record<string, string>; body?: string }) =>
    t.server.userinfo({ url: '/v1/oauth/userinfo', headers: {}, ...request });
  return { ...t, jwks, idToken, query, authorize, userinfo };
}

describe('Basic OP (oidcc-basic-certification-test-plan)', () => {
  it('oidcc-server', async () => {
    const t = await op();
    const body = json(await t.exchange(await t.getCode({ scope: 'openid', nonce: 'n1' })));
    const claims = await t.idToken(body.id_token as string, 'n1');
    expect(claims).toMatchObject({ iss: ISSUER, sub: ADA.uuid, aud: t.client.clientId });
    expect(typeof claims.iat).toBe('number');
    expect(claims.exp).toBeGreaterThan(claims.iat!);
    expect(claims.at_hash).toBe(atHash(body.access_token as string, 'RS256'));
    expect(body.token_type).toBe('bearer');
  });

  it('oidcc-response-type-missing', async () => {
    const t = await op();
    const url = `/v1/oauth/authorize?${new URLSearchParams({ client_id: t.client.clientId, redirect_uri: CALLBACK, scope: 'openid', state: 'st' })}`;
    expect(t.query(await t.server.authorize(t.get(url, t.ada)))).toMatchObject({ error: 'invalid_request', state: 'st' });
  });

  it('oidcc-userinfo-get', async () => {
    const t = await op();
    const { access_token } = await t.tokens({ scope: 'openid' });
    const res = await t.userinfo({ method: 'GET', headers: { authorization: `Bearer ${access_token}` } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(json(res)).toEqual({ sub: ADA.uuid });
  });

  it('oidcc-userinfo-post-header', async () => {
    const t = await op();
    const { access_token } = await t.tokens({ scope: 'openid' });
    expect(json(await t.userinfo({ method: 'POST', headers: { authorization: `Bearer ${access_token}` } }))).toEqual({ sub: ADA.uuid });
  });

  it('oidcc-userinfo-post-body', async () => {
    const t = await op();
    const { access_token } = await t.tokens({ scope: 'openid' });
    const res = await t.userinfo({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `access_token=${access_token}`,
    });
    expect(json(res)).toEqual({ sub: ADA.uuid });
  });

  it('oidcc-ensure-request-without-nonce-succeeds-for-code-flow', async () => {
    const t = await op();
    const body = json(await t.exchange(await t.getCode({ scope: 'openid' })));
    await t.idToken(body.id_token as string, undefined);
  });

  for (const [module, scope, expected] of [
    ['oidcc-scope-profile', 'openid profile', { name: ADA.name, picture: CLAIMS.picture }],
    ['oidcc-scope-email', 'openid email', { email: ADA.email, email_verified: true }],
    ['oidcc-scope-address', 'openid address', { address: CLAIMS.address }],
    ['oidcc-scope-phone', 'openid phone', { phone_number: CLAIMS.phone_number }],
    [
      'oidcc-scope-all',
      'openid profile email address phone',
      { name: ADA.name, picture: CLAIMS.picture, email: ADA.email, email_verified: true, address: CLAIMS.address, phone_number: '+33 1' },
    ],
  ] as const) {
    it(module, async () => {
      const t = await op();
      // Each scope is advertised, so the module runs it (and does not skip).
      const advertised = json(t.server.openidConfiguration({ method: 'GET' })).scopes_supported as string[];
      for (const s of scope.split(' ')) expect(advertised).toContain(s);
      const { access_token, scope: granted } = await t.tokens({ scope });
      expect(granted.split(' ').sort()).toEqual(scope.split(' ').sort());
      expect(json(await t.userinfo({ method: 'GET', headers: { authorization: `Bearer ${access_token}` } }))).toEqual({
        sub: ADA.uuid,
        ...expected,
      });
    });
  }

  it('oidcc-ensure-other-scope-order-succeeds', async () => {
    const t = await op();
    const body = json(await t.exchange(await t.getCode({ scope: 'email openid' })));
    await t.idToken(body.id_token as string, undefined);
  });

  for (const display of ['page', 'popup'])
    it(`oidcc-display-${display}`, async () => {
      const t = await op();
      expect(await t.getCode({ scope: 'openid', display })).toBeTypeOf('string');
    });

  it('oidcc-prompt-login', async () => {
    const t = await op();
    await t.getCode({ scope: 'openid' });
    t.clock.advance(1000);
    const d = await t.authorize({ scope: 'openid', prompt: 'login' });
    expect(d.type).toBe('login');
    if (d.type !== 'login') return;
    t.clock.advance(1000);
    const fresh = t.sessions.signIn(ADA);
    const consent = await t.server.resume(d.interaction.id, t.get('/', fresh));
    if (consent.type !== 'consent') throw new Error('consent expected');
    const code = t.query(await t.server.approve(consent.interaction.id, t.get('/', fresh))).code!;
    const claims = await t.idToken(json(await t.exchange(code)).id_token as string);
    expect(claims.auth_time).toBe(Math.floor(t.clock.now() / 1000));
  });

  it('oidcc-prompt-none-not-logged-in', async () => {
    const t = await op();
    // No session cookie at all.
    const d = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', prompt: 'none', state: 's' })));
    expect(t.query(d)).toMatchObject({
      error: 'login_required',
      state: 's',
    });
  });

  it('oidcc-prompt-none-logged-in', async () => {
    const t = await op();
    await t.getCode({ scope: 'openid' });
    const code = t.query(await t.authorize({ scope: 'openid', prompt: 'none', nonce: 'nn' })).code!;
    await t.idToken(json(await t.exchange(code)).id_token as string, 'nn');
  });

  it('oidcc-max-age-1', async () => {
    const t = await op();
    t.clock.advance(2000);
    expect((await t.authorize({ scope: 'openid', max_age: '1' })).type).toBe('login');
  });

  it('oidcc-max-age-10000', async () => {
    const t = await op();
    const signedIn = t.clock.now();
    t.clock.advance(2000);
    const code = await t.getCode({ scope: 'openid', max_age: '10000' });
    expect((await t.idToken(json(await t.exchange(code)).id_token as string)).auth_time).toBe(Math.floor(signedIn / 1000));
  });

  it('oidcc-ensure-request-with-unknown-parameter-succeeds', async () => {
    const t = await op();
    expect(await t.getCode({ scope: 'openid', extra: 'foobar' })).toBeTypeOf('string');
  });

  it('oidcc-id-token-hint', async () => {
    const t = await op();
    const first = json(await t.exchange(await t.getCode({ scope: 'openid' })));
    const code = t.query(await t.authorize({ scope: 'openid', prompt: 'none', id_token_hint: first.id_token as string })).code!;
    const again = await t.idToken(json(await t.exchange(code)).id_token as string);
    expect(again.sub).toBe(ADA.uuid);
  });

  it('oidcc-login-hint', async () => {
    const t = await op();
    expect(await t.getCode({ scope: 'openid', login_hint: 'ada@example.com' })).toBeTypeOf('string');
  });

  it('oidcc-ui-locales', async () => {
    const t = await op();
    expect(await t.getCode({ scope: 'openid', ui_locales: 'se' })).toBeTypeOf('string');
  });

  it('oidcc-claims-locales', async () => {
    const t = await op();
    expect(await t.getCode({ scope: 'openid', claims_locales: 'se' })).toBeTypeOf('string');
  });

  it('oidcc-ensure-request-with-acr-values-succeeds', async () => {
    const t = await op();
    expect(await t.getCode({ scope: 'openid', acr_values: '1 2' })).toBeTypeOf('string');
  });

  it('oidcc-codereuse', async () => {
    const t = await op();
    const code = await t.getCode({ scope: 'openid' });
    const { access_token } = json(await t.exchange(code)) as { access_token: string };
    expect(json(await t.exchange(code)).error).toBe('invalid_grant');
    // The tokens of the first exchange are revoked (RFC 6749 §4.1.2; the module accepts either).
    expect((await t.userinfo({ method: 'GET', headers: { authorization: `Bearer ${access_token}` } })).status).toBe(401);
  });

  it('oidcc-codereuse-30seconds', async () => {
    const t = await op();
    const code = await t.getCode({ scope: 'openid' });
    expect((await t.exchange(code)).status).toBe(200);
    t.clock.advance(30_000);
    expect(json(await t.exchange(code)).error).toBe('invalid_grant');
  });

  it('oidcc-ensure-registered-redirect-uri', async () => {
    const t = await op();
    const d = await t.authorize({ scope: 'openid', redirect_uri: 'https://attacker.example/cb' });
    expect(d).toMatchObject({ type: 'error', error: 'invalid_redirect_uri' });
  });

  it('oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported', async () => {
    const t = await op();
    expect(json(t.server.openidConfiguration({ method: 'GET' })).request_parameter_supported).toBe(false);
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"scope":"openid"}').toString('base64url')}.`;
    expect(t.query(await t.authorize({ scope: 'openid', request: unsigned, state: 's' }))).toMatchObject({
      error: 'request_not_supported',
      state: 's',
    });
  });

  it('oidcc-claims-essential', async () => {
    const t = await op();
    const claims = JSON.stringify({ userinfo: { name: { essential: true } } });
    const { access_token } = await t.tokens({ scope: 'openid', claims });
    // claims_parameter_supported is false: the parameter is ignored, userinfo answers by scope.
    expect(json(await t.userinfo({ method: 'GET', headers: { authorization: `Bearer ${access_token}` } }))).toEqual({ sub: ADA.uuid });
  });

  it('oidcc-ensure-request-object-with-redirect-uri', async () => {
    const t = await op();
    expect(t.query(await t.authorize({ scope: 'openid', request: 'eyJhbGciOiJub25lIn0.e30.' }))).toMatchObject({
      error: 'request_not_supported',
    });
  });

  it('oidcc-refresh-token', async () => {
    const t = await op();
    const first = json(await t.exchange(await t.getCode({ scope: 'openid', nonce: 'n' })));
    const firstClaims = await t.idToken(first.id_token as string, 'n');
    t.clock.advance(1000);
    const refreshed = json(await t.refresh(first.refresh_token as string));
    const claims = await t.idToken(refreshed.id_token as string, undefined);
    expect(claims).toMatchObject({ iss: firstClaims.iss, sub: firstClaims.sub, aud: firstClaims.aud, auth_time: firstClaims.auth_time });
    // The old refresh token is rotated: its reuse is refused.
    expect((await t.refresh(first.refresh_token as string)).status).toBe(400);
  });

  it('oidcc-ensure-request-with-valid-pkce-succeeds', async () => {
    const t = await op();
    const verifier = 'x'.repeat(64);
    const code = await t.getCode({
      scope: 'openid',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    expect(json(await t.exchange(code, { code_verifier: verifier })).id_token).toBeTypeOf('string');
  });
});

describe('Form Post OP (oidcc-formpost-basic-certification-test-plan: the Basic OP modules with response_mode=form_post)', () => {
  /** The fields a form_post decision posts, or the decision's type. */
  const posted = (d: AuthorizeDecision): Record<string, string> => (d.type === 'form_post' ? d.fields : { type: d.type });

  it('oidcc-server', async () => {
    const t = await op();
    const consent = await t.authorize({ scope: 'openid', nonce: 'n1', state: 's1', response_mode: 'form_post' });
    if (consent.type !== 'consent') throw new Error('consent expected');
    const fields = posted(await t.server.approve(consent.interaction.id, t.get('/', t.ada)));
    expect(fields).toMatchObject({ state: 's1', iss: ISSUER });
    const claims = await t.idToken(json(await t.exchange(fields.code!)).id_token as string, 'n1');
    expect(claims).toMatchObject({ iss: ISSUER, sub: ADA.uuid, aud: t.client.clientId });
  });

  it('oidcc-prompt-none-not-logged-in', async () => {
    const t = await op();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', prompt: 'none', state: 's', response_mode: 'form_post' })));
    expect(posted(d)).toMatchObject({ error: 'login_required', state: 's', iss: ISSUER });
  });

  it('oidcc-prompt-none-logged-in', async () => {
    const t = await op();
    await t.getCode({ scope: 'openid' });
    const fields = posted(await t.authorize({ scope: 'openid', prompt: 'none', nonce: 'nn', response_mode: 'form_post' }));
    await t.idToken(json(await t.exchange(fields.code!)).id_token as string, 'nn');
  });

  it('prompt=none with select_account is invalid_request (Core 3.1.2.1: none with any other value), never account_selection_required', async () => {
    const t = await op();
    expect(t.query(await t.authorize({ scope: 'openid', prompt: 'none select_account', state: 's' }))).toMatchObject({
      error: 'invalid_request',
      state: 's',
    });
  });
});

describe('Config OP (oidcc-config-certification-test-plan)', () => {
  it('oidcc-discovery-endpoint-verification', async () => {
    const t = await op();
    const res = t.server.openidConfiguration({ method: 'GET' });
    expect(res.status).toBe(200);
    const doc = json(res);
    // Discovery 1.0 §3 REQUIRED fields, and the issuer exactly the one it was fetched for (§4.3).
    for (const field of [
      'issuer',
      'authorization_endpoint',
      'token_endpoint',
      'jwks_uri',
      'response_types_supported',
      'subject_types_supported',
      'id_token_signing_alg_values_supported',
    ])
      expect(doc[field], field).toBeDefined();
    expect(doc.issuer).toBe(ISSUER);
    for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'userinfo_endpoint'])
      expect(new URL(doc[field] as string).protocol).toBe('https:');
    expect(doc.scopes_supported).toContain('openid');
    expect(doc.response_types_supported).toContain('code');
    expect(doc.id_token_signing_alg_values_supported).toContain('RS256');
    expect(doc.claims_supported).toEqual(expect.arrayContaining(['sub', 'iss', 'auth_time', 'name', 'email']));
    expect(doc.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
    // Every endpoint it names is served.
    expect((await t.server.jwks({ method: 'GET' })).status).toBe(200);
    expect((await t.userinfo({ method: 'GET' })).status).toBe(401);
    // An http issuer other than loopback is refused at startup.
    await expect(setup({ issuer: 'http://op.example.com', openid: {} })).rejects.toThrow(/issuer/);
  });

  it('oidcc-idtoken-rs256', async () => {
    const t = await op();
    const body = json(await t.exchange(await t.getCode({ scope: 'openid' })));
    expect(decodeProtectedHeader(body.id_token as string).alg).toBe('RS256');
    await t.idToken(body.id_token as string);
  });

  it('oidcc-idtoken-unsigned', async () => {
    const t = await op();
    expect(json(t.server.openidConfiguration({ method: 'GET' })).id_token_signing_alg_values_supported).not.toContain('none');
    // A client cannot register for unsigned ID tokens, and none is never a signing key.
    await expect(
      t.server.registerClient({ name: 'X', redirectUri: 'https://x.example/cb', openid: { idTokenSignedResponseAlg: 'none' as never } }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(op({ signingKeys: [{ kty: 'oct', k: 'AAAA', kid: 'h', alg: 'none' }] })).rejects.toThrow();
  });

  it('oidcc-server-rotate-keys', async () => {
    const old = await generateSigningKey('RS256', 'old');
    const next = await generateSigningKey('RS256', 'new');
    const t = await op({ signingKeys: [old] });
    const before = json(await t.exchange(await t.getCode({ scope: 'openid' }))).id_token as string;
    const { AuthorizationServer } = await import('../../src/index.js');
    const rotated = new AuthorizationServer({
      storage: t.storage,
      sessions: t.sessions,
      clock: t.clock,
      issuer: ISSUER,
      openid: { signingKeys: [next, old] },
    });
    const jwks = json(await rotated.jwks({ method: 'GET' })) as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toEqual(['new', 'old']);
    const set = createLocalJWKSet(jwks as never);
    await jwtVerify(before, set, { currentDate: new Date(t.clock.now()) });
    const code = await t.getCode({ scope: 'openid' });
    const after = json(
      await rotated.token(
        t.post('/v1/oauth/token', {
          grant_type: 'authorization_code',
          code,
          redirect_uri: CALLBACK,
          client_id: t.client.clientId,
          client_secret: t.client.clientSecret,
        }),
      ),
    ).id_token as string;
    expect(decodeProtectedHeader(after).kid).toBe('new');
    await jwtVerify(after, set, { currentDate: new Date(t.clock.now()) });
  });
});
