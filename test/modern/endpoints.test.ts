import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createOAuthRouter, requireToken } from '../../adapters/express/index.js';
import type { AuditEvent } from '../../src/index.js';
import { CALLBACK, json, setup } from '../helpers.js';

/** Issue 7: introspection (RFC 7662), metadata (RFC 8414), dynamic registration (RFC 7591), custom scopes, portability. */
const ISSUER = 'https://auth.example';
const introspect = (t: Awaited<ReturnType<typeof setup>>, token: string, creds: Record<string, string> | null = { client_id: t.client.clientId, client_secret: t.client.clientSecret }) =>
  t.server.introspect(t.post('/v1/oauth/introspect', { token, ...creds }));

describe('token introspection (RFC 7662)', () => {
  it('an active access token: scope, client, subject, times', async () => {
    const t = await setup({ issuer: ISSUER });
    const tokens = await t.tokens({ scope: 'read write' });
    const res = await introspect(t, tokens.access_token);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const now = Math.floor(t.clock.now() / 1000);
    expect(json(res)).toEqual({
      active: true, scope: 'read write', client_id: t.client.clientId, username: 'ada@example.com', sub: tokens.info.uuid,
      token_type: 'bearer', iat: now, exp: now + 2_592_000, iss: ISSUER,
    });
    const refresh = json(await introspect(t, tokens.refresh_token));
    expect(refresh).toMatchObject({ active: true, client_id: t.client.clientId });
    expect(refresh).not.toHaveProperty('exp');
  });

  it('{ active: false } for unknown, expired, revoked, rotated and other clients\' tokens', async () => {
    const t = await setup();
    const revoked = await t.tokens();
    await t.server.revoke(t.post('/v1/oauth/revoke', { token: revoked.access_token }));
    const rotated = await t.tokens();
    await t.refresh(rotated.refresh_token);
    const foreign = await t.tokens();
    const expired = await t.tokens();
    t.clock.advance(2_592_000_000);
    for (const token of ['unknown', revoked.access_token, rotated.refresh_token, rotated.access_token, expired.access_token, 'x'.repeat(5000)]) {
      expect(json(await introspect(t, token))).toEqual({ active: false });
    }
    expect(json(await introspect(t, foreign.refresh_token, { client_id: t.other.clientId, client_secret: t.other.clientSecret }))).toEqual({ active: false });
  });

  it('needs confidential client authentication; a missing token is invalid_request', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    expect((await introspect(t, tokens.access_token, null)).status).toBe(401);
    expect((await introspect(t, tokens.access_token, { client_id: t.client.clientId, client_secret: 'wrong' })).status).toBe(401);
    expect(json(await t.server.introspect(t.post('/v1/oauth/introspect', { client_id: t.client.clientId, client_secret: t.client.clientSecret }))).error).toBe('invalid_request');
    expect((await t.server.introspect({ method: 'GET', url: '/v1/oauth/introspect', headers: {} })).status).toBe(405);
  });
});

let close: (() => Promise<void>) | undefined;
afterEach(async () => { await close?.(); close = undefined; });
async function serve(t: Awaited<ReturnType<typeof setup>>) {
  const app = express();
  app.use(createOAuthRouter(t.server));
  app.get('/v2/account', requireToken(t.server), (_req, res) => res.json(res.locals.oauth));
  const listener = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => listener.once('listening', resolve));
  close = () => new Promise((resolve) => { listener.closeAllConnections(); listener.close(() => resolve()); });
  return `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
}

describe('authorization server metadata (RFC 8414)', () => {
  it('is served at /.well-known/oauth-authorization-server with the configured issuer and real endpoints', async () => {
    const t = await setup({ issuer: ISSUER });
    const base = await serve(t);
    const res = await fetch(`${base}/.well-known/oauth-authorization-server`, { headers: { host: 'evil.example' } });
    expect(res.status).toBe(200);
    const doc = await res.json() as Record<string, unknown>;
    expect(doc).toMatchObject({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/v1/oauth/authorize`,
      token_endpoint: `${ISSUER}/v1/oauth/token`,
      revocation_endpoint: `${ISSUER}/v1/oauth/revoke`,
      introspection_endpoint: `${ISSUER}/v1/oauth/introspect`,
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['read', 'write'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(doc).not.toHaveProperty('jwks_uri');
    expect(doc).not.toHaveProperty('registration_endpoint');
    // Every advertised endpoint exists on the server (same path, any answer but 404).
    for (const key of ['authorization_endpoint', 'token_endpoint', 'revocation_endpoint', 'introspection_endpoint']) {
      const path = new URL(doc[key] as string).pathname;
      expect((await fetch(`${base}${path}`, { method: key === 'authorization_endpoint' ? 'GET' : 'POST', redirect: 'manual' })).status, key).not.toBe(404);
    }
  });

  it('describes exactly what the server accepts: response types, grant types, PKCE methods, scopes, auth methods', async () => {
    for (const options of [{ issuer: ISSUER }, { issuer: ISSUER, profile: 'strict' as const }, { issuer: ISSUER, allowPlainPkce: true, allowDynamicRegistration: true, accessTokenFormat: 'jwt' as const }]) {
      const t = await setup(options);
      const doc = t.server.metadataDocument()!;
      const verifier = randomBytes(32).toString('base64url');
      const pkce = { code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' };
      for (const responseType of ['code', 'token']) {
        const d = await t.server.authorize(t.get(t.authorizeUrl({ response_type: responseType, ...pkce }), t.ada));
        expect(d.type === 'consent', `${responseType} with ${JSON.stringify(options)}`).toBe((doc.response_types_supported as string[]).includes(responseType));
      }
      for (const method of ['S256', 'plain']) {
        const d = await t.server.authorize(t.get(t.authorizeUrl({ code_challenge: verifier, code_challenge_method: method }), t.ada));
        const accepted = method === 'S256' ? true : d.type === 'consent';
        expect(accepted, method).toBe((doc.code_challenge_methods_supported as string[]).includes(method));
      }
      for (const scope of doc.scopes_supported as string[]) {
        const value = scope === 'write' ? 'read write' : scope;
        expect((await t.server.authorize(t.get(t.authorizeUrl({ scope: value, ...pkce }), t.ada))).type).toBe('consent');
      }
      for (const grantType of (doc.grant_types_supported as string[]).filter((g) => g !== 'implicit')) {
        expect(json(await t.server.token(t.post('/v1/oauth/token', { grant_type: grantType }))).error).not.toBe('unsupported_grant_type');
      }
      const code = await t.getCode(pkce);
      const basic = `Basic ${btoa(`${t.client.clientId}:${t.client.clientSecret}`)}`;
      const viaBasic = await t.server.token(t.post('/v1/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier }, { authorization: basic }));
      expect(viaBasic.status).toBe(200);
      expect(doc.token_endpoint_auth_methods_supported).toContain('client_secret_basic');
      expect(Boolean(doc.jwks_uri)).toBe(options.accessTokenFormat === 'jwt');
      expect(Boolean(doc.registration_endpoint)).toBe(Boolean(options.allowDynamicRegistration));
    }
  });

  it('names the routes where the adapter mounted them, and answers 405 to methods other than GET and HEAD', async () => {
    const t = await setup({ issuer: ISSUER, accessTokenFormat: 'jwt' });
    const doc = t.server.metadataDocument({ basePath: '/auth/oauth', documentsPath: '/auth' })!;
    expect(doc.token_endpoint).toBe(`${ISSUER}/auth/oauth/token`);
    expect(doc.jwks_uri).toBe(`${ISSUER}/auth/.well-known/jwks.json`);
    for (const method of ['POST', 'PUT', 'OPTIONS']) {
      const res = t.server.metadata({ method });
      expect(res.status).toBe(405);
      expect(res.headers['allow']).toBe('GET, HEAD');
      expect((await t.server.jwks({ method })).status).toBe(405);
    }
    expect(t.server.metadata({ method: 'HEAD' }).status).toBe(200);
  });

  it('without an issuer there is no metadata (404)', async () => {
    const t = await setup();
    expect(t.server.metadata().status).toBe(404);
  });
});

describe('dynamic client registration (RFC 7591)', () => {
  const registration = (body: unknown) => ({ method: 'POST', url: '/v1/oauth/register', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('is off by default (404)', async () => {
    const t = await setup();
    expect((await t.server.registerDynamic(registration({ redirect_uris: ['http://127.0.0.1/cb'] }))).status).toBe(404);
  });

  it('registers a public client that can then complete a PKCE flow', async () => {
    const events: AuditEvent[] = [];
    const t = await setup({ allowDynamicRegistration: true, onAudit: (e) => events.push(e) });
    const res = await t.server.registerDynamic(registration({ client_name: 'My CLI', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' }));
    expect(res.status).toBe(201);
    const client = json(res);
    expect(client).toMatchObject({ client_name: 'My CLI', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' });
    expect(client).not.toHaveProperty('client_secret');
    expect(events).toContainEqual(expect.objectContaining({ type: 'client.registered', public: true, clientId: client.client_id }));
    const verifier = randomBytes(32).toString('base64url');
    const d = await t.server.authorize(t.get(`/v1/oauth/authorize?${new URLSearchParams({ client_id: client.client_id as string, redirect_uri: 'http://127.0.0.1:4567/callback', response_type: 'code', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' })}`, t.ada));
    expect(d.type).toBe('consent');
  });

  it('the host hook decides; bad metadata is invalid_client_metadata or invalid_redirect_uri', async () => {
    const t = await setup({ allowDynamicRegistration: true, onDynamicRegistration: ({ clientName }) => clientName !== 'Evil' });
    expect((await t.server.registerDynamic(registration({ client_name: 'Evil', redirect_uris: ['http://127.0.0.1/cb'] }))).status).toBe(403);
    for (const [body, error] of [
      [{ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: [] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['http://127.0.0.1/a', 'http://127.0.0.1/b'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
      [{ redirect_uris: ['http://127.0.0.1/cb'], grant_types: ['password'] }, 'invalid_client_metadata'],
      [{ redirect_uris: ['http://127.0.0.1/cb'], client_name: 5 }, 'invalid_client_metadata'],
      [[1, 2], 'invalid_client_metadata'],
    ] as const) {
      const res = await t.server.registerDynamic(registration(body));
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(json(res).error).toBe(error);
    }
    expect(json(await t.server.registerDynamic({ ...registration({}), body: '{not json' })).error).toBe('invalid_client_metadata');
    expect(json(await t.server.registerDynamic({ ...registration({}), headers: { 'content-type': 'application/x-www-form-urlencoded' } })).error).toBe('invalid_client_metadata');
  });
});

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
    const call = (method: string, url: string) => t.server.authenticate({ method, url, headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect((await call('POST', '/v2/droplets')).ok).toBe(true);
    expect((await call('GET', '/v2/account')).ok).toBe(false);
    const denied = await call('GET', '/v2/account');
    expect(!denied.ok && denied.response.status).toBe(403);
    expect((await t.tokens()).scope).toBe('account:read');
  });

  it('a resource rule that changes the scope it is given changes nothing stored', async () => {
    const mutating = { ...scopes, allows: (scope: readonly string[], request: { method: string; url: string }) => {
      const ok = scopes.allows(scope, request);
      (scope as string[]).splice(0, scope.length, 'droplet:create');
      return ok;
    } };
    const t = await setup({ scopes: mutating });
    const tokens = await t.tokens({ scope: 'droplet:read' });
    const call = (method: string) => t.server.authenticate({ method, url: '/v2/droplets', headers: { authorization: `Bearer ${tokens.access_token}` } });
    for (let i = 0; i < 2; i++) {
      expect((await call('POST')).ok).toBe(false);
      const read = await call('GET');
      expect(read.ok && read.token.scope).toEqual(['droplet:read']);
    }
  });

  it('invalid scopes still get the SPEC error page', async () => {
    const t = await setup({ scopes });
    for (const scope of ['read', 'droplet:read droplet:read', 'droplet:read  account:read', 'admin']) {
      expect(await t.server.authorize(t.get(t.authorizeUrl({ scope }), t.ada))).toMatchObject({ type: 'error', error: 'invalid_scope' });
    }
  });

  it('a default outside the vocabulary is a ConfigError', async () => {
    await expect(setup({ scopes: { ...scopes, default: ['nope'] } })).rejects.toThrow(/scopes/);
  });
});

describe('runtime portability', () => {
  it('src/ imports no node: module and touches no Node global (Buffer, process, require)', () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (path.endsWith('.ts')) files.push(path);
      }
    };
    walk(join(import.meta.dirname, '../../src'));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      if (file.includes('/postgres/')) continue; // authgate/postgres runs on Node with pg by design
      const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      expect(code, file).not.toMatch(/from\s+['"]node:|require\(|import\(['"]node:/);
      // The globals themselves; a module found by feature detection (`getBuiltinModule('node:buffer').Buffer`,
      // `{ Buffer: ... }` in its type) is fine: the core falls back when it is absent (workerd runs it so).
      if (!file.includes('/testing/')) expect(code, file).not.toMatch(/(?<![.\w])Buffer\b(?!\s*:)|globalThis\.Buffer\b|\bprocess\./);
    }
  });
});
