/**
 * Resource indicators (RFC 8707) over HTTP (docs/reference.md#resource-indicators-rfc-8707):
 * `invalid_target` at the authorization endpoint (redirected) and the token endpoint (400 JSON)
 * on every target; granting, narrowing and `aud` with the host's `acceptResource`, a function,
 * on the in-process targets (a function cannot be sent to the worker); `prompt=none` against the
 * resources a stored consent approved, on every target. The core cases are in
 * test/core/resource-indicators.test.ts and test/core/consent-resources.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ADA, CALLBACK, expectJsonError, FRAMEWORKS, IN_PROCESS, useApp } from './app.js';

const API = 'https://api.example/v2';
const MCP = 'https://mcp.example/mcp';
const KNOWN = [API, MCP];

/** `&resource=…` for each value (URLSearchParams from a record cannot repeat a name). */
const resourceQuery = (...resources: string[]) => resources.map((r) => `&resource=${encodeURIComponent(r)}`).join('');

describe.each(FRAMEWORKS)('%s: resource indicators, refused', (framework) => {
  const app = useApp({ framework });

  it('a resource the server does not issue for is invalid_target, redirected to the callback with state', async () => {
    const { get, authorizeUrl, signIn } = app();
    const reply = await get(authorizeUrl() + resourceQuery(API), signIn());
    expect(reply.status).toBe(302);
    const url = new URL(reply.location!);
    expect(url.origin + url.pathname).toBe(CALLBACK);
    expect(url.searchParams.get('error')).toBe('invalid_target');
    expect(url.searchParams.get('state')).toBe('st-123');
  });

  it('at the token endpoint, a resource not granted is 400 invalid_target, and the code still works', async () => {
    const { getCode, exchange, postForm, client } = app();
    const code = await getCode();
    expectJsonError(await exchange(code, { resource: API }), 400, 'invalid_target');
    const repeated = `grant_type=authorization_code&code=${code}&client_id=${client.clientId}&client_secret=${client.clientSecret}&redirect_uri=${encodeURIComponent(CALLBACK)}${resourceQuery(API, MCP)}`;
    expectJsonError(await postForm('/v1/oauth/token', repeated), 400, 'invalid_target');
    const ok = await exchange(code);
    expect(ok.status, ok.text).toBe(200);
  });
});

describe.each(FRAMEWORKS)('%s: prompt=none and the resources a consent approved', (framework) => {
  // The protected resources are data, so the worker target runs this too (the default
  // acceptResource issues for them).
  const app = useApp({ framework, server: { protectedResources: KNOWN.map((resource) => ({ resource })) } });

  it('approved for API: silent API works, MCP and no resource ask again; approved without resource: silent API works; revokeAccess: asks again', async () => {
    const { get, authorizeUrl, readConsent, decide, signIn, server, client, clock } = app();
    const sid = signIn();
    const approve = async (...resources: string[]) => {
      const decided = await decide(await readConsent(await get(authorizeUrl() + resourceQuery(...resources), sid)), 'approve', sid);
      expect(decided.status, decided.text).toBe(303);
    };
    const silent = async (...resources: string[]) => {
      const reply = await get(authorizeUrl({ prompt: 'none' }) + resourceQuery(...resources), sid);
      expect(reply.status, reply.text).toBe(302);
      const params = new URL(reply.location!).searchParams;
      return params.has('code') ? 'code' : params.get('error');
    };

    await approve(API);
    clock.advance(3_600_000);
    expect(await silent(API)).toBe('code');
    expect(await silent(MCP)).toBe('consent_required');
    expect(await silent()).toBe('consent_required');
    expect(await silent(API, MCP)).toBe('consent_required');
    await approve();
    expect(await silent(API)).toBe('code');
    expect(await silent(API, MCP)).toBe('code');
    expect(await silent()).toBe('code');
    await server.revokeAccess({ accountUuid: ADA.uuid, clientId: client.clientId });
    expect(await silent(API)).toBe('consent_required');
    expect(await silent()).toBe('consent_required');
  });
});

describe.each(IN_PROCESS)('%s: resource indicators, granted', (framework) => {
  const app = useApp({ framework, server: { acceptResource: (resource) => KNOWN.includes(resource) } });

  it('the consent page names the resources; the tokens are for them; a refresh narrows; introspection says aud', async () => {
    const { get, authorizeUrl, readConsent, decide, signIn, exchange, postForm, client, api } = app();
    const sid = signIn();
    const page = await readConsent(await get(authorizeUrl() + resourceQuery(API, MCP), sid));
    expect(page.page.text).toContain(API);
    expect(page.page.text).toContain(MCP);
    const approved = await decide(page, 'approve', sid);
    expect(approved.status, approved.text).toBe(303);
    const code = new URL(approved.location!).searchParams.get('code')!;

    const exchanged = await exchange(code, { resource: MCP });
    expect(exchanged.status, exchanged.text).toBe(200);
    const tokens = exchanged.json<{ access_token: string; refresh_token: string }>();
    const introspect = (token: string) =>
      postForm('/v1/oauth/introspect', { token, client_id: client.clientId, client_secret: client.clientSecret });
    expect((await introspect(tokens.access_token)).json()).toMatchObject({ active: true, aud: MCP });
    expect((await introspect(tokens.refresh_token)).json()).toMatchObject({ active: true, aud: [API, MCP] });
    // Bound to its resources: the host's plain requireToken(server), which names none, refuses it.
    expect((await api('GET', '/v2/account', tokens.access_token)).status).toBe(401);

    const refreshed = await postForm(
      '/v1/oauth/token',
      `grant_type=refresh_token&refresh_token=${tokens.refresh_token}${resourceQuery(API)}`,
    );
    expect(refreshed.status, refreshed.text).toBe(200);
    const next = refreshed.json<{ access_token: string; refresh_token: string }>();
    expect((await introspect(next.access_token)).json()).toMatchObject({ aud: API });

    const widened = await postForm('/v1/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: next.refresh_token,
      resource: 'https://elsewhere.example/',
    });
    expectJsonError(widened, 400, 'invalid_target');
  });

  it('without resource, nothing changes: no aud in introspection', async () => {
    const { tokens, postForm, client } = app();
    const body = await tokens();
    const reply = await postForm('/v1/oauth/introspect', {
      token: body.access_token,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(reply.json()).not.toHaveProperty('aud');
  });
});

describe.each(['express', 'fastify'] as const)('%s: resource indicators through the host body parser', (framework) => {
  const app = useApp({ framework, hostParsers: true, server: { acceptResource: (resource) => KNOWN.includes(resource) } });

  it('a repeated resource parsed by the host into an array narrows to those resources', async () => {
    const { get, authorizeUrl, readConsent, decide, signIn, postForm, client } = app();
    const sid = signIn();
    const page = await readConsent(await get(authorizeUrl() + resourceQuery(API, MCP), sid));
    const code = new URL((await decide(page, 'approve', sid)).location!).searchParams.get('code')!;
    const form = `grant_type=authorization_code&code=${code}&client_id=${client.clientId}&client_secret=${client.clientSecret}&redirect_uri=${encodeURIComponent(CALLBACK)}${resourceQuery(MCP, API)}`;
    const reply = await postForm('/v1/oauth/token', form);
    expect(reply.status, reply.text).toBe(200);
    const introspected = await postForm('/v1/oauth/introspect', {
      token: reply.json<{ access_token: string }>().access_token,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(introspected.json()).toMatchObject({ active: true, aud: [MCP, API] });
  });
});
