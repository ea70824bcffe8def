/**
 * Authorization server metadata (RFC 8414) over real HTTP through every adapter: the document, its
 * headers and HEAD, every advertised endpoint served where it is advertised, and 404 without an
 * issuer (docs/reference.md#metadata-endpoint). The core's own tests (test/core/metadata.test.ts)
 * cover each rule; these check that every framework routes, reads and answers them alike.
 */
import { describe, expect, it } from 'vitest';
import { ISSUER, JWKS, METADATA } from '../fixtures.js';
import { FRAMEWORKS, expectJsonError, useApp } from './app.js';

describe.each(FRAMEWORKS)('%s: authorization server metadata (RFC 8414)', (framework) => {
  describe('with an issuer', () => {
    const app = useApp({ framework, server: { issuer: ISSUER } });

    it("GET /.well-known/oauth-authorization-server → 200 JSON, cacheable, exactly the core's document", async () => {
      const { get, request, server } = app();
      const reply = await get(METADATA);
      expect(reply.status, reply.text).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      expect(reply.headers.get('cache-control')).toBe('public, max-age=3600');
      const doc = reply.json();
      expect(doc).toEqual(server.metadataDocument());
      expect(doc).toMatchObject({
        issuer: ISSUER,
        authorization_endpoint: `${ISSUER}/v1/oauth/authorize`,
        token_endpoint: `${ISSUER}/v1/oauth/token`,
        revocation_endpoint: `${ISSUER}/v1/oauth/revoke`,
        introspection_endpoint: `${ISSUER}/v1/oauth/introspect`,
      });
      // The Host header does not move the issuer.
      expect((await request('GET', METADATA, { headers: { 'x-forwarded-host': 'evil.example' } })).json().issuer).toBe(ISSUER);
      // HEAD: the same headers, no body.
      const head = await request('HEAD', METADATA);
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toMatch(/^application\/json/);
      expect(head.text).toBe('');
    });

    it('every endpoint it advertises is served by this adapter at that path', async () => {
      const { get, request } = app();
      const doc = (await get(METADATA)).json<Record<string, unknown>>();
      const endpoints = Object.entries(doc).filter(([key]) => key.endsWith('_endpoint'));
      expect(endpoints.map(([key]) => key).sort()).toEqual([
        'authorization_endpoint',
        'introspection_endpoint',
        'revocation_endpoint',
        'token_endpoint',
      ]);
      for (const [key, url] of endpoints) {
        const path = new URL(url as string).pathname;
        const reply = await request(key === 'authorization_endpoint' ? 'GET' : 'POST', path);
        expect(reply.status, `${key} ${path}`).not.toBe(404);
        expect(reply.status, `${key} ${path}`).toBeLessThan(500);
      }
    });
  });

  describe('with the routes moved by basePath', () => {
    const app = useApp({ framework, router: { basePath: '/oauth' }, server: { issuer: ISSUER } });

    // Pinned: the core builds the document from its fixed PATHS, and the adapters' basePath (or a
    // Fastify prefix, or an Express mount path) never reaches it, so the metadata advertises
    // /v1/oauth/... where this app answers 404. Needs the core to know where the routes are.
    it('the advertised endpoints are where the routes are', async () => {
      const { get, request } = app();
      expect((await request('POST', '/oauth/token')).status).toBe(400);
      const doc = (await get(METADATA)).json<Record<string, string>>();
      expect(new URL(doc.token_endpoint!).pathname).toBe('/oauth/token');
    });
  });

  describe('without an issuer', () => {
    const app = useApp({ framework });

    it('404 with a JSON error (metadata needs an issuer); no JWKS for opaque tokens either', async () => {
      const { get } = app();
      expectJsonError(await get(METADATA), 404, 'not_found');
      expectJsonError(await get(JWKS), 404, 'not_found');
    });
  });
});
