/**
 * The official MCP SDK (@modelcontextprotocol/sdk), unmodified, against authgate end to end:
 * the SDK's `Client` with `StreamableHTTPClientTransport` and an in-memory `OAuthClientProvider`
 * (sdk-client.ts) finds the authorization server on its own from nothing but the MCP endpoint's
 * URL, registers dynamically, authorizes with PKCE, has the user approve, exchanges the code, calls
 * a tool with a read-only token, refreshes when the access token has expired (the server's
 * `FakeClock` moved past the lifetime), and steps up on a 403 `insufficient_scope`. On Express,
 * Fastify, Hono and node:http on MemoryStorage, and on Express with PostgreSQL storage
 * (DATABASE_URL; skipped without it, except in CI: test/storage/pg.ts).
 *
 * The steps that need the protected-resource features of issue 16 are `it.todo`s at the end of
 * the suite. `MCP_DEBUG=1` prints every request the SDK sends and what it got back.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStorage } from '../../src/postgres/index.js';
import type { Storage } from '../../src/index.js';
import { ADA } from '../fixtures.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from '../storage/pg.js';
import { MCP_FRAMEWORKS, startMcpHost, type McpFramework, type McpHost } from './hosts.js';
import { InMemoryOAuthProvider, recordingFetch, type SentRequest } from './sdk-client.js';

const ACCESS_TOKEN_SECONDS = 3600;

/** The SDK's requests to one path, in order. */
const to = (log: SentRequest[], path: string) => log.filter((r) => r.url.pathname === path);

/** Poll until `done()` (a background request of the SDK has been answered). */
async function until(done: () => boolean, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; !done(); ) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A connected SDK client, after the whole first authorization. */
async function connectWithOAuth(host: McpHost) {
  const log: SentRequest[] = [];
  const provider = new InMemoryOAuthProvider(host.base, host.sessions.signIn(ADA));
  const fetch = recordingFetch(log);
  const client = new Client({ name: 'authgate-e2e', version: '1.0.0' });
  // First attempt: 401, discovery, registration, then the "browser" approves; the SDK stops with
  // UnauthorizedError and the application finishes with the code, as a real client does.
  const first = new StreamableHTTPClientTransport(host.mcpUrl, { authProvider: provider, fetch });
  await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.code).toBeTruthy();
  await first.finishAuth(provider.code!);
  const transport = new StreamableHTTPClientTransport(host.mcpUrl, { authProvider: provider, fetch });
  const sentBefore = log.length;
  await client.connect(transport);
  // After `initialized` the SDK opens its optional GET stream in the background (the stateless
  // server answers 405): wait for it, so that the test's own calls are all that follow.
  await until(() => log.slice(sentBefore).some((r) => r.method === 'GET' && r.url.pathname === '/mcp'));
  return { client, transport, provider, log };
}

function mcpSdkSuite(framework: McpFramework, storage?: () => Storage) {
  let host: McpHost;
  let clients: Client[] = [];
  beforeAll(async () => {
    host = await startMcpHost(framework, storage ? { storage: storage() } : {});
  });
  afterEach(async () => {
    await Promise.all(clients.map((c) => c.close()));
    clients = [];
    expect(host.coreErrors).toEqual([]);
    expect(host.seen.filter((s) => s.status >= 500)).toEqual([]);
  });
  afterAll(async () => {
    await host?.close();
  });

  it('discovers, registers, authorizes with PKCE, and calls a read tool with a read-only token', async () => {
    const { client, provider, log } = await connectWithOAuth(host);
    clients.push(client);

    // 1. The first MCP request has no token: 401 with a Bearer challenge.
    const firstMcp = log[0]!;
    expect([firstMcp.method, firstMcp.url.pathname, firstMcp.status]).toEqual(['POST', '/mcp', 401]);
    // 2. RFC 9728 protected resource metadata: the SDK looks (path-suffixed, then root); none yet.
    // TODO(lead): once protectedResources lands, both answer 200 and the 401 names it in resource_metadata.
    const prm = log.filter((r) => r.url.pathname.startsWith('/.well-known/oauth-protected-resource'));
    expect(prm.map((r) => r.url.pathname).slice(0, 2)).toEqual([
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]);
    expect(new Set(prm.map((r) => r.status))).toEqual(new Set([404]));
    // 3. RFC 8414 authorization server metadata at the issuer.
    // (Discovery runs again at `finishAuth`: the provider keeps no discovery state.)
    const asMetadata = to(log, '/.well-known/oauth-authorization-server');
    expect(asMetadata.length).toBeGreaterThan(0);
    expect(new Set(asMetadata.map((r) => r.status))).toEqual(new Set([200]));
    // 4. RFC 7591 dynamic registration, as MCP clients send it.
    const [registration] = to(log, '/v1/oauth/register');
    expect(registration!.status).toBe(201);
    expect(JSON.parse(registration!.body!)).toMatchObject({
      redirect_uris: [provider.redirectUrl],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    expect(provider.client?.client_id).toBeTruthy();
    // 5. The authorization request: code, PKCE S256, our client and callback.
    const [visit] = provider.visits;
    const authorize = visit!.authorizationUrl.searchParams;
    expect(authorize.get('response_type')).toBe('code');
    expect(authorize.get('code_challenge_method')).toBe('S256');
    expect(authorize.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.get('client_id')).toBe(provider.client!.client_id);
    expect(authorize.get('redirect_uri')).toBe(provider.redirectUrl);
    // 6. Consent, then the redirect with a code and `iss` (RFC 9207).
    expect(visit!.consentPage).toContain('MCP SDK end-to-end test');
    expect(visit!.callback.searchParams.get('iss')).toBe(host.base);
    // 7. The code exchange with the verifier, no client secret.
    const [exchange] = to(log, '/v1/oauth/token');
    const form = new URLSearchParams(exchange!.body);
    expect(exchange!.status).toBe(200);
    expect(form.get('grant_type')).toBe('authorization_code');
    expect(form.get('code_verifier')).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
    expect(form.get('client_id')).toBe(provider.client!.client_id);
    expect(form.has('client_secret')).toBe(false);
    expect(provider.saved).toMatchObject({
      token_type: expect.stringMatching(/^bearer$/i),
      scope: 'read',
      expires_in: ACCESS_TOKEN_SECONDS,
    });

    // 8. A tool call with the read-only token.
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['post_status', 'whoami']);
    const whoami = await client.callTool({ name: 'whoami' });
    expect(whoami.structuredContent).toEqual({ name: ADA.name, email: ADA.email, scope: 'read' });
    // The write tool is reachable today (the workaround scope rule), and refuses without `write`.
    const post = await client.callTool({ name: 'post_status', arguments: { text: 'hello' } });
    expect(post.isError).toBe(true);
    expect(host.statuses).toEqual([]);
  });

  it('refreshes when the access token has expired, and the next call succeeds', async () => {
    const { client, provider, log } = await connectWithOAuth(host);
    clients.push(client);
    const before = provider.saved!;
    const issued = log.length;

    host.clock.advance((ACCESS_TOKEN_SECONDS + 1) * 1000);
    const whoami = await client.callTool({ name: 'whoami' });
    expect(whoami.structuredContent).toMatchObject({ email: ADA.email });

    const after = log.slice(issued);
    // 401 invalid_token, then a refresh (no new authorization), then the retried call.
    expect(after[0]).toMatchObject({ method: 'POST', status: 401 });
    expect(after[0]!.url.pathname).toBe('/mcp');
    const refresh = to(after, '/v1/oauth/token');
    expect(refresh).toHaveLength(1);
    const form = new URLSearchParams(refresh[0]!.body);
    expect(form.get('grant_type')).toBe('refresh_token');
    expect(form.get('refresh_token')).toBe(before.refresh_token);
    expect(refresh[0]!.status).toBe(200);
    expect(provider.visits).toHaveLength(1);
    expect(provider.saved!.access_token).not.toBe(before.access_token);
    expect(provider.saved!.refresh_token).not.toBe(before.refresh_token);
    expect(after.at(-1)).toMatchObject({ method: 'POST', status: 200 });
  });

  it('steps up: 403 insufficient_scope with scope="read write", a new authorization for it, and the call succeeds', async () => {
    // authgate's default scope rule (`read` may only GET), so the first POST already needs
    // `write`. The client holds no refresh token: SDK 1.32 answers a 403 insufficient_scope by
    // refreshing when it holds one, which cannot widen the scope (RFC 6749 §6), and then gives up
    // ("Server returned 403 after trying upscoping", modelcontextprotocol/typescript-sdk#2255).
    const strict = await startMcpHost(framework, { ...(storage && { storage: storage() }), server: { scopes: undefined } });
    try {
      const log: SentRequest[] = [];
      const provider = new InMemoryOAuthProvider(strict.base, strict.sessions.signIn(ADA), undefined, {
        grant_types: ['authorization_code'],
      });
      const fetch = recordingFetch(log);
      const client = new Client({ name: 'authgate-e2e', version: '1.0.0' });
      clients.push(client);
      let transport = new StreamableHTTPClientTransport(strict.mcpUrl, { authProvider: provider, fetch });
      // Two authorizations (the first for the default `read`, the step-up for `read write`), each
      // finished by the application with the code, as after a browser redirect.
      for (const _ of [1, 2]) {
        await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
        await transport.finishAuth(provider.code!);
        transport = new StreamableHTTPClientTransport(strict.mcpUrl, { authProvider: provider, fetch });
      }
      await client.connect(transport);

      expect(provider.visits.map((v) => v.authorizationUrl.searchParams.get('scope'))).toEqual([null, 'read write']);
      const refused = log.filter((r) => r.status === 403);
      expect(refused.map((r) => r.url.pathname)).toEqual(['/mcp']);
      expect(refused[0]!.challenge).toMatch(/error="insufficient_scope"/);
      expect(refused[0]!.challenge).toMatch(/scope="read write"/);
      expect(provider.saved).toMatchObject({ scope: 'read write' });
      expect(provider.saved!.refresh_token).toBeUndefined();
      const post = await client.callTool({ name: 'post_status', arguments: { text: 'stepped up' } });
      expect(post.isError).toBeFalsy();
      expect(strict.statuses).toMatchObject([{ account: ADA.email, text: 'stepped up' }]);
      expect(strict.coreErrors).toEqual([]);
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      await strict.close();
    }
  });

  it.todo(
    'a write tool that needs `write` (per-tool requiredScope): whoami works with read, post_status gets 403 insufficient_scope and the SDK steps up (needs protectedResources; with SDK 1.32 the client must hold no refresh token, as above)',
  );
  it.todo(
    'a token issued for another resource is refused with invalid_token (needs RFC 8707 resource at authorize/token and requireToken({ resource }))',
  );
  it.todo(
    'the SDK registers by client ID metadata document (provider.clientMetadataUrl) instead of dynamic registration (needs CIMD, client_id_metadata_document_supported in metadata, and a fetcher serving a local document)',
  );
  it.todo(
    'the 401 names the protected resource metadata (resource_metadata=), the SDK reads it and sends resource= at authorize, token and refresh (needs protectedResources)',
  );
  it.todo(
    'two tool calls in parallel after the access token expired: both refresh with the same refresh token, the second is a replay (needs a decision: see the report of issue 16 item 7)',
  );
}

describe.each(MCP_FRAMEWORKS)('MCP SDK end to end on %s (MemoryStorage)', (framework) => {
  mcpSdkSuite(framework);
});

describe.skipIf(!DATABASE_URL)('MCP SDK end to end on express (PostgreSQL)', () => {
  const pool = DATABASE_URL ? makePool(4) : undefined;
  const schema = schemaName('mcp');
  beforeAll(async () => {
    if (pool) await new PostgresStorage(pool, { schema }).migrate();
  });
  afterAll(async () => {
    if (!pool) return;
    await dropSchema(pool, schema);
    await pool.end();
  });
  mcpSdkSuite('express', () => new PostgresStorage(pool!, { schema }));
});
