/**
 * Behind a reverse proxy that terminates TLS (docs/reference.md#behind-a-proxy): the browser
 * speaks https to the proxy, the proxy speaks http to the app. The interaction routes' cookies
 * (the consent page's CSRF cookie, the browser-binding cookie) must then carry `Secure`, and the
 * request URL the core sees must be the public, https one: from the framework's own proxy
 * setting (Express `trust proxy`, Fastify `trustProxy`) or the Hono and node adapters'
 * `trustProxy`, or from an https `issuer`. Without trust, the forwarding headers are anyone's to
 * send and change nothing.
 *
 * The proxy is a small node:https server with a self-signed certificate (test/fixtures/tls/),
 * forwarding over http to the app on loopback, adding `X-Forwarded-Proto`, `X-Forwarded-For`,
 * `X-Forwarded-Host` and `Forwarded` as proxies do.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADA, BROWSER_COOKIE, IN_PROCESS, setCookieValue, useApp, type Reply, type TestApp } from './app.js';

const tls = (name: string) => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));
const cert = tls('cert.pem');
const key = tls('key.pem');
/** A client that trusts the test certificate, and only it. */
const dispatcher = new Agent({ connect: { ca: cert } });

/** A TLS-terminating reverse proxy in front of `target` (`http://127.0.0.1:<port>`). */
async function startProxy(target: () => string): Promise<{ base: string; close(): Promise<void> }> {
  const proxy: HttpsServer = createHttpsServer({ key, cert }, (req, res) => {
    const client = req.socket.remoteAddress ?? '';
    const host = req.headers.host ?? '';
    const headers = { ...req.headers };
    // What nginx's `proxy_set_header` lines and RFC 7239 proxies add: the scheme is set, the
    // lists are appended to.
    headers['x-forwarded-proto'] = 'https';
    headers['x-forwarded-host'] = host;
    headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${headers['x-forwarded-for']}, ${client}` : client;
    const element = `for="${client}";proto=https;host="${host}"`;
    headers['forwarded'] = headers['forwarded'] ? `${headers['forwarded']}, ${element}` : element;
    const upstream = httpRequest(`${target()}${req.url}`, { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  return {
    base: `https://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    async close() {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}

/** A request through `base` (the proxy, over https), read in full as the suite's `Reply`. */
async function via(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
  const res = await undiciFetch(base + path, { method, headers, redirect: 'manual', dispatcher, ...(body !== undefined && { body }) });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers as unknown as Headers,
    text,
    location: res.headers.get('location'),
    json: <T>() => JSON.parse(text) as T,
  };
}

/** The attributes of the two cookies the consent page of a new browser sets. */
function consentCookies(page: Reply) {
  const csrf = setCookieValue(page.headers, 'authgate_csrf');
  const binding = setCookieValue(page.headers, BROWSER_COOKIE);
  expect(csrf, 'CSRF cookie').toBeDefined();
  expect(binding, 'binding cookie').toBeDefined();
  return { csrf: csrf!, binding: binding! };
}

const SECURE = /(^|;)\s*Secure\s*(;|$)/i;

/** Watch the core's `authorize`: the returned function lists the URLs of the requests it saw. */
function authorizeUrls(app: TestApp): () => string[] {
  const spy = vi.spyOn(app.server, 'authorize');
  return () => spy.mock.calls.map(([request]) => request.url);
}

describe.each(IN_PROCESS)('%s behind a TLS-terminating proxy that it trusts', (framework) => {
  const app = useApp({ framework, trustProxy: true });
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  beforeAll(async () => {
    proxy = await startProxy(() => app().base);
  });
  afterAll(() => proxy.close());

  it('the consent page and its cookies: Secure; the core sees the https URL; the flow completes through the proxy', async () => {
    const { signIn, authorizeUrl, readConsent, exchange } = app();
    const urls = authorizeUrls(app());
    const sid = signIn(ADA);
    const page = await via(proxy.base, 'GET', authorizeUrl(), { cookie: sid });
    const consent = await readConsent(page);
    const { csrf, binding } = consentCookies(page);
    expect(csrf.attributes).toMatch(SECURE);
    expect(binding.attributes).toMatch(SECURE);
    const { port } = new URL(proxy.base);
    expect(urls()).toEqual([`https://127.0.0.1:${port}${authorizeUrl()}`]);

    // The browser sends both back over https, and the decision is taken.
    const form = new URLSearchParams({ interaction: consent.interaction, csrf: consent.csrf, decision: 'approve' });
    const decided = await via(
      proxy.base,
      'POST',
      '/v1/oauth/authorize/decision',
      { cookie: `${sid}; ${consent.csrfCookie}; ${BROWSER_COOKIE}=${binding.value}`, 'content-type': 'application/x-www-form-urlencoded' },
      form.toString(),
    );
    expect(decided.status, decided.text).toBe(303);
    const code = new URL(decided.location!).searchParams.get('code')!;
    expect((await exchange(code)).status).toBe(200);
  });

  // SECURITY.md: with trust, only the right-most value counts, the one the proxy next to the app
  // appended; whatever stands before it came from the client (Express's own `req.protocol`
  // would believe the left-most one).
  it.each([
    ['https, http', 'http'],
    ['http, https', 'https'],
    ['https,http', 'http'],
    ['http,https', 'https'],
  ])('X-Forwarded-Proto "%s" from the trusted proxy: the right-most value counts (%s)', async (header, scheme) => {
    const { get, signIn, authorizeUrl, base } = app();
    const urls = authorizeUrls(app());
    const { csrf, binding } = consentCookies(await get(authorizeUrl(), signIn(ADA), { headers: { 'x-forwarded-proto': header } }));
    const secure = scheme === 'https';
    expect(SECURE.test(csrf.attributes), `CSRF cookie Secure: ${csrf.attributes}`).toBe(secure);
    expect(SECURE.test(binding.attributes), `binding cookie Secure: ${binding.attributes}`).toBe(secure);
    expect(urls()).toEqual([`${scheme}${base.slice('http'.length)}${authorizeUrl()}`]);
  });

  it('trusted, but reached directly over http without forwarding headers: no Secure', async () => {
    const { get, signIn, authorizeUrl } = app();
    const { csrf, binding } = consentCookies(await get(authorizeUrl(), signIn(ADA)));
    expect(csrf.attributes).not.toMatch(SECURE);
    expect(binding.attributes).not.toMatch(SECURE);
  });
});

describe.each(IN_PROCESS)('%s trusting no proxy (the default)', (framework) => {
  const app = useApp({ framework });

  it('direct http: no Secure, and the core sees the http URL', async () => {
    const { get, signIn, authorizeUrl, base } = app();
    const urls = authorizeUrls(app());
    const { csrf, binding } = consentCookies(await get(authorizeUrl(), signIn(ADA)));
    expect(csrf.attributes).not.toMatch(SECURE);
    expect(binding.attributes).not.toMatch(SECURE);
    expect(urls()).toEqual([`${base}${authorizeUrl()}`]);
  });

  it.each([
    ['X-Forwarded-Proto', { 'x-forwarded-proto': 'https' }],
    ['Forwarded', { forwarded: 'for=192.0.2.1;proto=https' }],
    ['both', { 'x-forwarded-proto': 'https', forwarded: 'proto=https', 'x-forwarded-host': 'evil.example' }],
  ])('forged %s on direct http: ignored (no Secure, the URL stays http)', async (_name, forged) => {
    const { get, signIn, authorizeUrl, base } = app();
    const urls = authorizeUrls(app());
    const { csrf, binding } = consentCookies(await get(authorizeUrl(), signIn(ADA), { headers: forged }));
    expect(csrf.attributes).not.toMatch(SECURE);
    expect(binding.attributes).not.toMatch(SECURE);
    expect(urls()).toEqual([`${base}${authorizeUrl()}`]);
  });
});

describe.each(IN_PROCESS)('%s with an https issuer, trusting no proxy', (framework) => {
  const app = useApp({ framework, server: { issuer: 'https://auth.example' } });

  it('the cookies are Secure even on a direct http request: the public URL is https', async () => {
    const { get, signIn, authorizeUrl } = app();
    const { csrf, binding } = consentCookies(await get(authorizeUrl(), signIn(ADA)));
    expect(csrf.attributes).toMatch(SECURE);
    expect(binding.attributes).toMatch(SECURE);
  });

  it('and on the sign-in redirect, the first to set the binding cookie', async () => {
    const { get, authorizeUrl } = app();
    const reply = await get(authorizeUrl());
    expect(reply.status).toBe(302);
    expect(setCookieValue(reply.headers, BROWSER_COOKIE)?.attributes).toMatch(SECURE);
  });
});
