/** Token introspection (RFC 7662) in the core (docs/reference.md#introspection-endpoint). */
import { describe, expect, it } from 'vitest';
import { ISSUER } from '../fixtures.js';
import { json, setup } from '../helpers.js';

const introspect = (
  t: Awaited<ReturnType<typeof setup>>,
  token: string,
  creds: Record<string, string> | null = { client_id: t.client.clientId, client_secret: t.client.clientSecret },
) => t.server.introspect(t.post('/v1/oauth/introspect', { token, ...creds }));

describe('token introspection (RFC 7662)', () => {
  it('an active access token: scope, client, subject, times', async () => {
    const t = await setup({ issuer: ISSUER });
    const tokens = await t.tokens({ scope: 'read write' });
    const res = await introspect(t, tokens.access_token);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const now = Math.floor(t.clock.now() / 1000);
    expect(json(res)).toEqual({
      active: true,
      scope: 'read write',
      client_id: t.client.clientId,
      username: 'ada@example.com',
      sub: tokens.info.uuid,
      token_type: 'bearer',
      iat: now,
      exp: now + 2_592_000,
      iss: ISSUER,
    });
    const refresh = json(await introspect(t, tokens.refresh_token));
    expect(refresh).toMatchObject({ active: true, client_id: t.client.clientId });
    expect(refresh).not.toHaveProperty('exp');
  });

  it("{ active: false } for unknown, expired, revoked, rotated and other clients' tokens", async () => {
    const t = await setup();
    const revoked = await t.tokens();
    await t.server.revoke(t.post('/v1/oauth/revoke', { token: revoked.access_token }));
    const rotated = await t.tokens();
    await t.refresh(rotated.refresh_token);
    const foreign = await t.tokens();
    const expired = await t.tokens();
    t.clock.advance(2_592_000_000);
    for (const token of [
      'unknown',
      revoked.access_token,
      rotated.refresh_token,
      rotated.access_token,
      expired.access_token,
      'x'.repeat(5000),
    ]) {
      expect(json(await introspect(t, token))).toEqual({ active: false });
    }
    expect(json(await introspect(t, foreign.refresh_token, { client_id: t.other.clientId, client_secret: t.other.clientSecret }))).toEqual({
      active: false,
    });
  });

  it('needs confidential client authentication; a missing token is invalid_request', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    expect((await introspect(t, tokens.access_token, null)).status).toBe(401);
    expect((await introspect(t, tokens.access_token, { client_id: t.client.clientId, client_secret: 'wrong' })).status).toBe(401);
    expect(
      json(
        await t.server.introspect(t.post('/v1/oauth/introspect', { client_id: t.client.clientId, client_secret: t.client.clientSecret })),
      ).error,
    ).toBe('invalid_request');
    expect((await t.server.introspect({ method: 'GET', url: '/v1/oauth/introspect', headers: {} })).status).toBe(405);
  });
});
