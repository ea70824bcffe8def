/** A host's own scope vocabulary in place of read / read write (docs/reference.md#scope). */
import { describe, expect, it } from 'vitest';
import { setup } from '../helpers.js';

describe('custom scopes', () => {
  const scopes = {
    values: ['account:read', 'droplet:read', 'droplet:create'],
    default: ['account:read'],
    allows: (scope: readonly string[], request: { method: string; url: string }) => {
      if (request.url.startsWith('/v2/droplets')) return scope.includes(request.method === 'GET' ? 'droplet:read' : 'droplet:create');
      return scope.includes('account:read') && request.method === 'GET';
    },
    descriptions: { 'droplet:create': 'Create droplets in your account.' },
  };

  it('replace read / read write: parsing, default, order, the resource rule and the consent words', async () => {
    const t = await setup({ scopes });
    const d = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'droplet:create droplet:read' }), t.ada));
    if (d.type !== 'consent') throw new Error(d.type);
    expect(d.interaction.scope).toEqual(['droplet:read', 'droplet:create']);
    expect(d.interaction.scopeDescriptions?.['droplet:create']).toBe('Create droplets in your account.');
    const tokens = await t.tokens({ scope: 'droplet:read droplet:create' });
    expect(tokens.scope).toBe('droplet:read droplet:create');
    const call = (method: string, url: string) =>
      t.server.authenticate({ method, url, headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect((await call('POST', '/v2/droplets')).ok).toBe(true);
    expect((await call('GET', '/v2/account')).ok).toBe(false);
    const denied = await call('GET', '/v2/account');
    expect(!denied.ok && denied.response.status).toBe(403);
    expect((await t.tokens()).scope).toBe('account:read');
  });

  it('a resource rule that changes the scope it is given changes nothing stored', async () => {
    const mutating = {
      ...scopes,
      allows: (scope: readonly string[], request: { method: string; url: string }) => {
        const ok = scopes.allows(scope, request);
        (scope as string[]).splice(0, scope.length, 'droplet:create');
        return ok;
      },
    };
    const t = await setup({ scopes: mutating });
    const tokens = await t.tokens({ scope: 'droplet:read' });
    const call = (method: string) =>
      t.server.authenticate({ method, url: '/v2/droplets', headers: { authorization: `Bearer ${tokens.access_token}` } });
    for (let i = 0; i < 2; i++) {
      expect((await call('POST')).ok).toBe(false);
      const read = await call('GET');
      expect(read.ok && read.token.scope).toEqual(['droplet:read']);
    }
  });

  it('invalid scopes still get the invalid_scope error page', async () => {
    const t = await setup({ scopes });
    for (const scope of ['read', 'droplet:read droplet:read', 'droplet:read  account:read', 'admin']) {
      expect(await t.server.authorize(t.get(t.authorizeUrl({ scope }), t.ada))).toMatchObject({ type: 'error', error: 'invalid_scope' });
    }
  });

  it('a default outside the vocabulary is a ConfigError', async () => {
    await expect(setup({ scopes: { ...scopes, default: ['nope'] } })).rejects.toThrow(/scopes/);
  });
});
