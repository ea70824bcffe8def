/**
 * OpenID Connect over real HTTP through every adapter (Express, Fastify, Hono, bare Node, Hono in
 * workerd): `/.well-known/openid-configuration`, the JWKS, a code flow with `openid` and a nonce
 * whose ID token verifies against the served keys, and userinfo by GET, by POST with the header
 * and by POST with the token in the body. Without the option, neither route exists. The core's
 * tests (test/core/oidc-flow.test.ts) cover each rule; these check that every framework routes,
 * reads and answers them alike.
 */
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { ISSUER, JWKS } from '../fixtures.js';
import { ADA, FORM, FRAMEWORKS, useApp } from './app.js';

const DISCOVERY = '/.well-known/openid-configuration';
const USERINFO = '/v1/oauth/userinfo';

describe.each(FRAMEWORKS)('%s: OpenID Connect', (framework) => {
  describe('with the openid option', () => {
    const app = useApp({ framework, server: { issuer: ISSUER, openid: {} } });

    it('serves the discovery document, the JWKS, a code flow with an ID token, and userinfo (GET, POST header, POST body)', async () => {
      const { get, request, tokens, checkHealthy, clock, client } = app();
      const discovery = await get(DISCOVERY);
      expect(discovery.status, discovery.text).toBe(200);
      expect(discovery.headers.get('cache-control')).toBe('public, max-age=3600');
      const doc = discovery.json<Record<string, unknown>>();
      expect(doc).toMatchObject({ issuer: ISSUER, userinfo_endpoint: `${ISSUER}${USERINFO}`, jwks_uri: `${ISSUER}${JWKS}` });
      // Every endpoint it advertises is served at its path.
      for (const key of ['userinfo_endpoint', 'jwks_uri']) expect((await get(new URL(doc[key] as string).pathname)).status).not.toBe(404);

      const body = (await tokens({ scope: 'openid email', nonce: 'n-42' })) as unknown as Record<string, string>;
      const keys = createLocalJWKSet((await get(JWKS)).json());
      const { payload } = await jwtVerify(body.id_token!, keys, {
        issuer: ISSUER,
        audience: client.clientId,
        currentDate: new Date(clock.now()),
      });
      expect(payload).toMatchObject({ sub: ADA.uuid, nonce: 'n-42' });

      const token = body.access_token!;
      const byGet = await request('GET', USERINFO, { headers: { authorization: `Bearer ${token}` } });
      expect(byGet.status, byGet.text).toBe(200);
      expect(byGet.headers.get('cache-control')).toBe('no-store');
      expect(byGet.json()).toEqual({ sub: ADA.uuid });
      const byHeader = await request('POST', USERINFO, { headers: { authorization: `Bearer ${token}` } });
      expect(byHeader.json()).toEqual({ sub: ADA.uuid });
      const byBody = await request('POST', USERINFO, {
        headers: { 'content-type': FORM },
        body: new URLSearchParams({ access_token: token }).toString(),
      });
      expect(byBody.status, byBody.text).toBe(200);
      expect(byBody.json()).toEqual({ sub: ADA.uuid });
      const none = await get(USERINFO);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
      checkHealthy();
    });
  });

  describe('without it', () => {
    const app = useApp({ framework, server: { issuer: ISSUER } });

    it('no openid-configuration and no userinfo route', async () => {
      const { get } = app();
      expect((await get(DISCOVERY)).status).toBe(404);
      expect((await get(USERINFO)).status).toBe(404);
    });
  });
});
