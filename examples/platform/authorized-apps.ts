/**
 * "Authorized applications": every application the signed-in user has authorized, with its scope
 * and date (`server.listAuthorizations`), and a button that revokes it (`server.revokeAccess`,
 * docs/reference.md#revocation-semantics): its tokens stop working at once, and the next
 * `prompt=none` answers `consent_required`.
 */
import express, { type Router } from 'express';
import type { AuthorizationServer } from '../../src/index.js';
import { csrfField, formatDate, html, scopeWords, sendPage } from './html.js';
import { checkCsrf, requireUser, takeFlash, type SessionStore } from './sessions.js';

export function authorizedAppsRoutes(server: AuthorizationServer, sessions: SessionStore): Router {
  const router = express.Router();

  router.get('/account/applications', requireUser(sessions), async (_req, res) => {
    const session = res.locals.session!;
    const apps = await server.listAuthorizations(session.user.account.uuid);
    sendPage(
      res,
      { title: 'Authorized applications', user: session.user.account, csrf: session.csrf, flash: takeFlash(session) },
      html`
<p>These applications can access your Nimbus account. Revoke one and every token it holds stops working at once.</p>
${
  apps.length === 0
    ? html`<div class="box muted">You have not authorized any application.</div>`
    : html`
<table><tr><th>Application</th><th>Access</th><th>Authorized</th><th></th></tr>
${apps.map(
  (app) => html`<tr><td><strong>${app.client.name}</strong></td><td>${scopeWords(app.scope)} (<code>${app.scope.join(' ')}</code>)</td>
<td>${formatDate(app.grantedAt)}</td>
<td><form method="post" action="/account/applications/revoke">${csrfField(session.csrf)}<input type="hidden" name="client_id" value="${app.client.id}">
<button class="danger">Revoke access</button></form></td></tr>`,
)}</table>`
}`,
    );
  });

  router.post(
    '/account/applications/revoke',
    express.urlencoded({ extended: false, limit: '4kb' }),
    checkCsrf(sessions),
    requireUser(sessions),
    async (req, res) => {
      const session = res.locals.session!;
      const clientId = typeof req.body.client_id === 'string' ? req.body.client_id : '';
      const client = await server.getClient(clientId);
      if (client) {
        await server.revokeAccess({ accountUuid: session.user.account.uuid, clientId });
        session.flash = `${client.name} can no longer access your account.`;
      }
      res.redirect(303, '/account/applications');
    },
  );
  return router;
}
