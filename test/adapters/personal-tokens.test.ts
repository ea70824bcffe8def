/**
 * Personal access tokens over HTTP in every framework (docs/reference.md#personal-access-tokens):
 * `requireToken` accepts them like OAuth access tokens and says which kind the route sees; the
 * revocation endpoint kills one for whoever holds it; introspection tells a client nothing; an
 * expired or revoked one is a 401 challenge.
 */
import { describe, expect, it } from 'vitest';
import type { CreatedPersonalToken, VerifiedToken } from '../../src/index.js';
import { ADA, FRAMEWORKS, useApp } from './app.js';

describe.each(FRAMEWORKS)('%s: personal access tokens', (framework) => {
  const app = useApp({ framework });

  it("the route sees kind 'personal', no client, the account, the scope and the token's id and name; scope rules as for OAuth tokens", async () => {
    const { server, api } = app();
    const created: CreatedPersonalToken = await server.createPersonalToken({ account: ADA, name: 'CI deploy', scope: ['read'] });
    const reply = await api('GET', '/v2/account', created.token);
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.json<{ oauth: VerifiedToken }>().oauth)).not.toContain('clientId');
    expect(reply.json<{ oauth: VerifiedToken }>().oauth).toEqual({
      kind: 'personal',
      account: ADA,
      scope: ['read'],
      expiresAt: Number.MAX_SAFE_INTEGER,
      personalToken: { id: created.id, name: 'CI deploy' },
    });
    const denied = await api('POST', '/v2/things', created.token);
    expect(denied.status).toBe(403);
    expect(denied.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(denied.text).not.toContain('created');
  });

  it('revoked by the account, or at the revocation endpoint by whoever holds it (no client credentials): then 401 invalid_token', async () => {
    const { server, api, postForm } = app();
    const leaked = await server.createPersonalToken({ account: ADA, name: 'leaked', scope: 'read write' });
    expect((await api('POST', '/v2/things', leaked.token)).status).toBe(201);
    const reply = await postForm('/v1/oauth/revoke', { token: leaked.token });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({});
    const after = await api('GET', '/v2/account', leaked.token);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');

    const owned = await server.createPersonalToken({ account: ADA, name: 'owned' });
    expect(await server.revokePersonalToken(ADA.uuid, owned.id)).toBe(true);
    expect((await api('GET', '/v2/account', owned.token)).status).toBe(401);
  });

  it('expired: 401 invalid_token once expiresIn has passed', async () => {
    const { server, api, clock } = app();
    const created = await server.createPersonalToken({ account: ADA, name: 'short', expiresIn: 60 });
    expect((await api('GET', '/v2/account', created.token)).status).toBe(200);
    clock.advance(60_000);
    const reply = await api('GET', '/v2/account', created.token);
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('introspection by a client: { active: false }, never the account', async () => {
    const { server, postForm, client } = app();
    const created = await server.createPersonalToken({ account: ADA, name: 'secret' });
    const reply = await postForm('/v1/oauth/introspect', {
      token: created.token,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ active: false });
    expect(reply.text).not.toContain(ADA.uuid);
  });
});
