/**
 * JWT access tokens (RFC 9068) over real HTTP through every adapter: the JWKS served and
 * advertised, the token verified with it and accepted by `requireToken` until it is revoked, and a
 * tampered token refused (docs/reference.md#jwt-access-tokens). The core's own tests
 * (test/core/token-formats.test.ts) cover each rule; these check that every framework routes, reads
 * and answers them alike.
 */
import { createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { ISSUER, JWKS, METADATA } from '../fixtures.js';
import { ADA, FRAMEWORKS, expectJsonError, useApp } from './app.js';

describe.each(FRAMEWORKS)('%s: JWT access tokens (RFC 9068) and the JWKS', (framework) => {
  const app = useApp({ framework, server: { issuer: ISSUER, accessTokenFormat: 'jwt' } });

  it('the JWKS is served and advertised; the access token verifies with it; requireToken accepts it until it is revoked', async () => {
    const { get, request, tokens, api, postForm, client, clock } = app();
    const reply = await get(JWKS);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.headers.get('cache-control')).toBe('public, max-age=300');
    const jwks = reply.json<{ keys: JWK[] }>();
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).not.toHaveProperty('d');
    expect((await request('HEAD', JWKS)).status).toBe(200);
    expect((await get(METADATA)).json().jwks_uri).toBe(`${ISSUER}${JWKS}`);

    const { access_token, refresh_token } = await tokens({ scope: 'read write' });
    const { payload, protectedHeader } = await jwtVerify(access_token, createLocalJWKSet(jwks), { currentDate: new Date(clock.now()) });
    expect(protectedHeader).toMatchObject({ typ: 'at+jwt', kid: jwks.keys[0]!.kid });
    expect(payload).toMatchObject({ iss: ISSUER, aud: ISSUER, sub: ADA.uuid, client_id: client.clientId, scope: 'read write' });

    const account = await api('GET', '/v2/account', access_token);
    expect(account.status, account.text).toBe(200);
    expect(account.json<{ oauth: { account: { uuid: string }; scope: string[] } }>().oauth).toMatchObject({
      account: { uuid: ADA.uuid },
      scope: ['read', 'write'],
    });
    expect((await api('POST', '/v2/things', access_token)).status).toBe(201);

    expect((await postForm('/v1/oauth/revoke', { token: access_token })).status).toBe(200);
    // The signature still verifies; the server refuses the token all the same.
    await jwtVerify(access_token, createLocalJWKSet(jwks), { currentDate: new Date(clock.now()) });
    const refused = await api('GET', '/v2/account', access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // Revoking one token of the pair revoked both.
    expectJsonError(await postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token }), 400, 'invalid_grant');
  });

  it('a tampered JWT (scope widened, same signature) is invalid_token', async () => {
    const { tokens, api } = app();
    const { access_token } = await tokens({ scope: 'read' });
    const [h, p, s] = access_token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, scope: 'read write' })).toString('base64url')}.${s}`;
    const reply = await api('POST', '/v2/things', forged);
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});
