/**
 * Authorization server metadata (RFC 8414) in the core, and served by an Express app
 * (docs/reference.md#metadata-endpoint).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createOAuthRouter, requireToken } from '../../adapters/express/index.js';
import { ISSUER } from '../fixtures.js';
import { CALLBACK, json, setup } from '../helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});
async function serve(t: Awaited<ReturnType<typeof setup>>) {
  const app = express();
  app.use(createOAuthRouter(t.server));
  app.get('/v2/account', requireToken(t.server), (_req, res) => res.json(res.locals.oauth));
  const listener = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => listener.once('listening', resolve));
  close = () =>
    new Promise((resolve) => {
      listener.closeAllConnections();
      listener.close(() => resolve());
    });
  return `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
}

describe('authorization server metadata (RFC 8414)', () => {
  it('is served at /.well-known/oauth-authorization-server with the configured issuer and real endpoints', async () => {
    const t = await setup({ issuer: ISSUER });
    const base = await serve(t);
    const res = await fetch(`${base}/.well-known/oauth-authorization-server`, { headers: { host: 'evil.example' } });
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Record<string, unknown>;
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
      expect(
        (await fetch(`${base}${path}`, { method: key === 'authorization_endpoint' ? 'GET' : 'POST', redirect: 'manual' })).status,
        key,
      ).not.toBe(404);
    }
  });

  it('describes exactly what the server accepts: response types, grant types, PKCE methods, scopes, auth methods', async () => {
    for (const options of [
      { issuer: ISSUER },
      { issuer: ISSUER, profile: 'strict' as const },
      { issuer: ISSUER, allowPlainPkce: true, allowDynamicRegistration: true, accessTokenFormat: 'jwt' as const },
    ]) {
      const t = await setup(options);
      const doc = t.server.metadataDocument()!;
      const verifier = randomBytes(32).toString('base64url');
      const pkce = { code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' };
      for (const responseType of ['code', 'token']) {
        const d = await t.server.authorize(t.get(t.authorizeUrl({ response_type: responseType, ...pkce }), t.ada));
        expect(d.type === 'consent', `${responseType} with ${JSON.stringify(options)}`).toBe(
          (doc.response_types_supported as string[]).includes(responseType),
        );
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
      // What a client that asks for everything advertised sends (the MCP SDK does): accepted.
      const everything = (doc.scopes_supported as string[]).join(' ');
      expect((await t.server.authorize(t.get(t.authorizeUrl({ scope: everything, ...pkce }), t.ada))).type).toBe('consent');
      for (const grantType of (doc.grant_types_supported as string[]).filter((g) => g !== 'implicit')) {
        expect(json(await t.server.token(t.post('/v1/oauth/token', { grant_type: grantType }))).error).not.toBe('unsupported_grant_type');
      }
      const code = await t.getCode(pkce);
      const basic = `Basic ${btoa(`${t.client.clientId}:${t.client.clientSecret}`)}`;
      const viaBasic = await t.server.token(
        t.post(
          '/v1/oauth/token',
          { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier },
          { authorization: basic },
        ),
      );
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
