/**
 * Resource indicators (RFC 8707) in the core: `resource` at the authorization and token
 * endpoints, `invalid_target`, audience-bound tokens that narrow and never widen, `aud` in
 * introspection and JWTs, the resources on the consent step
 * (docs/reference.md#resource-indicators-rfc-8707).
 */
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { audienceAllows } from '../../src/checks/audience.js';
import { renderConsentPage } from '../../src/ui/pages.js';
import type { TokenRecord } from '../../src/storage/types.js';
import { ISSUER } from '../fixtures.js';
import { CALLBACK, json, setup } from '../helpers.js';

const API = 'https://api.example/v2';
const MCP = 'https://mcp.example/mcp';
const KNOWN = [API, MCP];
const acceptResource = (resource: string) => KNOWN.includes(resource);

/** A server that issues for API and MCP. */
const withResources = (options: Parameters<typeof setup>[0] = {}) => setup({ acceptResource, ...options });

/** `&resource=…` for each value, to append to an authorize URL (URLSearchParams from a record cannot repeat a name). */
const resourceQuery = (...resources: string[]) => resources.map((r) => `&resource=${encodeURIComponent(r)}`).join('');

type T = Awaited<ReturnType<typeof setup>>;

/** Authorize with `resources`, approve, and answer the code. */
async function codeFor(t: T, ...resources: string[]): Promise<string> {
  const decision = await t.server.authorize(t.get(t.authorizeUrl() + resourceQuery(...resources), t.ada));
  if (decision.type !== 'consent') throw new Error(`expected consent, got ${JSON.stringify(decision)}`);
  const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
  if (approved.type !== 'redirect') throw new Error(`expected redirect, got ${JSON.stringify(approved)}`);
  return new URL(approved.location).searchParams.get('code')!;
}

/** The token endpoint, with the form as text (so `resource` may repeat). */
const tokenForm = (t: T, form: string) => t.server.token(t.post('/v1/oauth/token', form));
const exchangeForm = (t: T, code: string, ...resources: string[]) =>
  tokenForm(
    t,
    new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      client_id: t.client.clientId,
      client_secret: t.client.clientSecret,
      redirect_uri: CALLBACK,
    }).toString() + resourceQuery(...resources),
  );
const refreshForm = (t: T, refreshToken: string, ...resources: string[]) =>
  tokenForm(t, new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString() + resourceQuery(...resources));

/** The stored record of a token the client received (opaque tokens: its hash). */
async function stored(t: T, token: string): Promise<TokenRecord> {
  const { sha256Base64url } = await import('../../src/crypto.js');
  const found = await t.storage.findToken(sha256Base64url(token));
  if (!found) throw new Error('token not stored');
  return found.token;
}

const introspect = (t: T, token: string) =>
  t.server.introspect(t.post('/v1/oauth/introspect', { token, client_id: t.client.clientId, client_secret: t.client.clientSecret }));

describe('resource indicators (RFC 8707)', () => {
  describe('at the authorization endpoint', () => {
    it('an accepted resource is kept on the code; the consent step names it', async () => {
      const t = await withResources();
      const decision = await t.server.authorize(t.get(t.authorizeUrl() + resourceQuery(API, MCP, API), t.ada));
      expect(decision.type).toBe('consent');
      if (decision.type !== 'consent') return;
      expect(decision.interaction.resources).toEqual([API, MCP]);
      const page = renderConsentPage(decision.interaction, { action: '/decision', csrfToken: 'x' });
      expect(page.body).toContain(API);
      expect(page.body).toContain(MCP);
      const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
      if (approved.type !== 'redirect') throw new Error('expected redirect');
      const code = new URL(approved.location).searchParams.get('code')!;
      const { sha256Base64url } = await import('../../src/crypto.js');
      expect((await t.storage.findCode(sha256Base64url(code)))?.resources).toEqual([API, MCP]);
    });

    it('the consent page escapes a resource', async () => {
      const t = await setup({ acceptResource: () => true });
      const odd = 'https://api.example/<b>"x"</b>';
      const decision = await t.server.authorize(t.get(t.authorizeUrl() + resourceQuery(odd), t.ada));
      if (decision.type !== 'consent') throw new Error('expected consent');
      const body = renderConsentPage(decision.interaction, { action: '/d', csrfToken: 'x' }).body;
      expect(body).not.toContain('<b>');
      expect(body).toContain('&#60;b&#62;&#34;x&#34;');
    });

    it('without resource: no resources on the interaction, the page or the code', async () => {
      const t = await withResources();
      const decision = await t.server.authorize(t.get(t.authorizeUrl(), t.ada));
      if (decision.type !== 'consent') throw new Error('expected consent');
      expect(decision.interaction).not.toHaveProperty('resources');
      expect(renderConsentPage(decision.interaction, { action: '/d', csrfToken: 'x' }).body).not.toContain('For use at');
      const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
      if (approved.type !== 'redirect') throw new Error('expected redirect');
      const { sha256Base64url } = await import('../../src/crypto.js');
      const code = await t.storage.findCode(sha256Base64url(new URL(approved.location).searchParams.get('code')!));
      expect(code).not.toHaveProperty('resources');
    });

    it.each([
      ['unknown', 'https://elsewhere.example/api'],
      ['relative', '/v2'],
      ['with a fragment', `${API}#x`],
      ['not a URI', 'api'],
      ['with a space', 'https://api.example/a b'],
      ['too long', `https://api.example/${'a'.repeat(2100)}`],
    ])('a resource %s is invalid_target, redirected to the callback with state and iss', async (_, resource) => {
      const t = await withResources({ issuer: ISSUER });
      const decision = await t.server.authorize(t.get(`${t.authorizeUrl({ state: 's1' })}${resourceQuery(API, resource)}`, t.ada));
      expect(decision.type).toBe('redirect');
      if (decision.type !== 'redirect') return;
      const url = new URL(decision.location);
      expect(url.origin + url.pathname).toBe(CALLBACK);
      expect(url.searchParams.get('error')).toBe('invalid_target');
      expect(url.searchParams.get('state')).toBe('s1');
      expect(url.searchParams.get('iss')).toBe(ISSUER);
    });

    it('more than 20 resources are invalid_target', async () => {
      const t = await setup({ acceptResource: () => true });
      const many = Array.from({ length: 21 }, (_, i) => `https://api.example/${i}`);
      const decision = await t.server.authorize(t.get(t.authorizeUrl() + resourceQuery(...many), t.ada));
      expect(decision.type === 'redirect' && new URL(decision.location).searchParams.get('error')).toBe('invalid_target');
    });

    it('by default (no acceptResource, no protected resources) every resource is invalid_target', async () => {
      const t = await setup();
      const decision = await t.server.authorize(t.get(t.authorizeUrl() + resourceQuery(API), t.ada));
      expect(decision.type === 'redirect' && new URL(decision.location).searchParams.get('error')).toBe('invalid_target');
    });

    it('an unverified redirect_uri is still an error page, whatever the resource', async () => {
      const t = await withResources();
      const decision = await t.server.authorize(
        t.get(`${t.authorizeUrl({ redirect_uri: 'https://evil.example/cb' })}${resourceQuery('nope')}`, t.ada),
      );
      expect(decision).toMatchObject({ type: 'error', error: 'invalid_redirect_uri' });
    });

    it('prompt=none issues a code with the resources', async () => {
      const t = await withResources();
      await t.getCode(); // consent for the default scope
      const decision = await t.server.authorize(t.get(`${t.authorizeUrl({ prompt: 'none' })}${resourceQuery(API)}`, t.ada));
      if (decision.type !== 'redirect') throw new Error('expected redirect');
      const res = await exchangeForm(t, new URL(decision.location).searchParams.get('code')!);
      expect((await stored(t, json(res).access_token as string)).audience).toEqual([API]);
    });

    it('the implicit flow issues a token for the resources', async () => {
      const t = await withResources({ allowImplicit: true });
      const decision = await t.server.authorize(t.get(`${t.authorizeUrl({ response_type: 'token' })}${resourceQuery(MCP)}`, t.ada));
      if (decision.type !== 'consent') throw new Error('expected consent');
      const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
      if (approved.type !== 'redirect') throw new Error('expected redirect');
      const token = new URLSearchParams(new URL(approved.location).hash.slice(1)).get('access_token')!;
      expect((await stored(t, token)).audience).toEqual([MCP]);
    });
  });

  describe('at the token endpoint', () => {
    it('the exchange without resource issues for every resource granted; the refresh token carries them', async () => {
      const t = await withResources();
      const res = await exchangeForm(t, await codeFor(t, API, MCP));
      expect(res.status).toBe(200);
      const body = json(res);
      expect((await stored(t, body.access_token as string)).audience).toEqual([API, MCP]);
      expect((await stored(t, body.refresh_token as string)).audience).toEqual([API, MCP]);
    });

    it('the exchange may narrow to some of the resources granted (one or several); the refresh token keeps them all', async () => {
      const t = await withResources();
      const one = json(await exchangeForm(t, await codeFor(t, API, MCP), MCP));
      expect((await stored(t, one.access_token as string)).audience).toEqual([MCP]);
      expect((await stored(t, one.refresh_token as string)).audience).toEqual([API, MCP]);
      const both = await exchangeForm(t, await codeFor(t, API, MCP), MCP, API);
      expect(both.status).toBe(200);
      expect((await stored(t, json(both).access_token as string)).audience).toEqual([MCP, API]);
    });

    it('the exchange may not widen: a resource not granted is invalid_target, and the code stays usable', async () => {
      const t = await withResources();
      const code = await codeFor(t, API);
      const res = await exchangeForm(t, code, MCP);
      expect(res.status).toBe(400);
      expect(json(res)).toMatchObject({ error: 'invalid_target' });
      const malformed = await exchangeForm(t, code, 'not a uri');
      expect(json(malformed)).toMatchObject({ error: 'invalid_target' });
      expect((await exchangeForm(t, code)).status).toBe(200);
    });

    it('a code granted without resources: a requested resource must be one the server issues for, and narrows', async () => {
      const t = await withResources();
      const refused = await exchangeForm(t, await t.getCode(), 'https://elsewhere.example/');
      expect(refused.status).toBe(400);
      expect(json(refused)).toMatchObject({ error: 'invalid_target' });
      const body = json(await exchangeForm(t, await t.getCode(), API));
      expect((await stored(t, body.access_token as string)).audience).toEqual([API]);
      expect(await stored(t, body.refresh_token as string)).not.toHaveProperty('audience');
    });

    it('each refresh may narrow, never widen; without resource it issues for everything the refresh token carries', async () => {
      const t = await withResources();
      const first = json(await exchangeForm(t, await codeFor(t, API, MCP), API));
      const narrowed = await refreshForm(t, first.refresh_token as string, MCP);
      expect(narrowed.status).toBe(200);
      const second = json(narrowed);
      expect((await stored(t, second.access_token as string)).audience).toEqual([MCP]);
      expect((await stored(t, second.refresh_token as string)).audience).toEqual([API, MCP]);
      const all = json(await refreshForm(t, second.refresh_token as string));
      expect((await stored(t, all.access_token as string)).audience).toEqual([API, MCP]);

      const t2 = await withResources();
      const narrow = json(await exchangeForm(t2, await codeFor(t2, API)));
      const widened = await refreshForm(t2, narrow.refresh_token as string, MCP);
      expect(widened.status).toBe(400);
      expect(json(widened)).toMatchObject({ error: 'invalid_target' });
      // Refused before the rotation: the refresh token is still good.
      expect((await refreshForm(t2, narrow.refresh_token as string)).status).toBe(200);
    });

    it('a single resource sent with the refresh grant is read like a repeated one', async () => {
      const t = await withResources();
      const first = json(await exchangeForm(t, await codeFor(t, API, MCP)));
      const res = await t.refresh(first.refresh_token as string, { resource: API });
      expect(res.status).toBe(200);
      expect((await stored(t, json(res).access_token as string)).audience).toEqual([API]);
    });

    it('a repeated parameter other than resource is still invalid_request, with resource repeated too', async () => {
      const t = await withResources();
      const code = await codeFor(t, API, MCP);
      const form = `${new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        client_id: t.client.clientId,
        client_secret: t.client.clientSecret,
      })}&redirect_uri=${encodeURIComponent(CALLBACK)}&redirect_uri=${encodeURIComponent(CALLBACK)}${resourceQuery(API, MCP)}`;
      const res = await tokenForm(t, form);
      expect(res.status).toBe(400);
      expect(json(res)).toEqual({ error: 'invalid_request', error_description: "The parameter 'redirect_uri' was sent more than once." });
    });

    it('a client without the refresh grant gets an access token for the resources, and no refresh token', async () => {
      const t = await withResources();
      const app = await t.server.registerClient({
        name: 'No Refresh',
        redirectUri: CALLBACK,
        grantTypes: ['authorization_code'],
      });
      const decision = await t.server.authorize(t.get(`${t.authorizeUrl({ client_id: app.clientId })}${resourceQuery(API, MCP)}`, t.ada));
      if (decision.type !== 'consent') throw new Error('expected consent');
      const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
      if (approved.type !== 'redirect') throw new Error('expected redirect');
      const code = new URL(approved.location).searchParams.get('code')!;
      const res = await t.server.token(
        t.post('/v1/oauth/token', {
          grant_type: 'authorization_code',
          code,
          client_id: app.clientId,
          client_secret: app.clientSecret,
          redirect_uri: CALLBACK,
          resource: API,
        }),
      );
      expect(res.status).toBe(200);
      const body = json(res);
      expect(body).not.toHaveProperty('refresh_token');
      expect((await stored(t, body.access_token as string)).audience).toEqual([API]);
    });

    it('a refresh token without resources: a requested resource must be one the server issues for, and narrows', async () => {
      const t = await withResources();
      const first = await t.tokens();
      const refused = await refreshForm(t, first.refresh_token, 'https://elsewhere.example/');
      expect(json(refused)).toMatchObject({ error: 'invalid_target' });
      const res = await refreshForm(t, first.refresh_token, MCP);
      expect(res.status).toBe(200);
      expect((await stored(t, json(res).access_token as string)).audience).toEqual([MCP]);
      expect(await stored(t, json(res).refresh_token as string)).not.toHaveProperty('audience');
    });

    it('without resource anywhere, tokens have no audience (as before)', async () => {
      const t = await withResources();
      const tokens = await t.tokens();
      expect(await stored(t, tokens.access_token)).not.toHaveProperty('audience');
      expect(await stored(t, tokens.refresh_token)).not.toHaveProperty('audience');
    });
  });

  describe('introspection and JWTs', () => {
    it('introspection returns aud: a string for one resource, an array for several, none without', async () => {
      const t = await withResources({ issuer: ISSUER });
      const one = json(await exchangeForm(t, await codeFor(t, API)));
      expect(json(await introspect(t, one.access_token as string))).toMatchObject({ active: true, aud: API });
      const two = json(await exchangeForm(t, await codeFor(t, API, MCP)));
      expect(json(await introspect(t, two.access_token as string))).toMatchObject({ active: true, aud: [API, MCP] });
      const none = await t.tokens();
      expect(json(await introspect(t, none.access_token))).not.toHaveProperty('aud');
    });

    it('a JWT access token carries the resources as aud; the plain check, which names no resource, refuses it', async () => {
      const t = await withResources({ accessTokenFormat: 'jwt', issuer: ISSUER });
      const one = json(await exchangeForm(t, await codeFor(t, API)));
      expect(decodeJwt(one.access_token as string).aud).toBe(API);
      // Good only where requireToken(server, { resource }) names API (test/core/protected-resources.test.ts).
      expect(await t.api('GET', one.access_token as string)).toMatchObject({ ok: false });
      expect(json(await introspect(t, one.access_token as string))).toMatchObject({ active: true, aud: API });
      const two = json(await exchangeForm(t, await codeFor(t, API, MCP)));
      expect(decodeJwt(two.access_token as string).aud).toEqual([API, MCP]);
      expect(await t.api('GET', two.access_token as string)).toMatchObject({ ok: false });
    });

    it('a JWT without resources keeps the jwt.audience option (or the issuer) as aud', async () => {
      const t = await withResources({ accessTokenFormat: 'jwt', issuer: ISSUER });
      expect(decodeJwt((await t.tokens()).access_token).aud).toBe(ISSUER);
      const custom = await withResources({ accessTokenFormat: 'jwt', issuer: ISSUER, jwt: { audience: 'my-api' } });
      expect(decodeJwt((await custom.tokens()).access_token).aud).toBe('my-api');
    });
  });

  describe('audienceAllows', () => {
    const token = (audience?: string[]) => ({ ...(audience && { audience }) }) as TokenRecord;
    it('a token without an audience is accepted by any resource', () => {
      expect(audienceAllows(token(), API)).toBe(true);
      expect(audienceAllows(token(), 'https://anything.example/')).toBe(true);
    });
    it('a token with an audience only by those resources, compared exactly', () => {
      expect(audienceAllows(token([API]), API)).toBe(true);
      expect(audienceAllows(token([API, MCP]), MCP)).toBe(true);
      expect(audienceAllows(token([API]), MCP)).toBe(false);
      expect(audienceAllows(token([API]), `${API}/`)).toBe(false);
      expect(audienceAllows(token([API]), API.toUpperCase())).toBe(false);
      expect(audienceAllows(token([]), API)).toBe(false);
    });
  });
});
