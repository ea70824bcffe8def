/**
 * Through every adapter: what a client may use (docs/reference.md#clients). `response_type=token`
 * on a server with the implicit flow off is `unsupported_response_type`; for a client that may
 * not use it (a dynamically registered, code-only client) it is `unauthorized_client`; both go
 * back to the callback in the fragment (RFC 6749 §4.2.2.1). A grant the client may not use is
 * `unauthorized_client` at the token endpoint (RFC 6749 §5.2).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ISSUER } from '../fixtures.js';
import { ADA, CALLBACK, expectJsonError, fragmentParams, FRAMEWORKS, useApp } from './app.js';

const LOOPBACK = 'http://127.0.0.1/callback';

describe.each(FRAMEWORKS)('%s: response_type=token with the implicit flow off', (framework) => {
  const app = useApp({ framework, server: { allowImplicit: false, issuer: ISSUER } });

  it('302 to the callback with unsupported_response_type, state and iss in the fragment', async () => {
    const { get, authorizeUrl, signIn } = app();
    const reply = await get(authorizeUrl({ response_type: 'token', state: 'st-9' }), signIn(ADA));
    expect(reply.status).toBe(302);
    const url = new URL(reply.location!);
    expect(`${url.origin}${url.pathname}`).toBe(CALLBACK);
    const params = fragmentParams(url);
    expect(params.get('error')).toBe('unsupported_response_type');
    expect(params.get('state')).toBe('st-9');
    expect(params.get('iss')).toBe(ISSUER);
  });
});

describe.each(FRAMEWORKS)('%s: a dynamically registered client is code-only', (framework) => {
  const app = useApp({ framework, server: { allowDynamicRegistration: true, issuer: ISSUER } });

  const register = (body: Record<string, unknown>) =>
    app().request('POST', '/v1/oauth/register', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'CLI', redirect_uris: [LOOPBACK], ...body }),
    });

  it('response_type=token → 302 with unauthorized_client in the fragment, no token', async () => {
    const { get, authorizeUrl, signIn } = app();
    const reply = await register({});
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json().response_types).toEqual(['code']);
    const clientId = reply.json<{ client_id: string }>().client_id;
    const refused = await get(
      authorizeUrl({ client_id: clientId, redirect_uri: LOOPBACK, response_type: 'token', state: 'st-6' }),
      signIn(ADA),
    );
    expect(refused.status).toBe(302);
    const url = new URL(refused.location!);
    expect(`${url.origin}${url.pathname}`).toBe(LOOPBACK);
    const params = fragmentParams(url);
    expect(params.get('error')).toBe('unauthorized_client');
    expect(params.get('state')).toBe('st-6');
    expect(params.has('access_token')).toBe(false);
  });

  it('grant_types [authorization_code]: answered so, and a refresh with its client_id is unauthorized_client', async () => {
    const { postForm } = app();
    const reply = await register({ grant_types: ['authorization_code'] });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json().grant_types).toEqual(['authorization_code']);
    const clientId = reply.json<{ client_id: string }>().client_id;
    expectJsonError(
      await postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: 'x'.repeat(43), client_id: clientId }),
      400,
      'unauthorized_client',
    );
    expectJsonError(await register({ grant_types: ['refresh_token'] }), 400, 'invalid_client_metadata');
  });

  it('grant_types [authorization_code]: the code exchange answers no refresh_token (RFC 6749 §5.1), and the access token works', async () => {
    const { authorizeAndApprove, postForm, api, signIn } = app();
    const clientId = (await register({ grant_types: ['authorization_code'] })).json<{ client_id: string }>().client_id;
    const verifier = 'v'.repeat(43);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const callback = await authorizeAndApprove(
      { client_id: clientId, redirect_uri: LOOPBACK, code_challenge: challenge, code_challenge_method: 'S256' },
      signIn(ADA),
    );
    const code = callback.searchParams.get('code')!;
    const reply = await postForm('/v1/oauth/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: LOOPBACK,
      client_id: clientId,
      code_verifier: verifier,
    });
    expect(reply.status, reply.text).toBe(200);
    const body = reply.json();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'info', 'scope', 'token_type']);
    expect((await api('GET', '/v2/account', body.access_token as string)).status).toBe(200);
  });
});
