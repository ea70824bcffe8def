/**
 * Token introspection (RFC 7662) over real HTTP through every adapter: active and inactive tokens,
 * client authentication by form parameters or HTTP Basic, and its errors
 * (docs/reference.md#introspection-endpoint). The core's own tests
 * (test/core/introspection.test.ts) cover each rule; these check that every framework routes, reads
 * and answers them alike.
 */
import { describe, expect, it } from 'vitest';
import { ISSUER } from '../fixtures.js';
import { ADA, FRAMEWORKS, expectJsonError, expectNoStoreJson, useApp } from './app.js';

describe.each(FRAMEWORKS)('%s: token introspection (RFC 7662)', (framework) => {
  const app = useApp({ framework, server: { issuer: ISSUER } });

  it('an active access token, client authenticated by form parameters or HTTP Basic', async () => {
    const { tokens, postForm, client, clock } = app();
    const { access_token, refresh_token } = await tokens({ scope: 'read write' });
    const now = Math.floor(clock.now() / 1000);

    const reply = await postForm('/v1/oauth/introspect', {
      token: access_token,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(reply.status, reply.text).toBe(200);
    expectNoStoreJson(reply);
    expect(reply.json()).toEqual({
      active: true,
      scope: 'read write',
      client_id: client.clientId,
      username: ADA.email,
      sub: ADA.uuid,
      token_type: 'bearer',
      iat: now,
      exp: now + 2_592_000,
      iss: ISSUER,
    });

    const basic = `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64')}`;
    const viaBasic = await postForm(
      '/v1/oauth/introspect',
      { token: refresh_token, token_type_hint: 'refresh_token' },
      { headers: { authorization: basic } },
    );
    expect(viaBasic.status, viaBasic.text).toBe(200);
    expect(viaBasic.json()).toMatchObject({ active: true, client_id: client.clientId, sub: ADA.uuid });
  });

  it("inactive: unknown, revoked, another client's token → 200 { active: false }", async () => {
    const { tokens, postForm, client, other } = app();
    const revoked = await tokens();
    expect((await postForm('/v1/oauth/revoke', { token: revoked.access_token })).status).toBe(200);
    const live = await tokens();
    const ask = (token: string, as = client) =>
      postForm('/v1/oauth/introspect', { token, client_id: as.clientId, client_secret: as.clientSecret });
    for (const token of ['unknown', revoked.access_token, revoked.refresh_token]) {
      const reply = await ask(token);
      expect(reply.status).toBe(200);
      expect(reply.json()).toEqual({ active: false });
    }
    expect((await ask(live.access_token, other)).json()).toEqual({ active: false });
    expect((await ask(live.access_token)).json().active).toBe(true);
  });

  it('401 invalid_client without client authentication or with a wrong secret (Basic: with a Basic challenge); GET is 405', async () => {
    const { tokens, postForm, get, client } = app();
    const { access_token } = await tokens();
    expectJsonError(await postForm('/v1/oauth/introspect', { token: access_token }), 401, 'invalid_client');
    expectJsonError(
      await postForm('/v1/oauth/introspect', { token: access_token, client_id: client.clientId, client_secret: 'wrong' }),
      401,
      'invalid_client',
    );
    const wrongBasic = await postForm(
      '/v1/oauth/introspect',
      { token: access_token },
      { headers: { authorization: `Basic ${Buffer.from(`${client.clientId}:wrong`).toString('base64')}` } },
    );
    expectJsonError(wrongBasic, 401, 'invalid_client');
    expect(wrongBasic.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    const viaGet = await get(
      `/v1/oauth/introspect?${new URLSearchParams({ token: access_token, client_id: client.clientId, client_secret: client.clientSecret })}`,
    );
    expectJsonError(viaGet, 405, 'invalid_request');
    expect(viaGet.headers.get('allow')).toBe('POST');
  });
});
