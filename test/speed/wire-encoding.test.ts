/**
 * Token responses and redirects are written without `JSON.stringify` and `URLSearchParams` where
 * nothing needs escaping, for speed (see BENCHMARKS.md); these pin the output to what the
 * references write.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonString } from '../../src/http.js';
import { formEncode, redirectTo } from '../../src/checks/redirect-uri.js';
import { json, setup } from '../helpers.js';
import type { Account } from '../../src/index.js';

describe('token responses written as JSON text', () => {
  it('a string literal is exactly what JSON.stringify writes, for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (value) => {
        expect(jsonString(value)).toBe(JSON.stringify(value));
      }),
      { seed: 11, numRuns: 3_000 },
    );
    for (const value of ['"', '\\', '\u0000', '\u001f', '\u007f', '\u2028', '\uD800', 'é', '</script>'])
      expect(jsonString(value)).toBe(JSON.stringify(value));
  });

  it("the token response's info carries any account name and email intact, with or without the host info hook", async () => {
    const account = {
      uuid: 'c0ffee00c0ffee00c0ffee00c0ffee00',
      name: 'Ada "the \\ first" \u2028 ☃ \uD83D\uDE00',
      email: 'ada+"x"@example.com',
    };
    for (const options of [{}, { info: () => ({ plan: 'pro "x"' }) }]) {
      const t = await setup(options);
      const cookie = t.sessions.signIn(account);
      const res = await t.exchange(await t.getCode({}, cookie));
      expect(res.status).toBe(200);
      expect(res.headers).toEqual({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', pragma: 'no-cache' });
      const body = json(res);
      expect(body.info).toEqual({
        ...('info' in options ? { plan: 'pro "x"' } : {}),
        name: account.name,
        email: account.email,
        uuid: account.uuid,
      });
      expect(Object.keys(body)).toEqual(['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope', 'info']);
      expect(body).toMatchObject({ token_type: 'bearer', expires_in: t.server.options.lifetimes.accessToken, scope: 'read' });
    }
  });
});

describe('redirect parameters', () => {
  it('are encoded exactly as URLSearchParams encodes them, for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }), (name, value) => {
        expect(`${formEncode(name)}=${formEncode(value)}`).toBe(new URLSearchParams([[name, value]]).toString());
      }),
      { seed: 13, numRuns: 3_000 },
    );
    expect(redirectTo('https://a.example/cb?x=1', { code: 'c_A-b.9*', state: 'a b&c=d#e', iss: undefined }, 'query')).toBe(
      'https://a.example/cb?x=1&code=c_A-b.9*&state=a+b%26c%3Dd%23e',
    );
  });
});

describe('exactly what JSON.stringify and URLSearchParams gave, for odd input from JavaScript hosts', () => {
  it('an account with a missing email or a null name gives the same token response as before', async () => {
    for (const account of [
      { uuid: 'c0ffee00c0ffee00c0ffee00c0ffee00', name: 'Ada', email: undefined },
      { uuid: 'c0ffee00c0ffee00c0ffee00c0ffee00', name: null, email: 'ada@example.com' },
      { uuid: 'c0ffee00c0ffee00c0ffee00c0ffee00', name: 42, email: 'ada@example.com' },
    ]) {
      const t = await setup();
      const cookie = t.sessions.signIn(account as unknown as Account);
      const res = await t.exchange(await t.getCode({}, cookie));
      const body = json(res);
      const expected = JSON.parse(JSON.stringify({ ...body, info: { name: account.name, email: account.email, uuid: account.uuid } }));
      expect(res.body).toBe(JSON.stringify(expected));
    }
  });

  it('redirect parameters come from the object itself, never from a polluted prototype', () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.injected = 'x';
    try {
      expect(redirectTo('https://a.example/cb', { code: 'c' }, 'query')).toBe('https://a.example/cb?code=c');
    } finally {
      delete proto.injected;
    }
  });
});
