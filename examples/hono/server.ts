/**
 * authgate in a Hono 4 platform, in memory, on Node through @hono/node-server:
 * `npm run example:hono`. The app itself is Web-standard: on Bun, Deno or Workers export `app`
 * (its `fetch`) instead of calling `serve`.
 *
 *   - the platform's sign-in (examples/shared/demo-platform.ts: demo accounts and sessions),
 *   - the OAuth endpoints: `createOAuthApp`, mounted at the root,
 *   - a protected resource API: `requireToken` as middleware, the token as `c.get('oauth')`,
 *   - the demo client's callback page.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createOAuthApp, requireToken, type OAuthVariables } from '../../adapters/hono/index.js';
import { afterSignIn, banner, callbackText, createDemo, loginPage, signIn } from '../shared/demo-platform.js';

const port = Number(process.env.PORT ?? 3020);
const base = `http://127.0.0.1:${port}`;
const demo = await createDemo(base);
const { server } = demo;

const app = new Hono<{ Variables: OAuthVariables }>();

// The OAuth endpoints under /v1/oauth; a sign-in is sent to /login?interaction=…
app.route('/', createOAuthApp(server, { loginUrl: '/login' }));

// The platform's sign-in.
app.get('/login', (c) => c.html(loginPage(c.req.query('interaction'))));
app.post('/login', async (c) => {
  const form = await c.req.parseBody();
  const cookie = signIn(form, c.req.header('cookie'));
  if (!cookie)
    return c.html(loginPage(typeof form['interaction'] === 'string' ? form['interaction'] : undefined, 'Wrong e-mail or password.'), 401);
  c.header('set-cookie', cookie);
  return c.redirect(afterSignIn(form['interaction']), 303);
});

app.get('/', (c) => c.redirect(demo.authorizeUrl));

// The demo client's callback (a real client lives on its own server).
app.get('/demo/callback', (c) => c.text(callbackText(base, demo.client, new URL(c.req.url).searchParams)));

// The resource API: a token is required; its scope decides which methods are allowed.
app.use('/v2/*', requireToken(server));
app.get('/v2/account', (c) => c.json({ account: c.get('oauth').account, scope: c.get('oauth').scope.join(' ') }));
app.post('/v2/notes', (c) => c.json({ author: c.get('oauth').account.uuid, created: true }, 201));

const listener = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => console.log(banner('Hono', base, demo)));
listener.on('error', (error) => {
  console.error(`Cannot listen on ${base}: ${error.message}. Set PORT to use another port.`);
  process.exit(1);
});
