/**
 * A host that mounted `express.urlencoded({ extended: true })` and `express.json()` before the
 * OAuth router (SECURITY.md I-03, I-04, I-06; Express only: the Fastify and Hono host setups are
 * in fastify-host.test.ts and hono-host.test.ts): the router must still work for normal forms,
 * and nested params (`client_id[$ne]=x`) or JSON bodies must be `invalid_request`, never a 500
 * and never reach storage as objects.
 */
import { describe, expect, it } from 'vitest';
import { CALLBACK, FORM, expectJsonError, expectNoStoreJson, useApp, type TokenBody } from './app.js';

describe('Express: host body parsers mounted before the router', () => {
  const app = useApp({ framework: 'express', hostParsers: true });

  it('the full code flow still works: consent decision form and token form parsed by the host', async () => {
    const { getCode, exchange } = app();
    const code = await getCode({ scope: 'read write' });
    const reply = await exchange(code);
    expect(reply.status, reply.text).toBe(200);
    expectNoStoreJson(reply);
    const body = reply.json<TokenBody>();
    expect(body.token_type).toBe('bearer');
    expect(body.scope).toBe('read write');
  });

  it('parameters in the query string of the POST still work', async () => {
    const { getCode, exchangeInQuery } = app();
    expect((await exchangeInQuery(await getCode())).status).toBe(200);
  });

  it('the CSRF check still holds when the host parsed the decision form', async () => {
    const { signIn, openConsent, decide } = app();
    const sid = signIn();
    const consent = await openConsent({}, sid);
    const reply = await decide(consent, 'approve', sid, { cookie: sid });
    expect(reply.status).toBe(403);
    expect(reply.location).toBeNull();
  });

  const cb = encodeURIComponent(CALLBACK);
  it.each([
    [
      'client_id[$ne]=x',
      (code: string) => `grant_type=authorization_code&code=${code}&client_id[$ne]=x&client_secret[$ne]=x&redirect_uri=${cb}`,
    ],
    [
      'code[$gt]=',
      (_code: string, id: string, secret: string) =>
        `grant_type=authorization_code&code[$gt]=&client_id=${id}&client_secret=${secret}&redirect_uri=${cb}`,
    ],
    [
      'code[]=a&code[]=b',
      (code: string, id: string, secret: string) =>
        `grant_type=authorization_code&code[]=${code}&code[]=x&client_id=${id}&client_secret=${secret}&redirect_uri=${cb}`,
    ],
    ['__proto__[x]=1', (code: string) => `__proto__[x]=1&constructor[prototype][y]=1&grant_type=authorization_code&code=${code}`],
  ])('nested params (%s) → 400 invalid_request, never 500', async (_name, makeBody) => {
    const { getCode, postForm, client, exchange } = app();
    const code = await getCode();
    const reply = await postForm('/v1/oauth/token', makeBody(code, client.clientId, encodeURIComponent(client.clientSecret)));
    expectJsonError(reply, 400, 'invalid_request');
    expectNoStoreJson(reply);
    expect(({} as Record<string, unknown>)['x']).toBeUndefined();
    expect(({} as Record<string, unknown>)['y']).toBeUndefined();
    // Nothing was redeemed by the malformed request.
    expect((await exchange(code)).status).toBe(200);
  });

  it('a JSON body (parsed by the host) → 400 invalid_request, and the code is not used up', async () => {
    const { getCode, request, codeParams, exchange } = app();
    const code = await getCode();
    const reply = await request('POST', '/v1/oauth/token', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(codeParams(code)),
    });
    expectJsonError(reply, 400, 'invalid_request');
    expectNoStoreJson(reply);
    expect((await exchange(code)).status).toBe(200);
  });

  it('a JSON body with nested objects → 400 invalid_request', async () => {
    const { request } = app();
    const reply = await request('POST', '/v1/oauth/token', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: { $ne: null } }),
    });
    expectJsonError(reply, 400, 'invalid_request');
  });

  it('a parameter twice in the form body (the host makes an array) → 400 invalid_request', async () => {
    const { getCode, postForm, codeParams } = app();
    const code = await getCode();
    const reply = await postForm('/v1/oauth/token', `${new URLSearchParams(codeParams(code))}&code=${code}`);
    expectJsonError(reply, 400, 'invalid_request');
  });

  it('the same parameter in query and host-parsed body → 400 invalid_request', async () => {
    const { getCode, request, codeParams } = app();
    const code = await getCode();
    const reply = await request('POST', `/v1/oauth/token?grant_type=authorization_code`, {
      headers: { 'content-type': FORM },
      body: new URLSearchParams(codeParams(code)).toString(),
    });
    expectJsonError(reply, 400, 'invalid_request');
  });

  it('revocation works with a host-parsed form; a nested token param → 400 invalid_request', async () => {
    const { tokens, postForm, api } = app();
    const { access_token } = await tokens();
    expectJsonError(await postForm('/v1/oauth/revoke', 'token[$ne]=x'), 400, 'invalid_request');
    expect((await api('GET', '/v2/account', access_token)).status).toBe(200);
    const reply = await postForm('/v1/oauth/revoke', { token: access_token });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({});
    expect((await api('GET', '/v2/account', access_token)).status).toBe(401);
  });

  it('malformed percent-encoding parsed by the host → a 4xx JSON error', async () => {
    const { postForm } = app();
    const reply = await postForm('/v1/oauth/token', 'grant_type=authorization_code&code=%E0%A4%A&client_id=%&client_secret=%G1');
    expect(reply.status).toBeGreaterThanOrEqual(400);
    expect(reply.status).toBeLessThan(500);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  });
});
