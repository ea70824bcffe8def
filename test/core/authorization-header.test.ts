/**
 * In the core: which `Authorization` values are two headers, and HTTP Basic with an empty password
 * (docs/reference.md#client-authentication).
 */
import { describe, expect, it } from 'vitest';
import { repeatedAuthorization } from '../../src/http.js';
import { json, setup } from '../helpers.js';

const request = (authorization: string | string[]) => ({ method: 'POST', url: '/', headers: { authorization } });

describe('repeatedAuthorization: only a second set of credentials after a comma means two headers', () => {
  it.each([
    'Basic abc',
    'Bearer abc',
    'Basic abc=',
    'Basic abc,',
    'Digest username="x", realm="y", nonce="z", qop=auth, nc=00000001',
    'Digest username="a, Basic b", realm="y"',
    'Digest username="a\\", Basic b", realm="y"',
    'Custom a = 1, b = "2"',
    'Custom a=1,b=2',
  ])('one: %s', (value) => {
    expect(repeatedAuthorization(request(value))).toBe(false);
    expect(repeatedAuthorization(request([value]))).toBe(false);
  });

  it.each([
    'Basic abc, Basic def',
    'Basic abc=, Basic def',
    'Basic abc,Basic def',
    'Bearer x, Basic y',
    'Basic abc, Negotiate',
    'Basic abc, , Bearer def',
    'Digest username="x", realm="y", Basic abc',
    'Digest username="a, b", Bearer c',
  ])('two: %s', (value) => {
    expect(repeatedAuthorization(request(value))).toBe(true);
  });

  it('two array values (Node, repeated lines) are two, whatever they hold', () => {
    expect(repeatedAuthorization(request(['Basic abc', 'Basic abc']))).toBe(true);
    expect(repeatedAuthorization({ method: 'GET', url: '/', headers: {} })).toBe(false);
  });
});

describe('client authentication in the core', () => {
  it('an unsupported scheme is 401 invalid_client with a Basic challenge; Bearer is no authentication at all', async () => {
    const t = await setup();
    const code = await t.getCode();
    const reply = await t.server.token(
      t.post(
        '/v1/oauth/token',
        { grant_type: 'authorization_code', code, redirect_uri: 'https://client.example/cb' },
        { authorization: 'Digest username="x", realm="y"' },
      ),
    );
    expect(reply.status).toBe(401);
    expect(json(reply).error).toBe('invalid_client');
    expect(reply.headers['www-authenticate']).toMatch(/^Basic realm=/);
    const bearer = await t.server.revoke(t.post('/v1/oauth/revoke', { token: 'x' }, { authorization: 'Bearer x' }));
    expect(bearer.status).toBe(200);
  });

  it('Basic with an empty password: a public client is authenticated, a confidential one is not', async () => {
    const t = await setup();
    const pub = await t.server.registerClient({ name: 'CLI', redirectUri: 'http://127.0.0.1/cb', public: true });
    const basic = (id: string) => ({ authorization: `Basic ${Buffer.from(`${id}:`).toString('base64')}` });
    // Introspection needs a confidential client: a public one with no secret is refused there.
    const asPublic = await t.server.introspect(t.post('/v1/oauth/introspect', { token: 'x' }, basic(pub.clientId)));
    expect(asPublic.status).toBe(401);
    const asConfidential = await t.server.revoke(t.post('/v1/oauth/revoke', { token: 'x' }, basic(t.client.clientId)));
    expect(asConfidential.status).toBe(401);
    expect(json(asConfidential).error).toBe('invalid_client');
    const publicRevokes = await t.server.revoke(t.post('/v1/oauth/revoke', { token: 'x' }, basic(pub.clientId)));
    expect(publicRevokes.status).toBe(200);
  });
});
