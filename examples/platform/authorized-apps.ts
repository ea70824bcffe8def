/**
 * "Authorized applications": every application the signed-in user has authorized, with its scope
 * and date (`server.listAuthorizations`), and a button that revokes it (`server.revokeAccess`,
 * docs/reference.md#revocation-semantics): its tokens stop working at once, and the next
 * `prompt=none` answers `consent_required`; and "Sign out of every app" (`server.revokeAllForAccount`,
 * docs/reference.md#managing-clients), which does that for every application at once. Both ask
 * first, naming what they end (html.ts `confirmBox`).
 */
import express, { type Router } from 'express';
import type { AuthorizationServer } from '../../src/index.js';
import { confirmBox, csrfField, formatDate, html, scopeWords, sendPage, type Html } from './html.js';
import { checkCsrf, requireUser, takeFlash, type BrowserSession, type SessionStore } from './sessions.js';

export function authorizedAppsRoutes(server: AuthorizationServer, sessions: SessionStore): Router {
  const router = express.Router();
  const form = [express.urlencoded({ extended: false, limit: '4kb' }), checkCsrf(sessions), requireUser(sessions)];
  const page = (res: express.Response, session: BrowserSession, title: string, body: Html) =>
    sendPage(res, { title, user: session.user!.account, csrf: session.csrf }, body);

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
  (
    app,
  ) => html`<tr><td><strong>${app.client.name}</strong></td><td data-label="Access">${scopeWords(app.scope)} (<code>${app.scope.join(' ')}</code>)</td>
<td data-label="Authorized">${formatDate(app.grantedAt)}</td>
<td><form method="post" action="/account/applications/revoke">${csrfField(session.csrf)}<input type="hidden" name="client_id" value="${app.client.id}">
<button class="danger">Revoke access</button></form></td></tr>`,
)}</table>
<h2>Every application at once</h2>
<form method="post" action="/account/applications/revoke-all" class="box">
<p>Lost a device, or leaving Nimbus? End the access of every application above in one go.</p>${csrfField(session.csrf)}
<button class="danger">Sign out of every app</button></form>`
}`,
    );
  });

  router.post('/account/applications/revoke', ...form, async (req, res) => {
    const session = res.locals.session!;
    const clientId = typeof req.body.client_id === 'string' ? req.body.client_id : '';
    const client = await server.getClient(clientId);
    if (!client) return res.redirect(303, '/account/applications');
    if (req.body.confirm !== 'yes') {
      return page(
        res,
        session,
        'Revoke access',
        confirmBox(session.csrf, {
          action: '/account/applications/revoke',
          fields: { client_id: client.clientId },
          question: html`Revoke the access of <strong>${client.name}</strong> to your Nimbus account? Every token it holds stops working
at once, and it must ask you again before it gets a new one.`,
          confirm: 'Revoke access',
          cancel: '/account/applications',
        }),
      );
    }
    await server.revokeAccess({ accountUuid: session.user.account.uuid, clientId });
    session.flash = `${client.name} can no longer access your account.`;
    res.redirect(303, '/account/applications');
  });

  router.post('/account/applications/revoke-all', ...form, async (req, res) => {
    const session = res.locals.session!;
    const apps = await server.listAuthorizations(session.user.account.uuid);
    if (req.body.confirm !== 'yes') {
      return page(
        res,
        session,
        'Sign out of every app',
        confirmBox(session.csrf, {
          action: '/account/applications/revoke-all',
          question: html`End the access of every application to your Nimbus account${
            apps.length ? html` (${apps.map((a, i) => html`${i ? ', ' : ''}<strong>${a.client.name}</strong>`)})` : ''
          }? Every token they hold stops working at once, and each must ask you again.`,
          confirm: 'Sign out of every app',
          cancel: '/account/applications',
        }),
      );
    }
    await server.revokeAllForAccount(session.user.account.uuid);
    session.flash = 'Every application is signed out: none can access your account any more.';
    res.redirect(303, '/account/applications');
  });
  return router;
}
