/**
 * POST /v1/oauth/revoke over HTTP (RFC 7009; docs/reference.md#revocation-endpoint): 200 {} also
 * for unknown tokens, and revoking either token of a pair revokes both
 * (docs/reference.md#revocation-semantics).
 */
import { describe, expect, it } from 'vitest';
import { expectJsonError, expectNoStoreJson, FRAMEWORKS, useApp } from './app.js';

describe.each(FRAMEWORKS)('%s: revocation endpoint', (framework) => {
  const app = useApp({ framework });

  it('token in the form body → 200 {} with no-store; the token then fails at the resource API', async () => {
    const { tokens, postForm, api } = app();
    const { access_token } = await tokens();
    expect((await api('GET', '/v2/account', access_token)).status).toBe(200);

    const reply = await postForm('/v1/oauth/revoke', { token: access_token });
    expect(reply.status).toBe(200);
    expectNoStoreJson(reply);
    expect(reply.json()).toEqual({});

    const after = await api('GET', '/v2/account', access_token);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('token in the query string of the POST and the same token as a Bearer header, as some clients send it → 200 {}', async () => {
    const { tokens, request, api } = app();
    const { access_token } = await tokens();
    const reply = await request('POST', `/v1/oauth/revoke?token=${encodeURIComponent(access_token)}`, {
      headers: { authorization: `Bearer ${access_token}` },
    });
    expect(reply.status, reply.text).toBe(200);
    expectNoStoreJson(reply);
    expect(reply.json()).toEqual({});
    expect((await api('GET', '/v2/account', access_token)).status).toBe(401);
  });

  it('token in the body plus the Bearer header → 200 {} and revoked', async () => {
    const { tokens, postForm, api } = app();
    const { access_token } = await tokens();
    const reply = await postForm('/v1/oauth/revoke', { token: access_token }, { headers: { authorization: `Bearer ${access_token}` } });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({});
    expect((await api('GET', '/v2/account', access_token)).status).toBe(401);
  });

  it('revoking the access token also kills its refresh token', async () => {
    const { tokens, postForm } = app();
    const { access_token, refresh_token } = await tokens();
    expect((await postForm('/v1/oauth/revoke', { token: access_token })).status).toBe(200);
    expectJsonError(await postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token }), 400, 'invalid_grant');
  });

  it('revoking the refresh token kills the access token too', async () => {
    const { tokens, postForm, api } = app();
    const { access_token, refresh_token } = await tokens();
    expect((await postForm('/v1/oauth/revoke', { token: refresh_token, token_type_hint: 'refresh_token' })).status).toBe(200);
    expect((await api('GET', '/v2/account', access_token)).status).toBe(401);
  });

  it('an unknown token → 200 {}; revoking twice → 200 {} both times', async () => {
    const { tokens, postForm } = app();
    const unknown = await postForm('/v1/oauth/revoke', { token: 'not-a-real-token' });
    expect(unknown.status).toBe(200);
    expect(unknown.json()).toEqual({});
    expectNoStoreJson(unknown);

    const { access_token } = await tokens();
    for (let i = 0; i < 2; i++) {
      const reply = await postForm('/v1/oauth/revoke', { token: access_token });
      expect(reply.status).toBe(200);
      expect(reply.json()).toEqual({});
    }
  });

  it('missing token → 400 invalid_request (also with only a Bearer header)', async () => {
    const { postForm, request, tokens } = app();
    const empty = await postForm('/v1/oauth/revoke', {});
    expectJsonError(empty, 400, 'invalid_request');
    expectNoStoreJson(empty);

    const { access_token } = await tokens();
    expectJsonError(
      await request('POST', '/v1/oauth/revoke', { headers: { authorization: `Bearer ${access_token}` } }),
      400,
      'invalid_request',
    );
  });

  it('GET → 405 JSON', async () => {
    const { get } = app();
    expectJsonError(await get('/v1/oauth/revoke?token=x'), 405, 'invalid_request');
  });

  it("another client's credentials cannot revoke the token (400 unauthorized_client), which keeps working", async () => {
    const { tokens, postForm, other, api } = app();
    const { access_token } = await tokens();
    const reply = await postForm('/v1/oauth/revoke', { token: access_token, client_id: other.clientId, client_secret: other.clientSecret });
    expectJsonError(reply, 400, 'unauthorized_client');
    expect((await api('GET', '/v2/account', access_token)).status).toBe(200);
  });

  it('wrong client credentials → 401 invalid_client, nothing revoked', async () => {
    const { tokens, postForm, client, api } = app();
    const { access_token } = await tokens();
    expectJsonError(
      await postForm('/v1/oauth/revoke', { token: access_token, client_id: client.clientId, client_secret: 'wrong' }),
      401,
      'invalid_client',
    );
    expect((await api('GET', '/v2/account', access_token)).status).toBe(200);
  });
});
