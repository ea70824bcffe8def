import { describe, expect, it } from 'vitest';
import { AuthorizationServer } from '../../src/index.js';
import { ADA, CALLBACK, setup } from '../helpers.js';

/**
 * A client registered with `dpopBoundAccessTokens` (RFC 9449 §5.2: it uses DPoP always) gets no
 * bearer token from the implicit flow either: the authorization endpoint, which can bind nothing
 * to a key (no proof comes with a browser redirect), refuses it `response_type=token` as any
 * response type a client may not use (`unauthorized_client`, RFC 6749 §4.2.2.1, to the callback's
 * fragment). Every other client's implicit flow is as before.
 */
const ISSUER = 'https://as.example';

async function withAgent() {
  // The compatible profile (the default) has the implicit flow on; said here so the test means it.
  const t = await setup({ issuer: ISSUER, dpop: {}, allowImplicit: true });
  const agent = await t.server.registerClient({ name: 'Agent', redirectUri: CALLBACK, dpopBoundAccessTokens: true });
  const authorizeUrl = (clientId: string, params: Record<string, string> = {}) =>
    `/v1/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, response_type: 'token', state: 's-1', ...params })}`;
  return { ...t, agent, authorizeUrl };
}

describe('the implicit flow and a client that requires DPoP-bound access tokens', () => {
  it('response_type=token is refused: unauthorized_client in the fragment, with state and iss, no token and no interaction', async () => {
    const t = await withAgent();
    for (const params of [{}, { prompt: 'none' }] as Record<string, string>[]) {
      const decision = await t.server.authorize(t.get(t.authorizeUrl(t.agent.clientId, params), t.ada));
      expect(decision.type).toBe('redirect');
      if (decision.type !== 'redirect') return;
      const url = new URL(decision.location);
      expect(`${url.origin}${url.pathname}`).toBe(CALLBACK);
      expect(url.search).toBe('');
      const fragment = new URLSearchParams(url.hash.slice(1));
      expect(fragment.get('error')).toBe('unauthorized_client');
      expect(fragment.get('error_description')).toMatch(/DPoP-bound access tokens.*response_type=token/);
      expect(fragment.get('state')).toBe('s-1');
      expect(fragment.get('iss')).toBe(ISSUER);
      expect(fragment.has('access_token')).toBe(false);
    }
    // No grant was made: the refusal comes before any consent or issuance.
    expect(await t.server.listAuthorizations(ADA.uuid)).toEqual([]);
  });

  it('the same client still uses the code flow (its tokens then need a proof at the token endpoint)', async () => {
    const t = await withAgent();
    const decision = await t.server.authorize(t.get(t.authorizeUrl(t.agent.clientId, { response_type: 'code' }), t.ada));
    expect(decision.type).toBe('consent');
  });

  it('a client without the flag keeps getting implicit bearer tokens, with DPoP on', async () => {
    const t = await withAgent();
    const url = await t.authorizeAndApprove({ response_type: 'token', state: 's-2' });
    const fragment = new URLSearchParams(url.hash.slice(1));
    expect(fragment.get('error')).toBeNull();
    expect(fragment.get('token_type')).toBe('bearer');
    expect(fragment.get('state')).toBe('s-2');
    expect((await t.api('GET', fragment.get('access_token')!)).ok).toBe(true);
  });

  it('with DPoP turned off later, a stored flag is ignored, as at the token endpoint: the server has no other token to give', async () => {
    const t = await withAgent();
    const off = new AuthorizationServer({ issuer: ISSUER, storage: t.storage, sessions: t.sessions, clock: t.clock, allowImplicit: true });
    const decision = await off.authorize(t.get(t.authorizeUrl(t.agent.clientId), t.ada));
    expect(decision.type).toBe('consent');
  });
});
