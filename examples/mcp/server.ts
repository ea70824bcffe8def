/**
 * `npm run example:mcp`: an MCP server behind authgate, on Express, that an MCP client (the
 * official SDKs, Claude, IDEs) can use given nothing but its URL, http://127.0.0.1:3030/mcp:
 *
 *   1. the client's first call gets 401, whose challenge names the endpoint's protected resource
 *      metadata (RFC 9728) and the scope it needs (`read`); the document names the authorization
 *      server, whose metadata (RFC 8414) the client reads; it registers itself (RFC 7591 dynamic
 *      registration) and opens the authorization URL in the user's browser, with PKCE and
 *      `resource=http://127.0.0.1:3030/mcp` (RFC 8707);
 *   2. the user signs in here (the demo platform's sign-in of the Fastify and Hono examples,
 *      examples/shared/demo-platform.ts) and approves on authgate's consent page;
 *   3. the client exchanges the code for a token bound to the MCP endpoint (its audience), calls
 *      the tools with it, and refreshes it.
 *
 * The tools (mcp-server.ts): `whoami` answers from the signed-in account with a `read` token;
 * `post_status` needs `write`: with a `read` token it gets 403 `insufficient_scope`,
 * `scope="read write"`, and the client authorizes again for it (step-up). Everything is in memory: restart and every client, session and token is gone.
 * Environment: PORT (default 3030).
 */
import express from 'express';
import { createOAuthRouter, requireToken } from '../../adapters/express/index.js';
import { AuthorizationServer, MemoryStorage } from '../../src/index.js';
import { afterSignIn, loginPage, sessions, signIn } from '../shared/demo-platform.js';
import { MCP_PATH, mcpResource, serveMcp, type Status } from './mcp-server.js';

const port = Number(process.env.PORT ?? 3030);
const base = `http://127.0.0.1:${port}`;
// The MCP endpoint as a protected resource: its identifier, name and per-tool scope rule.
const mcp = mcpResource(base);

const server = new AuthorizationServer({
  storage: new MemoryStorage(),
  sessions,
  // The issuer publishes the RFC 8414 metadata MCP clients start from, at
  // /.well-known/oauth-authorization-server (http is accepted for loopback only).
  issuer: base,
  // MCP clients register themselves: public clients, PKCE, loopback or https callbacks.
  allowDynamicRegistration: true,
  // The MCP endpoint as an RFC 9728 protected resource: its metadata document at
  // /.well-known/oauth-protected-resource/mcp, tokens issued for it (RFC 8707 `resource`) and
  // accepted only there, and a scope rule by JSON-RPC method and tool (mcpRequiredScope).
  protectedResources: [mcp],
  onError: (error) => console.error(error),
});
const statuses: Status[] = [];

const app = express();
app.disable('x-powered-by');

// The OAuth endpoints and documents: they read their own bodies, so no body parser in front.
app.use(createOAuthRouter(server, { loginUrl: '/login' }));

// The platform's sign-in, where authgate sends the browser when nobody is signed in.
app.get('/login', (req, res) => {
  const interaction = typeof req.query.interaction === 'string' ? req.query.interaction : undefined;
  res.type('html').send(loginPage(interaction));
});
app.post('/login', express.urlencoded({ extended: false, limit: '4kb' }), (req, res) => {
  const cookie = signIn(req.body ?? {}, req.headers.cookie);
  const interaction = typeof req.body?.interaction === 'string' ? req.body.interaction : undefined;
  if (!cookie) return void res.status(401).type('html').send(loginPage(interaction, 'Wrong e-mail or password.'));
  res.append('set-cookie', cookie).redirect(303, afterSignIn(interaction));
});

// The MCP endpoint: a token for this resource is required (a 401 naming the resource's metadata
// starts the client's flow). `express.json()` first, so that the scope rule sees the JSON-RPC
// message (without a parsed body every POST would need `read write`); the transport then takes
// the parsed body instead of reading the stream again.
app.all(MCP_PATH, express.json({ limit: '64kb' }), requireToken(server, { resource: mcp.resource }), (req, res, next) => {
  serveMcp(req, res, res.locals.oauth!, statuses, req.body).catch(next);
});

app.get('/', (_req, res) => {
  res
    .type('text/plain')
    .send(
      `An MCP server behind authgate. Point an MCP client at ${base}${MCP_PATH}\n\nStatuses posted so far:\n${statuses
        .map((s) => `  ${s.at} ${s.account}: ${s.text}`)
        .join('\n')}\n`,
    );
});

app.listen(port, '127.0.0.1', (error?: Error) => {
  if (error) {
    console.error(`Cannot listen on ${base}: ${error.message}. Set PORT to use another port.`);
    process.exit(1);
  }
  console.log(`An MCP server behind authgate: ${base}${MCP_PATH}

  Point an MCP client at that URL; it finds everything else itself. For example:
    npx @modelcontextprotocol/inspector        (transport "Streamable HTTP", URL ${base}${MCP_PATH})
    claude mcp add --transport http authgate-demo ${base}${MCP_PATH}
  The client registers itself, opens a browser to sign in and approve, then calls the tools:
    whoami       the signed-in account's name and e-mail (scope read)
    post_status  posts a status in that account's name (scope "read write": with a read token
                 the server answers 403 insufficient_scope and the client authorizes again)

  Demo accounts: ada@example.com / ada, bob@example.com / bob
  Protected resource metadata:   ${base}/.well-known/oauth-protected-resource${MCP_PATH}
  Authorization server metadata: ${base}/.well-known/oauth-authorization-server`);
});
