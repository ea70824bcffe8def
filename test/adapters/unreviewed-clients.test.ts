/**
 * Clients nobody reviewed over real HTTP through every adapter: an MCP client registers itself
 * with the body the official MCP SDK posts, and the built-in consent page names it
 * "(unverified)", says where the browser goes next and what the client stated, shows no remote
 * logo, and keeps its headers; a reviewed client's page has none of it
 * (docs/reference.md#dynamic-registration-endpoint, docs/reference.md#consent-page). The core's
 * own tests (test/core/unreviewed-clients.test.ts) cover each rule.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ISSUER } from '../fixtures.js';
import { FRAMEWORKS, useApp, type TokenBody } from './app.js';

/** What the MCP SDK's `registerClient()` posts: the provider's client metadata plus `scope`. */
const MCP_REGISTRATION = {
  client_name: 'Claude Code (my-server)',
  client_uri: 'https://claude.ai',
  logo_uri: 'https://claude.ai/logo.png',
  redirect_uris: ['http://localhost:8090/callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  scope: 'read',
};

const CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

describe.each(FRAMEWORKS)('%s: clients nobody reviewed', (framework) => {
  const app = useApp({
    framework,
    server: { issuer: ISSUER, allowDynamicRegistration: true },
    router: { siteName: 'Example Platform' },
  });

  it('an MCP client registers with the SDK body; its consent page marks it unverified and names the callback host; the flow completes', async () => {
    const { request, signIn, openConsent, decide, postForm, api } = app();
    const reply = await request('POST', '/v1/oauth/register', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(MCP_REGISTRATION),
    });
    expect(reply.status, reply.text).toBe(201);
    const registered = reply.json<{ client_id: string }>();
    expect(registered).toMatchObject({ client_uri: 'https://claude.ai', logo_uri: 'https://claude.ai/logo.png' });

    const verifier = randomBytes(32).toString('base64url');
    const redirectUri = 'http://localhost:8090/callback';
    const sid = signIn();
    const consent = await openConsent(
      {
        client_id: registered.client_id,
        redirect_uri: redirectUri,
        scope: 'read',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      },
      sid,
    );
    const html = consent.page.text;
    expect(html).toContain('Authorize <strong>Claude Code (my-server)</strong> (unverified)?');
    expect(html).toContain('Example Platform has not verified this application');
    expect(html).toContain('you will be sent to <strong>localhost:8090</strong>');
    expect(html).toContain('claude.ai as its home page (not checked)');
    expect(html).not.toContain('<img');
    expect(consent.page.headers.get('content-security-policy')).toBe(CSP);
    expect(consent.page.headers.get('x-frame-options')).toBe('DENY');

    const decided = await decide(consent, 'approve', sid);
    expect(decided.status, decided.text).toBe(303);
    const callback = new URL(decided.location!);
    expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri);
    const exchanged = await postForm('/v1/oauth/token', {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      client_id: registered.client_id,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    });
    expect(exchanged.status, exchanged.text).toBe(200);
    expect((await api('GET', '/v2/account', exchanged.json<TokenBody>().access_token)).status).toBe(200);
  });

  it("a reviewed client's consent page carries no unverified mark", async () => {
    const { signIn, openConsent } = app();
    const consent = await openConsent({}, signIn());
    expect(consent.page.text).not.toContain('unverified');
    expect(consent.page.text).not.toContain('not verified');
  });
});
