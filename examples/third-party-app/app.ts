/**
 * StatusBoard, a third-party application of the Nimbus platform, written the way any developer
 * would write one: with a well-known OAuth 2.0 client library (openid-client), knowing nothing of
 * the platform but its URL (the library reads the rest from its RFC 8414 metadata) and the client
 * ID and secret from its developer page. It shares no code with the platform.
 *
 * - Code flow (server side): "Connect" sends the browser to the platform with a fresh `state`
 *   kept in this app's session; the callback checks it, exchanges the code with the client
 *   secret, and keeps the tokens in the session. The app then calls the API, refreshes, revokes.
 * - Implicit flow (browser side, `public/implicit.js`): the token comes back in the URL fragment,
 *   which never reaches a server; the script checks `state` and calls the API itself.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import express, { type Request, type Response } from 'express';
import * as oauth from 'openid-client';

export interface ThirdPartyAppOptions {
  /** Where this app is reached, e.g. `http://127.0.0.1:3001`. Its callback is `{url}/callback`. */
  url: string;
  /** Where the platform is, e.g. `http://127.0.0.1:3000`. */
  platformUrl: string;
  clientId: string;
  clientSecret: string;
}

interface AppSession {
  csrf: string;
  /** The authorization request under way: what to expect back, and whether it was silent (`prompt=none`). */
  pending?: { state: string; scope: string; silent: boolean };
  tokens?: oauth.TokenEndpointResponse;
  /** The outcome of the last step, shown on the home page: data as JSON, a failure in words. */
  result?: { title: string; ok: boolean; body?: unknown; failure?: Failure; note?: string; kept?: boolean };
}

/** What went wrong, from the OAuth error the library reports (RFC 6749 §4.1.2.1, §5.2; RFC 6750 §3). */
interface Failure {
  /** The OAuth error code, e.g. `consent_required`, `invalid_token`. */
  code: string;
  status?: number;
  description?: string;
}

const COOKIE = 'statusboard_session';
const SCOPES = ['read write', 'read'];

export async function createThirdPartyApp(options: ThirdPartyAppOptions) {
  const { url, platformUrl } = options;
  const redirectUri = `${url}/callback`;

  // What the library needs to know about the platform comes from its metadata document
  // (RFC 8414, /.well-known/oauth-authorization-server): endpoints, and the issuer to expect.
  const config = await oauth.discovery(
    new URL(platformUrl),
    options.clientId,
    options.clientSecret, // sent as client_id + client_secret in the token request body
    undefined,
    { algorithm: 'oauth2', execute: platformUrl.startsWith('http:') ? [oauth.allowInsecureRequests] : [] }, // plain http: local demo only
  );

  // ── Sessions (in memory; a real app uses its framework's session store) ─────────────────────
  const sessions = new Map<string, AppSession>();
  const cookieOf = (req: Request) =>
    (req.headers.cookie ?? '')
      .split(';')
      .map((p) => p.trim().split('='))
      .find(([name]) => name === COOKIE)?.[1];
  const sessionOf = (req: Request, res: Response): AppSession => {
    const existing = sessions.get(cookieOf(req) ?? '');
    if (existing) return existing;
    const id = randomBytes(32).toString('base64url');
    const session: AppSession = { csrf: randomBytes(32).toString('base64url') };
    sessions.set(id, session);
    res.cookie(COOKIE, id, { httpOnly: true, sameSite: 'lax', secure: url.startsWith('https:'), path: '/' });
    return session;
  };
  const csrfOk = (session: AppSession, sent: unknown) =>
    typeof sent === 'string' && sent.length === session.csrf.length && timingSafeEqual(Buffer.from(sent), Buffer.from(session.csrf));

  // ── Pages ─────────────────────────────────────────────────────────────────────────────────────
  const esc = (v: unknown) => String(v).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const json = (v: unknown) => esc(JSON.stringify(v, null, 2));
  const page = (res: Response, title: string, body: string) =>
    res
      .set({
        'content-security-policy':
          `default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src ${platformUrl}; ` +
          "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer', // the callback URL carries a code: never pass it on
        'cache-control': 'no-store',
      })
      .type('html')
      .send(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)} · StatusBoard</title><style>${STYLE}</style>
<script type="module" src="/implicit.js"></script></head>
<body><header><a href="/">▦ StatusBoard</a><span>a third-party app for Nimbus</span></header><main><h1>${esc(title)}</h1>${body}</main></body></html>`);
  const button = (action: string, label: string, csrf: string, cls = '') =>
    `<form method="post" action="${action}"><input type="hidden" name="csrf" value="${esc(csrf)}"><button class="${cls}">${esc(label)}</button></form>`;

  const app = express();
  app.disable('x-powered-by');
  app.use(express.static(fileURLToPath(new URL('./public', import.meta.url)), { index: false }));
  app.get('/favicon.ico', (_req, res) => {
    res.set({ 'content-type': 'image/png', 'cache-control': 'public, max-age=86400' }).send(FAVICON);
  });

  app.get('/', (req, res) => {
    const session = sessionOf(req, res);
    const { tokens, result } = session;
    const info = tokens?.info as { name?: string; email?: string } | undefined;
    const implicitUrl = oauth.buildAuthorizationUrl(config, { redirect_uri: redirectUri, response_type: 'token', scope: 'read' });
    page(
      res,
      'Dashboard',
      `
${
  result
    ? `<section class="${result.ok ? 'ok' : 'fail'}" id="result"><h2>${esc(result.title)}</h2>${result.failure ? failureHtml(result.failure) : ''}${
        result.note ? `<p id="result-note">${esc(result.note)}</p>` : ''
      }${result.body === undefined ? '' : `<pre>${json(result.body)}</pre>`}</section>`
    : ''
}
${
  tokens
    ? `<p id="connected">${result?.kept ? 'Still connected' : 'Connected'} to Nimbus as <strong>${esc(info?.name)}</strong> (${esc(info?.email)}), scope <code>${esc(tokens.scope)}</code>${result?.kept ? ', as before' : ''}.</p>
<div class="row">${button('/api/account', 'GET /v2/account', session.csrf)}${button('/api/droplets', 'POST /v2/droplets', session.csrf)}
${button('/refresh', 'Refresh the token', session.csrf, 'secondary')}${button('/disconnect', 'Disconnect (revoke the token)', session.csrf, 'danger')}</div>
<h2>Token response</h2><pre id="token-response">${json(tokens)}</pre>`
    : `<p>StatusBoard shows your Nimbus account and droplets. Connect it to your Nimbus account: Nimbus asks you first.</p>
<div class="row"><a class="button" id="connect" href="/connect">Connect with Nimbus</a>
<button id="implicit-connect" class="secondary" data-authorize-url="${esc(implicitUrl.href)}">Connect in the browser (implicit flow, read-only)</button></div>`
}
<h2>Other ways to connect</h2>
<ul><li><a id="connect-silent" href="/connect?prompt=none">Reconnect silently</a> (<code>prompt=none</code>: no page at all if you authorized StatusBoard before)</li>
<li><a id="connect-read" href="/connect?scope=read">Connect read-only</a> (<code>scope=read</code>)</li>
<li><a id="connect-login" href="/connect?prompt=login">Connect, signing in again</a> (<code>prompt=login</code>)</li>
<li><a id="connect-max-age" href="/connect?max_auth_age=60">Connect if you signed in within the last minute</a> (<code>max_auth_age=60</code>)</li></ul>`,
    );
  });

  // ── Code flow: send the browser to the platform… ───────────────────────────────────────────────
  app.get('/connect', (req, res) => {
    const session = sessionOf(req, res);
    const scope = SCOPES.find((s) => s === req.query.scope) ?? 'read write';
    const state = oauth.randomState(); // unguessable; proves the callback answers our own request
    session.pending = { state, scope, silent: req.query.prompt === 'none' };
    const params: Record<string, string> = { redirect_uri: redirectUri, response_type: 'code', scope, state };
    if (req.query.prompt === 'none' || req.query.prompt === 'login') params.prompt = req.query.prompt;
    if (typeof req.query.max_auth_age === 'string' && /^\d{1,6}$/.test(req.query.max_auth_age))
      params.max_auth_age = req.query.max_auth_age;
    res.redirect(302, oauth.buildAuthorizationUrl(config, params).href);
  });

  // …and back: the library checks `state` (and `iss`), reads an error, exchanges the code.
  app.get('/callback', async (req, res) => {
    if (req.query.code === undefined && req.query.error === undefined) {
      // The implicit flow: the token is in the fragment, which only the browser can read.
      return page(
        res,
        'Implicit flow callback',
        `<div id="implicit-callback" data-issuer="${esc(config.serverMetadata().issuer)}" data-api="${esc(`${platformUrl}/v2/account`)}"
  data-revoke="${esc(config.serverMetadata().revocation_endpoint ?? '')}"><p id="implicit-status">Reading the URL fragment…</p>
<div class="row" hidden id="implicit-actions"><button id="implicit-call">GET /v2/account</button><button id="implicit-revoke" class="danger">Revoke the token</button></div>
<pre id="implicit-api" hidden></pre><h2>From the URL fragment</h2><pre id="implicit-output"></pre></div><p><a href="/">Back to StatusBoard</a></p>`,
      );
    }
    const session = sessionOf(req, res);
    const pending = session.pending;
    delete session.pending; // one callback per request
    try {
      if (!pending) throw new Error('No authorization request is under way in this browser: start again with "Connect".');
      const tokens = await oauth.authorizationCodeGrant(config, new URL(req.originalUrl, url), { expectedState: pending.state });
      session.tokens = tokens;
      // The user may have edited the scope in the link: check what was granted (RFC 6749 §3.3).
      session.result =
        tokens.scope === pending.scope
          ? {
              title: pending.silent ? 'Reconnected silently: no page was shown' : 'Connected: the code was exchanged for tokens',
              ok: true,
              ...(pending.silent && { note: SILENT_OK }),
            }
          : { title: `Granted scope "${tokens.scope}" differs from the requested "${pending.scope}"`, ok: false, body: tokens };
    } catch (error) {
      // A failed new authorization takes nothing away: a connection made before stays, and says so.
      const note = [pending?.silent ? SILENT_FAILED : '', session.tokens ? KEPT : ''].filter(Boolean).join(' ');
      session.result = {
        title: pending?.silent ? 'The silent reconnect did not succeed: no page was shown' : 'The authorization did not succeed',
        ok: false,
        failure: describe(error),
        ...(note && { note }),
        ...(session.tokens && { kept: true }),
      };
    }
    res.redirect(303, '/'); // the code leaves the address bar
  });

  // ── With the tokens: call the API, refresh, revoke (POST forms, CSRF-checked) ────────────────
  const withTokens = (label: string, run: (tokens: oauth.TokenEndpointResponse, session: AppSession) => Promise<AppSession['result']>) => [
    express.urlencoded({ extended: false, limit: '2kb' }),
    async (req: Request, res: Response) => {
      const session = sessionOf(req, res);
      if (!csrfOk(session, req.body?.csrf)) return res.status(403).type('text').send('Forbidden: reload the page and try again.');
      try {
        session.result = session.tokens ? await run(session.tokens, session) : { title: 'Not connected', ok: false };
      } catch (error) {
        session.result = { title: `${label} failed`, ok: false, failure: describe(error) };
      }
      res.redirect(303, '/');
    },
  ];

  const callApi = async (accessToken: string, method: string, path: string, body?: unknown) => {
    const headers = new Headers({ accept: 'application/json' });
    if (body) headers.set('content-type', 'application/json');
    const response = await oauth.fetchProtectedResource(
      config,
      accessToken,
      new URL(path, platformUrl),
      method,
      body ? JSON.stringify(body) : null,
      headers,
    );
    return { title: `${method} ${path}: ${response.status}`, ok: response.ok, body: await response.json() };
  };

  app.post('/api/account', ...withTokens('GET /v2/account', (tokens) => callApi(tokens.access_token, 'GET', '/v2/account')));
  app.post(
    '/api/droplets',
    ...withTokens('POST /v2/droplets', (tokens) =>
      callApi(tokens.access_token, 'POST', '/v2/droplets', { name: `statusboard-${randomBytes(3).toString('hex')}` }),
    ),
  );
  app.post(
    '/refresh',
    ...withTokens('Refresh', async (tokens, session) => {
      session.tokens = await oauth.refreshTokenGrant(config, tokens.refresh_token!); // a new pair; the old one is used up
      return { title: 'Refreshed: a new access token and a new refresh token', ok: true };
    }),
  );
  app.post(
    '/disconnect',
    ...withTokens('Revocation', async (tokens, session) => {
      await oauth.tokenRevocation(config, tokens.access_token); // POST /v1/oauth/revoke
      delete session.tokens;
      return { title: 'Disconnected: Nimbus revoked the token', ok: true };
    }),
  );

  return app;
}

/** StatusBoard's icon (a green board), a 32 px PNG for `/favicon.ico`. */
const FAVICON = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAABA0lEQVR4nOyXsUoEQRBEq9oNxDUXTPwFQ1mNNb1MEFfQwMjAzxEDA1eNNRNjWQz9BRPB/BSFc8vpBeECORBk22BeMAzdA1U0M810gSnKuqoFjiCskVjGHyLhGcQDoevXpm2+4/RlfqdaMcMpyU0MgKS7rsPh+1X7ZB4w4+VQ4o5r2Rwv+n25W+2nyBkikA5MxDaCcG2jsIogXLtI5V9CFEm7mJUfn9/PSmNxb+NX537CEEw2kA1kAyzrdSGQ8ArkTpgNZAPZwD/ohNILokja/i1/RBCu7RU4QRRJu58NF+rqluAWBkTQzVvTjvpXMJnoON3EDwxEmpTH6j6PfM/pRMR4/gUAAP//+I/v7QAAAAZJREFUAwBZGl8ALPVMewAAAABJRU5ErkJggg==',
  'base64',
);

const SILENT_OK =
  'prompt=none: Nimbus sent the browser straight back, showing no sign-in or consent page, because you are signed in there and had authorized StatusBoard.';
const SILENT_FAILED = 'prompt=none: Nimbus may not show a page, so instead of asking you it sent the browser straight back with an error.';
const KEPT = 'Your earlier connection is kept: this answer does not revoke the token StatusBoard already holds (below).';

/** What went wrong, in the terms of the OAuth error the library reports. */
function describe(error: unknown): Failure {
  if (error instanceof oauth.AuthorizationResponseError)
    return { code: error.error, ...(error.error_description && { description: error.error_description }) };
  if (error instanceof oauth.ResponseBodyError)
    return { code: error.error, status: error.status, ...(error.error_description && { description: error.error_description }) };
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    // 401 / 403 from the API, with `WWW-Authenticate: Bearer error="invalid_token", …` (RFC 6750 §3).
    const params = error.cause.find((c) => c.scheme === 'bearer')?.parameters ?? error.cause[0]?.parameters ?? {};
    return {
      code: params.error ?? `http_${error.status}`,
      status: error.status,
      ...(params.error_description && { description: params.error_description }),
    };
  }
  return { code: 'client_error', description: error instanceof Error ? error.message : String(error) };
}

/** The usual OAuth error codes in words (RFC 6749 §4.1.2.1 and §5.2, RFC 6750 §3.1, OpenID Connect prompt errors). */
const MEANING: Record<string, string> = {
  access_denied: 'You declined on Nimbus: StatusBoard got no access.',
  consent_required: 'You have not authorized StatusBoard (or you revoked it), and Nimbus may not ask you now.',
  login_required: 'You are not signed in to Nimbus (or not recently enough), and Nimbus may not ask you to sign in now.',
  interaction_required: 'Nimbus needs to show you a page, and may not now.',
  invalid_grant: 'The code or refresh token is no longer valid: used, revoked or expired. Connect again.',
  invalid_token: 'Nimbus refused the access token: it was revoked or has expired. Refresh it or connect again.',
  insufficient_scope: 'The token does not allow this: connect with more access.',
  invalid_client: "Nimbus did not accept StatusBoard's client credentials.",
};

function failureHtml(failure: Failure): string {
  const esc = (v: unknown) => String(v).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  if (failure.code === 'client_error') return `<p class="failure">StatusBoard could not finish: ${esc(failure.description)}</p>`;
  const meaning = Object.hasOwn(MEANING, failure.code) ? MEANING[failure.code] : undefined;
  return `<p class="failure">Nimbus answered <code class="error-code">${esc(failure.code)}</code>${failure.status ? ` (HTTP ${failure.status})` : ''}${
    meaning ? `: ${esc(meaning)}` : '.'
  }</p>${failure.description ? `<p class="error-description">${esc(failure.description)}</p>` : ''}`;
}

const STYLE = `[hidden]{display:none!important}body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1f2328;background:#fbfaf7}
header{display:flex;flex-wrap:wrap;gap:0 1rem;align-items:baseline;padding:.75rem 1.5rem;background:#0b5d3b;color:#fff}
header a{color:#fff;font-weight:700;font-size:1.2rem;text-decoration:none}header span{opacity:.8;font-size:.9rem}
main{max-width:52rem;margin:2rem auto;padding:0 1rem}p.error-description{font-style:italic}h1{font-size:1.5rem}h2{font-size:1.1rem;margin-top:1.75rem}
.row{display:flex;flex-wrap:wrap;gap:.5rem;margin:1rem 0}.row form{margin:0}
button,a.button{font:inherit;font-size:.95rem;padding:.45rem 1rem;border-radius:6px;border:1px solid #1a7f52;background:#1a7f52;color:#fff;cursor:pointer;text-decoration:none}
button.secondary{background:#fff;color:#1a7f52}button.danger{background:#fff;color:#cf222e;border-color:#cf222e}
pre{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:.75rem;white-space:pre-wrap;word-break:break-all;font-size:.85rem}
section{border-radius:8px;padding:.75rem 1rem;margin-bottom:1rem}section h2{margin:0 0 .5rem}section.ok{background:#dafbe1}section.fail{background:#ffebe9}
code{background:#eef1f4;padding:.05rem .3rem;border-radius:4px}`;
