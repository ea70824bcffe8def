/**
 * "API tokens": personal access tokens the signed-in user creates for scripts and the command
 * line (docs/reference.md#personal-access-tokens). Create one with a name, a scope and an expiry
 * (`server.createPersonalToken`) and see it once; the list shows when each was last used
 * (`server.listPersonalTokens`, written at most once a minute); revoking one asks first
 * (`server.revokePersonalToken`), and it stops working at once.
 */
import express, { type Response, type Router } from 'express';
import { isOAuthError, type AuthorizationServer } from '../../src/index.js';
import { confirmBox, csrfField, formatDate, html, scopeWords, sendPage, type Html } from './html.js';
import { checkCsrf, requireUser, takeFlash, type BrowserSession, type SessionStore } from './sessions.js';

const DAY = 86_400;
/** The expiries offered, in seconds (`''`: never). */
const EXPIRIES: [string, string][] = [
  [String(7 * DAY), '7 days'],
  [String(30 * DAY), '30 days'],
  [String(90 * DAY), '90 days'],
  ['', 'No expiry'],
];

export function apiTokenRoutes(server: AuthorizationServer, sessions: SessionStore): Router {
  const router = express.Router();
  const form = [express.urlencoded({ extended: false, limit: '4kb' }), checkCsrf(sessions), requireUser(sessions)];
  const page = (res: Response, session: BrowserSession, title: string, body: Html, status = 200) =>
    sendPage(res, { title, user: session.user!.account, csrf: session.csrf, flash: takeFlash(session) }, body, status);

  const tokensPage = async (res: Response, session: BrowserSession, error?: string) => {
    const tokens = await server.listPersonalTokens(session.user!.account.uuid);
    const now = Date.now();
    page(
      res,
      session,
      'API tokens',
      html`
<p>Personal access tokens act as you on the Nimbus API (<code>Authorization: Bearer &lt;token&gt;</code>), for scripts and the command line.
Treat each like a password; revoke one you no longer need.</p>
${
  tokens.length === 0
    ? html`<div class="box muted">You have no API tokens.</div>`
    : html`
<table><tr><th>Name</th><th>Access</th><th>Expires</th><th>Last used</th><th></th></tr>
${tokens.map(
  (t) => html`<tr><td><strong>${t.name}</strong><br><span class="muted">created ${formatDate(t.createdAt)}</span></td>
<td data-label="Access">${scopeWords(t.scope)} (<code>${t.scope.join(' ')}</code>)</td>
<td data-label="Expires">${t.expiresAt === null ? 'Never' : t.expiresAt <= now ? html`<strong>Expired</strong> ${formatDate(t.expiresAt)}` : formatDate(t.expiresAt)}</td>
<td data-label="Last used">${t.lastUsedAt === null ? html`<span class="muted">Never used</span>` : formatDate(t.lastUsedAt)}</td>
<td><form method="post" action="/account/tokens/revoke">${csrfField(session.csrf)}<input type="hidden" name="id" value="${t.id}">
<button class="danger">Revoke</button></form></td></tr>`,
)}</table>`
}
<h2>Create a token</h2>
${error ? html`<p class="error">${error}</p>` : ''}
<form method="post" action="/account/tokens" class="box">${csrfField(session.csrf)}
<label for="name">Name</label><input type="text" id="name" name="name" maxlength="100" placeholder="CI deploy" required>
<label>Access</label>
<input type="radio" id="scope-read" name="scope" value="read" checked> <label for="scope-read" style="display:inline;font-weight:normal">Read-only</label>
<input type="radio" id="scope-write" name="scope" value="read write"> <label for="scope-write" style="display:inline;font-weight:normal">Read and write</label>
<label for="expires">Expires after</label><select id="expires" name="expires_in">${EXPIRIES.map(
        ([value, label]) => html`<option value="${value}"${value === String(30 * DAY) ? html` selected` : ''}>${label}</option>`,
      )}</select>
<div class="actions"><button>Create token</button></div></form>
<p class="muted">Last use is recorded at most once a minute.</p>`,
      error ? 400 : 200,
    );
  };

  router.get('/account/tokens', requireUser(sessions), (_req, res) => tokensPage(res, res.locals.session!));

  router.post('/account/tokens', ...form, async (req, res) => {
    const session = res.locals.session!;
    const expires = typeof req.body.expires_in === 'string' && req.body.expires_in !== '' ? Number(req.body.expires_in) : null;
    try {
      const created = await server.createPersonalToken({
        account: session.user!.account,
        name: typeof req.body.name === 'string' ? req.body.name : '',
        scope: typeof req.body.scope === 'string' ? req.body.scope : 'read',
        expiresIn: expires,
      });
      page(
        res,
        session,
        'Your new API token',
        html`<div class="box"><p><strong>${created.name}</strong>: ${scopeWords(created.scope)}.
${created.expiresAt === null ? 'It never expires.' : `It expires on ${formatDate(created.expiresAt)}.`}</p>
<p>Copy it now: it is shown only this once.</p><p class="secret" id="token">${created.token}</p></div>
<p><a href="/account/tokens">Back to API tokens</a></p>`,
      );
    } catch (error) {
      if (!isOAuthError(error)) throw error;
      await tokensPage(res, session, error.description);
    }
  });

  // Revoking asks first: the confirm page, then its form revokes.
  router.post('/account/tokens/revoke', ...form, async (req, res) => {
    const session = res.locals.session!;
    const token = (await server.listPersonalTokens(session.user!.account.uuid)).find((t) => t.id === req.body.id);
    if (!token) return res.redirect(303, '/account/tokens');
    if (req.body.confirm !== 'yes') {
      return page(
        res,
        session,
        'Revoke API token',
        confirmBox(session.csrf, {
          action: '/account/tokens/revoke',
          fields: { id: token.id },
          question: html`Revoke <strong>${token.name}</strong>? Every script that uses it stops working at once. This cannot be undone.`,
          confirm: 'Revoke token',
          cancel: '/account/tokens',
        }),
      );
    }
    if (await server.revokePersonalToken(session.user!.account.uuid, token.id)) session.flash = `${token.name} is revoked.`;
    res.redirect(303, '/account/tokens');
  });
  return router;
}
