/**
 * The Authorization header at the token, revocation and introspection endpoints
 * (docs/reference.md#client-authentication) and at the resource API
 * (docs/reference.md#resource-check).
 * - One header whose value holds commas (Digest) is one header, not two: an unsupported scheme
 *   is `invalid_client` 401 (RFC 6749 §5.2), and at the resource API simply no bearer token (401
 *   without an error code, RFC 6750 §3.1). Only really repeated headers are `invalid_request`.
 * - HTTP Basic with an empty password is "no secret" for a public client (Go's
 *   golang.org/x/oauth2 sends `Basic base64(client_id:)`), and still `invalid_client` for a
 *   confidential one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectJsonError, FORM, FRAMEWORKS, useApp, type TestApp, type TokenBody } from './app.js';

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

const DIGEST =
  'Digest username="ada", realm="authgate", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/v1/oauth/token", response="6629fae49393a05397450978507c4ef1", qop=auth, nc=00000001, cnonce="0a4f113b"';
/** Single headers of schemes the endpoints do not support, commas and all. */
const UNSUPPORTED = [
  DIGEST,
  'Digest username="a, Basic b", realm="y"', // a comma and a scheme name inside a quoted string
  'Negotiate YIIBhgYGKwYBBQUCoIIBejCCAXagMDAuBgkqhkiC9xIBAgIGCSqGSIb3EgECAgYKKwYBBAGCNwICHgYKKwYBBAGCNwICCqKCAUAEggE8',
  'Token abc',
  'DPoP abc.def.ghi',
];
/** What Fetch (Hono) makes of a header sent twice: one value, joined with ", ". */
const JOINED = (app: TestApp) => [
  `Basic abc, ${basic(app.client.clientId, app.client.clientSecret)}`,
  `Bearer abc, ${basic(app.client.clientId, app.client.clientSecret)}`,
  `${basic(app.client.clientId, app.client.clientSecret)}, Basic eDp5`,
  `${basic(app.client.clientId, app.client.clientSecret)}, Negotiate`,
  `${DIGEST}, ${DIGEST}`,
];

const verifierPair = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

describe.each(FRAMEWORKS)('%s: one Authorization header with commas is one header', (framework) => {
  const app = useApp({ framework });

  const tokenForm = () => ({ grant_type: 'refresh_token', refresh_token: 'abc' });
  const aboutForm = () => ({ token: 'abc' });

  it('an unsupported scheme at the token endpoint → 401 invalid_client with a Basic challenge, the code not used up', async () => {
    const t = app();
    const code = await t.getCode();
    for (const authorization of UNSUPPORTED) {
      const reply = await t.exchange(code, { client_secret: '' }, { headers: { authorization } });
      expectJsonError(reply, 401, 'invalid_client');
      expect(reply.headers.get('www-authenticate'), authorization).toMatch(/^Basic realm="[^"]+"$/);
    }
    expect((await t.exchange(code)).status).toBe(200);
  });

  it('an unsupported scheme at revocation and introspection → 401 invalid_client; the token is not revoked', async () => {
    const t = app();
    const { access_token } = await t.tokens();
    for (const authorization of UNSUPPORTED) {
      expectJsonError(await t.postForm('/v1/oauth/revoke', { token: access_token }, { headers: { authorization } }), 401, 'invalid_client');
      expectJsonError(
        await t.postForm('/v1/oauth/introspect', { token: access_token }, { headers: { authorization } }),
        401,
        'invalid_client',
      );
    }
    expect((await t.api('GET', '/v2/account', access_token)).status).toBe(200);
    // A Bearer header at revocation, as some clients send the token: still no client authentication.
    expect(
      (await t.postForm('/v1/oauth/revoke', { token: access_token }, { headers: { authorization: `Bearer ${access_token}` } })).status,
    ).toBe(200);
    expect((await t.api('GET', '/v2/account', access_token)).status).toBe(401);
  });

  it('a header really sent twice (joined by Fetch, or two lines) → 400 invalid_request at every endpoint', async () => {
    const t = app();
    for (const authorization of JOINED(t)) {
      expectJsonError(await t.postForm('/v1/oauth/token', tokenForm(), { headers: { authorization } }), 400, 'invalid_request');
      expectJsonError(await t.postForm('/v1/oauth/revoke', aboutForm(), { headers: { authorization } }), 400, 'invalid_request');
      expectJsonError(await t.postForm('/v1/oauth/introspect', aboutForm(), { headers: { authorization } }), 400, 'invalid_request');
    }
    for (const path of ['/v1/oauth/token', '/v1/oauth/revoke', '/v1/oauth/introspect']) {
      const reply = await t.rawRequest(
        'POST',
        path,
        [
          ['content-type', FORM],
          ['authorization', DIGEST],
          ['authorization', DIGEST],
        ],
        'grant_type=refresh_token&refresh_token=abc&token=abc',
      );
      expect(reply.status, path).toBe(400);
      expect(JSON.parse(reply.text).error).toBe('invalid_request');
    }
  });

  it('the resource API: a Digest header is no bearer token (401, no error code); Bearer twice, joined, is 400', async () => {
    const t = app();
    const { access_token } = await t.tokens();
    for (const authorization of UNSUPPORTED) {
      const reply = await t.request('GET', '/v2/account', { headers: { authorization } });
      expect(reply.status, authorization).toBe(401);
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer realm="[^"]+"$/);
    }
    for (const authorization of [
      `Bearer ${access_token}, Bearer abc`,
      `Bearer ${access_token}, Basic eDp5`,
      `${DIGEST}, Bearer ${access_token}`,
    ]) {
      const reply = await t.request('GET', '/v2/account', { headers: { authorization } });
      expect(reply.status, authorization).toBe(400);
      expect(reply.headers.get('www-authenticate')).toContain('error="invalid_request"');
    }
    expect((await t.api('GET', '/v2/account', access_token)).status).toBe(200);
  });
});

describe.each(FRAMEWORKS)('%s: HTTP Basic with an empty password', (framework) => {
  const app = useApp({ framework });

  /** A public client with a loopback callback, and a PKCE code for it. */
  async function publicCode(t: TestApp) {
    const registered = await t.server.registerClient({ name: 'Go CLI', redirectUri: 'http://127.0.0.1/callback', public: true });
    const { verifier, challenge } = verifierPair();
    const redirectUri = 'http://127.0.0.1:5555/callback';
    const callback = await t.authorizeAndApprove({
      client_id: registered.clientId,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    return { clientId: registered.clientId, code: callback.searchParams.get('code')!, verifier, redirectUri };
  }

  it('a public client: code exchange with PKCE and refresh with Basic base64(client_id:)', async () => {
    const t = app();
    const { clientId, code, verifier, redirectUri } = await publicCode(t);
    const authorization = `Basic ${Buffer.from(`${clientId}:`).toString('base64')}`;
    const exchanged = await t.postForm(
      '/v1/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier },
      { headers: { authorization } },
    );
    expect(exchanged.status, exchanged.text).toBe(200);
    const tokens = exchanged.json<TokenBody>();
    const account = await t.api('GET', '/v2/account', tokens.access_token);
    expect(account.json<{ oauth: { clientId: string } }>().oauth.clientId).toBe(clientId);

    const refreshed = await t.postForm(
      '/v1/oauth/token',
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      { headers: { authorization } },
    );
    expect(refreshed.status, refreshed.text).toBe(200);
    expect((await t.api('GET', '/v2/account', refreshed.json<TokenBody>().access_token)).status).toBe(200);
  });

  it('a public client: the PKCE verifier is still required, and a non-empty password is still refused', async () => {
    const t = app();
    const { clientId, code, verifier, redirectUri } = await publicCode(t);
    const empty = `Basic ${Buffer.from(`${clientId}:`).toString('base64')}`;
    expectJsonError(
      await t.postForm(
        '/v1/oauth/token',
        { grant_type: 'authorization_code', code, redirect_uri: redirectUri },
        { headers: { authorization: empty } },
      ),
      400,
      'invalid_grant',
    );
    const withSecret = await t.postForm(
      '/v1/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier },
      { headers: { authorization: basic(clientId, 'x') } },
    );
    expectJsonError(withSecret, 401, 'invalid_client');
    expect(
      (
        await t.postForm(
          '/v1/oauth/token',
          { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier },
          { headers: { authorization: empty } },
        )
      ).status,
    ).toBe(200);
  });

  it('a confidential client with an empty Basic password → 401 invalid_client with a Basic challenge; the code is not used up', async () => {
    const t = app();
    const code = await t.getCode();
    const authorization = `Basic ${Buffer.from(`${t.client.clientId}:`).toString('base64')}`;
    const reply = await t.postForm(
      '/v1/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: t.codeParams(code).redirect_uri },
      { headers: { authorization } },
    );
    expectJsonError(reply, 401, 'invalid_client');
    expect(reply.headers.get('www-authenticate')).toMatch(/^Basic /);
    const { access_token, refresh_token } = (await t.exchange(code)).json<TokenBody>();
    expectJsonError(
      await t.postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token }, { headers: { authorization } }),
      401,
      'invalid_client',
    );
    expectJsonError(
      await t.postForm('/v1/oauth/introspect', { token: access_token }, { headers: { authorization } }),
      401,
      'invalid_client',
    );
  });
});
