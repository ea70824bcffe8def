/**
 * The code of docs/guide.md, as one Express platform that runs: its own sessions (read with
 * `readCookie`), a sign-in page that names the application (`describeInteraction`), its own
 * consent page (`onConsent`, with its CSRF cookie), and DigitalOcean-style scopes
 * (`droplet:read`, `droplet:write`), and a store typed by its storage groups. test/docs/guide.test.ts drives it over HTTP and checks that
 * every `#region` below is, word for word, what the guide shows.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import {
  AuthorizationServer,
  MemoryStorage,
  PAGE_HEADERS,
  escapeHtml,
  interactionResponse,
  readCookie,
  type Account,
  type AuthorizationServerOptions,
  type CoreStorage,
  type OAuthRequest,
  type PersonalTokenStorage,
  type UserSession,
  type UserSessions,
} from '../../src/index.js';
import { createOAuthRouter, requireToken } from '../../adapters/express/index.js';
import { FakeClock } from '../../src/testing/index.js';

/** The platform's own session store: session id → who signed in, and when. */
const signedIn = new Map<string, UserSession>();

// #region sessions
// Header values are `string | string[] | undefined` (Node gives a repeated header as an array):
// readCookie reads every form.
const sessions: UserSessions = {
  current: (request) => signedIn.get(readCookie(request, 'sid') ?? '') ?? null,
};
// #endregion sessions

// #region scopes
const scopes: AuthorizationServerOptions['scopes'] = {
  values: ['droplet:read', 'droplet:write', 'account:read'],
  default: ['droplet:read'],
  // Which requests a token's scope allows: reading droplets needs droplet:read, changing them droplet:write.
  allows: (scope, { method, url }) => {
    const path = new URL(url, 'http://localhost').pathname;
    if (path.startsWith('/v2/droplets')) return scope.includes(method === 'GET' || method === 'HEAD' ? 'droplet:read' : 'droplet:write');
    if (path === '/v2/account') return scope.includes('account:read');
    return false;
  },
  descriptions: {
    'droplet:read': 'See your droplets',
    'droplet:write': 'Create, change and delete your droplets',
    'account:read': 'See your name and e-mail address',
  },
};
// #endregion scopes

/** One page of the platform: every value interpolated into it is escaped by the caller. */
const page = (res: Response, title: string, body: string) =>
  res
    .status(200)
    .set(PAGE_HEADERS)
    .send(`<!doctype html><html lang="en"><meta charset="utf-8"><title>${escapeHtml(title)}</title>${body}`);

/** The request as the core reads it: Express's headers already have the right type. */
const oauthRequest = (req: Request): OAuthRequest => ({ method: req.method, url: req.originalUrl, headers: req.headers });

/** The platform, with a clock the tests move; `accounts` are the ones its sign-in form knows. */
export async function createGuidePlatform(accounts: readonly Account[]) {
  const clock = new FakeClock();
  // #region storage
  // Your own store goes here (MemoryStorage, which has every group, stands in for it): all of
  // CoreStorage, and the whole of each group a feature you use needs. A method left out of
  // either does not compile.
  const storage: CoreStorage & PersonalTokenStorage = new MemoryStorage();
  // #endregion storage
  const server = new AuthorizationServer({ storage, sessions, clock, scopes });
  const app = express();

  // #region consent
  // The browser-binding cookie must reach /consent too: widen its path to the whole site.
  app.use(
    createOAuthRouter(server, {
      loginUrl: '/login',
      browserCookiePath: '/',
      onConsent: (_req, res, interaction) => {
        const csrf = randomBytes(32).toString('base64url');
        res.cookie('consent_csrf', csrf, { httpOnly: true, sameSite: 'lax', path: '/consent' }); // add secure: true on https
        const items = interaction.scope.map((s) => `<li>${escapeHtml(interaction.scopeDescriptions?.[s] ?? s)}</li>`).join('');
        page(
          res,
          `Authorize ${interaction.client.name}`,
          `<h1>Authorize ${escapeHtml(interaction.client.name)}?</h1><ul>${items}</ul>
<form method="post" action="/consent">
<input type="hidden" name="interaction" value="${escapeHtml(interaction.id)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<button name="decision" value="approve">Authorize</button> <button name="decision" value="deny">Deny</button>
</form>`,
        );
      },
    }),
  );

  app.post('/consent', express.urlencoded({ extended: false }), async (req, res) => {
    const { interaction, csrf, decision } = req.body as Record<string, string | undefined>;
    const expected = readCookie(oauthRequest(req), 'consent_csrf');
    const same = !!csrf && !!expected && csrf.length === expected.length && timingSafeEqual(Buffer.from(csrf), Buffer.from(expected));
    if (!same || !interaction) return void res.status(403).send('The form could not be verified. Start again from the application.');
    const request = oauthRequest(req);
    // Only the browser that started the authorization may finish it; then approve or deny.
    const answer =
      (await server.checkBrowserBinding(interaction, request)) ??
      (decision === 'approve' ? await server.approve(interaction, request) : await server.deny(interaction, request));
    // The redirect back to the application (303 after this POST), or an error page.
    const response = interactionResponse(answer, request);
    res.status(response.status).set(response.headers).send(response.body);
  });
  // #endregion consent

  // #region sign-in
  app.get('/login', async (req, res) => {
    const interaction = typeof req.query['interaction'] === 'string' ? req.query['interaction'] : '';
    const about = await server.describeInteraction(interaction); // null when unknown or expired
    // A device's sign-in names no application yet (no code has been checked): say so.
    const heading = !about
      ? 'Sign in'
      : about.purpose === 'device'
        ? 'Sign in to connect a device'
        : `Sign in to continue to ${about.client.name}`;
    page(
      res,
      heading,
      `<h1>${escapeHtml(heading)}</h1><form method="post" action="/login">
<input type="hidden" name="interaction" value="${escapeHtml(interaction)}">
<input name="email" type="email" autocomplete="username"> <button>Sign in</button></form>`,
    );
  });
  // #endregion sign-in

  app.post('/login', express.urlencoded({ extended: false }), (req, res) => {
    const { email, interaction } = req.body as Record<string, string | undefined>;
    const account = accounts.find((a) => a.email === email); // a real platform checks a password here
    if (!account) return void res.status(401).send('Unknown account');
    const sid = randomBytes(32).toString('base64url');
    signedIn.set(sid, { account, authenticatedAt: clock.now() });
    res.cookie('sid', sid, { httpOnly: true, sameSite: 'lax', path: '/' });
    res.redirect(303, interaction ? `/v1/oauth/authorize/resume?interaction=${encodeURIComponent(interaction)}` : '/');
  });

  app.use('/v2', requireToken(server));
  app.get('/v2/droplets', (_req, res) => res.json({ droplets: [] }));
  app.post('/v2/droplets', (_req, res) => res.status(201).json({ created: true }));
  app.get('/v2/account', (_req, res) => res.json(res.locals.oauth!.account));

  return { app, server, clock };
}
