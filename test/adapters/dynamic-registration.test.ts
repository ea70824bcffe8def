/**
 * Dynamic client registration (RFC 7591) over real HTTP through every adapter: off by default, and
 * when on, a PKCE code flow for the newly registered public client, the raw body whatever its
 * Content-Type, and the body limit (docs/reference.md#dynamic-registration-endpoint). The core's
 * own tests (test/core/dynamic-registration.test.ts) cover each rule; these check that every
 * framework routes, reads and answers them alike.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ISSUER, METADATA } from '../fixtures.js';
import { FRAMEWORKS, expectJsonError, expectNoStoreJson, useApp, type TokenBody } from './app.js';

const JSON_TYPE = 'application/json';

const pkcePair = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

describe.each(FRAMEWORKS)('%s: dynamic client registration (RFC 7591)', (framework) => {
  const register = (app: ReturnType<ReturnType<typeof useApp>>, body: unknown, type = JSON_TYPE) =>
    app.request('POST', '/v1/oauth/register', {
      headers: { 'content-type': type },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  describe('off (the default)', () => {
    const app = useApp({ framework, server: { issuer: ISSUER } });

    it('POST /v1/oauth/register → 404 JSON, and the metadata advertises no registration_endpoint', async () => {
      expectJsonError(await register(app(), { redirect_uris: ['http://127.0.0.1/cb'] }), 404, 'not_found');
      expect((await app().get(METADATA)).json()).not.toHaveProperty('registration_endpoint');
    });
  });

  describe('on', () => {
    const app = useApp({ framework, server: { issuer: ISSUER, allowDynamicRegistration: true } });

    it('201 JSON for a public client; then a PKCE code flow for it works end to end (loopback callback on any port)', async () => {
      const { authorizeAndApprove, postForm, api, get } = app();
      expect((await get(METADATA)).json().registration_endpoint).toBe(`${ISSUER}/v1/oauth/register`);

      const reply = await register(app(), {
        client_name: 'My CLI',
        redirect_uris: ['http://127.0.0.1/callback'],
        token_endpoint_auth_method: 'none',
      });
      expect(reply.status, reply.text).toBe(201);
      expectNoStoreJson(reply);
      const registered = reply.json<{ client_id: string }>();
      expect(registered).toMatchObject({
        client_name: 'My CLI',
        redirect_uris: ['http://127.0.0.1/callback'],
        token_endpoint_auth_method: 'none',
      });
      expect(registered).not.toHaveProperty('client_secret');

      const { verifier, challenge } = pkcePair();
      const redirectUri = 'http://127.0.0.1:4567/callback';
      const callback = await authorizeAndApprove({
        client_id: registered.client_id,
        redirect_uri: redirectUri,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        scope: 'read',
      });
      expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri);
      expect(callback.searchParams.get('iss')).toBe(ISSUER);
      const code = callback.searchParams.get('code')!;

      // No verifier: refused, and the code is not used up.
      expectJsonError(
        await postForm('/v1/oauth/token', {
          grant_type: 'authorization_code',
          code,
          client_id: registered.client_id,
          redirect_uri: redirectUri,
        }),
        400,
        'invalid_grant',
      );
      const exchanged = await postForm('/v1/oauth/token', {
        grant_type: 'authorization_code',
        code,
        client_id: registered.client_id,
        redirect_uri: redirectUri,
        code_verifier: verifier,
      });
      expect(exchanged.status, exchanged.text).toBe(200);
      const tokens = exchanged.json<TokenBody>();
      expect(tokens.scope).toBe('read');
      const account = await api('GET', '/v2/account', tokens.access_token);
      expect(account.status).toBe(200);
      expect(account.json<{ oauth: { clientId: string } }>().oauth.clientId).toBe(registered.client_id);
    });

    it('the body reaches the core raw whatever its Content-Type: JSON under another type, or broken JSON, is invalid_client_metadata', async () => {
      const body = { redirect_uris: ['http://127.0.0.1/cb'] };
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data']) {
        expectJsonError(await register(app(), body, type), 400, 'invalid_client_metadata');
      }
      expectJsonError(await register(app(), '{"redirect_uris":', JSON_TYPE), 400, 'invalid_client_metadata');
      expectJsonError(await register(app(), { redirect_uris: ['javascript:alert(1)'] }), 400, 'invalid_redirect_uri');
      expect((await register(app(), body, 'Application/JSON; charset=utf-8')).status).toBe(201);
    });

    it('a body over the limit → 413 JSON', async () => {
      const reply = await register(app(), { client_name: 'x'.repeat(70 * 1024), redirect_uris: ['http://127.0.0.1/cb'] });
      expectJsonError(reply, 413, 'invalid_request');
    });
  });
});
