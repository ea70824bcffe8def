/**
 * Errors of POST /v1/oauth/token over HTTP (RFC 6749 §5.2; docs/reference.md#token-endpoint),
 * client authentication (RFC 6749 §2.3.1), and the adapter's own body handling (size limit, content
 * types, malformed encodings).
 */
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { CALLBACK, FORM, expectJsonError, expectNoStoreJson, FRAMEWORKS, useApp, type TokenBody } from './app.js';

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe.each(FRAMEWORKS)('%s: token endpoint, invalid_grant', (framework) => {
  const app = useApp({ framework });

  it('a reused code → 400 invalid_grant, and the tokens of its first use are revoked', async () => {
    const { getCode, exchange, api } = app();
    const code = await getCode();
    const first = await exchange(code);
    expect(first.status).toBe(200);
    const { access_token } = first.json<TokenBody>();

    const second = await exchange(code);
    expectJsonError(second, 400, 'invalid_grant');
    expectNoStoreJson(second);
    expect(second.json<{ error_description: string }>().error_description).toMatch(/invalid, expired, revoked/);
    expect((await api('GET', '/v2/account', access_token)).status).toBe(401);
  });

  it('a wrong redirect_uri → invalid_grant, and the code is not used up', async () => {
    const { getCode, exchange } = app();
    const code = await getCode();
    for (const redirectUri of ['https://client.example/cb/', 'https://client.example/CB', 'https://other.example/cb']) {
      expectJsonError(await exchange(code, { redirect_uri: redirectUri }), 400, 'invalid_grant');
    }
    expect((await exchange(code)).status).toBe(200);
  });

  it('a code issued to another client → invalid_grant', async () => {
    const { getCode, exchange, other } = app();
    const code = await getCode();
    const reply = await exchange(code, { client_id: other.clientId, client_secret: other.clientSecret, redirect_uri: other.redirectUri });
    expectJsonError(reply, 400, 'invalid_grant');
  });

  it('an expired code (10 minutes after issue) → invalid_grant', async () => {
    const { getCode, exchange, clock } = app();
    const code = await getCode();
    clock.advance(600_000);
    const reply = await exchange(code);
    expectJsonError(reply, 400, 'invalid_grant');
    expectNoStoreJson(reply);
  });

  it('a code 1 ms before its expiry still works', async () => {
    const { getCode, exchange, clock } = app();
    const code = await getCode();
    clock.advance(599_999);
    expect((await exchange(code)).status).toBe(200);
  });

  it('an unknown code → invalid_grant', async () => {
    const { exchange } = app();
    expectJsonError(await exchange('A'.repeat(43)), 400, 'invalid_grant');
  });

  it('a used refresh token → invalid_grant', async () => {
    const { tokens, postForm } = app();
    const { refresh_token } = await tokens();
    expect((await postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token })).status).toBe(200);
    expectJsonError(await postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token }), 400, 'invalid_grant');
  });
});

describe.each(FRAMEWORKS)('%s: token endpoint, client authentication', (framework) => {
  const app = useApp({ framework });

  it('a wrong client secret → 401 invalid_client (no Basic challenge when Basic was not used), code not used up', async () => {
    const { getCode, exchange } = app();
    const code = await getCode();
    const reply = await exchange(code, { client_secret: 'wrong-secret' });
    expectJsonError(reply, 401, 'invalid_client');
    expectNoStoreJson(reply);
    expect(reply.headers.get('www-authenticate')).toBeNull();
    expect((await exchange(code)).status).toBe(200);
  });

  it('an unknown client → 401 invalid_client, same body as a wrong secret', async () => {
    const { getCode, exchange } = app();
    const code = await getCode();
    const unknown = await exchange(code, { client_id: 'nobody', client_secret: 'x' });
    const wrong = await exchange(code, { client_secret: 'x' });
    expectJsonError(unknown, 401, 'invalid_client');
    expect(unknown.text).toBe(wrong.text);
  });

  it('no client authentication at all on a code exchange → 401 invalid_client', async () => {
    const { getCode, postForm } = app();
    const code = await getCode();
    const reply = await postForm('/v1/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: CALLBACK });
    expectJsonError(reply, 401, 'invalid_client');
  });

  it('HTTP Basic with a wrong secret → 401 invalid_client with WWW-Authenticate: Basic', async () => {
    const { getCode, postForm, client } = app();
    const code = await getCode();
    const reply = await postForm(
      '/v1/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: CALLBACK },
      {
        headers: { authorization: basic(client.clientId, 'wrong-secret') },
      },
    );
    expectJsonError(reply, 401, 'invalid_client');
    expectNoStoreJson(reply);
    expect(reply.headers.get('www-authenticate')).toMatch(/^Basic realm="[^"]+"$/);
  });

  it('malformed HTTP Basic → 401 invalid_client with a Basic challenge, never 500', async () => {
    const { getCode, postForm } = app();
    const code = await getCode();
    for (const authorization of [
      'Basic',
      'Basic !!!notbase64',
      `Basic ${Buffer.from('no-colon').toString('base64')}`,
      `Basic ${Buffer.from('%ZZ:%ZZ').toString('base64')}`,
    ]) {
      const reply = await postForm(
        '/v1/oauth/token',
        { grant_type: 'authorization_code', code, redirect_uri: CALLBACK },
        { headers: { authorization } },
      );
      expectJsonError(reply, 401, 'invalid_client');
      expect(reply.headers.get('www-authenticate')).toMatch(/^Basic /);
    }
  });

  it('HTTP Basic with the right credentials → 200 tokens', async () => {
    const { getCode, postForm, client } = app();
    const code = await getCode();
    const reply = await postForm(
      '/v1/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: CALLBACK },
      {
        headers: { authorization: basic(client.clientId, client.clientSecret) },
      },
    );
    expect(reply.status, reply.text).toBe(200);
    expectNoStoreJson(reply);
    expect(reply.json<TokenBody>().token_type).toBe('bearer');
  });

  it('HTTP Basic together with client_secret in the body → 400 invalid_request', async () => {
    const { getCode, postForm, client } = app();
    const code = await getCode();
    const reply = await postForm(
      '/v1/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_secret: client.clientSecret },
      {
        headers: { authorization: basic(client.clientId, client.clientSecret) },
      },
    );
    expectJsonError(reply, 400, 'invalid_request');
  });
});

describe.each(FRAMEWORKS)('%s: token endpoint, request syntax', (framework) => {
  const app = useApp({ framework });

  it('GET /v1/oauth/token → 405 JSON with Allow: POST', async () => {
    const { get } = app();
    const reply = await get('/v1/oauth/token?grant_type=authorization_code');
    expectJsonError(reply, 405, 'invalid_request');
    expectNoStoreJson(reply);
    expect(reply.headers.get('allow')).toBe('POST');
  });

  it('the same parameter in the query and in the body → 400 invalid_request (even with the same value)', async () => {
    const { getCode, request, codeParams } = app();
    const code = await getCode();
    const reply = await request('POST', `/v1/oauth/token?code=${encodeURIComponent(code)}`, {
      headers: { 'content-type': FORM },
      body: new URLSearchParams(codeParams(code)).toString(),
    });
    expectJsonError(reply, 400, 'invalid_request');
    expect(reply.json<{ error_description: string }>().error_description).toContain('code');
  });

  it('a parameter twice in the body → 400 invalid_request', async () => {
    const { getCode, postForm, codeParams } = app();
    const code = await getCode();
    const reply = await postForm('/v1/oauth/token', `${new URLSearchParams(codeParams(code))}&grant_type=authorization_code`);
    expectJsonError(reply, 400, 'invalid_request');
  });

  it('different parameters split between query and body are merged', async () => {
    const { getCode, request, client } = app();
    const code = await getCode();
    const query = new URLSearchParams({ grant_type: 'authorization_code', client_id: client.clientId, client_secret: client.clientSecret });
    const reply = await request('POST', `/v1/oauth/token?${query}`, {
      headers: { 'content-type': FORM },
      body: new URLSearchParams({ code, redirect_uri: CALLBACK }).toString(),
    });
    expect(reply.status, reply.text).toBe(200);
  });

  it('a JSON body (content-type application/json) → 400 invalid_request', async () => {
    const { getCode, request, codeParams } = app();
    const code = await getCode();
    const reply = await request('POST', '/v1/oauth/token', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(codeParams(code)),
    });
    expectJsonError(reply, 400, 'invalid_request');
    expectNoStoreJson(reply);
  });

  it('the form content type is matched case-insensitively and with a charset', async () => {
    const { getCode, request, codeParams } = app();
    const code = await getCode();
    const reply = await request('POST', '/v1/oauth/token', {
      headers: { 'content-type': 'Application/X-WWW-Form-Urlencoded; charset=UTF-8' },
      body: new URLSearchParams(codeParams(code)).toString(),
    });
    expect(reply.status, reply.text).toBe(200);
  });

  it('missing grant_type → 400 invalid_request', async () => {
    const { getCode, postForm, codeParams } = app();
    const { grant_type: _omit, ...rest } = codeParams(await getCode());
    expectJsonError(await postForm('/v1/oauth/token', rest), 400, 'invalid_request');
  });

  it.each(['password', 'client_credentials', 'AUTHORIZATION_CODE', 'constructor', '__proto__'])(
    'grant_type=%s → 400 unsupported_grant_type',
    async (grantType) => {
      const { postForm } = app();
      const reply = await postForm('/v1/oauth/token', { grant_type: grantType });
      expectJsonError(reply, 400, 'unsupported_grant_type');
      expectNoStoreJson(reply);
    },
  );

  it('an empty POST → 400 invalid_request', async () => {
    const { request } = app();
    expectJsonError(await request('POST', '/v1/oauth/token'), 400, 'invalid_request');
  });
});

describe.each(FRAMEWORKS)('%s: token endpoint, body handling by the adapter', (framework) => {
  const app = useApp({ framework });
  const LIMIT = 64 * 1024;

  it('a body over 64 KiB → 413 JSON error', async () => {
    const { postForm } = app();
    const reply = await postForm('/v1/oauth/token', `grant_type=authorization_code&x=${'a'.repeat(LIMIT)}`);
    expect(reply.status).toBe(413);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(typeof reply.json<{ error: string }>().error).toBe('string');
  });

  it('a declared Content-Length over 64 KiB → 413 at once, before the body is sent (nothing buffered)', async () => {
    // fetch always sends the body it declares, so this one request is written with node:http:
    // headers only, and the response must come while the body is still outstanding.
    const { base } = app();
    const { status, contentType, body } = await new Promise<{ status: number; contentType: string; body: string }>((resolve, reject) => {
      const req = httpRequest(
        `${base}/v1/oauth/token`,
        {
          method: 'POST',
          headers: { 'content-type': FORM, 'content-length': String(10 * 1024 * 1024) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), body: text });
            req.destroy();
          });
        },
      );
      req.on('error', reject);
      req.setTimeout(5_000, () => req.destroy(new Error('no answer before the body was sent')));
      req.write('grant_type=authorization_code');
      req.flushHeaders();
    });
    expect(status).toBe(413);
    expect(contentType).toMatch(/^application\/json/);
    expect(typeof (JSON.parse(body) as { error: string }).error).toBe('string');
  });

  it('a body of exactly 64 KiB is read and handled by the core (not 413)', async () => {
    const { postForm } = app();
    const prefix = 'x=';
    const body = prefix + 'a'.repeat(LIMIT - prefix.length);
    expect(Buffer.byteLength(body)).toBe(LIMIT);
    // No grant_type in it: the core's own answer, not the adapter's limit.
    expectJsonError(await postForm('/v1/oauth/token', body), 400, 'invalid_request');
  });

  it('a chunked body (no Content-Length) that grows over 64 KiB → 413 JSON error', async () => {
    const { request } = app();
    const chunk = new TextEncoder().encode('a'.repeat(16 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 8) return controller.close();
        sent++;
        controller.enqueue(chunk);
      },
    });
    const reply = await request('POST', '/v1/oauth/token', { headers: { 'content-type': FORM }, body: stream });
    expect(reply.status).toBe(413);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it.each([
    ['a lone %', 'grant_type=authorization_code&code=%&client_id=%&client_secret=x&redirect_uri=x'],
    ['%G1 and truncated escapes', 'grant_type=authorization_code&code=%G1%E0%A4%A&redirect_uri=%'],
    ['overlong UTF-8 and surrogates', 'grant_type=%C0%AF&code=%ED%A0%80'],
    ['%FF and NUL', 'grant_type=refresh_token&refresh_token=%FF%00'],
    ['a malformed name', '%=x&%%%=y&grant_type=authorization_code'],
    ['CR/LF', 'grant_type=refresh_token&refresh_token=a%0D%0Ab'],
  ])('a body with malformed percent-encoding (%s) → a 4xx JSON error, never 500', async (_name, body) => {
    const { postForm } = app();
    const reply = await postForm('/v1/oauth/token', body);
    expect(reply.status).toBeGreaterThanOrEqual(400);
    expect(reply.status).toBeLessThan(500);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(typeof reply.json<{ error: string }>().error).toBe('string');
  });

  it('malformed percent-encoding in the query string of the POST → a 4xx JSON error', async () => {
    const { request } = app();
    const reply = await request('POST', '/v1/oauth/token?grant_type=%&code=%E0%A4%A');
    expect(reply.status).toBeGreaterThanOrEqual(400);
    expect(reply.status).toBeLessThan(500);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('multipart and text bodies → 400 invalid_request', async () => {
    const { request } = app();
    expectJsonError(
      await request('POST', '/v1/oauth/token', { headers: { 'content-type': 'text/plain' }, body: 'grant_type=refresh_token' }),
      400,
      'invalid_request',
    );
    const form = new FormData();
    form.set('grant_type', 'refresh_token');
    const multipart = new Response(form);
    const reply = await request('POST', '/v1/oauth/token', {
      headers: { 'content-type': multipart.headers.get('content-type')! },
      body: await multipart.text(),
    });
    expectJsonError(reply, 400, 'invalid_request');
  });
});
