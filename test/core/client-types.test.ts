/**
 * What each client may use (docs/reference.md#clients; the implicit flow switch:
 * docs/reference.md#profiles): `response_type=token` on a server with the implicit flow off is
 * `unsupported_response_type` (RFC 6749 §4.2.2.1); a type or grant the server supports but the
 * client may not use is `unauthorized_client` (RFC 6749 §4.1.2.1, §4.2.2.1, §5.2). Dynamically
 * registered clients (RFC 7591) are code-only.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isOAuthError, type AuthorizeDecision } from '../../src/index.js';
import { ISSUER } from '../fixtures.js';
import { CALLBACK, json, setup } from '../helpers.js';

const LOOPBACK = 'http://127.0.0.1/callback';

const fragmentOf = (d: AuthorizeDecision) => {
  if (d.type !== 'redirect') throw new Error(JSON.stringify(d));
  const url = new URL(d.location);
  return { url, params: new URLSearchParams(url.hash.slice(1)) };
};

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' };
}

/** Register a public client through POST /v1/oauth/register. */
async function registerDynamic(t: Awaited<ReturnType<typeof setup>>, metadata: Record<string, unknown>) {
  const res = await t.server.registerDynamic({
    method: 'POST',
    url: '/v1/oauth/register',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'CLI', redirect_uris: [LOOPBACK], ...metadata }),
  });
  return { res, body: json(res) };
}

describe('response_type=token with the implicit flow off', () => {
  it.each([
    ['allowImplicit: false', { allowImplicit: false, issuer: ISSUER }],
    ['the strict profile', { profile: 'strict' as const, issuer: ISSUER }],
  ])('%s: unsupported_response_type in the fragment, with state and iss', async (_name, options) => {
    const t = await setup(options);
    const { url, params } = fragmentOf(await t.server.authorize(t.get(t.authorizeUrl({ response_type: 'token', state: 's1' }), t.ada)));
    expect(`${url.origin}${url.pathname}`).toBe(CALLBACK);
    expect(url.search).toBe('');
    expect(params.get('error')).toBe('unsupported_response_type');
    expect(params.get('state')).toBe('s1');
    expect(params.get('iss')).toBe(ISSUER);
    expect(params.get('error_description')).toMatch(/^[\x20-\x7e]+$/);
  });
});

describe('per-client response types', () => {
  it('a dynamically registered client is code-only: stored so, answered so, and response_type=token is unauthorized_client', async () => {
    const t = await setup({ allowDynamicRegistration: true, issuer: ISSUER });
    const { res, body } = await registerDynamic(t, {});
    expect(res.status, res.body).toBe(201);
    expect(body.response_types).toEqual(['code']);
    const clientId = body.client_id as string;
    expect(await t.storage.findClient(clientId)).toMatchObject({ responseTypes: ['code'] });

    const { params } = fragmentOf(
      await t.server.authorize(
        t.get(t.authorizeUrl({ client_id: clientId, redirect_uri: LOOPBACK, response_type: 'token', state: 's2' }), t.ada),
      ),
    );
    expect(params.get('error')).toBe('unauthorized_client');
    expect(params.get('state')).toBe('s2');
    expect(params.get('iss')).toBe(ISSUER);
    expect(params.has('access_token')).toBe(false);

    // The code flow works for it.
    const { code_challenge, code_challenge_method } = pkce();
    const d = await t.server.authorize(
      t.get(t.authorizeUrl({ client_id: clientId, redirect_uri: LOOPBACK, code_challenge, code_challenge_method }), t.ada),
    );
    expect(d.type).toBe('consent');
  });

  it('with the implicit flow off as well, the server-wide answer comes first (unsupported_response_type)', async () => {
    const t = await setup({ allowDynamicRegistration: true, allowImplicit: false });
    const { body } = await registerDynamic(t, {});
    const { params } = fragmentOf(
      await t.server.authorize(
        t.get(t.authorizeUrl({ client_id: body.client_id as string, redirect_uri: LOOPBACK, response_type: 'token' }), t.ada),
      ),
    );
    expect(params.get('error')).toBe('unsupported_response_type');
  });

  it('registerClient({ responseTypes }) restricts a client; without it, a client has both (unchanged)', async () => {
    const t = await setup();
    const codeOnly = await t.server.registerClient({ name: 'Code only', redirectUri: 'https://code.example/cb', responseTypes: ['code'] });
    const { params } = fragmentOf(
      await t.server.authorize(
        t.get(t.authorizeUrl({ client_id: codeOnly.clientId, redirect_uri: 'https://code.example/cb', response_type: 'token' }), t.ada),
      ),
    );
    expect(params.get('error')).toBe('unauthorized_client');
    const tokenOnly = await t.server.registerClient({
      name: 'Token only',
      redirectUri: 'https://token.example/cb',
      responseTypes: ['token'],
    });
    const refused = await t.server.authorize(
      t.get(
        t.authorizeUrl({ client_id: tokenOnly.clientId, redirect_uri: 'https://token.example/cb', response_type: 'code', state: 's3' }),
        t.ada,
      ),
    );
    if (refused.type !== 'redirect') throw new Error(refused.type);
    expect(new URL(refused.location).searchParams.get('error')).toBe('unauthorized_client');
    expect(new URL(refused.location).searchParams.get('state')).toBe('s3');
    expect(
      (
        await t.server.authorize(
          t.get(t.authorizeUrl({ client_id: tokenOnly.clientId, redirect_uri: 'https://token.example/cb', response_type: 'token' }), t.ada),
        )
      ).type,
    ).toBe('consent');
    // The default client may use both.
    expect((await t.server.authorize(t.get(t.authorizeUrl({ response_type: 'token' }), t.ada))).type).toBe('consent');
    expect((await t.server.authorize(t.get(t.authorizeUrl(), t.ada))).type).toBe('consent');
  });

  it('a client stored before these fields existed (none set) keeps both response types', async () => {
    const t = await setup();
    await t.storage.saveClient({
      id: 'legacy-client',
      name: 'Legacy',
      redirectUri: 'https://legacy.example/cb',
      secretHash: null,
      createdAt: 0,
    });
    const d = await t.server.authorize(
      t.get(t.authorizeUrl({ client_id: 'legacy-client', redirect_uri: 'https://legacy.example/cb', response_type: 'token' }), t.ada),
    );
    expect(d.type).toBe('consent');
  });

  it.each([
    [{ responseTypes: [] }],
    [{ responseTypes: ['id_token'] }],
    [{ responseTypes: 'code' }],
    [{ grantTypes: [] }],
    [{ grantTypes: ['client_credentials'] }],
    [{ grantTypes: ['refresh_token'] }],
  ])('registerClient refuses %j with invalid_request', async (extra) => {
    const t = await setup();
    const error = await t.server
      .registerClient({ name: 'X', redirectUri: 'https://x.example/cb', ...extra } as never)
      .catch((e: unknown) => e);
    expect(isOAuthError(error) && error.code).toBe('invalid_request');
  });
});

describe('per-client grant types', () => {
  it('dynamic registration: grant_types default to both; a requested subset is stored and answered', async () => {
    const t = await setup({ allowDynamicRegistration: true });
    const plain = await registerDynamic(t, {});
    expect(plain.body.grant_types).toEqual(['authorization_code', 'refresh_token']);
    expect(await t.storage.findClient(plain.body.client_id as string)).toMatchObject({
      grantTypes: ['authorization_code', 'refresh_token'],
    });
    const codeOnly = await registerDynamic(t, { grant_types: ['authorization_code'] });
    expect(codeOnly.res.status).toBe(201);
    expect(codeOnly.body.grant_types).toEqual(['authorization_code']);
    expect(await t.storage.findClient(codeOnly.body.client_id as string)).toMatchObject({ grantTypes: ['authorization_code'] });
  });

  it.each([
    [{ grant_types: ['refresh_token'] }],
    [{ grant_types: [] }],
    [{ grant_types: ['implicit'] }],
    [{ response_types: ['token'] }],
    [{ response_types: ['code', 'token'] }],
  ])('dynamic registration refuses %j (invalid_client_metadata, ASCII description)', async (metadata) => {
    const t = await setup({ allowDynamicRegistration: true });
    const { res, body } = await registerDynamic(t, metadata);
    expect(res.status).toBe(400);
    expect(body.error).toBe('invalid_client_metadata');
    expect(body.error_description).toMatch(/^[\x20-\x7e]+$/);
  });

  it('a client not allowed refresh_token gets no refresh token from the code exchange (RFC 6749 §5.1: it is optional)', async () => {
    const t = await setup();
    const client = await t.server.registerClient({
      name: 'No refresh',
      redirectUri: 'https://nr.example/cb',
      grantTypes: ['authorization_code'],
    });
    const d = await t.server.authorize(t.get(t.authorizeUrl({ client_id: client.clientId, redirect_uri: 'https://nr.example/cb' }), t.ada));
    if (d.type !== 'consent') throw new Error(d.type);
    const approved = await t.server.approve(d.interaction.id, t.get('/', t.ada));
    if (approved.type !== 'redirect') throw new Error(approved.type);
    const code = new URL(approved.location).searchParams.get('code')!;
    const res = await t.server.token(
      t.post('/v1/oauth/token', {
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'https://nr.example/cb',
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }),
    );
    expect(res.status, res.body).toBe(200);
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'info', 'scope', 'token_type']);
    expect((await t.api('GET', body.access_token as string)).ok).toBe(true); // the access token works as ever
  });

  it('a public client registered code-only (dynamic registration) gets no refresh token either', async () => {
    const t = await setup({ allowDynamicRegistration: true });
    const { body: registered } = await registerDynamic(t, { grant_types: ['authorization_code'] });
    const clientId = registered.client_id as string;
    const p = pkce();
    const d = await t.server.authorize(
      t.get(
        t.authorizeUrl({ client_id: clientId, redirect_uri: LOOPBACK, code_challenge: p.code_challenge, code_challenge_method: 'S256' }),
        t.ada,
      ),
    );
    if (d.type !== 'consent') throw new Error(d.type);
    const approved = await t.server.approve(d.interaction.id, t.get('/', t.ada));
    if (approved.type !== 'redirect') throw new Error(approved.type);
    const code = new URL(approved.location).searchParams.get('code')!;
    const res = await t.server.token(
      t.post('/v1/oauth/token', {
        grant_type: 'authorization_code',
        code,
        redirect_uri: LOOPBACK,
        client_id: clientId,
        code_verifier: p.verifier,
      }),
    );
    expect(res.status, res.body).toBe(200);
    expect(json(res).refresh_token).toBeUndefined();
  });

  it.each([
    ['with its credentials', true],
    ['without credentials', false],
  ])(
    'a refresh token of a client no longer allowed refresh_token, %s: unauthorized_client (400), nothing rotated',
    async (_name, withCredentials) => {
      const t = await setup();
      const tokens = json(await t.exchange(await t.getCode()));
      const refreshToken = tokens.refresh_token as string;
      // The client is restricted after the token was issued (as a host might do in its store).
      const stored = (await t.storage.findClient(t.client.clientId))!;
      await t.storage.saveClient({ ...stored, grantTypes: ['authorization_code'] });
      const form: Record<string, string> = { grant_type: 'refresh_token', refresh_token: refreshToken };
      if (withCredentials) Object.assign(form, { client_id: t.client.clientId, client_secret: t.client.clientSecret });
      const refused = await t.server.token(t.post('/v1/oauth/token', form));
      expect(refused.status, refused.body).toBe(400);
      expect(json(refused).error).toBe('unauthorized_client');
      expect((await t.storage.findToken(createHash('sha256').update(refreshToken).digest('base64url')))?.token.rotatedAt).toBeNull();
      // Allowed again: the same token still refreshes (nothing was used up).
      await t.storage.saveClient(stored);
      expect((await t.server.token(t.post('/v1/oauth/token', form))).status).toBe(200);
    },
  );

  it('a client not allowed authorization_code cannot exchange a code (unauthorized_client), and the code is not used up', async () => {
    const t = await setup();
    const code = await t.getCode();
    // The same client, now restricted (as a host might do in its store).
    const stored = (await t.storage.findClient(t.client.clientId))!;
    await t.storage.saveClient({ ...stored, grantTypes: ['refresh_token'] });
    const refused = await t.exchange(code);
    expect(refused.status).toBe(400);
    expect(json(refused).error).toBe('unauthorized_client');
    await t.storage.saveClient(stored);
    expect((await t.exchange(code)).status).toBe(200);
  });
});
