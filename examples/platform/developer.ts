/**
 * The developer page: register an application (name + callback URL, `server.registerClient`) and
 * see its client ID and client secret once; reset the secret (`server.resetClientSecret`, also
 * shown once) and revoke every token the application holds (`server.revokeClientTokens`).
 *
 * authgate stores clients but has no notion of who owns one: that is the platform's business,
 * kept here in a map (a real platform keeps it in its database, next to its teams and projects).
 */
import express, { type Response, type Router } from 'express';
import { isOAuthError, type AuthorizationServer, type RegisteredClient } from '../../src/index.js';
import { csrfField, formatDate, html, sendPage, type Html } from './html.js';
import { checkCsrf, requireUser, takeFlash, type BrowserSession, type SessionStore } from './sessions.js';

export class DeveloperApps {
  private readonly owners = new Map<string, string>(); // client ID → account UUID

  constructor(private readonly server: AuthorizationServer) {}

  /** @throws OAuthError `invalid_request` when authgate refuses the name or callback URL. */
  async register(ownerUuid: string, input: { name: string; redirectUri: string }): Promise<RegisteredClient> {
    const client = await this.server.registerClient(input);
    this.owners.set(client.clientId, ownerUuid);
    return client;
  }

  owns(ownerUuid: string, clientId: unknown): clientId is string {
    return typeof clientId === 'string' && this.owners.get(clientId) === ownerUuid;
  }

  async list(ownerUuid: string) {
    const ids = [...this.owners].filter(([, owner]) => owner === ownerUuid).map(([id]) => id);
    const clients = await Promise.all(ids.map((id) => this.server.getClient(id)));
    return clients.filter((c) => c !== null);
  }
}

export function developerRoutes(server: AuthorizationServer, apps: DeveloperApps, sessions: SessionStore): Router {
  const router = express.Router();
  const form = [express.urlencoded({ extended: false, limit: '8kb' }), checkCsrf(sessions), requireUser(sessions)];

  const page = (res: Response, session: BrowserSession, title: string, body: Html, status = 200) =>
    sendPage(res, { title, user: session.user!.account, csrf: session.csrf, flash: takeFlash(session) }, body, status);

  const developerPage = async (
    res: Response,
    session: BrowserSession,
    form: { name?: string; redirectUri?: string; error?: string } = {},
  ) => {
    const mine = await apps.list(session.user!.account.uuid);
    page(
      res,
      session,
      'Developer',
      html`
<h2>Your applications</h2>
${
  mine.length === 0
    ? html`<div class="box muted">You have not registered an application yet.</div>`
    : html`
<table><tr><th>Application</th><th>Client ID and callback URL</th><th></th></tr>
${mine.map(
  (app) => html`<tr><td><strong>${app.name}</strong><br><span class="muted">since ${formatDate(app.createdAt)}</span></td>
<td><code>${app.clientId}</code><br><code>${app.redirectUri}</code></td>
<td><form method="post" action="/developer/reset-secret">${csrfField(session.csrf)}<input type="hidden" name="client_id" value="${app.clientId}">
<button class="secondary">Reset client secret</button></form>
<form method="post" action="/developer/revoke-tokens">${csrfField(session.csrf)}<input type="hidden" name="client_id" value="${app.clientId}">
<button class="danger">Revoke all tokens</button></form></td></tr>`,
)}</table>`
}
<h2>Register an application</h2>
${form.error ? html`<p class="error">${form.error}</p>` : ''}
<div class="box"><form method="post" action="/developer/apps">${csrfField(session.csrf)}
<label for="name">Application name</label><input id="name" name="name" type="text" maxlength="200" value="${form.name ?? ''}" required>
<label for="redirect_uri">Callback URL</label><input id="redirect_uri" name="redirect_uri" type="url" value="${form.redirectUri ?? ''}"
  placeholder="https://app.example/callback" required>
<p class="muted">Must be https; http only on 127.0.0.1 or localhost, for development. Every authorization request must send exactly this URL.</p>
<p class="actions"><button>Register</button></p></form></div>`,
      form.error ? 400 : 200,
    );
  };

  const secretPage = (res: Response, session: BrowserSession, title: string, client: { clientId: string; clientSecret: string }) =>
    page(
      res,
      session,
      title,
      html`<div class="box">
<p>Client ID<br><code>${client.clientId}</code></p>
<p>Client secret<br><span class="secret">${client.clientSecret}</span></p>
<p><strong>Copy the client secret now.</strong> Nimbus keeps only a hash of it and will not show it again.
Keep it on your server: never in a browser or a mobile app.</p></div>
<p><a href="/developer">Back to the developer page</a></p>`,
    );

  router.get('/developer', requireUser(sessions), (_req, res) => developerPage(res, res.locals.session!));

  router.post('/developer/apps', ...form, async (req, res) => {
    const session = res.locals.session!;
    const input = { name: String(req.body.name ?? ''), redirectUri: String(req.body.redirect_uri ?? '') };
    try {
      const client = await apps.register(session.user.account.uuid, input);
      secretPage(res, session, `${client.name} is registered`, client);
    } catch (error) {
      if (!isOAuthError(error)) throw error;
      await developerPage(res, session, { ...input, error: error.description });
    }
  });

  router.post('/developer/reset-secret', ...form, async (req, res) => {
    const session = res.locals.session!;
    if (!apps.owns(session.user.account.uuid, req.body.client_id)) return res.redirect(303, '/developer');
    secretPage(res, session, 'New client secret', await server.resetClientSecret(req.body.client_id));
  });

  router.post('/developer/revoke-tokens', ...form, async (req, res) => {
    const session = res.locals.session!;
    const client = apps.owns(session.user.account.uuid, req.body.client_id) ? await server.getClient(req.body.client_id) : null;
    if (client) {
      await server.revokeClientTokens(client.clientId);
      session.flash = `Every token ${client.name} held is revoked. Its users stay authorized, so it can ask for new tokens.`;
    }
    res.redirect(303, '/developer');
  });
  return router;
}
