/**
 * authgate in an Express 5 platform: the smallest complete setup, runnable with `npm run example:express`.
 *
 *   1. the platform's own sign-in (here: two demo accounts, sessions in memory),
 *   2. `UserSessions`: how authgate asks "who is signed in?" (it reads our session cookie),
 *   3. the OAuth endpoints (`createOAuthRouter`) and a protected resource API (`requireToken`),
 *   4. a demo client, registered at start-up, whose callback page is served here too.
 *
 * Everything is in memory: restart and every client, session and token is gone.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import express, { type Response } from 'express';
import {
  AuthorizationServer,
  MemoryStorage,
  PAGE_HEADERS,
  escapeHtml,
  type Account,
  type UserSession,
  type UserSessions,
} from '../../src/index.js';
import { createOAuthRouter, requireToken } from '../../adapters/express/index.js';

const port = Number(process.env.PORT ?? 3000);
const base = `http://127.0.0.1:${port}`;

// ── 1. The platform's sign-in ───────────────────────────────────────────────────────────────
// Demo only: a real platform keeps password hashes, not passwords.
const users: { password: string; account: Account }[] = [
  { password: 'lovelace', account: { uuid: 'a3f1c2e4b5d60718293a4b5c6d7e8f90', name: 'Ada Lovelace', email: 'ada@example.com' } },
  { password: 'builder', account: { uuid: 'b0b5e1f2a3c4d5e6f708192a3b4c5d6e', name: 'Bob Builder', email: 'bob@example.com' } },
];
const SESSION_COOKIE = 'demo_sid';
const cookieOptions = { httpOnly: true, sameSite: 'lax', path: '/' } as const; // add `secure: true` behind https
const signedIn = new Map<string, UserSession>(); // session id → account + sign-in time

function readCookie(header: string | string[] | undefined, name: string): string | undefined {
  const line = Array.isArray(header) ? header.join('; ') : (header ?? '');
  for (const part of line.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
const sessionOf = (cookie: string | string[] | undefined) => signedIn.get(readCookie(cookie, SESSION_COOKIE) ?? '') ?? null;

// ── 2. What authgate needs from the platform: who is signed in, and since when ───────────────
const sessions: UserSessions = { current: (request) => sessionOf(request.headers.cookie) };

const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions });
const client = await server.registerClient({ name: 'Demo App', redirectUri: `${base}/demo/callback` });

// ── HTML: every interpolated value is escaped unless it is already an `html` fragment ───────
class Html {
  constructor(readonly value: string) {}
}
const html = (strings: TemplateStringsArray, ...values: unknown[]): Html =>
  new Html(strings.reduce((out, s, i) => out + text(values[i - 1]) + s));
const text = (v: unknown): string =>
  v instanceof Html ? v.value : Array.isArray(v) ? v.map(text).join('') : v == null || v === false ? '' : escapeHtml(String(v));
const page = (res: Response, title: string, body: Html, status = 200) =>
  res
    .status(status)
    .set(PAGE_HEADERS)
    .send(
      text(html`<!doctype html><html lang="en"><meta charset="utf-8">
<title>${title}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem}
pre{background:#f6f8fa;padding:.75rem;white-space:pre-wrap;word-break:break-all}input{font:inherit}</style>
<h1>${title}</h1>${body}`),
    );
const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
const sh = (v: string) => `'${v.replaceAll("'", `'\\''`)}'`; // quote for a POSIX shell

const app = express();
app.disable('x-powered-by');

// ── 3. The OAuth endpoints (they parse their own bodies: no global body parser) ─────────────
app.use(createOAuthRouter(server, { loginUrl: '/login' }));

// ── The platform's pages ────────────────────────────────────────────────────────────────────
app.get('/', (req, res) => {
  if (req.get('host') !== new URL(base).host) return res.redirect(`${base}/`); // one host: one cookie jar
  const session = sessionOf(req.headers.cookie);
  const state = randomBytes(16).toString('base64url'); // the client remembers it to check the callback
  res.cookie('demo_state', state, { httpOnly: true, sameSite: 'lax', path: '/demo' });
  const authorize = (responseType: string, scope: string) =>
    `/v1/oauth/authorize?client_id=${encodeURIComponent(client.clientId)}&redirect_uri=${encodeURIComponent(client.redirectUri)}` +
    `&response_type=${responseType}&scope=${encodeURIComponent(scope)}&state=${state}`;
  page(
    res,
    'authgate demo platform',
    html`
<p>${
      session
        ? html`Signed in as <strong>${session.account.name}</strong> (${session.account.email}).
  <form method="post" action="/logout" style="display:inline"><button>Sign out</button></form>`
        : html`Not signed in: the flow will ask you to <a href="/login">sign in</a>.`
    }</p>
<ul>
  <li><a href="${authorize('code', 'read write')}">Start the authorization code flow</a> (scope <code>read write</code>)</li>
  <li><a href="${authorize('token', 'read')}">Start the implicit flow</a> (scope <code>read</code>; the token comes back in the URL fragment)</li>
</ul>
<p>Demo client <code>${client.clientId}</code>, callback <code>${client.redirectUri}</code>.</p>`,
  );
});

const loginPage = (res: Response, interaction: string | undefined, error?: string) =>
  page(
    res,
    'Sign in',
    html`${error ? html`<p style="color:#b00">${error}</p>` : ''}
<p>Demo accounts: <code>ada@example.com</code> / password <code>lovelace</code>, <code>bob@example.com</code> / password <code>builder</code>.</p>
<form method="post" action="/login">
  ${interaction ? html`<input type="hidden" name="interaction" value="${interaction}">` : ''}
  <p><label>E-mail <input name="email" type="email" autocomplete="username" required></label></p>
  <p><label>Password <input name="password" type="password" autocomplete="current-password" required></label></p>
  <button>Sign in</button>
</form>`,
    error ? 401 : 200,
  );

app.get('/login', (req, res) => loginPage(res, str(req.query.interaction)));

app.post('/login', express.urlencoded({ extended: false, limit: '4kb' }), (req, res) => {
  const interaction = str(req.body?.interaction);
  const user = users.find((u) => u.account.email === str(req.body?.email) && u.password === str(req.body?.password));
  if (!user) return loginPage(res, interaction, 'Wrong e-mail or password.');
  signedIn.delete(readCookie(req.headers.cookie, SESSION_COOKIE) ?? ''); // a sign-in always gets a new session id
  const sid = randomBytes(32).toString('base64url');
  signedIn.set(sid, { account: user.account, authenticatedAt: Date.now() });
  res.cookie(SESSION_COOKIE, sid, cookieOptions);
  // Signed in in the middle of an authorization request: hand the browser back to authgate.
  res.redirect(303, interaction ? `/v1/oauth/authorize/resume?interaction=${encodeURIComponent(interaction)}` : '/');
});

app.post('/logout', (req, res) => {
  signedIn.delete(readCookie(req.headers.cookie, SESSION_COOKIE) ?? '');
  res.clearCookie(SESSION_COOKIE, cookieOptions).redirect(303, '/');
});

// ── 4. The demo client's callback (a real client lives on its own server) ───────────────────
app.get('/demo/callback', (req, res) => {
  const [code, error, state] = [str(req.query.code), str(req.query.error), str(req.query.state)];
  const expected = readCookie(req.headers.cookie, 'demo_state');
  if (error) {
    return page(
      res,
      'The authorization was not granted',
      html`<p>error=<code>${error}</code></p>
<p>${str(req.query.error_description) ?? ''}</p><p><a href="/">Back to the start</a></p>`,
    );
  }
  if (!code) {
    return page(
      res,
      'Callback',
      html`<p>No <code>code</code> in the query. After the implicit flow the access token is in
the URL fragment (<code>#access_token=…</code> in the address bar): browsers never send the fragment to a server.
Use it with <code>curl -H "Authorization: Bearer ACCESS_TOKEN" ${base}/v2/account</code>.</p><p><a href="/">Back to the start</a></p>`,
    );
  }
  if (!state || state !== expected) {
    return page(
      res,
      'State mismatch',
      html`<p>The <code>state</code> does not match the one this browser was sent with:
a real client stops here (it may be a forged callback). <a href="/">Start again</a>.</p>`,
      400,
    );
  }
  const curl = `curl -s -X POST ${base}/v1/oauth/token \\
  -d grant_type=authorization_code -d code=${sh(code)} \\
  -d client_id=${sh(client.clientId)} -d client_secret=${sh(client.clientSecret)} \\
  --data-urlencode redirect_uri=${sh(client.redirectUri)}`;
  page(
    res,
    'Authorization code received',
    html`<p>code = <code>${code}</code> (single use, valid 10 minutes; state checked ✓)</p>
<p>The client now exchanges it for tokens, from its server, with its secret (shown here because this is a demo):</p>
<pre>${curl}</pre>
<p>Then call the API: <code>curl -H "Authorization: Bearer ACCESS_TOKEN" ${base}/v2/account</code></p>
<form method="post" action="/v1/oauth/token">
  ${Object.entries({
    grant_type: 'authorization_code',
    code,
    client_id: client.clientId,
    client_secret: client.clientSecret,
    redirect_uri: client.redirectUri,
  }).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
  <button>Exchange it from the browser (demo only)</button>
</form>`,
  );
});

// ── The resource API: a token is required; its scope decides which methods are allowed ─────
app.use('/v2', requireToken(server));
app.get('/v2/account', (_req, res) => {
  const { account, scope } = res.locals.oauth!;
  res.json({ account, scope: scope.join(' ') });
});
app.post('/v2/notes', express.json({ limit: '16kb' }), (req, res) => {
  // needs `read write`
  const note = typeof req.body?.text === 'string' ? req.body.text.slice(0, 500) : '';
  res.status(201).json({ id: randomUUID(), text: note, author: res.locals.oauth!.account.uuid });
});

app.listen(port, '127.0.0.1', (error?: Error) => {
  if (error) {
    console.error(`Cannot listen on ${base}: ${error.message}. Set PORT to use another port.`);
    process.exit(1);
  }
  console.log(`authgate demo platform on ${base}/
  demo accounts: ada@example.com / ada, bob@example.com / bob
  demo client:   client_id=${client.clientId}
                 client_secret=${client.clientSecret}
                 redirect_uri=${client.redirectUri}`);
});
