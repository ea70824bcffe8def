/**
 * The MCP server of the example, free of any web framework: two tools that act for the account
 * behind the access token, served by the SDK's Streamable HTTP transport in stateless mode (a new
 * server and transport per request, JSON responses, no MCP session), so any host can mount it
 * behind authgate's `requireToken`. The end-to-end test (test/mcp/) mounts the same server on
 * Express, Fastify, Hono and node:http.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { z } from 'zod';
import type { ScopeOptions, VerifiedToken } from '../../src/index.js';

/** Where the MCP endpoint is mounted on the host. */
export const MCP_PATH = '/mcp';

/** A status posted with `post_status`: kept in memory, newest last. */
export interface Status {
  account: string;
  text: string;
  at: string;
}

/**
 * The scope rule of the example, today's workaround for MCP being JSON-RPC over POST: authgate's
 * default rule lets a `read` token only GET and HEAD, so a `read` token could not even list the
 * tools. Here a `read` token may also POST to the MCP endpoint, and each tool checks the scope it
 * needs itself (`post_status` needs `write`).
 *
 * TODO(lead): protectedResources + requireToken({ resource }): the MCP endpoint as an RFC 9728
 * protected resource with a per-tool `requiredScope` rule (`whoami` → `read`, `post_status` →
 * `write`), so a call without `write` gets 403 `insufficient_scope` with `scope="read write"` and
 * the client steps up by itself; this option then goes.
 */
export const MCP_SCOPES: ScopeOptions = {
  values: ['read', 'write'],
  default: ['read'],
  allows: (scope, { method, url }) =>
    scope.includes('write') ||
    method === 'GET' ||
    method === 'HEAD' ||
    (method === 'POST' && new URL(url, 'http://host.invalid').pathname === MCP_PATH),
  descriptions: {
    read: 'See your account name and e-mail address, and use the read-only tools.',
    write: 'Post a status in your name.',
  },
};

/**
 * The MCP server for one request, acting for the account of `token`. `statuses` keeps what
 * `post_status` posts (the example's whole "database").
 */
export function createMcpServer(token: VerifiedToken, statuses: Status[]): McpServer {
  const server = new McpServer({ name: 'authgate-mcp-example', version: '1.0.0' });
  server.registerTool(
    'whoami',
    { description: 'The account this client acts for: name and e-mail address.', annotations: { readOnlyHint: true } },
    async () => {
      const { name, email } = token.account;
      return {
        content: [{ type: 'text', text: `${name} <${email}>` }],
        structuredContent: { name, email, scope: token.scope.join(' ') },
      };
    },
  );
  server.registerTool(
    'post_status',
    {
      description: 'Post a short status in the name of the signed-in account (needs the write scope).',
      inputSchema: { text: z.string().max(280) },
    },
    async ({ text }) => {
      // The scope rule above lets a `read` token reach every tool: the tool checks `write` itself.
      if (!token.scope.includes('write')) {
        return {
          isError: true,
          content: [{ type: 'text', text: 'post_status needs the write scope: authorize again with scope "read write".' }],
        };
      }
      statuses.push({ account: token.account.email, text, at: new Date().toISOString() });
      return { content: [{ type: 'text', text: `Posted as ${token.account.name}: ${text}` }] };
    },
  );
  return server;
}

/**
 * The answer to GET and DELETE: a stateless server has no stream of its own to offer and no
 * session to end, and the Streamable HTTP transport lets it say so with 405, after which
 * clients only POST.
 */
const NOT_POST = {
  headers: { allow: 'POST', 'content-type': 'application/json' },
  body: JSON.stringify({
    jsonrpc: '2.0',
    error: { code: -32000, message: 'Method not allowed: this server only answers POST.' },
    id: null,
  }),
};

/**
 * Answer one MCP request on Node's `req`/`res` (Express, Fastify's raw request, node:http).
 * `parsedBody` is the JSON body when the host already parsed it (Fastify does); otherwise the
 * transport reads it.
 */
export async function serveMcp(
  req: IncomingMessage,
  res: ServerResponse,
  token: VerifiedToken,
  statuses: Status[],
  parsedBody?: unknown,
): Promise<void> {
  if (req.method !== 'POST') return void res.writeHead(405, NOT_POST.headers).end(NOT_POST.body);
  const server = createMcpServer(token, statuses);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, parsedBody);
}

/** Answer one MCP request as a Web `Request` → `Response` (Hono, Workers, Deno, Bun). */
export async function answerMcp(request: Request, token: VerifiedToken, statuses: Status[]): Promise<Response> {
  if (request.method !== 'POST') return new Response(NOT_POST.body, { status: 405, headers: NOT_POST.headers });
  const server = createMcpServer(token, statuses);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request);
  } finally {
    // JSON responses are complete when returned: nothing is left to stream.
    void transport.close();
    void server.close();
  }
}
