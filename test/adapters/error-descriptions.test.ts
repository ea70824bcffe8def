/**
 * Over HTTP (docs/reference.md#conventions): every `error_description` an adapter sends (JSON
 * bodies, bearer challenges, error redirects) is in the RFC 6749 §5.2 character set, the adapters'
 * own body errors included. The sources are scanned in test/core/error-descriptions.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { FORM, FRAMEWORKS, useApp, type Reply } from './app.js';

const RFC6749_DESCRIPTION = /^[\x20-\x21\x23-\x5B\x5D-\x7E]*$/;

/** Every error_description a reply carries: JSON body, WWW-Authenticate, Location. */
function descriptions(reply: Reply): string[] {
  const out: string[] = [];
  if (/json/.test(reply.headers.get('content-type') ?? '') && reply.text) {
    const body = reply.json<{ error_description?: unknown }>();
    if (body.error_description !== undefined) out.push(String(body.error_description));
  }
  const challenge = /error_description="([^"]*)"/.exec(reply.headers.get('www-authenticate') ?? '');
  if (challenge) out.push(challenge[1]!);
  if (reply.location) {
    const url = new URL(reply.location, 'http://x');
    for (const params of [url.searchParams, new URLSearchParams(url.hash.slice(1))]) {
      const description = params.get('error_description');
      if (description !== null) out.push(description);
    }
  }
  return out;
}

describe.each(FRAMEWORKS)('%s: every error_description on the wire is ASCII', (framework) => {
  const app = useApp({ framework, server: { allowDynamicRegistration: true } });

  it('token, revocation, introspection, registration, the resource API and error redirects', async () => {
    const t = app();
    const replies: Reply[] = [
      await t.postForm('/v1/oauth/token', {}),
      await t.postForm('/v1/oauth/token', { grant_type: 'password' }),
      await t.postForm('/v1/oauth/token', 'grant_type=a&grant_type=b'),
      await t.postForm(
        '/v1/oauth/token',
        { grant_type: 'refresh_token', refresh_token: 'x' },
        { headers: { authorization: 'Digest realm="x", nonce="y"' } },
      ),
      await t.postForm(
        '/v1/oauth/token',
        { grant_type: 'refresh_token', refresh_token: 'x' },
        { headers: { authorization: 'Basic a, Basic b' } },
      ),
      await t.postForm('/v1/oauth/token', 'x'.repeat(70 * 1024)),
      await t.request('POST', '/v1/oauth/token', { headers: { 'content-type': 'text/plain' }, body: 'grant_type=x' }),
      await t.request('GET', '/v1/oauth/token'),
      await t.postForm('/v1/oauth/revoke', {}),
      await t.postForm('/v1/oauth/introspect', { token: 'x' }),
      await t.request('POST', '/v1/oauth/register', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['https://例え.example/cb'] }),
      }),
      await t.request('POST', '/v1/oauth/register', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['https://a.example/cb#f'] }),
      }),
      await t.request('POST', '/v1/oauth/register', { headers: { 'content-type': FORM }, body: 'x=1' }),
      await t.api('GET', '/v2/account'),
      await t.api('GET', '/v2/account', 'nope'),
      await t.request('GET', '/v2/account', { headers: { authorization: 'Bearer a b' } }),
      await t.request('GET', '/v2/account', { headers: { authorization: 'Bearer a, Bearer b' } }),
      await t.get(t.authorizeUrl({ response_type: 'bogus' })),
      await t.get(t.authorizeUrl({ prompt: 'bogus' })),
      await t.get(t.authorizeUrl({ max_auth_age: 'soon' })),
      await t.get(t.authorizeUrl({ prompt: 'none' })),
      await t.get(t.authorizeUrl({ code_challenge: 'short', code_challenge_method: 'S256' })),
    ];
    const all = replies.flatMap(descriptions);
    expect(all.length).toBeGreaterThanOrEqual(replies.length - 1);
    expect(all.filter((d) => !RFC6749_DESCRIPTION.test(d))).toEqual([]);
  });
});
