/**
 * The three adapters side by side: odd requests (every method on every route, bodies on methods
 * that take none, bodies over the limit, every kind of content type) are sent to an Express, a
 * Fastify and a Hono app at once, and Fastify and Hono must answer exactly what Express answers:
 * status, the headers that carry meaning, and the body. The core decides all of these; an adapter
 * that lets its framework answer instead (a 415, a 404, a 413 on a route that reads no body)
 * shows up here. `requireToken` is compared the same way for malformed Authorization headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORM, FRAMEWORKS, startApp, type Reply, type RequestOptions, type TestApp } from './app.js';

/** Headers whose value is the core's answer (date, connection, content-length etc. are the framework's). */
const MEANINGFUL = [
  'content-type', 'cache-control', 'pragma', 'allow', 'www-authenticate', 'location',
  'x-frame-options', 'content-security-policy', 'referrer-policy', 'x-content-type-options',
];

function shape(reply: Reply) {
  const headers: Record<string, string | null> = {};
  for (const name of MEANINGFUL) headers[name] = reply.headers.get(name);
  return { status: reply.status, headers, setCookie: reply.headers.getSetCookie().length, body: reply.text };
}

const PATHS = ['/v1/oauth/authorize', '/v1/oauth/authorize/resume', '/v1/oauth/authorize/decision', '/v1/oauth/token', '/v1/oauth/revoke'];
const FORM_PATHS = PATHS.slice(2);
const BIG = `grant_type=refresh_token&x=${'a'.repeat(70 * 1024)}`;
const bytes = (text: string) => new TextEncoder().encode(text);

const cases: Array<[name: string, method: string, path: string, options: RequestOptions]> = [];
for (const path of PATHS) {
  for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) cases.push([`${method} without a body`, method, path, {}]);
  for (const method of ['PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
    cases.push([`${method} with a form`, method, path, { headers: { 'content-type': FORM }, body: 'token=abc&grant_type=refresh_token' }]);
  }
  for (const method of ['POST', 'PUT', 'DELETE']) cases.push([`${method} with a form over the limit`, method, path, { headers: { 'content-type': FORM }, body: BIG }]);
}
const CONTENT_TYPES: Array<[string, string | undefined]> = [
  ['no content type', undefined],
  ['an empty content type', ''],
  ['a content type without a slash', 'form'],
  ['a malformed content type', 'application/x-www-form-urlencoded;;=;'],
  ['text/plain', 'text/plain'],
  ['application/json', 'application/json'],
  ['multipart/form-data without a boundary', 'multipart/form-data'],
  ['a form with a latin1 charset', `${FORM}; charset=iso-8859-1`],
  ['a form in capitals', 'APPLICATION/X-WWW-FORM-URLENCODED'],
];
for (const path of FORM_PATHS) {
  for (const [name, type] of CONTENT_TYPES) {
    const headers: Record<string, string> = type === undefined ? {} : { 'content-type': type };
    cases.push([`POST with ${name}`, 'POST', `${path}?token=q`, { headers, body: bytes('token=abc&grant_type=refresh_token&refresh_token=abc') }]);
    cases.push([`POST with ${name} and an empty body`, 'POST', `${path}?token=q`, { headers, body: bytes('') }]);
    cases.push([`POST with ${name} and a body of JSON`, 'POST', path, { headers, body: bytes('{"token":"abc"') }]);
  }
}
for (const authorization of ['Bearer', 'Bearer ', 'Bearer  abc', 'Bearer abc def', 'bearer abc', 'BEARER abc', 'Basic YTpi', 'Bearer abc=', 'Bearer %41', `Bearer ${'a'.repeat(5000)}`, 'Token abc']) {
  for (const [method, path] of [['GET', '/v2/account'], ['HEAD', '/v2/account'], ['POST', '/v2/things']]) {
    cases.push([`requireToken with ${JSON.stringify(authorization.slice(0, 20))}`, method!, path!, { headers: { authorization } }]);
  }
}
cases.push(['requireToken with the token in the query too', 'GET', '/v2/account?access_token=abc', { headers: { authorization: 'Bearer abc' } }]);

describe('Fastify and Hono answer odd requests exactly as Express does', () => {
  const apps = new Map<string, TestApp>();
  beforeAll(async () => {
    for (const framework of FRAMEWORKS) apps.set(framework, await startApp({ framework }));
  });
  afterAll(async () => {
    for (const app of apps.values()) {
      try {
        app.checkHealthy();
      } finally {
        await app.close();
      }
    }
  });

  it('the apps under test really are Express, Fastify and Hono (their own 404s differ)', async () => {
    const notFound = await Promise.all(FRAMEWORKS.map(async (framework) => (await apps.get(framework)!.get('/nowhere')).text));
    expect(notFound[0]).toMatch(/Cannot GET \/nowhere/);
    expect(notFound[1]).toMatch(/Route GET:\/nowhere not found/);
    expect(notFound[2]).toBe('404 Not Found');
  });

  it.each(cases)('%s: %s %s', async (_name, method, path, options) => {
    const [expected, ...others] = await Promise.all(FRAMEWORKS.map(async (framework) => {
      const body = options.body instanceof Uint8Array ? options.body.slice() : options.body;
      return shape(await apps.get(framework)!.request(method, path, { ...options, ...(body !== undefined && { body }) }));
    }));
    expect(expected!.status).toBeLessThan(500);
    for (const [i, actual] of others.entries()) expect(actual, FRAMEWORKS[i + 1]).toEqual(expected);
  });

  /** The same raw request (a header repeated on its own line) to the three apps, answers compared. */
  async function compareRaw(method: string, path: string, headers: Array<[string, string]> | ((app: TestApp) => Array<[string, string]>), body = '') {
    const [expected, ...others] = await Promise.all(FRAMEWORKS.map(async (framework) => {
      const app = apps.get(framework)!;
      const reply = await app.rawRequest(method, path, typeof headers === 'function' ? headers(app) : headers, body);
      const meaningful: Record<string, unknown> = {};
      for (const name of MEANINGFUL) meaningful[name] = reply.headers[name] ?? null;
      return { status: reply.status, headers: meaningful, body: reply.text };
    }));
    expect(expected!.status).toBeLessThan(500);
    for (const [i, actual] of others.entries()) expect(actual, FRAMEWORKS[i + 1]).toEqual(expected);
  }

  it('two Cookie lines are joined as one cookie list everywhere', async () => {
    await compareRaw('POST', '/v1/oauth/authorize/decision', [['content-type', FORM], ['cookie', 'sid=s1'], ['cookie', 'authgate_csrf=x']], 'decision=approve&csrf=x');
  });

  // Node keeps repeated Content-Type and Authorization lines as arrays, Fetch (Hono) joins them
  // with ", ": the core refuses both shapes the same way (invalid_request), so every framework
  // answers alike.
  it('two Content-Type lines (form first): the same answer everywhere', async () => {
    await compareRaw('POST', '/v1/oauth/revoke', [['content-type', FORM], ['content-type', 'text/plain']], 'token=abc');
  });
  it('two Authorization lines at the token endpoint, wrong Basic credentials first: the same answer everywhere', async () => {
    const basic = (app: TestApp) => `Basic ${Buffer.from(`${app.client.clientId}:${encodeURIComponent(app.client.clientSecret)}`).toString('base64')}`;
    await compareRaw('POST', '/v1/oauth/token', (app) => [['content-type', FORM], ['authorization', 'Basic eDp5'], ['authorization', basic(app)]], 'grant_type=refresh_token&refresh_token=abc');
  });
  it('two Authorization lines at the resource API: the same answer everywhere', async () => {
    await compareRaw('GET', '/v2/account', [['authorization', 'Bearer abc'], ['authorization', 'Bearer def']]);
  });
});
