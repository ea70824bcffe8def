/**
 * The platform's sign-in and sign-out. When authgate needs a sign-in in the middle of an
 * authorization request (nobody signed in, `prompt=login`, a session older than `max_auth_age`, or
 * "Use another account" on the consent page), the adapter sends the browser to
 * `/login?interaction=…`; after signing the user in we send it to
 * `/v1/oauth/authorize/resume?interaction=…` and authgate takes over again.
 */
import express, { type Router } from 'express';
import { pageOptions, type Account, type AuthorizationServer } from '../../src/index.js';
import { csrfField, html, sendPage, type Html } from './html.js';
import { checkCsrf, type SessionStore } from './sessions.js';

/** Demo only: a real platform keeps password hashes (scrypt, argon2), never passwords. */
export const DEMO_USERS: { password: string; account: Account }[] = [
  { password: 'lovelace', account: { uuid: 'a3f1c2e4b5d60718293a4b5c6d7e8f90', name: 'Ada Lovelace', email: 'ada@example.com' } },
  { password: 'builder', account: { uuid: 'b0b5e1f2a3c4d5e6f708192a3b4c5d6e', name: 'Bob Builder', email: 'bob@example.com' } },
];

/**
 * The sign-in page in the languages of authgate's built-in pages (brand.ts: English and French),
 * so the steps of one authorization speak one language: the consent page that follows is in the
 * language authgate negotiates, and this page asks authgate which one that is.
 */
const WORDS = {
  en: {
    title: 'Sign in',
    anApp: 'An application',
    again: (name: string, app: string) =>
      html`<p>You are signed in as <strong>${name}</strong>. To continue to <strong>${app}</strong>, sign in again, with this account or another one.</p>`,
    asks: (app: string) =>
      html`<p><strong>${app}</strong> asks for access to your Nimbus account. Sign in first; you will then see what it asks for.</p>`,
    device: () => html`<p>Sign in to connect a device to your Nimbus account; you will then enter the code it shows.</p>`,
    email: 'E-mail',
    password: 'Password',
    submit: 'Sign in',
    demo: 'Demo accounts',
    demoUser: (name: string, email: string, password: string) =>
      html`<li>${name}: <code>${email}</code>, password <code>${password}</code></li>`,
    wrong: 'Wrong e-mail or password.',
  },
  fr: {
    title: 'Connexion',
    anApp: 'Une application',
    again: (name: string, app: string) =>
      html`<p>Vous êtes connecté·e en tant que <strong>${name}</strong>. Pour continuer vers <strong>${app}</strong>, connectez-vous à nouveau, avec ce compte ou un autre.</p>`,
    asks: (app: string) =>
      html`<p><strong>${app}</strong> demande l'accès à votre compte Nimbus. Connectez-vous d'abord ; vous verrez ensuite ce qu'elle demande.</p>`,
    device: () => html`<p>Connectez-vous pour relier un appareil à votre compte Nimbus ; vous saisirez ensuite le code qu'il affiche.</p>`,
    email: 'Adresse e-mail',
    password: 'Mot de passe',
    submit: 'Se connecter',
    demo: 'Comptes de démonstration',
    demoUser: (name: string, email: string, password: string) =>
      html`<li>${name} : <code>${email}</code>, mot de passe <code>${password}</code></li>`,
    wrong: 'Adresse e-mail ou mot de passe incorrect.',
  },
} satisfies Record<string, { [key: string]: string | ((...values: string[]) => Html) }>;

const str = (v: unknown) => (typeof v === 'string' ? v : '');
/** Only our own pages as a destination after sign-in: no open redirect. */
const localPath = (v: unknown) => (typeof v === 'string' && /^\/(?!\/)[\w\-/]*$/.test(v) ? v : '/');

export function signInRoutes(sessions: SessionStore, server: AuthorizationServer): Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '4kb' });

  /** The language authgate's consent page will speak to this browser (`pages` of the server, Accept-Language). */
  const languageOf = (req: express.Request): keyof typeof WORDS =>
    pageOptions(server.options.pages, { method: req.method, url: req.originalUrl, headers: req.headers }).lang === 'fr' ? 'fr' : 'en';

  const signInPage = async (
    req: express.Request,
    res: express.Response,
    fields: { interaction: string; next: string; email?: string; wrong?: boolean },
  ) => {
    const session = sessions.ensure(req, res);
    const lang = languageOf(req);
    const w = WORDS[lang];
    // Which application is waiting (authgate tells without using the interaction up).
    const about = fields.interaction ? await server.describeInteraction(fields.interaction) : null;
    const appName = about?.client.name ?? w.anApp;
    // A device's sign-in names no application yet: its code is entered after signing in.
    const intro = !fields.interaction
      ? ''
      : about?.purpose === 'device'
        ? w.device()
        : session.user
          ? w.again(session.user.account.name, appName)
          : w.asks(appName);
    res.vary('Accept-Language');
    sendPage(
      res,
      { title: w.title, flow: true, lang },
      html`${intro}
${fields.wrong ? html`<p class="error" role="alert">${w.wrong}</p>` : ''}
<div class="box"><form method="post" action="/login">${csrfField(session.csrf)}
  <input type="hidden" name="interaction" value="${fields.interaction}"><input type="hidden" name="next" value="${fields.next}">
  <label for="email">${w.email}</label><input id="email" name="email" type="email" autocomplete="username" value="${fields.email ?? ''}" required>
  <label for="password">${w.password}</label><input id="password" name="password" type="password" autocomplete="current-password" required>
  <p class="actions"><button>${w.submit}</button></p>
</form></div>
<div class="box muted"><strong>${w.demo}</strong><ul>
${DEMO_USERS.map((u) => w.demoUser(u.account.name, u.account.email, u.password))}</ul></div>`,
      fields.wrong ? 401 : 200,
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
        wrong: true,
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
