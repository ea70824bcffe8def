import { describe, expect, it } from 'vitest';
import { ADA, json, setup } from '../helpers.js';

/**
 * The refresh token grant (RFC 6749 §6; docs/reference.md#refresh-token-grant) and the single use
 * of each refresh token (docs/reference.md#refresh-token-rotation-and-families).
 */
describe('refresh token flow (RFC 6749 §6)', () => {
  it('returns a new access token and a new refresh token in the shape of the access token grant', async () => {
    const t = await setup();
    const first = await t.tokens({ scope: 'read write' });
    const res = await t.refresh(first.refresh_token);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'info', 'refresh_token', 'scope', 'token_type']);
    expect(body).toMatchObject({
      token_type: 'bearer',
      expires_in: 2592000,
      scope: 'read write',
      info: { uuid: ADA.uuid, name: ADA.name, email: ADA.email },
    });
    expect(body.access_token).not.toBe(first.access_token);
    expect(body.refresh_token).not.toBe(first.refresh_token);
    expect((await t.api('POST', body.access_token as string)).ok).toBe(true);
  });

  it('the access token issued together with the used refresh token is invalidated', async () => {
    const t = await setup();
    const first = await t.tokens();
    expect((await t.api('GET', first.access_token)).ok).toBe(true);
    await t.refresh(first.refresh_token);
    const res = await t.api('GET', first.access_token);
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.response.status).toBe(401);
  });

  it('a refresh token is single use: the second use is invalid_grant', async () => {
    const t = await setup();
    const first = await t.tokens();
    expect((await t.refresh(first.refresh_token)).status).toBe(200);
    const again = await t.refresh(first.refresh_token);
    expect(again.status).toBe(400);
    expect(json(again).error).toBe('invalid_grant');
  });

  it('reuse of a rotated refresh token revokes the whole family (RFC 9700 §4.14.2)', async () => {
    const t = await setup();
    const first = await t.tokens();
    const second = json(await t.refresh(first.refresh_token));
    await t.refresh(first.refresh_token); // the replay
    expect((await t.api('GET', second.access_token as string)).ok).toBe(false);
    expect(json(await t.refresh(second.refresh_token as string)).error).toBe('invalid_grant');
  });

  it('a chain of refreshes keeps working, each token once', async () => {
    const t = await setup();
    let current = (await t.tokens()).refresh_token;
    for (let i = 0; i < 5; i++) {
      const res = await t.refresh(current);
      expect(res.status).toBe(200);
      current = json(res).refresh_token as string;
    }
  });

  it('works after the access token has expired (the typical reason to refresh)', async () => {
    const t = await setup();
    const first = await t.tokens();
    t.clock.advance(31 * 24 * 3600 * 1000);
    expect((await t.api('GET', first.access_token)).ok).toBe(false);
    const res = await t.refresh(first.refresh_token);
    expect(res.status).toBe(200);
    expect((await t.api('GET', json(res).access_token as string)).ok).toBe(true);
  });

  it('an optional refresh token lifetime expires refresh tokens', async () => {
    const t = await setup({ lifetimes: { refreshToken: 3600 } });
    const first = await t.tokens();
    t.clock.advance(3_600_000);
    expect(json(await t.refresh(first.refresh_token)).error).toBe('invalid_grant');
  });

  it('concurrent refreshes with one refresh token: exactly one succeeds', async () => {
    const t = await setup();
    const first = await t.tokens();
    const results = await Promise.all(Array.from({ length: 20 }, () => t.refresh(first.refresh_token)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => json(r).error === 'invalid_grant')).toHaveLength(19);
  });

  it("works without client credentials (the compatible profile); credentials that are sent must be right and the token's own", async () => {
    const t = await setup();
    const first = await t.tokens();
    expect((await t.refresh(first.refresh_token, { client_id: t.client.clientId, client_secret: 'wrong' })).status).toBe(401);
    const foreign = await t.refresh(first.refresh_token, { client_id: t.other.clientId, client_secret: t.other.clientSecret });
    expect(json(foreign).error).toBe('invalid_grant');
    // Neither failure used the token up.
    const own = await t.refresh(first.refresh_token, { client_id: t.client.clientId, client_secret: t.client.clientSecret });
    expect(own.status).toBe(200);
  });

  it('requireClientAuthOnRefresh makes client credentials required', async () => {
    const t = await setup({ requireClientAuthOnRefresh: true });
    const first = await t.tokens();
    const res = await t.refresh(first.refresh_token);
    expect(res.status).toBe(401);
    expect(json(res).error).toBe('invalid_client');
    expect((await t.refresh(first.refresh_token, { client_id: t.client.clientId, client_secret: t.client.clientSecret })).status).toBe(200);
  });

  it('scope may narrow the new pair, never widen it', async () => {
    const t = await setup();
    const wide = await t.tokens({ scope: 'read write' });
    const narrowed = json(await t.refresh(wide.refresh_token, { scope: 'read' }));
    expect(narrowed.scope).toBe('read');
    expect((await t.api('POST', narrowed.access_token as string)).ok).toBe(false);
    const widen = await t.refresh(narrowed.refresh_token as string, { scope: 'read write' });
    expect(widen.status).toBe(400);
    expect(json(widen).error).toBe('invalid_scope');
    // The refused request did not use the token.
    expect((await t.refresh(narrowed.refresh_token as string)).status).toBe(200);
    expect(json(await t.refresh(wide.refresh_token, { scope: 'admin' })).error).toBe('invalid_grant');
  });

  it('a malformed scope on refresh is invalid_scope', async () => {
    const t = await setup();
    const first = await t.tokens();
    expect(json(await t.refresh(first.refresh_token, { scope: 'READ' })).error).toBe('invalid_scope');
  });

  it('an access token, a code or garbage used as a refresh token: invalid_grant', async () => {
    const t = await setup();
    const first = await t.tokens();
    expect(json(await t.refresh(first.access_token)).error).toBe('invalid_grant');
    expect(json(await t.refresh(await t.getCode())).error).toBe('invalid_grant');
    expect(json(await t.refresh('garbage')).error).toBe('invalid_grant');
  });

  it('missing refresh_token: invalid_request', async () => {
    const t = await setup();
    const res = await t.server.token(t.post('/v1/oauth/token', { grant_type: 'refresh_token' }));
    expect(json(res).error).toBe('invalid_request');
  });

  it('implicit-flow tokens have no refresh token, and revoked grants cannot be refreshed', async () => {
    const t = await setup();
    const first = await t.tokens();
    await t.server.revokeAccess({ accountUuid: ADA.uuid, clientId: t.client.clientId });
    expect(json(await t.refresh(first.refresh_token)).error).toBe('invalid_grant');
  });
});
