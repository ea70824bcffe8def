import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { handleDecisionForm, handleResume, type OAuthRequest, type OAuthResponse } from '../../src/index.js';
import { setup } from '../helpers.js';

/**
 * SECURITY.md I-01..I-12, T-05: hostile input at every endpoint. Whatever arrives, the answer is a
 * specified 4xx (or a success), never a 5xx, a throw, a hang or an unescaped echo.
 * CI runs a fixed seed and a bounded number of runs; run many more locally with
 *   FUZZ_RUNS=20000 FUZZ_SEED=$RANDOM npx vitest run test/security/fuzz.test.ts
 */
const runs = Number(process.env.FUZZ_RUNS ?? 300);
const seed = Number(process.env.FUZZ_SEED ?? 20261122);
const settings = { numRuns: runs, seed, endOnFailure: true };

const ERROR_CODES = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_token',
  'insufficient_scope',
]);
// RFC 6749 §5.2: error and error_description characters.
const SAFE_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

const names = fc.constantFrom(
  'grant_type',
  'code',
  'redirect_uri',
  'client_id',
  'client_secret',
  'refresh_token',
  'scope',
  'code_verifier',
  'token',
  'token_type_hint',
  'state',
  'prompt',
  'response_type',
  'max_auth_age',
  'i',
  'code_challenge',
  'code_challenge_method',
  'interaction',
  'csrf',
  'decision',
  '__proto__',
  'constructor',
  'a[b]',
  'x',
);
const nasty = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.constantFrom(
    'authorization_code',
    'refresh_token',
    'read write',
    'READ',
    '%',
    '%G1',
    '%E0%A4%A',
    '%C0%AF',
    '%ED%A0%80',
    '%FF',
    '%00',
    '\r\nSet-Cookie: x=1',
    '<script>alert(1)</script>',
    'https://client.example/cb',
    'none login',
    '-1',
    '1e3',
    'S256',
    'plain',
  ),
  fc.string({ maxLength: 3000 }),
);
// Each value either properly encoded, or raw (mis-encoded `%` sequences reach the parser as sent).
const query = fc
  .array(fc.tuple(names, nasty, fc.boolean()), { maxLength: 8 })
  .map((pairs) =>
    pairs.map(([k, v, encode]) => `${encodeURIComponent(k)}=${encode ? encodeURIComponent(v) : v.replace(/[&#\s]/g, '')}`).join('&'),
  );
const rawBody = fc.oneof(
  query,
  fc.string({ unit: 'binary', maxLength: 2000 }),
  fc.uint8Array({ maxLength: 500 }).map((b) => new TextDecoder().decode(b)),
);
const contentType = fc.constantFrom(
  'application/x-www-form-urlencoded',
  'APPLICATION/X-WWW-FORM-URLENCODED; charset=utf-8',
  'application/json',
  'multipart/form-data; boundary=x',
  'text/plain',
  '',
);
const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH', 'get', 'BREW');
const authorization = fc.oneof(
  fc.constant(undefined),
  fc.string({ maxLength: 200 }),
  fc.string({ maxLength: 100 }).map((s) => `Basic ${s}`),
  fc.string({ maxLength: 100 }).map((s) => `Basic ${btoa(unescape(encodeURIComponent(s)))}`),
  fc.string({ maxLength: 100 }).map((s) => `Bearer ${s}`),
  fc.array(fc.string({ maxLength: 50 }), { minLength: 2, maxLength: 3 }),
);
const request = fc
  .record({
    method,
    query,
    body: fc.option(rawBody, { nil: undefined }),
    type: contentType,
    authorization,
    cookie: fc.option(fc.string({ maxLength: 100 }), { nil: undefined }),
  })
  .map(
    ({ method, query, body, type, authorization, cookie }): OAuthRequest => ({
      method,
      url: `/v1/oauth/x?${query}`,
      headers: { 'content-type': type, ...(authorization !== undefined && { authorization }), ...(cookie !== undefined && { cookie }) },
      ...(body !== undefined && { body }),
    }),
  );

function checkJson(res: OAuthResponse, allowed: number[]) {
  expect(allowed).toContain(res.status);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  if ((res.status >= 400 && res.status !== 401) || body.error !== undefined) {
    if (body.error !== undefined) {
      expect(ERROR_CODES).toContain(body.error);
      expect(String(body.error_description ?? '')).toMatch(SAFE_TEXT);
    }
  }
  for (const value of Object.values(res.headers)) expect(value).not.toMatch(/[\r\n]/);
}

describe(`hostile input (fast-check, ${runs} runs, seed ${seed})`, () => {
  it('token endpoint: 200/400/401/405 with a known error code, never a 5xx', async () => {
    const t = await setup();
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        checkJson(await t.server.token(req), [200, 400, 401, 405]);
      }),
      settings,
    );
  });

  it('revocation endpoint: 200/400/401/405, never a 5xx', async () => {
    const t = await setup();
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        checkJson(await t.server.revoke(req), [200, 400, 401, 405]);
      }),
      settings,
    );
  });

  it('resource check: 200/400/401/403, challenges carry no request data', async () => {
    const t = await setup();
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        const result = await t.server.authenticate(req);
        if (result.ok) return;
        checkJson(result.response, [400, 401, 403]);
        expect(result.response.headers['www-authenticate']).toMatch(
          /^Bearer realm="authgate"(, error="[a-z_]+", error_description="[^"]*"(, scope="read write")?)?$/,
        );
      }),
      settings,
    );
  });

  it('authorization endpoint: an error page (400, escaped) or a redirect to the registered callback only', async () => {
    const t = await setup();
    const withClient = fc.tuple(request, fc.boolean(), fc.boolean()).map(([req, known, goodRedirect]) => ({
      ...req,
      url: `${req.url}&client_id=${known ? t.client.clientId : 'zz'}${goodRedirect ? `&redirect_uri=${encodeURIComponent('https://client.example/cb')}` : ''}`,
      headers: { ...req.headers, cookie: t.ada },
    }));
    await fc.assert(
      fc.asyncProperty(fc.oneof(request, withClient), async (req) => {
        const d = await t.server.authorize(req);
        if (d.type === 'error') {
          expect(d.status).toBe(400);
          expect(d.description).not.toMatch(/[<>]/);
        } else if (d.type === 'redirect') {
          expect(d.location.startsWith('https://client.example/cb?') || d.location.startsWith('https://client.example/cb#')).toBe(true);
          expect(d.location).not.toMatch(/[\r\n\s]/);
        }
      }),
      settings,
    );
  });

  it('interaction steps: resume and the decision form answer with an error page for garbage, never throw', async () => {
    const t = await setup();
    await fc.assert(
      fc.asyncProperty(request, fc.string({ maxLength: 300 }), async (req, id) => {
        for (const d of [
          await handleResume(t.server, req),
          await handleDecisionForm(t.server, req),
          await t.server.approve(id, req),
          await t.server.deny(id, req),
        ]) {
          expect(d.type).toBe('error');
          if (d.type === 'error') expect([400, 403]).toContain(d.status);
        }
      }),
      { ...settings, numRuns: Math.ceil(runs / 2) },
    );
  });

  it('prototype pollution through parameter names changes nothing', async () => {
    const t = await setup();
    await t.server.token(t.post('/v1/oauth/token?__proto__[polluted]=1', '__proto__[polluted]=1&constructor[prototype][polluted]=1'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
