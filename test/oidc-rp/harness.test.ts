/**
 * The relying-party harness (README.md beside this file), issue 24 ("Sign in with <platform>"):
 * - every relying party runs here (in CI always: a missing toolchain fails), discovers a provider
 *   and builds a code request with PKCE S256, nonce and state;
 * - the scripted browser and the report checks are tested on their own, failures included;
 * - every relying party signs in at authgate as an OpenID Provider (`startAuthgateOp`): code with
 *   PKCE and nonce, the ID token, userinfo, refresh with a new ID token, and for the JavaScript
 *   ones a silent sign-in with `id_token_hint`, RP-initiated logout (back at the post-logout
 *   redirect URI with the state) and a silent sign-in after it that must be `login_required`.
 * The harness was validated against a certified provider (node-oidc-provider) outside the repo:
 * every relying party passed every step; see README.md.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOAuthHandler } from '../../adapters/node/index.js';
import { sha256Base64url } from '../../src/crypto.js';
import { AuthorizationServer, generateSigningKey, MemoryStorage, type UserSession } from '../../src/index.js';
import { ADA } from '../fixtures.js';
import { cookieBrowser } from './browser.js';
import { authorizationRequestProblems, problems } from './checks.js';
import { type Browser, RP_STEPS, type RpConfig, type RpReport, rpsToTest, runRp } from './driver.js';

/** A node:http server on 127.0.0.1 answering with `handle`; its URL. */
async function serve(handle: Parameters<typeof createServer>[1]): Promise<{ url: string; server: Server }> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const client = { clientId: 'rp-harness', clientSecret: 'a-long-test-secret-for-the-rp-harness-0123456789' };
const rpUris = { redirectUri: 'http://127.0.0.1:1/callback', postLogoutRedirectUri: 'http://127.0.0.1:1/signed-out' };

describe('every relying party discovers a provider and builds its authorization request', () => {
  let provider: { url: string; server: Server };
  let config: RpConfig;
  beforeAll(async () => {
    // A discovery document and an empty JWKS: enough to reach the authorization request.
    provider = await serve((req, res) => {
      const issuer = config.issuer;
      const body =
        req.url === '/.well-known/openid-configuration'
          ? {
              issuer,
              ...Object.fromEntries(['authorization', 'token', 'userinfo', 'end_session'].map((e) => [`${e}_endpoint`, `${issuer}/${e}`])),
              jwks_uri: `${issuer}/jwks`,
              response_types_supported: ['code'],
              subject_types_supported: ['public'],
              id_token_signing_alg_values_supported: ['RS256'],
              code_challenge_methods_supported: ['S256'],
              scopes_supported: ['openid', 'profile', 'email'],
            }
          : { keys: [] };
      res.writeHead(req.url === '/.well-known/openid-configuration' || req.url === '/jwks' ? 200 : 404, {
        'content-type': 'application/json',
      });
      res.end(JSON.stringify(body));
    });
    config = { issuer: provider.url, ...client, ...rpUris, scope: 'openid profile email' };
  });
  afterAll(() => new Promise<void>((resolve) => provider.server.close(() => resolve())));

  it.each(rpsToTest())('%s', { timeout: 60_000 }, async (rp) => {
    const browser: Browser = async () => {
      throw new Error('the harness test stops at the authorization request');
    };
    const report = await runRp(rp, config, browser);
    expect(report.steps.discovery, report.error).toEqual({ ok: true });
    expect(report.browsed).toHaveLength(1);
    expect(new URL(report.browsed[0]!).origin + new URL(report.browsed[0]!).pathname).toBe(`${provider.url}/authorization`);
    expect(authorizationRequestProblems(report.browsed[0], config)).toEqual([]);
    expect(report.error).toBe('browser: Error: the harness test stops at the authorization request');
  });
});

describe('the scripted browser', () => {
  let site: { url: string; server: Server };
  beforeAll(async () => {
    // /start sets a cookie and redirects on; /form is a page with a form; /confirm wants the form
    // POSTed with the cookie; /forget deletes the cookie; /loop redirects to itself.
    site = await serve((req, res) => {
      const url = new URL(req.url!, 'http://x');
      const cookie = req.headers.cookie ?? '';
      if (url.pathname === '/start') res.writeHead(302, { 'set-cookie': 'sid=s1; Path=/; HttpOnly', location: '/form' }).end();
      else if (url.pathname === '/form') res.writeHead(200, { 'content-type': 'text/html' }).end('<form method="post" action="/confirm">');
      else if (url.pathname === '/confirm' && req.method === 'POST') {
        let body = '';
        req.on('data', (chunk) => {
          body += chunk;
        });
        req.on('end', () =>
          res.writeHead(303, { location: `http://127.0.0.1:1/callback?cookie=${encodeURIComponent(cookie)}&${body}` }).end(),
        );
      } else if (url.pathname === '/again')
        res.writeHead(302, { location: `http://127.0.0.1:1/callback?cookie=${encodeURIComponent(cookie)}` }).end();
      else if (url.pathname === '/forget') res.writeHead(302, { 'set-cookie': 'sid=; Max-Age=0; Path=/', location: '/again' }).end();
      else if (url.pathname === '/loop') res.writeHead(302, { location: '/loop' }).end();
      else res.writeHead(404).end('not here');
    });
  });
  afterAll(() => new Promise<void>((resolve) => site.server.close(() => resolve())));

  it('follows redirects, submits what onPage says, keeps cookies across trips until deleted, stops at the RP', async () => {
    const browser = cookieBrowser({
      stopAt: [rpUris.redirectUri],
      onPage: (page) => (page.url.pathname === '/form' ? { url: new URL('/confirm', page.url), form: { answer: 'yes' } } : undefined),
    });
    expect(await browser(`${site.url}/start`)).toBe('http://127.0.0.1:1/callback?cookie=sid%3Ds1&answer=yes');
    expect(await browser(`${site.url}/again`)).toBe('http://127.0.0.1:1/callback?cookie=sid%3Ds1');
    expect(await browser(`${site.url}/forget`)).toBe('http://127.0.0.1:1/callback?cookie=');
  });

  it('fails on a page nobody handles, and on a redirect loop', async () => {
    const browser = cookieBrowser({ stopAt: [rpUris.redirectUri], maxRequests: 5 });
    await expect(browser(`${site.url}/form`)).rejects.toThrow(`the browser stopped at ${site.url}/form (200)`);
    await expect(browser(`${site.url}/nowhere`)).rejects.toThrow('(404): not here');
    await expect(browser(`${site.url}/loop`)).rejects.toThrow('no way back to the relying party after 5 requests');
  });
});

describe('problems(): what a report must show beyond the libraries’ own checks', () => {
  const config: RpConfig = { issuer: 'http://127.0.0.1:9', ...client, ...rpUris, scope: 'openid' };
  const request = new URL(`${config.issuer}/authorize`);
  for (const [name, value] of Object.entries({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: rpUris.redirectUri,
    scope: 'openid',
    state: 's'.repeat(22),
    nonce: 'n'.repeat(22),
    code_challenge_method: 'S256',
    code_challenge: 'c'.repeat(43),
  }))
    request.searchParams.set(name, value);
  const idToken = { iss: config.issuer, aud: client.clientId, sub: 'alice', nonce: 'n'.repeat(22), iat: 100 };
  const passed = (claims: Partial<Record<string, Record<string, unknown>>> = {}): RpReport => ({
    rp: 'go-oidc',
    library: 'test',
    browsed: [request.href],
    steps: Object.fromEntries(RP_STEPS['go-oidc'].map((step) => [step, { ok: true, ...(claims[step] && { claims: claims[step] }) }])),
  });
  const good = { id_token: idToken, userinfo: { sub: 'alice' }, refresh_id_token: { ...idToken, iat: 200 } };

  it('none for a report where every step passed and the claims agree', () => {
    expect(problems(passed(good), config)).toEqual([]);
  });

  it('a failed or missing step, with the library’s message', () => {
    const report = passed(good);
    report.steps.refresh = { ok: false, error: 'invalid_grant' };
    delete report.steps.refresh_id_token;
    expect(problems(report, config)).toEqual(['refresh: invalid_grant', 'refresh_id_token: not reached']);
  });

  it('a request without PKCE S256, or with a short state', () => {
    const plain = new URL(request);
    plain.searchParams.set('code_challenge_method', 'plain');
    plain.searchParams.set('state', 'x');
    expect(authorizationRequestProblems(plain.href, config)).toEqual([
      'authorization request: state is x, wanted a random state',
      'authorization request: code_challenge_method is plain, wanted S256',
    ]);
  });

  it('claims that disagree: another subject at userinfo or after refresh, another nonce, aud or iss', () => {
    expect(
      problems(
        passed({
          ...good,
          userinfo: { sub: 'mallory' },
          refresh_id_token: { ...idToken, sub: 'mallory', nonce: 'other', aud: 'another-client' },
        }),
        config,
      ),
    ).toEqual([
      'userinfo: sub mallory, wanted alice',
      'refresh_id_token: sub mallory, wanted alice',
      'refresh_id_token: not the iss and aud of the first ID token',
      'refresh_id_token: another nonce',
    ]);
    const forged = { ...idToken, iss: 'http://elsewhere', nonce: 'other' };
    expect(problems(passed({ ...good, id_token: forged, refresh_id_token: { ...forged, iat: 200 } }), config)).toEqual([
      `id_token: iss http://elsewhere, wanted ${config.issuer}`,
      'id_token: not the nonce of the request',
    ]);
  });
});

/**
 * authgate as the OpenID Provider: a bare Node host (the node:http adapter) on 127.0.0.1 with the
 * `openid` option, its built-in consent page, and a sign-in route of the host's own that signs the
 * user in with a session cookie and resumes; the harness's confidential client registered with
 * `rpUris`; its `openid.signOut` ends the host's session (RP-initiated logout) and clears the cookie.
 */
async function startAuthgateOp(): Promise<{ config: RpConfig; browser(): Browser; close(): Promise<void> }> {
  const sessions = new Map<string, UserSession>();
  const sessionId = (cookie: string | undefined) => /(?:^|; )rp_session=([^;]+)/.exec(cookie ?? '')?.[1] ?? '';
  const current = (cookie: string | undefined) => sessions.get(sessionId(cookie)) ?? null;
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const op = await serve((req, res) => handle(req, res));
  const storage = new MemoryStorage();
  const server = new AuthorizationServer({
    storage,
    issuer: op.url,
    sessions: { current: (request) => current(String(request.headers.cookie ?? '')) },
    openid: {
      claims: (account) => ({ name: account.name, email: account.email, email_verified: true }),
      signingKeys: [await generateSigningKey('RS256', 'harness-rs256')],
      signOut: (request) => {
        sessions.delete(sessionId(String(request.headers.cookie ?? '')));
        return { headers: { 'set-cookie': 'rp_session=; Max-Age=0; Path=/; HttpOnly' } };
      },
    },
  });
  await storage.saveClient({
    id: client.clientId,
    name: 'Relying-party harness',
    redirectUri: rpUris.redirectUri,
    secretHash: sha256Base64url(client.clientSecret),
    createdAt: Date.now(),
    openid: { postLogoutRedirectUris: [rpUris.postLogoutRedirectUri] },
  });
  const oauth = createOAuthHandler(server, { loginUrl: '/login' });
  handle = (req, res) =>
    oauth(req, res, () => {
      // The host's sign-in: Ada, at once, then back to the interaction.
      const url = new URL(req.url ?? '/', op.url);
      if (url.pathname !== '/login') return void res.writeHead(404).end();
      const id = randomUUID();
      sessions.set(id, { account: { uuid: ADA.uuid, name: ADA.name, email: ADA.email }, authenticatedAt: Date.now() });
      const resume = `/v1/oauth/authorize/resume?interaction=${encodeURIComponent(url.searchParams.get('interaction') ?? '')}`;
      res.writeHead(302, { 'set-cookie': `rp_session=${id}; Path=/; HttpOnly`, location: resume }).end();
    });
  return {
    config: { issuer: op.url, ...client, ...rpUris, scope: 'openid profile email' },
    // The consent page: the user authorizes (its form's hidden fields, and the approve button).
    browser: () =>
      cookieBrowser({
        stopAt: [rpUris.redirectUri, rpUris.postLogoutRedirectUri],
        onPage: (page) => {
          const action = /<form method="post" action="([^"]+)"/.exec(page.body)?.[1];
          if (!action) return undefined;
          const form: Record<string, string> = { decision: 'approve' };
          for (const [, name, value] of page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
            if (name && value !== undefined) form[name] = value.replaceAll('&amp;', '&');
          return { url: new URL(action.replaceAll('&amp;', '&'), page.url), form };
        },
      }),
    close: () => new Promise<void>((resolve) => op.server.close(() => resolve())),
  };
}

describe('relying parties sign in at authgate as an OpenID Provider (issue 24)', () => {
  let op: Awaited<ReturnType<typeof startAuthgateOp>>;
  beforeAll(async () => {
    op = await startAuthgateOp();
  });
  afterAll(() => op?.close());

  it.each(rpsToTest())('%s passes every step', { timeout: 60_000 }, async (rp) => {
    const report = await runRp(rp, op.config, op.browser());
    expect(problems(report, op.config), JSON.stringify(report, null, 2)).toEqual([]);
    // Not vacuous: the sign-in, the ID token, userinfo and the refreshed ID token were all checked.
    for (const step of ['token', 'id_token', 'userinfo', 'refresh_id_token'] as const) expect(report.steps[step]?.ok).toBe(true);
    // The JavaScript ones also logged out, and were then refused a silent sign-in.
    if (rp === 'openid-client' || rp === 'oauth4webapi')
      for (const step of ['logout', 'silent_after_logout'] as const) expect(report.steps[step]?.ok, step).toBe(true);
    expect(report.steps.userinfo?.claims).toMatchObject({ sub: ADA.uuid, email: ADA.email });
  });
});
