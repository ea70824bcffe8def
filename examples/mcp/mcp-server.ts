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
import type { ProtectedResourceOptions, ResourceRequest, VerifiedToken } from '../../src/index.js';

/** Where the MCP endpoint is mounted on the host. */
export const MCP_PATH = '/mcp';

/** A status posted with `post_status`: kept in memory, newest last. */
export interface Status {
  account: string;
  text: string;
  at: string;
}

/**
 * The scope each tool needs. A tool missing here needs the widest scope (`read write`) until
 * someone classifies it: a new tool must never be callable with a read-only token by accident.
 */
export const TOOL_SCOPES: Readonly<Record<string, readonly string[]>> = {
  whoami: ['read'],
  post_status: ['read', 'write'],
};

/**
 * JSON-RPC methods a `read` token may send: the handshake, notifications, listing, and reading.
 * Anything else (a method of a later MCP revision, a JSON-RPC response, something malformed)
 * needs `read write`: failing closed costs a client a step-up, failing open could let a read-only
 * token write.
 */
const READ_METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'completion/complete',
]);

const READ: readonly string[] = ['read'];
const READ_WRITE: readonly string[] = ['read', 'write'];

/** The scope one JSON-RPC message needs (see `mcpRequiredScope`). */
function messageScope(message: unknown): readonly string[] {
  if (typeof message !== 'object' || message === null) return READ_WRITE;
  const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
  if (typeof method !== 'string') return READ_WRITE;
  if (method === 'tools/call') {
    const name = typeof params === 'object' && params !== null ? params.name : undefined;
    return (typeof name === 'string' && Object.hasOwn(TOOL_SCOPES, name) && TOOL_SCOPES[name]) || READ_WRITE;
  }
  if (method.startsWith('notifications/') || READ_METHODS.has(method)) return READ;
  return READ_WRITE;
}

/**
 * The scope rule of the MCP endpoint as a protected resource (`requiredScope`,
 * docs/reference.md#protected-resources-rfc-9728): MCP is JSON-RPC over POST, so the rule reads
 * the JSON-RPC method, and for `tools/call` the tool, from the parsed body; the HTTP method says
 * nothing. A request without the `write` a message needs gets 403 `insufficient_scope` with
 * `scope="read write"`, and an MCP client steps up with a new authorization.
 *
 * - `tools/call` needs the tool's scope (`TOOL_SCOPES`); an unknown tool needs `read write`.
 * - The read-only methods above and notifications need `read`; any other method `read write`.
 * - A batch (a JSON array, MCP 2025-03-26) needs the union of its messages; an empty one `read write`.
 * - A POST without a parsed body needs `read write`: the host did not parse it (no body parser,
 *   too large, not declared JSON), yet the transport will read and run it, so the rule cannot
 *   know what it asks for. GET and DELETE (answered 405 by this stateless server) need `read`.
 */
export function mcpRequiredScope(request: ResourceRequest): string[] {
  if (request.method !== 'POST') return [...READ];
  const { body } = request;
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length === 0) return [...READ_WRITE];
  return messages.some((m) => messageScope(m).includes('write')) ? [...READ_WRITE] : [...READ];
}

/**
 * The MCP endpoint of a host at `base` (its origin) as a protected resource, for the server's
 * `protectedResources` option; pass the same `resource` to `requireToken(server, { resource })`.
 * Its RFC 9728 document is then at `${base}/.well-known/oauth-protected-resource/mcp`.
 */
export function mcpResource(base: string): ProtectedResourceOptions {
  return { resource: `${base}${MCP_PATH}`, name: 'authgate MCP example', requiredScope: mcpRequiredScope };
}

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
      // `mcpRequiredScope` already refused this call without `write` (403 insufficient_scope);
      // the tool checks again so that a host mounting it without that rule cannot post.
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
