/**
 * Review of this morning's OpenID Connect fixes (test/core/oidc-signing-key-removed.test.ts,
 * oidc-response-modes.test.ts, oidc-flow.test.ts's form_post page): the attacks tried on what they
 * claim, kept as cases. Each passed on the code as merged: these areas were found sound.
 */
import { decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { AuthorizationServer, type AuthorizeDecision, generateSigningKey, interactionResponse } from '../../src/index.js';
import { ADA, CALLBACK, json, setup } from '../helpers.js';

const ISSUER = 'https://auth.example.com';

/** The callback parameters of a redirect decision, and whether they came in the fragment. */
function delivered(decision: AuthorizeDecision): { fragment: boolean; params: Record<string, string> } {
  if (decision.type !== 'redirect') throw new Error(`redirect expected: ${JSON.stringify(decision)}`);
  const url = new URL(decision.location);
  if (url.hash === '') return { fragment: false, params: Object.fromEntries(url.searchParams) };
  expect(url.search).toBe('');
  return { fragment: true, params: Object.fromEntries(new URLSearchParams(url.hash.slice(1))) };
}

describe('an ID token algorithm changed (updateClient) between the authorization and the exchange', () => {
  it('the exchange signs with the client’s algorithm as it is then; on an instance without that key it is 500 and the code stays usable', async () => {
    const rs = await generateSigningKey('RS256', 'rs');
    const es = await generateSigningKey('ES256', 'es');
    const t = await setup({ issuer: ISSUER, openid: { signingKeys: [rs, es] } });
    const rsOnly = new AuthorizationServer({
      storage: t.storage,
      sessions: t.sessions,
      clock: t.clock,
      issuer: ISSUER,
      openid: { signingKeys: [rs] },
      onError: () => {},
    });
    // Authorized while the client is on RS256, which every instance signs.
    const code = await t.getCode({ scope: 'openid' });
    await t.server.updateClient(t.client.clientId, { openid: { idTokenSignedResponseAlg: 'ES256' } });
    const exchange = (server: AuthorizationServer) =>
      server.token(
        t.post('/v1/oauth/token', {
          grant_type: 'authorization_code',
          code,
          client_id: t.client.clientId,
          client_secret: t.client.clientSecret,
          redirect_uri: CALLBACK,
        }),
      );
    const refused = await exchange(rsOnly);
    expect(refused.status).toBe(500);
    expect(json(refused).error).toBe('server_error');
    const res = await exchange(t.server);
    expect(res.status).toBe(200);
    expect(decodeProtectedHeader(json(res).id_token as string).alg).toBe('ES256');
  });
});

describe('response_mode=fragment with response_type=code (implicit flow allowed)', () => {
  it('the missing ID token key’s server_error, at the request and at approve, goes to the fragment with state and iss', async () => {
    const es = await generateSigningKey('ES256', 'es');
    const rs = await generateSigningKey('RS256', 'rs');
    const t = await setup({ issuer: ISSUER, openid: { signingKeys: [rs, es] } });
    await t.server.updateClient(t.client.clientId, { openid: { idTokenSignedResponseAlg: 'ES256' } });
    const rsOnly = new AuthorizationServer({
      storage: t.storage,
      sessions: t.sessions,
      clock: t.clock,
      issuer: ISSUER,
      openid: { signingKeys: [rs] },
      onError: () => {},
    });
    const url = t.authorizeUrl({ scope: 'openid', response_mode: 'fragment', state: 's&"<' });
    const atRequest = delivered(await rsOnly.authorize(t.get(url, t.ada)));
    expect(atRequest).toMatchObject({ fragment: true, params: { error: 'server_error', state: 's&"<', iss: ISSUER } });
    const consent = await t.server.authorize(t.get(url, t.ada));
    if (consent.type !== 'consent') throw new Error('consent expected');
    const atApprove = delivered(await rsOnly.approve(consent.interaction.id, t.get('/', t.ada)));
    expect(atApprove).toMatchObject({ fragment: true, params: { error: 'server_error', state: 's&"<', iss: ISSUER } });
    expect(await t.server.listAuthorizations(ADA.uuid)).toEqual([]);
  });
});

describe('the form_post page without CSP form-action', () => {
  it('a registered callback with quotes and markup, and such a state, are escaped; one script, the hashed one; not frameable', async () => {
    const t = await setup({ issuer: ISSUER, openid: {} });
    const callback = "https://app.example/cb?a=\"><script>alert(1)</script>&b='x'";
    const client = await t.server.registerClient({ name: 'Quoted', redirectUri: callback });
    const state = `"'<&>\`</script>`;
    const url = `/v1/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: callback, response_type: 'code', scope: 'openid', response_mode: 'form_post', state })}`;
    const consent = await t.server.authorize(t.get(url, t.ada));
    if (consent.type !== 'consent') throw new Error(`consent expected: ${JSON.stringify(consent)}`);
    const decision = await t.server.approve(consent.interaction.id, t.get('/', t.ada));
    if (decision.type !== 'form_post') throw new Error('form_post expected');
    expect(decision.action).toBe(callback);
    const page = interactionResponse(decision, t.post('/v1/oauth/authorize/decision', {}));
    expect(page.body).toContain('action="https://app.example/cb?a=&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;&#38;b=&#39;x&#39;"');
    expect(page.body).toContain('name="state" value="&#34;&#39;&#60;&#38;&#62;&#96;&#60;/script&#62;"');
    expect(page.body.match(/<script/g)).toHaveLength(1);
    expect(page.body.match(/<form/g)).toHaveLength(1);
    expect(page.body).toContain('<script>document.forms[0].submit()</script>');
    expect(page.headers['x-frame-options']).toBe('DENY');
    const csp = page.headers['content-security-policy']!;
    expect(csp).toMatch(/^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/]+='; frame-ancestors 'none'; base-uri 'none'$/);
  });
});
