/**
 * Nimbus, a small cloud platform that lets third-party applications access its users' accounts
 * through authgate. Read in this order:
 *
 *   sessions.ts         the platform's own sign-in sessions, and the one thing authgate asks of them
 *   sign-in.ts          sign-in page with two demo accounts; hands the browser back to authgate
 *   (this file)         the AuthorizationServer and the OAuth endpoints, mounted with the Express adapter
 *   authorized-apps.ts  "Authorized applications": what each app may do, and revoking it
 *   api-tokens.ts       "API tokens": personal access tokens for scripts, shown once, last use, revoke
 *   developer.ts        registering an app, its client secret shown once, reset, revoke all tokens
 *   api.ts              the resource API under /v2, protected by `requireToken`
 *   brand.ts            Nimbus's brand and languages on authgate's built-in consent and error pages
 *
 * The consent page is authgate's built-in one (application name, scope in plain words, Authorize /
 * Deny, CSRF protection, "Use another account"), and so are the error pages for a bad
 * `redirect_uri` or `scope`, both with Nimbus's brand and in English or French (brand.ts). In
 * your own platform import from 'authgate' and 'authgate/express'.
 */
import express, { type ErrorRequestHandler } from 'express';
import { AuthorizationServer, type Account, type Storage } from '../../src/index.js';
import { createOAuthRouter } from '../../adapters/express/index.js';
import { resourceApi } from './api.js';
import { apiTokenRoutes } from './api-tokens.js';
import { authorizedAppsRoutes } from './authorized-apps.js';
import { brandRoutes, NIMBUS_PAGES } from './brand.js';
import { DeveloperApps, developerRoutes } from './developer.js';
import { html, sendPage } from './html.js';
import { SessionStore, takeFlash } from './sessions.js';
import { signInRoutes } from './sign-in.js';

/**
 * A Nimbus account's standard claims (OpenID Connect Core §5.1); authgate sends each client only
 * those its granted scope allows (`profile`: name; `email`: email, email_verified). Nimbus checks
 * every address at sign-up, so `email_verified` is true; its accounts have no avatar, so no `picture`.
 */
export const standardClaims = (account: Account) => {
  const [givenName, ...rest] = account.name.split(' ');
  return {
    name: account.name,
    ...(givenName && rest.length > 0 && { given_name: givenName, family_name: rest.join(' ') }),
    email: account.email,
    email_verified: true,
  };
};

export interface PlatformOptions {
  /** Where the platform is reached, e.g. `http://127.0.0.1:3000`: authgate's `issuer`. */
  url: string;
  storage: Storage;
}

export function createPlatform({ url, storage }: PlatformOptions) {
  const sessions = new SessionStore(url.startsWith('https:'));
  // `issuer` adds `iss` to every authorization response (RFC 9207), which clients check.
  const server = new AuthorizationServer({
    storage,
    sessions: sessions.userSessions,
    issuer: url,
    // Personal access tokens start with this, so secret scanners can recognise a leaked one.
    tokenPrefixes: { personalToken: 'nmp_v1_' },
    // The consent and error pages in Nimbus's colours, English or French (brand.ts).
    pages: NIMBUS_PAGES,
    // The device authorization grant (RFC 8628), for the clients registered with it: `npm run example:cli`.
    deviceAuthorization: {},
    // OpenID Connect: "Sign in with Nimbus" and its logout (README: Sign in with <platform>). No `signingKeys`:
    // authgate makes an RS256 key for this process, fine for a demo (a restart invalidates the ID
    // tokens issued before); a real platform passes its stored keys (generateSigningKey).
    // `signOut`: the end-session endpoint (RP-initiated logout) ends Nimbus's own session this way.
    openid: {
      claims: standardClaims,
      signOut: (request) => ({ headers: { 'set-cookie': sessions.signOutByCookie(request.headers.cookie) } }),
    },
    onError: (error) => console.error(error),
  });
  const developerApps = new DeveloperApps(server);

  const app = express();
  app.disable('x-powered-by');

  // The OAuth endpoints: GET /v1/oauth/authorize (+ /resume, POST /decision), POST /v1/oauth/token,
  // POST /v1/oauth/revoke. They read their own bodies: no body parser in front of them.
  // Revocation answers any origin, so a browser app can revoke its token (RFC 7009 §2.2 allows CORS).
  app.use('/v1/oauth/revoke', (_req, res, next) => {
    res.set('access-control-allow-origin', '*');
    next();
  });
  app.use(createOAuthRouter(server, { loginUrl: '/login' }));
  app.use(brandRoutes());

  app.use(signInRoutes(sessions, server));
  app.use(authorizedAppsRoutes(server, sessions));
  app.use(apiTokenRoutes(server, sessions));
  app.use(developerRoutes(server, developerApps, sessions));
  app.use('/v2', resourceApi(server));

  app.get('/', (req, res) => {
    const session = sessions.find(req.headers.cookie);
    const user = session?.user?.account;
    sendPage(
      res,
      { title: user ? `Welcome, ${user.name}` : 'Welcome to Nimbus', user, csrf: session?.csrf, flash: takeFlash(session) },
      user
        ? html`<div class="box"><h2><a href="/account/applications">Authorized applications</a></h2>
<p>The applications that can access your account, what each may do, and a button to revoke each.</p></div>
<div class="box"><h2><a href="/account/tokens">API tokens</a></h2>
<p>Personal access tokens for your scripts and the command line: create one, see it once, see when it was last used, revoke it.</p></div>
<div class="box"><h2><a href="/developer">Developer</a></h2>
<p>Register an application to get a client ID and secret; reset the secret; revoke every token it holds.</p></div>
<div class="box"><h2>API</h2><p>Applications call <code>GET /v2/account</code> and <code>POST /v2/droplets</code>
(needs <code>read write</code>) with <code>Authorization: Bearer &lt;token&gt;</code>.</p></div>`
        : html`<p>Nimbus is a demo cloud platform with an OAuth 2.0 authorization server.</p>
<p><a href="/login">Sign in</a> with a demo account to see the applications you authorized, or register your own.</p>`,
    );
  });

  app.use((_req, res) => sendPage(res, { title: 'Page not found' }, html`<p><a href="/">Back to Nimbus</a></p>`, 404));
  const onError: ErrorRequestHandler = (error, _req, res, _next) => {
    console.error(error);
    sendPage(res, { title: 'Something went wrong' }, html`<p>Try again in a moment.</p>`, 500);
  };
  app.use(onError);

  return {
    app,
    /** authgate's server, for anything the pages do not offer. */
    server,
    /** Register an application owned by an account, as the developer page does (the demo registers its app this way). */
    registerApp: (ownerUuid: string, input: { name: string; redirectUri: string }) => developerApps.register(ownerUuid, input),
  };
}
