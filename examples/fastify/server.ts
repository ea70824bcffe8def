/**
 * authgate in a Fastify 5 platform, in memory: `npm run example:fastify`.
 *
 *   - the platform's sign-in (examples/shared/demo-platform.ts: demo accounts and sessions),
 *   - the OAuth endpoints: `oauthPlugin`, which reads its own bodies in its own encapsulated
 *     context (the host's @fastify/formbody below is for the host's /login only),
 *   - a protected resource API: `requireToken` as a preHandler, the token on `request.oauth`,
 *   - the demo client's callback page.
 */
import formbody from '@fastify/formbody';
import Fastify from 'fastify';
import { oauthPlugin, requireToken } from '../../adapters/fastify/index.js';
import { afterSignIn, banner, callbackText, createDemo, loginPage, signIn } from '../shared/demo-platform.js';

const port = Number(process.env.PORT ?? 3010);
const base = `http://127.0.0.1:${port}`;
const demo = await createDemo(base);
const { server } = demo;

const app = Fastify();
await app.register(formbody);

// The OAuth endpoints under /v1/oauth; a sign-in is sent to /login?interaction=…
await app.register(oauthPlugin, { server, loginUrl: '/login' });

// The platform's sign-in.
app.get('/login', async (request, reply) => {
  const { interaction } = request.query as { interaction?: string };
  return reply.type('text/html; charset=utf-8').send(loginPage(interaction));
});
app.post('/login', async (request, reply) => {
  const form = (request.body ?? {}) as Record<string, unknown>;
  const cookie = signIn(form, request.headers.cookie);
  if (!cookie)
    return reply
      .code(401)
      .type('text/html; charset=utf-8')
      .send(loginPage(form['interaction'] as string, 'Wrong e-mail or password.'));
  return reply.header('set-cookie', cookie).redirect(afterSignIn(form['interaction']), 303);
});

app.get('/', async (_request, reply) => reply.redirect(demo.authorizeUrl));

// The demo client's callback (a real client lives on its own server).
app.get('/demo/callback', async (request, reply) =>
  reply
    .type('text/plain; charset=utf-8')
    .send(callbackText(base, demo.client, new URLSearchParams(request.query as Record<string, string>))),
);

// The resource API: a token is required; its scope decides which methods are allowed.
await app.register(async (api) => {
  api.addHook('preHandler', requireToken(server));
  api.get('/v2/account', async (request) => ({ account: request.oauth!.account, scope: request.oauth!.scope.join(' ') }));
  api.post('/v2/notes', async (request, reply) => reply.code(201).send({ author: request.oauth!.account.uuid, created: true }));
});

try {
  await app.listen({ port, host: '127.0.0.1' });
  console.log(banner('Fastify', base, demo));
} catch (error) {
  console.error(`Cannot listen on ${base}: ${(error as Error).message}. Set PORT to use another port.`);
  process.exit(1);
}
