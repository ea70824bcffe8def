/**
 * The platform's sign-in and sign-out. When authgate needs a sign-in in the middle of an
 * authorization request (nobody signed in, `prompt=login`, a session older than `max_auth_age`, or
 * "Use another account" on the consent page), the adapter sends the browser to
 * `/login?interaction=…`; after signing the user in we send it to
 * `/v1/oauth/authorize/resume?interaction=…` and authgate takes over again.
 */
import express, { type Router } from 'express';
import type { Account, AuthorizationServer } from '../../src/index.js';
import { csrfField, html, sendPage } from './html.js';
import { checkCsrf, type SessionStore } from './sessions.js';

/** Demo only: a real platform keeps password hashes (scrypt, argon2), never passwords. */
export const DEMO_USERS: { password: string; account: Account }[] = [
  { password: 'lovelace', account: { uuid: 'a3f1c2e4b5d60718293a4b5c6d7e8f90', name: 'Ada Lovelace', email: 'ada@example.com' } },
  { password: 'builder', account: { uuid: 'b0b5e1f2a3c4d5e6f708192a3b4c5d6e', name: 'Bob Builder', email: 'bob@example.com' } },
];

const str = (v: unknown) => (typeof v === 'string' ? v : '');
/** Only our own pages as a destination after sign-in: no open redirect. */
const localPath = (v: unknown) => (typeof v === 'string' && /^\/(?!\/)[\w\-/]*$/.test(v) ? v : '/');

export function signInRoutes(sessions: SessionStore, server: AuthorizationServer): Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '4kb' });

  const signInPage = async (
    req: express.Request,
    res: express.Response,
    fields: { interaction: string; next: string; email?: string; error?: string },
  ) => {
    const session = sessions.ensure(req, res);
    // Which application is waiting (authgate tells without using the interaction up).
    const about = fields.interaction ? await server.describeInteraction(fields.interaction) : null;
    const appName = about?.client.name ?? 'An application';
    const intro = fields.interaction
      ? session.user
        ? html`<p>You are signed in as <strong>${session.user.account.name}</strong>. To continue to <strong>${appName}</strong>,
sign in again, with this account or another one.</p>`
        : html`<p><strong>${appName}</strong> asks for access to your Nimbus account. Sign in first; you will then see what it asks for.</p>`
      : '';
    sendPage(
      res,
      { title: 'Sign in', user: session.user?.account, csrf: session.csrf },
      html`${intro}
${fields.error ? html`<p class="error">${fields.error}</p>` : ''}
<div class="box"><form method="post" action="/login">${csrfField(session.csrf)}
  <input type="hidden" name="interaction" value="${fields.interaction}"><input type="hidden" name="next" value="${fields.next}">
  <label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="username" value="${fields.email ?? ''}" required>
  <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
  <p class="actions"><button>Sign in</button></p>
</form></div>
<div class="box muted"><strong>Demo accounts</strong><ul>
${DEMO_USERS.map((u) => html`<li>${u.account.name}: <code>${u.account.email}</code>, password <code>${u.password}</code></li>`)}</ul></div>`,
      fields.error ? 401 : 200,
    );
  };

  router.get('/login', (req, res, next) => {
    signInPage(req, res, { interaction: str(req.query.interaction), next: localPath(req.query.next) }).catch(next);
  });

  router.post('/login', form, checkCsrf(sessions), async (req, res) => {
    const interaction = str(req.body.interaction);
    const user = DEMO_USERS.find(
      (u) => u.account.email === str(req.body.email).trim().toLowerCase() && u.password === str(req.body.password),
    );
    if (!user)
      return void (await signInPage(req, res, {
        interaction,
        next: localPath(req.body.next),
        email: str(req.body.email),
        error: 'Wrong e-mail or password.',
      }));
    sessions.signIn(req, res, user.account);
    // In the middle of an authorization request: hand the browser back to authgate.
    res.redirect(303, interaction ? `/v1/oauth/authorize/resume?interaction=${encodeURIComponent(interaction)}` : localPath(req.body.next));
  });

  router.post('/logout', form, checkCsrf(sessions), (req, res) => {
    sessions.signOut(req, res);
    res.redirect(303, '/');
  });
  return router;
}
