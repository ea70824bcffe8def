/**
 * The core bearer check with a scope requirement (`requireBearerScope`,
 * src/endpoints/authenticate.ts): "a live access token presented as a bearer token, whose scope
 * includes X", with the answers of RFC 6750 (docs/reference.md#resource-check). Internal: for the
 * server's own endpoints that take an access token (OpenID Connect userinfo), so that none of
 * them writes a bearer check of its own.
 */
import { describe, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import { requireBearerScope } from '../../src/endpoints/authenticate.js';
import { MemoryStorage, type AuthenticateResult, type OAuthRequest } from '../../src/index.js';
import { ADA, setup } from '../helpers.js';

const API = 'https://api.example/v2';

async function world(options: Parameters<typeof setup>[0] = {}) {
  const errors: unknown[] = [];
  const t = await setup({
    issuer: 'https://auth.example',
    protectedResources: [{ resource: API }],
    onError: (e) => errors.push(e),
    ...options,
  });
  const ctx = (t.server as unknown as { ctx: Context }).ctx;
  const check = (request: OAuthRequest, scope: readonly string[], token?: string) =>
    requireBearerScope(ctx, request, scope, (e) => errors.push(e), token);
  return { ...t, errors, check };
}

const bearer = (token: string | undefined, method = 'GET'): OAuthRequest => ({
  method,
  url: '/userinfo',
  headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
});

const status = (result: AuthenticateResult) => (result.ok ? 200 : result.response.status);
const challenge = (result: AuthenticateResult) => (result.ok ? '' : result.response.headers['www-authenticate']);

const REALM = 'Bearer realm="authgate"';
const INVALID = `${REALM}, error="invalid_token", error_description="The access token is invalid, expired or revoked."`;
const insufficient = (scope: string) =>
  `${REALM}, error="insufficient_scope", error_description="The access token does not allow this request.", scope="${scope}"`;

describe('requireBearerScope: a live access token whose scope includes X', () => {
  it('a token holding every value passes, whatever the method; the verified token is the plain check’s', async () => {
    const t = await world();
    const { access_token } = await t.tokens({ scope: 'read' });
    for (const method of ['GET', 'POST', 'DELETE']) {
      const result = await t.check(bearer(access_token, method), ['read']);
      expect(result).toEqual(await t.api('GET', access_token));
      expect(result.ok && result.token).toMatchObject({ kind: 'oauth', clientId: t.client.clientId, account: ADA, scope: ['read'] });
    }
    // Nothing needed: any live token.
    expect((await t.check(bearer(access_token, 'PUT'), [])).ok).toBe(true);
  });

  it('a token missing a value: 403 insufficient_scope naming every value needed (RFC 6750 §3.1)', async () => {
    const t = await world();
    const { access_token } = await t.tokens({ scope: 'read' });
    const missing = await t.check(bearer(access_token), ['openid']);
    expect(status(missing)).toBe(403);
    expect(challenge(missing)).toBe(insufficient('openid'));
    expect(missing.ok ? {} : JSON.parse(missing.response.body)).toEqual({
      error: 'insufficient_scope',
      error_description: 'The access token does not allow this request.',
    });
    const both = await t.check(bearer(access_token), ['read', 'write']);
    expect(challenge(both)).toBe(insufficient('read write'));
    expect(t.errors).toEqual([]);
  });

  it('over time: accepted, then 401 invalid_token once expired, revoked or rotated', async () => {
    const t = await world();
    const expiring = await t.tokens({ scope: 'read' });
    expect((await t.check(bearer(expiring.access_token), ['read'])).ok).toBe(true);
    t.clock.advance(2_592_000_000 - 1);
    expect((await t.check(bearer(expiring.access_token), ['read'])).ok).toBe(true);
    t.clock.advance(1);
    const expired = await t.check(bearer(expiring.access_token), ['read']);
    expect([status(expired), challenge(expired)]).toEqual([401, INVALID]);

    const revoked = await t.tokens({ scope: 'read' });
    await t.server.revoke(t.post('/v1/oauth/revoke', { token: revoked.refresh_token }));
    expect(challenge(await t.check(bearer(revoked.access_token), ['read']))).toBe(INVALID);

    const rotated = await t.tokens({ scope: 'read' });
    expect((await t.refresh(rotated.refresh_token)).status).toBe(200);
    expect(challenge(await t.check(bearer(rotated.access_token), ['read']))).toBe(INVALID);
  });

  it('no refresh token, and no token issued for named resources (RFC 8707): 401 invalid_token', async () => {
    const t = await world();
    const tokens = await t.tokens({ scope: 'read' });
    expect(challenge(await t.check(bearer(tokens.refresh_token), ['read']))).toBe(INVALID);
    const forApi = await t.tokens({ scope: 'read', resource: API });
    expect(challenge(await t.check(bearer(forApi.access_token), ['read']))).toBe(INVALID);
    // The same token passes the check of its resource.
    expect((await t.server.resourceCheck(API)(bearer(forApi.access_token))).ok).toBe(true);
  });

  it('a personal access token is an access token: accepted with the scope, refused without', async () => {
    const t = await world();
    const { token } = await t.server.createPersonalToken({ account: ADA, name: 'CLI', scope: ['read'] });
    const ok = await t.check(bearer(token), ['read']);
    expect(ok.ok && ok.token).toMatchObject({ kind: 'personal', scope: ['read'] });
    expect(challenge(await t.check(bearer(token), ['write']))).toBe(insufficient('write'));
  });

  it('the header answers as at the plain check: none → 401 with no error code, malformed or repeated → 400', async () => {
    const t = await world();
    const none = await t.check(bearer(undefined), ['read']);
    expect([status(none), challenge(none)]).toEqual([401, REALM]);
    const malformed = await t.check({ method: 'GET', url: '/userinfo', headers: { authorization: 'Bearer a b' } }, ['read']);
    expect(status(malformed)).toBe(400);
    expect(challenge(malformed)).toContain('error="invalid_request"');
    const repeated = await t.check({ method: 'GET', url: '/userinfo', headers: { authorization: ['Bearer a', 'Bearer b'] } }, ['read']);
    expect(status(repeated)).toBe(400);
  });

  it('a token the caller took from a form body (RFC 6750 §2.2) is checked in place of the header', async () => {
    const t = await world();
    const { access_token } = await t.tokens({ scope: 'read' });
    const fromBody = await t.check({ method: 'POST', url: '/userinfo', headers: {} }, ['read'], access_token);
    expect(fromBody.ok).toBe(true);
    expect(challenge(await t.check({ method: 'POST', url: '/userinfo', headers: {} }, ['read'], 'unknown'))).toBe(INVALID);
  });

  it('a storage outage is 503 temporarily_unavailable, reported, never invalid_token', async () => {
    class Failing extends MemoryStorage {
      override readToken(): never {
        throw new Error('storage down');
      }
    }
    const t = await world({ storage: new Failing() });
    const result = await t.check(bearer('anything-at-all'), ['read']);
    expect(status(result)).toBe(503);
    expect(challenge(result)).toBeUndefined();
    expect(t.errors).toHaveLength(1);
  });
});
