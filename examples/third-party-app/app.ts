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
 * - "Sign in with Nimbus" (OpenID Connect): StatusBoard's own sign-in, apart from connecting.
 *   The library reads the platform's OpenID discovery document, sends the browser with `state`,
 *   `nonce` and PKCE, validates the ID token (signature against the platform's JWKS, `iss`, `aud`,
 *   `exp`, `nonce`), then reads userinfo; StatusBoard's session says who is signed in. Signing out
 *   ends that session, and the platform's too (RP-initiated logout) when its discovery document
 *   has an `end_session_endpoint`.
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
  /**
   * Where the platform sends the browser back after RP-initiated logout, as registered with the
   * client (`openid.postLogoutRedirectUris`); absent: StatusBoard's sign-out ends only its own
   * session, even when the platform has an `end_session_endpoint`.
   */
  postLogoutRedirectUri?: string;
}

/** Who signed in to StatusBoard with Nimbus (OpenID Connect), from the validated ID token and userinfo. */
interface SignedInUser {
  sub: string;
  name: string;
  email?: string;
  emailVerified?: boolean;
  /** Kept for RP-initiated logout (`id_token_hint`). */
  idToken: string;
  /** The sign-in's tokens, revoked at sign-out: StatusBoard keeps no access it does not use. */
  accessToken: string;
  refreshToken?: string;
  idTokenClaims: oauth.IDToken;
  userinfo: oauth.UserInfoResponse;
}

interface AppSession {
  csrf: string;
  /** The authorization request under way: what to expect back, and whether it was silent (`prompt=none`). */
  pending?: { state: string; scope: string; silent: boolean };
  /** The OpenID Connect sign-in under way: what the callback checks (RP-side secrets, never sent but as a hash). */
  signingIn?: { state: string; nonce: string; codeVerifier: string };
  /** The RP-initiated logout under way: the `state` the platform sends back to `/signed-out`. */
  signingOut?: string;
  /** StatusBoard's own sign-in ("Sign in with Nimbus"). */
  user?: SignedInUser;
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
/** What "Sign in with Nimbus" asks for: a sign-in with the name and e-mail, no access to the API. */
const SIGN_IN_SCOPE = 'openid profile email';

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
  // "Sign in with Nimbus" reads the OpenID Connect discovery document (/.well-known/openid-configuration):
  // the same endpoints, plus userinfo, the JWKS and, once the platform has it, end_session_endpoint.
  // enableNonRepudiationChecks: also verify each ID token's signature against the platform's JWKS
  // (by default the library trusts the token endpoint's TLS for it, OpenID Connect Core §3.1.3.7).
  const oidc = await oauth.discovery(new URL(platformUrl), options.clientId, options.clientSecret, undefined, {
    execute: [oauth.enableNonRepudiationChecks, ...(platformUrl.startsWith('http:') ? [oauth.allowInsecureRequests] : [])],
  });
  const endSession = oidc.serverMetadata().end_session_endpoint;
  const rpLogout = endSession !== undefined && options.postLogoutRedirectUri !== undefined;

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
  /** A new session id for the same session at sign-in: an id set before (by anyone) never becomes a signed-in one. */
  const renew = (req: Request, res: Response, session: AppSession) => {
    sessions.delete(cookieOf(req) ?? '');
    const id = randomBytes(32).toString('base64url');
    sessions.set(id, session);
    res.cookie(COOKIE, id, { httpOnly: true, sameSite: 'lax', secure: url.startsWith('https:'), path: '/' });
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
          // The sign-out form's answer redirects to the platform's end_session_endpoint: form-action covers redirects.
          `form-action 'self'${rpLogout ? ` ${new URL(endSession).origin}` : ''}; frame-ancestors 'none'; base-uri 'none'`,
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
    const { tokens, result, user } = session;
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
${user ? signedInHtml(user, session.csrf) : ''}
${
  tokens
    ? `<p id="connected">${result?.kept ? 'Still connected' : 'Connected'} to Nimbus as <strong>${esc(info?.name)}</strong> (${esc(info?.email)}), scope <code>${esc(tokens.scope)}</code>${result?.kept ? ', as before' : ''}.</p>
<div class="row">${button('/api/account', 'GET /v2/account', session.csrf)}${button('/api/droplets', 'POST /v2/droplets', session.csrf)}
${button('/refresh', 'Refresh the token', session.csrf, 'secondary')}${button('/disconnect', 'Disconnect (revoke the token)', session.csrf, 'danger')}</div>
${user ? '' : `<div class="row">${SIGN_IN_BUTTON}</div>`}
<h2>Token response</h2><pre id="token-response">${json(tokens)}</pre>`
    : `<p>${
        user
          ? 'StatusBoard shows your Nimbus account and droplets. Connect it to your Nimbus account: Nimbus asks you first.'
          : 'Sign in to StatusBoard with your Nimbus account (StatusBoard learns your name and e-mail address, nothing more), or connect StatusBoard to your Nimbus account to see your account and droplets. Nimbus asks you first either way.'
      }</p>
<div class="row">${user ? '' : SIGN_IN_BUTTON}<a class="button" id="connect" href="/connect">Connect with Nimbus</a>
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

  // ── "Sign in with Nimbus" (OpenID Connect): code flow with PKCE and a nonce ────────────────────
  app.get('/sign-in', async (req, res, next) => {
    try {
      const session = sessionOf(req, res);
      const codeVerifier = oauth.randomPKCECodeVerifier();
      // Each unguessable and kept only here: `state` ties the callback to this browser, the nonce the
      // ID token to this request, the PKCE verifier the code to this app (RFC 7636).
      session.signingIn = { state: oauth.randomState(), nonce: oauth.randomNonce(), codeVerifier };
      const authorizeUrl = oauth.buildAuthorizationUrl(oidc, {
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: SIGN_IN_SCOPE,
        state: session.signingIn.state,
        nonce: session.signingIn.nonce,
        code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      });
      res.redirect(302, authorizeUrl.href);
    } catch (error) {
      next(error);
    }
  });

  /** The sign-in's callback: the library checks `state` and `iss`, exchanges the code with the verifier, validates the ID token. */
  const finishSignIn = async (req: Request, res: Response, session: AppSession, signingIn: NonNullable<AppSession['signingIn']>) => {
    try {
      const tokens = await oauth.authorizationCodeGrant(oidc, new URL(req.originalUrl, url), {
        expectedState: signingIn.state,
        expectedNonce: signingIn.nonce,
        pkceCodeVerifier: signingIn.codeVerifier,
        idTokenExpected: true,
      });
      const idTokenClaims = tokens.claims()!; // idTokenExpected: there is one, and it passed every check
      // The profile and e-mail are at userinfo (the ID token has only `sub` and the sign-in's facts);
      // the library checks that userinfo's `sub` is the ID token's (Core §5.3.2).
      const userinfo = await oauth.fetchUserInfo(oidc, tokens.access_token, idTokenClaims.sub);
      renew(req, res, session);
      session.user = {
        sub: idTokenClaims.sub,
        name: stringClaim(userinfo.name) ?? stringClaim(idTokenClaims['name']) ?? idTokenClaims.sub,
        ...(stringClaim(userinfo.email) !== undefined && { email: userinfo.email }),
        ...(typeof userinfo.email_verified === 'boolean' && { emailVerified: userinfo.email_verified }),
        idToken: tokens.id_token!,
        accessToken: tokens.access_token,
        ...(tokens.refresh_token !== undefined && { refreshToken: tokens.refresh_token }),
        idTokenClaims,
        userinfo,
      };
      session.result = { title: 'Signed in with Nimbus (OpenID Connect)', ok: true };
    } catch (error) {
      session.result = { title: 'The sign-in did not succeed', ok: false, failure: describe(error) };
    }
    res.redirect(303, '/'); // the code leaves the address bar
  };

  app.post('/sign-out', express.urlencoded({ extended: false, limit: '2kb' }), async (req, res) => {
    const session = sessionOf(req, res);
    if (!csrfOk(session, req.body?.csrf)) return res.status(403).type('text').send('Forbidden: reload the page and try again.');
    const user = session.user;
    delete session.user; // StatusBoard's own session ends first, whatever the platform answers
    if (!user) return res.redirect(303, '/');
    // StatusBoard keeps no access it does not use: the sign-in's tokens go (the refresh token takes its access tokens along).
    await oauth.tokenRevocation(oidc, user.refreshToken ?? user.accessToken).catch(() => {});
    if (rpLogout) {
      // RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): the platform ends its session
      // too, then sends the browser back to /signed-out with this `state`.
      session.signingOut = oauth.randomState();
      const logoutUrl = oauth.buildEndSessionUrl(oidc, {
        id_token_hint: user.idToken,
        post_logout_redirect_uri: options.postLogoutRedirectUri!,
        state: session.signingOut,
      });
      return res.redirect(303, logoutUrl.href);
    }
    session.result = { title: 'Signed out of StatusBoard', ok: true, note: endSession ? LOGOUT_NOT_REGISTERED : NO_END_SESSION };
    res.redirect(303, '/');
  });

  // Back from the platform's end_session_endpoint (registered as the client's post-logout redirect URI).
  app.get('/signed-out', (req, res) => {
    const session = sessionOf(req, res);
    const expected = session.signingOut;
    delete session.signingOut;
    session.result =
      expected !== undefined && req.query.state === expected
        ? { title: 'Signed out of StatusBoard and Nimbus', ok: true }
        : { title: 'Signed out of StatusBoard', ok: true }; // a stray or replayed visit: nothing more to say
    res.redirect(303, '/');
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
    // One callback URL for both: the sign-in's answer carries the sign-in's state.
    const signingIn = session.signingIn;
    if (signingIn && req.query.state === signingIn.state) {
      delete session.signingIn; // one callback per request
      return finishSignIn(req, res, session, signingIn);
    }
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

const stringClaim = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

const SIGN_IN_BUTTON = '<a class="button" id="sign-in" href="/sign-in">Sign in with Nimbus</a>';

/** StatusBoard's own session: who signed in, what the ID token and userinfo said, and "Sign out". */
function signedInHtml(user: SignedInUser, csrf: string): string {
  const esc = (v: unknown) => String(v).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const json = (v: unknown) => esc(JSON.stringify(v, null, 2));
  const email = user.email ? ` (${esc(user.email)}${user.emailVerified ? ', verified by Nimbus' : ''})` : '';
  return `<div class="signed-in" id="signed-in"><p id="signed-in-as">Signed in as <strong>${esc(user.name)}</strong>${email}</p>
<form method="post" action="/sign-out"><input type="hidden" name="csrf" value="${esc(csrf)}"><button class="secondary" id="sign-out">Sign out</button></form></div>
<details><summary>What Nimbus told StatusBoard (OpenID Connect)</summary>
<h2>ID token claims</h2><pre id="id-token-claims">${json(user.idTokenClaims)}</pre>
<h2>Userinfo</h2><pre id="userinfo">${json(user.userinfo)}</pre></details>`;
}

const NO_END_SESSION =
  'Nimbus publishes no end_session_endpoint (RP-initiated logout), so you are still signed in on Nimbus: the next "Sign in with Nimbus" does not ask for your password.';
const LOGOUT_NOT_REGISTERED =
  'StatusBoard has no post-logout redirect URI registered with Nimbus, so it ended only its own session: you are still signed in on Nimbus.';

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
  if (!(error instanceof Error)) return { code: 'client_error', description: String(error) };
  // The library's own checks (an ID token's signature, nonce, iss...) say what failed in the cause.
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return { code: 'client_error', description: `${error.message}${cause}` };
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
code{background:#eef1f4;padding:.05rem .3rem;border-radius:4px}
.signed-in{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:.5rem 1rem;margin-bottom:1rem}
.signed-in p{margin:0}.signed-in form{margin:0}details{margin-bottom:1rem}summary{cursor:pointer;color:#0b5d3b}`;
