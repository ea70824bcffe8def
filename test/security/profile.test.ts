import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AuthorizationServer, ConfigError, MemoryStorage } from '../../src/index.js';
import { FakeSessions } from '../../src/testing/index.js';
import { ISSUER } from '../fixtures.js';
import { CALLBACK, json, setup } from '../helpers.js';

/**
 * The strict profile (OAuth 2.1 / RFC 9700) against the compatible default
 * (docs/reference.md#profiles). SECURITY.md D-1..D-3, D-11; RT-05.
 */
const v = randomBytes(32).toString('base64url');
const pkce = { code_challenge: createHash('sha256').update(v).digest('base64url'), code_challenge_method: 'S256' };

describe('profile: strict', () => {
  it('needs an issuer', () => {
    expect(() => new AuthorizationServer({ storage: new MemoryStorage(), sessions: new FakeSessions(), profile: 'strict' })).toThrow(
      ConfigError,
    );
  });

  it('turns the implicit flow off (unsupported_response_type in the fragment, RFC 6749 §4.2.2.1)', async () => {
    const t = await setup({ profile: 'strict', issuer: ISSUER });
    const d = await t.server.authorize(t.get(t.authorizeUrl({ response_type: 'token', state: 's' }), t.ada));
    if (d.type !== 'redirect') throw new Error(d.type);
    const fragment = new URLSearchParams(new URL(d.location).hash.slice(1));
    expect(fragment.get('error')).toBe('unsupported_response_type');
    expect(fragment.get('iss')).toBe(ISSUER);
  });

  it('requires PKCE of confidential clients too', async () => {
    const t = await setup({ profile: 'strict', issuer: ISSUER });
    const d = await t.server.authorize(t.get(t.authorizeUrl(), t.ada));
    expect(d.type === 'redirect' && new URL(d.location).searchParams.get('error')).toBe('invalid_request');
  });

  it('sends iss on success and error responses, from configuration only', async () => {
    const t = await setup({ profile: 'strict', issuer: ISSUER });
    const url = await t.authorizeAndApprove(pkce);
    expect(url.searchParams.get('iss')).toBe(ISSUER);
    const d = await t.server.authorize({
      method: 'GET',
      url: t.authorizeUrl({ prompt: 'none', ...pkce }),
      headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example' },
    });
    expect(d.type === 'redirect' && new URL(d.location).searchParams.get('iss')).toBe(ISSUER);
  });

  it('refuses client credentials in the query string (RFC 6749 §2.3.1), accepts them in the body', async () => {
    const t = await setup({ profile: 'strict', issuer: ISSUER });
    const code = await t.getCode(pkce);
    const query = new URLSearchParams({ client_id: t.client.clientId, client_secret: t.client.clientSecret });
    const res = await t.server.token(
      t.post(`/v1/oauth/token?${query}`, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: v }),
    );
    expect(res.status).toBe(400);
    expect(json(res).error).toBe('invalid_request');
    expect((await t.exchange(code, { code_verifier: v })).status).toBe(200);
  });

  it('requires client authentication on refresh', async () => {
    const t = await setup({ profile: 'strict', issuer: ISSUER });
    const tokens = json(await t.exchange(await t.getCode(pkce), { code_verifier: v }));
    expect((await t.refresh(tokens.refresh_token as string)).status).toBe(401);
    expect(
      (await t.refresh(tokens.refresh_token as string, { client_id: t.client.clientId, client_secret: t.client.clientSecret })).status,
    ).toBe(200);
  });

  it('a knob set explicitly wins over the profile', async () => {
    const t = await setup({ profile: 'strict', issuer: ISSUER, allowImplicit: true });
    const url = await t.authorizeAndApprove({ response_type: 'token' });
    expect(new URLSearchParams(url.hash.slice(1)).has('access_token')).toBe(true);
  });
});

describe('profile: compatible (default)', () => {
  it('keeps the compatible behaviour: implicit on, no PKCE needed, refresh without credentials, credentials in the query, no iss', async () => {
    const t = await setup();
    expect(t.server.options).toMatchObject({
      profile: 'compatible',
      allowImplicit: true,
      requirePkce: false,
      requireClientAuthOnRefresh: false,
      allowCredentialsInQuery: true,
    });
    const url = await t.authorizeAndApprove();
    expect(url.searchParams.has('iss')).toBe(false);
  });

  it('sends iss when an issuer is configured (RFC 9207)', async () => {
    const t = await setup({ issuer: ISSUER });
    expect((await t.authorizeAndApprove()).searchParams.get('iss')).toBe(ISSUER);
  });
});
