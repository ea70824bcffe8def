import { describe, expect, it } from 'vitest';
import { CALLBACK, json, setup } from '../helpers.js';

/** Every malformed request gets a specified OAuth error, never a 500 or a stack trace. */
describe('malformed token and revocation requests', () => {
  const TOKEN_PARAMS = ['grant_type', 'code', 'redirect_uri', 'client_id', 'client_secret'];

  it.each(TOKEN_PARAMS)('%s sent twice (query and body, same value): invalid_request, and the code is not used up', async (name) => {
    const t = await setup();
    const code = await t.getCode();
    const form: Record<string, string> = {
      grant_type: 'authorization_code',
      code,
      client_id: t.client.clientId,
      client_secret: t.client.clientSecret,
      redirect_uri: CALLBACK,
    };
    const res = await t.server.token({ ...t.post(`/v1/oauth/token?${name}=${encodeURIComponent(form[name]!)}`, form) });
    expect(res.status).toBe(400);
    expect(json(res).error).toBe('invalid_request');
    expect((await t.exchange(code)).status).toBe(200);
  });

  it('a parameter twice in the body alone: invalid_request', async () => {
    const t = await setup();
    const res = await t.server.token(t.post('/v1/oauth/token', 'grant_type=refresh_token&refresh_token=a&refresh_token=b'));
    expect(json(res).error).toBe('invalid_request');
  });

  it('missing grant_type: invalid_request; unknown grant_type: unsupported_grant_type', async () => {
    const t = await setup();
    expect(json(await t.server.token(t.post('/v1/oauth/token', { code: 'x' }))).error).toBe('invalid_request');
    for (const grant_type of ['password', 'client_credentials', 'AUTHORIZATION_CODE', '__proto__', 'constructor', 'toString']) {
      const res = await t.server.token(t.post('/v1/oauth/token', { grant_type }));
      expect(res.status).toBe(400);
      expect(json(res).error).toBe('unsupported_grant_type');
    }
  });

  it('missing code or redirect_uri: invalid_request', async () => {
    const t = await setup();
    const code = await t.getCode();
    const auth = { client_id: t.client.clientId, client_secret: t.client.clientSecret };
    expect(
      json(await t.server.token(t.post('/v1/oauth/token', { grant_type: 'authorization_code', redirect_uri: CALLBACK, ...auth }))).error,
    ).toBe('invalid_request');
    expect(json(await t.server.token(t.post('/v1/oauth/token', { grant_type: 'authorization_code', code, ...auth }))).error).toBe(
      'invalid_request',
    );
  });

  it('wrong method: 405 invalid_request with Allow: POST', async () => {
    const t = await setup();
    for (const method of ['GET', 'PUT', 'DELETE', 'OPTIONS']) {
      const res = await t.server.token({ method, url: '/v1/oauth/token?grant_type=refresh_token&refresh_token=x', headers: {} });
      expect(res.status).toBe(405);
      expect(res.headers['allow']).toBe('POST');
      expect(json(res).error).toBe('invalid_request');
    }
  });

  it.each([
    ['application/json', '{"grant_type":"refresh_token","refresh_token":"x"}'],
    ['text/plain', 'grant_type=refresh_token&refresh_token=x'],
    ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\nrefresh_token\r\n--x--'],
    ['', 'grant_type=refresh_token'],
  ])('a body of type %j: invalid_request', async (type, body) => {
    const t = await setup();
    const res = await t.server.token({ method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': type }, body });
    expect(res.status).toBe(400);
    expect(json(res).error).toBe('invalid_request');
  });

  it('the form content type is matched without regard to case or charset', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    const res = await t.server.token({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { 'content-type': 'Application/X-WWW-Form-URLEncoded; charset=UTF-8' },
      body: `grant_type=refresh_token&refresh_token=${tokens.refresh_token}`,
    });
    expect(res.status).toBe(200);
  });

  it.each([
    '%',
    '%G1',
    'grant_type=%E0%A4%A',
    '%C0%AF=%ED%A0%80',
    '%FF%00=x',
    'a=b&&&==&grant_type',
    '\u0000\u0001',
    'grant_type=authorization_code&code=%00',
  ])('mis-encoded body %j: a 4xx OAuth error', async (body) => {
    const t = await setup();
    const res = await t.server.token(t.post('/v1/oauth/token', body));
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(typeof json(res).error).toBe('string');
  });

  it('a form parsed by the host with nested objects (qs "extended") is invalid_request, never reaching storage', async () => {
    const t = await setup();
    const res = await t.server.token({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: { grant_type: 'authorization_code', client_id: { $ne: 'x' } },
    });
    expect(res.status).toBe(400);
    expect(json(res).error).toBe('invalid_request');
  });

  it('a form parsed by the host with arrays counts as a parameter sent twice', async () => {
    const t = await setup();
    const res = await t.server.token({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: { grant_type: ['refresh_token', 'refresh_token'] },
    });
    expect(json(res).error).toBe('invalid_request');
  });

  it('prototype-polluting parameter names are ignored and pollute nothing', async () => {
    const t = await setup();
    const res = await t.server.token(t.post('/v1/oauth/token', '__proto__[x]=1&constructor[prototype][y]=1&__proto__=z&grant_type=nope'));
    expect(json(res).error).toBe('unsupported_grant_type');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(({} as Record<string, unknown>).y).toBeUndefined();
  });

  it('error descriptions never echo the values sent', async () => {
    const t = await setup();
    const canary = 'CANARY-<script>-SECRET';
    const res = await t.server.token(
      t.post('/v1/oauth/token', { grant_type: canary, code: canary, client_id: canary, client_secret: canary }),
    );
    expect(res.body).not.toContain('CANARY');
    const res2 = await t.server.token(
      t.post('/v1/oauth/token', `${encodeURIComponent(canary)}=1&${encodeURIComponent(canary)}=2&grant_type=x`),
    );
    expect(res2.body).not.toContain('CANARY');
  });

  it('revocation: duplicated token is invalid_request; JSON body is invalid_request', async () => {
    const t = await setup();
    expect(json(await t.server.revoke(t.post('/v1/oauth/revoke', 'token=a&token=a'))).error).toBe('invalid_request');
    const res = await t.server.revoke({
      method: 'POST',
      url: '/v1/oauth/revoke',
      headers: { 'content-type': 'application/json' },
      body: '{"token":"a"}',
    });
    expect(json(res).error).toBe('invalid_request');
  });
});

describe('parameter bounds', () => {
  it.each(['client_id', 'client_secret', 'scope', 'grant_type', 'code'])(
    'an over-long %s is invalid_request naming the parameter',
    async (name) => {
      const t = await setup();
      const res = await t.server.token(t.post('/v1/oauth/token', { grant_type: 'authorization_code', [name]: 'x'.repeat(5000) }));
      expect(res.status).toBe(400);
      expect(json(res)).toEqual({ error: 'invalid_request', error_description: `The parameter '${name}' is malformed.` });
    },
  );

  it('with several over-long values, revocation and introspection name client_id, then client_secret, then token_type_hint', async () => {
    const t = await setup();
    const long = (n: number) => 'x'.repeat(n);
    const cases: [Record<string, string>, string][] = [
      [{ token: 'x', token_type_hint: long(101), client_id: long(513) }, 'client_id'],
      [{ token: 'x', token_type_hint: long(101), client_id: t.client.clientId, client_secret: long(513) }, 'client_secret'],
      [{ token: 'x', token_type_hint: long(101), client_id: t.client.clientId }, 'token_type_hint'],
    ];
    for (const [form, name] of cases) {
      for (const path of ['/v1/oauth/revoke', '/v1/oauth/introspect'] as const) {
        const request = t.post(path, form);
        const res = path === '/v1/oauth/revoke' ? await t.server.revoke(request) : await t.server.introspect(request);
        expect(json(res), `${path} ${name}`).toEqual({
          error: 'invalid_request',
          error_description: `The parameter '${name}' is malformed.`,
        });
      }
    }
  });
});
