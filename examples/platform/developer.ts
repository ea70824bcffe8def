/**
 * The developer page: register an application (name + callback URL, `server.registerClient`) and
 * see its client ID and client secret once; edit its name and callback URL (`server.updateClient`:
 * codes and sign-ins pending for the old callback die with it); reset the secret
 * (`server.resetClientSecret`, also shown once); revoke every token it holds
 * (`server.revokeClientTokens`); delete it (`server.deleteClient`). Every action that cannot be
 * undone asks first, naming the application (html.ts `confirmBox`).
 *
 * Who owns an application is kept by authgate (`owner`, docs/reference.md#managing-clients): the
 * page lists `server.listClients({ owner: account.uuid })`, and every action checks the owner.
 */
import express, { type Response, type Router } from 'express';
import { isOAuthError, type AuthorizationServer, type ClientInfo, type RegisteredClient } from '../../src/index.js';
import { confirmBox, csrfField, formatDate, html, sendPage, type Html } from './html.js';
import { checkCsrf, requireUser, takeFlash, type BrowserSession, type SessionStore } from './sessions.js';

/**
 * A client the demo itself runs (StatusBoard, examples/platform/demo-clients.ts): its secret lives in
 * the demo's process, so the page offers no reset, edit or delete of it, only "Revoke all tokens".
 */
export const managedByDemo = (client: ClientInfo) => client.metadata?.['managedBy'] === 'demo';

export class DeveloperApps {
  constructor(private readonly server: AuthorizationServer) {}

  /** @throws OAuthError `invalid_request` when authgate refuses the name or callback URL. */
  register(ownerUuid: string, input: { name: string; redirectUri: string }): Promise<RegisteredClient> {
    return this.server.registerClient({ ...input, owner: ownerUuid });
  }

  /** The client, when it is this account's; `null` otherwise (unknown, someone else's, not a string). */
  async owned(ownerUuid: string, clientId: unknown): Promise<ClientInfo | null> {
    const client = typeof clientId === 'string' ? await this.server.getClient(clientId) : null;
    return client?.owner === ownerUuid ? client : null;
  }

  list(ownerUuid: string): Promise<ClientInfo[]> {
    return this.server.listClients({ owner: ownerUuid });
  }
}

const field = (v: unknown) => (typeof v === 'string' ? v : '');

export function developerRoutes(server: AuthorizationServer, apps: DeveloperApps, sessions: SessionStore): Router {
  const router = express.Router();
  const form = [express.urlencoded({ extended: false, limit: '8kb' }), checkCsrf(sessions), requireUser(sessions)];

  const page = (res: Response, session: BrowserSession, title: string, body: Html, status = 200) =>
    sendPage(res, { title, user: session.user!.account, csrf: session.csrf, flash: takeFlash(session) }, body, status);
  const button = (session: BrowserSession, action: string, clientId: string, label: string, cls: string) =>
    html`<form method="post" action="${action}">${csrfField(session.csrf)}<input type="hidden" name="client_id" value="${clientId}">
<button class="${cls}">${label}</button></form>`;

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
<table class="apps"><tr><th>Application</th><th>Client</th><th></th></tr>
${mine.map(
  (app) => html`<tr><td><strong>${app.name}</strong><br><span class="muted">since ${formatDate(app.createdAt)}</span></td>
<td><dl class="ids"><dt>Client ID</dt><dd><code class="id">${app.clientId}</code></dd><dt>Callback URL</dt><dd><code>${app.redirectUri}</code></dd></dl></td>
<td>${
    managedByDemo(app)
      ? html`<p class="muted">Run by the demo, which holds its secret: it resets the secret and callback URL at each start.</p>`
      : html`<a href="/developer/edit?client_id=${encodeURIComponent(app.clientId)}">Edit</a>
${button(session, '/developer/reset-secret', app.clientId, 'Reset client secret', 'secondary')}`
  }
${button(session, '/developer/revoke-tokens', app.clientId, 'Revoke all tokens', 'danger')}
${managedByDemo(app) ? '' : button(session, '/developer/delete', app.clientId, 'Delete', 'danger')}</td></tr>`,
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

  const editPage = (
    res: Response,
    session: BrowserSession,
    app: ClientInfo,
    input = { name: app.name, redirectUri: app.redirectUri },
    error?: string,
  ) =>
    page(
      res,
      session,
      `Edit ${app.name}`,
      html`${error ? html`<p class="error">${error}</p>` : ''}
<div class="box"><form method="post" action="/developer/edit">${csrfField(session.csrf)}<input type="hidden" name="client_id" value="${app.clientId}">
<p>Client ID<br><code class="id">${app.clientId}</code></p>
<label for="name">Application name</label><input id="name" name="name" type="text" maxlength="200" value="${input.name}" required>
<label for="redirect_uri">Callback URL</label><input id="redirect_uri" name="redirect_uri" type="url" value="${input.redirectUri}" required>
<p class="muted">A new callback URL works at once, and the old one stops: codes not yet exchanged and sign-ins under way for it fail.
Tokens already issued stay valid.</p>
<p class="actions"><button>Save</button> <a class="cancel" href="/developer">Cancel</a></p></form></div>`,
      error ? 400 : 200,
    );

  const secretPage = (res: Response, session: BrowserSession, title: string, client: { clientId: string; clientSecret: string }) =>
    page(
      res,
      session,
      title,
      html`<div class="box">
<p>Client ID<br><code class="id">${client.clientId}</code></p>
<p>Client secret<br><span class="secret">${client.clientSecret}</span></p>
<p><strong>Copy the client secret now.</strong> Nimbus keeps only a hash of it and will not show it again.
Keep it on your server: never in a browser or a mobile app.</p></div>
<p><a href="/developer">Back to the developer page</a></p>`,
    );

  /** This account's client named in the form, not run by the demo; else back to the list. */
  const editable = async (session: BrowserSession, clientId: unknown) => {
    const app = await apps.owned(session.user!.account.uuid, clientId);
    return app && !managedByDemo(app) ? app : null;
  };
  const ask = (res: Response, session: BrowserSession, action: string, app: ClientInfo, title: string, question: Html, confirm: string) =>
    page(
      res,
      session,
      title,
      confirmBox(session.csrf, { action, fields: { client_id: app.clientId }, question, confirm, cancel: '/developer' }),
    );

  router.get('/developer', requireUser(sessions), (_req, res) => developerPage(res, res.locals.session!));

  router.post('/developer/apps', ...form, async (req, res) => {
    const session = res.locals.session!;
    const input = { name: field(req.body.name), redirectUri: field(req.body.redirect_uri) };
    try {
      const client = await apps.register(session.user.account.uuid, input);
      secretPage(res, session, `${client.name} is registered`, client);
    } catch (error) {
      if (!isOAuthError(error)) throw error;
      await developerPage(res, session, { ...input, error: error.description });
    }
  });

  router.get('/developer/edit', requireUser(sessions), async (req, res) => {
    const session = res.locals.session!;
    const app = await editable(session, req.query.client_id);
    if (!app) return res.redirect(303, '/developer');
    editPage(res, session, app);
  });

  router.post('/developer/edit', ...form, async (req, res) => {
    const session = res.locals.session!;
    const app = await editable(session, req.body.client_id);
    if (!app) return res.redirect(303, '/developer');
    const input = { name: field(req.body.name), redirectUri: field(req.body.redirect_uri) };
    try {
      await server.updateClient(app.clientId, input);
    } catch (error) {
      if (!isOAuthError(error)) throw error;
      return editPage(res, session, app, input, error.description);
    }
    session.flash = `${input.name.trim()} is saved.${input.redirectUri === app.redirectUri ? '' : ' Its old callback URL no longer works.'}`;
    res.redirect(303, '/developer');
  });

  router.post('/developer/reset-secret', ...form, async (req, res) => {
    const session = res.locals.session!;
    const app = await editable(session, req.body.client_id);
    if (!app) return res.redirect(303, '/developer');
    if (req.body.confirm !== 'yes') {
      return ask(
        res,
        session,
        '/developer/reset-secret',
        app,
        'Reset client secret',
        html`Reset the client secret of <strong>${app.name}</strong>? Its current secret stops working at once: the application cannot
exchange codes or refresh tokens until it is given the new one. Tokens already issued stay valid.`,
        'Reset the secret',
      );
    }
    secretPage(res, session, `New client secret for ${app.name}`, await server.resetClientSecret(app.clientId));
  });

  router.post('/developer/revoke-tokens', ...form, async (req, res) => {
    const session = res.locals.session!;
    const app = await apps.owned(session.user.account.uuid, req.body.client_id);
    if (!app) return res.redirect(303, '/developer');
    if (req.body.confirm !== 'yes') {
      return ask(
        res,
        session,
        '/developer/revoke-tokens',
        app,
        'Revoke all tokens',
        html`Revoke every token <strong>${app.name}</strong> holds, for every user? Its API calls fail at once. Its users stay authorized,
so it can ask for new tokens.`,
        'Revoke all tokens',
      );
    }
    await server.revokeClientTokens(app.clientId);
    session.flash = `Every token ${app.name} held is revoked. Its users stay authorized, so it can ask for new tokens.`;
    res.redirect(303, '/developer');
  });

  router.post('/developer/delete', ...form, async (req, res) => {
    const session = res.locals.session!;
    const app = await editable(session, req.body.client_id);
    if (!app) return res.redirect(303, '/developer');
    if (req.body.confirm !== 'yes') {
      return ask(
        res,
        session,
        '/developer/delete',
        app,
        'Delete application',
        html`Delete <strong>${app.name}</strong>? Every token it holds stops working at once, every user's authorization of it is removed,
and its client ID is refused from now on. This cannot be undone.`,
        'Delete the application',
      );
    }
    await server.deleteClient(app.clientId);
    session.flash = `${app.name} is deleted.`;
    res.redirect(303, '/developer');
  });
  return router;
}
