/**
 * The `openid` option changes nothing for a request without `openid` in its scope: the same
 * sequence of requests (sign-in and consent, code exchange, refresh, resource checks,
 * introspection, revocation, `prompt=none`, errors, and the OpenID Connect parameters sent
 * without `openid`, which stay unknown parameters) is run against a server without the option
 * and one with it, and every answer (status, headers, body, decision) must be the same bytes.
 * Only the random values differ from one server to the other (tokens, codes, client and
 * interaction ids): each is replaced by its order of first appearance before comparing, so a
 * value that moves, appears or disappears still shows.
 */
import { describe, expect, it } from 'vitest';
import { oauthRoutes } from '../../src/adapter-kit.js';
import { interactionResponse } from '../../src/index.js';
import { ADA, randomValuesNamed, setup } from '../helpers.js';

const ISSUER = 'https://auth.example.com';

async function transcript(options: Record<string, unknown>): Promise<string[]> {
  const t = await setup({ issuer: ISSUER, ...options });
  const out: string[] = [];
  const norm = randomValuesNamed();
  const record = (label: string, value: unknown) => out.push(`${label}: ${norm(JSON.stringify(value))}`);
  const authorize = async (params: Record<string, string>, cookie: string | undefined = t.ada) => {
    const decision = await t.server.authorize(t.get(t.authorizeUrl(params), cookie));
    record(`authorize ${JSON.stringify(params)}`, decision);
    return decision;
  };
  const oidcParams = {
    nonce: 'n-1',
    max_age: '0',
    id_token_hint: 'garbage',
    login_hint: 'ada@example.com',
    ui_locales: 'fr',
    claims_locales: 'fr',
    acr_values: 'x',
    display: 'hologram',
    request: 'eyJhbGciOiJub25lIn0.e30.',
    request_uri: 'https://x.example/r',
    registration: '{}',
    response_mode: 'form_post',
    claims: '{"userinfo":{}}',
  };
  const requests: Record<string, string>[] = [
    { scope: 'read', state: 's' },
    { scope: 'read write', ...oidcParams },
    { scope: 'read', prompt: 'consent' },
    { scope: 'read', prompt: 'login' },
    { scope: 'profile' },
    { scope: 'email read' },
    { scope: 'read', prompt: 'none' },
    { scope: 'read', response_type: 'token', nonce: 'n' },
  ];
  for (const params of requests) await authorize(params);
  await authorize({ scope: 'read', prompt: 'none' }, undefined);

  const decision = await authorize({ scope: 'read write', state: 'st', ...oidcParams });
  if (decision.type !== 'consent') throw new Error('consent expected');
  const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
  record('approve', approved);
  if (approved.type !== 'redirect') throw new Error('redirect expected');
  const code = new URL(approved.location).searchParams.get('code') ?? '';
  const exchanged = await t.exchange(code);
  record('exchange', exchanged);
  record('exchange again', await t.exchange(code));
  const fresh = await t.tokens({ scope: 'read write', nonce: 'x' });
  record('api GET', await t.api('GET', fresh.access_token));
  record('api DELETE', await t.api('DELETE', fresh.access_token));
  const refreshed = await t.refresh(fresh.refresh_token, { scope: 'read' });
  record('refresh', refreshed);
  record('refresh openid', await t.refresh(fresh.refresh_token, { scope: 'read openid' }));
  const creds = { client_id: t.client.clientId, client_secret: t.client.clientSecret };
  record('introspect', await t.server.introspect(t.post('/v1/oauth/introspect', { token: fresh.access_token, ...creds })));
  record('revoke', await t.server.revoke(t.post('/v1/oauth/revoke', { token: fresh.refresh_token, ...creds })));
  record('silent', await t.server.authorize(t.get(t.authorizeUrl({ scope: 'read write', prompt: 'none', nonce: 'n' }), t.ada)));
  record('describe', await t.server.describeInteraction('nope'));
  record('api after revoke', await t.api('GET', fresh.access_token));
  record('registered', await t.server.getClient(t.client.clientId));
  record('authorizations', await t.server.listAuthorizations(ADA.uuid));
  return out;
}

/**
 * What the first transcript leaves out: a dynamic registration without OpenID Connect metadata,
 * the implicit flow switched on (its fragment response, `response_mode` ignored), and the
 * consent page as rendered (the scope descriptions go through the OpenID Connect vocabulary).
 */
async function implicitTranscript(options: Record<string, unknown>): Promise<string[]> {
  const t = await setup({ issuer: ISSUER, allowDynamicRegistration: true, allowImplicit: true, ...options });
  const out: string[] = [];
  const norm = randomValuesNamed();
  const record = (label: string, value: unknown) => out.push(`${label}: ${norm(JSON.stringify(value))}`);
  const registration = { client_name: 'CLI', redirect_uris: ['http://127.0.0.1/cb'], grant_types: ['authorization_code'] };
  const headers = { 'content-type': 'application/json' };
  record(
    'register',
    await t.server.registerDynamic({ method: 'POST', url: '/v1/oauth/register', headers, body: JSON.stringify(registration) }),
  );
  const requests: Record<string, string>[] = [
    { scope: 'read', response_type: 'token', state: 's', nonce: 'n', response_mode: 'form_post' },
    { scope: 'read write', response_type: 'code', response_mode: 'fragment', ui_locales: 'fr' },
  ];
  for (const params of requests) {
    const decision = await t.server.authorize(t.get(t.authorizeUrl(params), t.ada));
    record(`authorize ${JSON.stringify(params)}`, decision);
    if (decision.type !== 'consent') throw new Error('consent expected');
    record('page', interactionResponse(decision, t.get('/v1/oauth/authorize'), {}, t.server.options.pages));
    record('approve', await t.server.approve(decision.interaction.id, t.get('/', t.ada)));
  }
  return out;
}

describe('openid on, not requested: every answer as without the option', () => {
  it('the same sequence gives the same bytes, random values aside', async () => {
    const off = await transcript({});
    const on = await transcript({ openid: { claims: () => ({ name: 'Ada' }) } });
    expect(on.length).toBeGreaterThan(20);
    expect(on).toEqual(off);
  });

  it('also a dynamic registration, the implicit flow and the rendered consent page', async () => {
    const off = await implicitTranscript({});
    const on = await implicitTranscript({ openid: { claims: () => ({ name: 'Ada' }) } });
    expect(on).toHaveLength(7);
    expect(on).toEqual(off);
  });

  it('the routes are the same while the option is off; userinfo, logout and openid-configuration only when it is on', async () => {
    const { server: off } = await setup({ issuer: ISSUER });
    const { server: on } = await setup({ issuer: ISSUER, openid: {} });
    const before = oauthRoutes('/v1/oauth').map((r) => r.path);
    expect(oauthRoutes('/v1/oauth', off).map((r) => r.path)).toEqual(before);
    expect(oauthRoutes('/v1/oauth', on).map((r) => r.path)).toEqual([
      ...before,
      '/v1/oauth/userinfo',
      '/v1/oauth/logout',
      '/.well-known/openid-configuration',
    ]);
  });

  it('without the option the metadata document is the one it always was', async () => {
    const { server } = await setup({ issuer: ISSUER });
    const doc = JSON.parse(server.metadata({ method: 'GET' }).body) as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual([
      'issuer',
      'authorization_endpoint',
      'token_endpoint',
      'revocation_endpoint',
      'introspection_endpoint',
      'response_types_supported',
      'response_modes_supported',
      'grant_types_supported',
      'token_endpoint_auth_methods_supported',
      'revocation_endpoint_auth_methods_supported',
      'introspection_endpoint_auth_methods_supported',
      'code_challenge_methods_supported',
      'scopes_supported',
      'prompt_values_supported',
      'authorization_response_iss_parameter_supported',
    ]);
    expect((await server.jwks({ method: 'GET' })).status).toBe(404);
  });
});
