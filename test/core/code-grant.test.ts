import { describe, expect, it } from 'vitest';
import { ADA, CALLBACK, json, setup } from '../helpers.js';

/**
 * The code exchange (RFC 6749 §4.1.3; docs/reference.md#authorization-code-grant), the token
 * response (RFC 6749 §5.1), client authentication (RFC 6749 §5.2) and lifetimes
 * (docs/reference.md#lifetimes).
 */
describe('authorization code exchange (RFC 6749 §4.1.3)', () => {
  it('issued → used: the access token grant has every field of the token response (RFC 6749 §5.1), with no-store headers', async () => {
    const t = await setup();
    const res = await t.exchange(await t.getCode({ scope: 'read write' }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['pragma']).toBe('no-cache');
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'info', 'refresh_token', 'scope', 'token_type']);
    expect(body).toMatchObject({
      token_type: 'bearer',
      expires_in: 2592000,
      scope: 'read write',
      info: { name: ADA.name, email: ADA.email, uuid: ADA.uuid },
    });
    expect(typeof body.access_token).toBe('string');
    expect(typeof body.refresh_token).toBe('string');
    expect(body.access_token).not.toBe(body.refresh_token);
    expect(Object.keys(body.info as object).sort()).toEqual(['email', 'name', 'uuid']);
  });

  it('parameters in the query string of the POST, as some clients send them, work too', async () => {
    const t = await setup();
    const code = await t.getCode();
    const query = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      client_id: t.client.clientId,
      client_secret: t.client.clientSecret,
      redirect_uri: CALLBACK,
    });
    const res = await t.server.token({ method: 'POST', url: `/v1/oauth/token?${query}`, headers: {} });
    expect(res.status).toBe(200);
  });

  it('HTTP Basic client authentication works (RFC 6749 §2.3.1)', async () => {
    const t = await setup();
    const code = await t.getCode();
    const basic = btoa(`${encodeURIComponent(t.client.clientId)}:${encodeURIComponent(t.client.clientSecret)}`);
    const res = await t.server.token(
      t.post('/v1/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: CALLBACK }, { authorization: `Basic ${basic}` }),
    );
    expect(res.status).toBe(200);
  });

  it('used: a second exchange of the same code is invalid_grant', async () => {
    const t = await setup();
    const code = await t.getCode();
    expect((await t.exchange(code)).status).toBe(200);
    const again = await t.exchange(code);
    expect(again.status).toBe(400);
    expect(json(again)).toEqual({
      error: 'invalid_grant',
      error_description: 'The grant is invalid, expired, revoked, does not match the redirection URI, or was issued to another client.',
    });
  });

  it('a replayed code revokes the tokens issued from it (RFC 6749 §4.1.2)', async () => {
    const t = await setup();
    const code = await t.getCode();
    const first = json(await t.exchange(code));
    await t.exchange(code);
    expect((await t.api('GET', first.access_token as string)).ok).toBe(false);
    expect((await t.refresh(first.refresh_token as string)).status).toBe(400);
  });

  it('expired: 10 minutes after issue the code is invalid_grant; one millisecond before it still works', async () => {
    const t = await setup();
    const late = await t.getCode();
    const early = await t.getCode();
    t.clock.advance(600_000 - 1);
    expect((await t.exchange(early)).status).toBe(200);
    t.clock.advance(1);
    const res = await t.exchange(late);
    expect(res.status).toBe(400);
    expect(json(res).error).toBe('invalid_grant');
  });

  it('revoked: a code whose authorization the user revoked is invalid_grant', async () => {
    const t = await setup();
    const code = await t.getCode();
    await t.server.revokeAccess({ accountUuid: ADA.uuid, clientId: t.client.clientId });
    expect(json(await t.exchange(code)).error).toBe('invalid_grant');
  });

  it('redirect_uri differing from the one of the authorization request: invalid_grant, and the code is not used up', async () => {
    const t = await setup();
    const code = await t.getCode();
    for (const redirect_uri of ['https://client.example/cb/', 'https://CLIENT.example/cb', 'https://client.example/cb?x=1']) {
      expect(json(await t.exchange(code, { redirect_uri })).error).toBe('invalid_grant');
    }
    expect((await t.exchange(code)).status).toBe(200);
  });

  it('a code issued to another client: invalid_grant, and the code is not used up', async () => {
    const t = await setup();
    const code = await t.getCode();
    const res = await t.exchange(code, { client_id: t.other.clientId, client_secret: t.other.clientSecret });
    expect(json(res).error).toBe('invalid_grant');
    expect((await t.exchange(code)).status).toBe(200);
  });

  it('an unknown code: invalid_grant', async () => {
    const t = await setup();
    expect(json(await t.exchange('not-a-code')).error).toBe('invalid_grant');
    expect(json(await t.exchange('x'.repeat(1000))).error).toBe('invalid_grant');
    expect(json(await t.exchange('x'.repeat(10_000))).error).toBe('invalid_request');
  });

  it('an access or refresh token used as a code: invalid_grant', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    expect(json(await t.exchange(tokens.access_token)).error).toBe('invalid_grant');
    expect(json(await t.exchange(tokens.refresh_token)).error).toBe('invalid_grant');
  });

  it('concurrent exchanges of one code: exactly one succeeds', async () => {
    const t = await setup();
    const code = await t.getCode();
    const results = await Promise.all(Array.from({ length: 20 }, () => t.exchange(code)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400 && json(r).error === 'invalid_grant')).toHaveLength(19);
  });
});

describe('client authentication at the token endpoint (RFC 6749 §5.2 invalid_client)', () => {
  const cases: Array<[string, (t: Awaited<ReturnType<typeof setup>>) => Record<string, string>]> = [
    ['unknown client', () => ({ client_id: 'unknown', client_secret: 'whatever' })],
    ['wrong client secret', (t) => ({ client_secret: `${t.client.clientSecret}x` })],
    ["another client's secret", (t) => ({ client_secret: t.other.clientSecret })],
    ['no client secret', () => ({ client_secret: '' })],
  ];
  it.each(cases)('%s: 401 invalid_client with the same description for each, and the code is not used up', async (_name, creds) => {
    const t = await setup();
    const code = await t.getCode();
    const res = await t.exchange(code, creds(t));
    expect(res.status).toBe(401);
    expect(json(res)).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed.' });
    expect(res.headers['cache-control']).toBe('no-store');
    expect((await t.exchange(code)).status).toBe(200);
  });

  it('a client_id with a NUL byte is invalid_client like any unknown client', async () => {
    const t = await setup();
    const res = await t.exchange('x', { client_id: 'a\u0000b', client_secret: 's' });
    expect(res.status).toBe(401);
    expect(json(res).error).toBe('invalid_client');
  });

  it('no client authentication included at all: invalid_client', async () => {
    const t = await setup();
    const code = await t.getCode();
    const res = await t.server.token(t.post('/v1/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: CALLBACK }));
    expect(res.status).toBe(401);
    expect(json(res).error).toBe('invalid_client');
  });

  it('unsupported authentication method (malformed Basic): invalid_client with a Basic challenge', async () => {
    const t = await setup();
    const code = await t.getCode();
    for (const authorization of ['Basic !!!', 'Basic', `Basic ${btoa('no-colon')}`, `Basic ${btoa('a:%zz')}`]) {
      const res = await t.server.token(
        t.post('/v1/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: CALLBACK }, { authorization }),
      );
      expect(res.status).toBe(401);
      expect(json(res).error).toBe('invalid_client');
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/);
    }
  });

  it('wrong secret through HTTP Basic: 401 with WWW-Authenticate: Basic', async () => {
    const t = await setup();
    const res = await t.server.token(
      t.post(
        '/v1/oauth/token',
        { grant_type: 'authorization_code', code: 'x', redirect_uri: CALLBACK },
        { authorization: `Basic ${btoa(`${t.client.clientId}:nope`)}` },
      ),
    );
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="authgate"');
  });

  it('two authentication methods at once: invalid_request', async () => {
    const t = await setup();
    const code = await t.getCode();
    const basic = `Basic ${btoa(`${t.client.clientId}:${t.client.clientSecret}`)}`;
    const res = await t.server.token(
      t.post(
        '/v1/oauth/token',
        { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_secret: t.client.clientSecret },
        { authorization: basic },
      ),
    );
    expect(res.status).toBe(400);
    expect(json(res).error).toBe('invalid_request');
  });

  it('client checks come before grant checks: bad credentials with a bad code is invalid_client', async () => {
    const t = await setup();
    const res = await t.exchange('bogus', { client_secret: 'wrong' });
    expect(json(res).error).toBe('invalid_client');
  });
});

describe('limits', () => {
  it('access token lifetime is 30 days after issue', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    expect(tokens.expires_in).toBe(2_592_000);
    t.clock.advance(2_592_000_000 - 1);
    expect((await t.api('GET', tokens.access_token)).ok).toBe(true);
    t.clock.advance(1);
    const res = await t.api('GET', tokens.access_token);
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.response.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('lifetimes are options: a 60 s code and a 120 s access token', async () => {
    const t = await setup({ lifetimes: { code: 60, accessToken: 120 } });
    const code = await t.getCode();
    t.clock.advance(60_000);
    expect(json(await t.exchange(code)).error).toBe('invalid_grant');
    const tokens = await t.tokens();
    expect(tokens.expires_in).toBe(120);
    t.clock.advance(120_000);
    expect((await t.api('GET', tokens.access_token)).ok).toBe(false);
  });

  it('codes and tokens carry 256 bits: 43 base64url characters, all distinct', async () => {
    const t = await setup();
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const tokens = await t.tokens();
      for (const value of [tokens.access_token, tokens.refresh_token]) {
        expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
        seen.add(value);
      }
    }
    expect(seen.size).toBe(40);
  });
});
