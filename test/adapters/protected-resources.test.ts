/**
 * Protected resources (RFC 9728) over real HTTP through every adapter
 * (docs/reference.md#protected-resources-rfc-9728): each resource's metadata document at its
 * well-known path (§3.1), and `requireToken(server, { resource })` with challenges that name it
 * (§5.1) and the scope the request needs (RFC 6750 §3). A resource's own `requiredScope` is a
 * closure, which cannot reach the worker: those cases run on `IN_PROCESS`. The core's own tests
 * (test/core/protected-resources.test.ts) cover each rule.
 */
import { describe, expect, it } from 'vitest';
import { AuthorizationServer, ConfigError, MemoryStorage, type ResourceRequest } from '../../src/index.js';
import { FakeSessions } from '../../src/testing/index.js';
import { ISSUER } from '../fixtures.js';
import { requireToken as expressRequireToken } from '../../adapters/express/index.js';
import { requireToken as fastifyRequireToken } from '../../adapters/fastify/index.js';
import { requireToken as honoRequireToken } from '../../adapters/hono/index.js';
import { requireToken as nodeRequireToken } from '../../adapters/node/index.js';
import { FRAMEWORKS, IN_PROCESS, expectJsonError, useApp } from './app.js';

const API = 'https://api.example/v2';
const ROOT = 'https://api.example';
const MCP = 'https://mcp.example/mcp';
const WELL_KNOWN = '/.well-known/oauth-protected-resource';
const RESOURCES = [{ resource: API, name: 'Example API', scopes: ['read'] }, { resource: ROOT }, { resource: MCP }];

/** The parameters of a `WWW-Authenticate: Bearer` challenge. */
function challengeParams(header: string | null): Record<string, string> {
  expect(header).toMatch(/^Bearer /);
  return Object.fromEntries([...header!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

describe.each(FRAMEWORKS)('%s: protected resource metadata (RFC 9728)', (framework) => {
  describe('with an issuer and three resources', () => {
    const app = useApp({ framework, server: { issuer: ISSUER, protectedResources: RESOURCES }, resource: API });

    it("each resource's document at its path-suffixed well-known URL: 200 JSON, cacheable, the core's document", async () => {
      const { get, server } = app();
      const api = await get(`${WELL_KNOWN}/v2`);
      expect(api.status, api.text).toBe(200);
      expect(api.headers.get('content-type')).toMatch(/^application\/json/);
      expect(api.headers.get('cache-control')).toBe('public, max-age=3600');
      expect(api.json()).toEqual({
        resource: API,
        authorization_servers: [ISSUER],
        scopes_supported: ['read'],
        bearer_methods_supported: ['header'],
        resource_name: 'Example API',
      });
      expect(api.json()).toEqual(await server.protectedResourceMetadataDocument(API));
      // A resource without a path: the well-known URL itself; default scopes, no name.
      expect((await get(WELL_KNOWN)).json()).toEqual({
        resource: ROOT,
        authorization_servers: [ISSUER],
        scopes_supported: ['read', 'write'],
        bearer_methods_supported: ['header'],
      });
      expect((await get(`${WELL_KNOWN}/mcp`)).json().resource).toBe(MCP);
    });

    it('HEAD: the same headers, no body; other methods 405; other paths are not served', async () => {
      const { request, get } = app();
      const head = await request('HEAD', `${WELL_KNOWN}/v2`);
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toMatch(/^application\/json/);
      expect(head.text).toBe('');
      const post = await request('POST', `${WELL_KNOWN}/v2`);
      expectJsonError(post, 405, 'invalid_request');
      expect(post.headers.get('allow')).toBe('GET, HEAD');
      expect((await get(`${WELL_KNOWN}/v3`)).status).toBe(404);
    });

    it('requireToken for a resource: a 401 names its document, which this adapter serves there, and the scope needed', async () => {
      const { api, get, request } = app();
      const reply = await api('GET', '/r/account');
      expect(reply.status).toBe(401);
      const params = challengeParams(reply.headers.get('www-authenticate'));
      expect(params).toEqual({ realm: 'authgate', scope: 'read', resource_metadata: `https://api.example${WELL_KNOWN}/v2` });
      const document = await get(new URL(params.resource_metadata!).pathname);
      expect(document.json().resource).toBe(API);
      const post = await request('POST', '/r/echo', { headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(challengeParams(post.headers.get('www-authenticate')).scope).toBe('read write');
      const invalid = challengeParams((await api('GET', '/r/account', 'not-a-token')).headers.get('www-authenticate'));
      expect(invalid).toMatchObject({ error: 'invalid_token', resource_metadata: `https://api.example${WELL_KNOWN}/v2` });
    });

    it("requireToken for a resource: the server's rule, a 403 that names the scope needed and the document", async () => {
      const { api, tokens, request } = app();
      const read = await tokens({ scope: 'read' });
      const account = await api('GET', '/r/account', read.access_token);
      expect(account.status, account.text).toBe(200);
      expect(account.json()).toMatchObject({ oauth: { scope: ['read'] } });
      // A body Fastify's JSON parser takes (it answers 400 to an empty one before any hook).
      const refused = await request('POST', '/r/echo', {
        headers: { authorization: `Bearer ${read.access_token}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(refused.status).toBe(403);
      expect(challengeParams(refused.headers.get('www-authenticate'))).toMatchObject({
        error: 'insufficient_scope',
        scope: 'read write',
        resource_metadata: `https://api.example${WELL_KNOWN}/v2`,
      });
      const write = await tokens({ scope: 'read write' });
      const echoed = await request('POST', '/r/echo', {
        headers: { authorization: `Bearer ${write.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ hello: 'world' }),
      });
      expect(echoed.status, echoed.text).toBe(200);
      expect(echoed.json()).toMatchObject({ oauth: { scope: ['read', 'write'] } });
    });

    it('what the document advertises holds: its authorization server publishes metadata, tokens go in the header only', async () => {
      const { get, api, tokens } = app();
      const document = (await get(`${WELL_KNOWN}/v2`)).json<{ authorization_servers: string[] }>();
      const [issuer] = document.authorization_servers;
      expect((await get('/.well-known/oauth-authorization-server')).json().issuer).toBe(issuer);
      // bearer_methods_supported: ["header"]: a token in the query is no credential.
      const { access_token } = await tokens({ scope: 'read' });
      const inQuery = await api('GET', `/r/account?access_token=${access_token}`);
      expect(inQuery.status).toBe(401);
      expect(challengeParams(inQuery.headers.get('www-authenticate')).error).toBeUndefined();
      expect((await api('GET', '/r/account', access_token)).status).toBe(200);
    });

    it('requireToken(server) without a resource answers as before: no resource_metadata', async () => {
      const { api } = app();
      const reply = await api('GET', '/v2/account');
      expect(reply.status).toBe(401);
      expect(reply.headers.get('www-authenticate')).toBe('Bearer realm="authgate"');
    });
  });

  describe('without an issuer', () => {
    const app = useApp({ framework, server: { protectedResources: RESOURCES } });

    it('404 with a JSON error: there is no authorization server to name', async () => {
      expectJsonError(await app().get(`${WELL_KNOWN}/v2`), 404, 'not_found');
    });
  });

  describe('without protectedResources', () => {
    const app = useApp({ framework, server: { issuer: ISSUER } });

    it('no document is served', async () => {
      expect((await app().get(WELL_KNOWN)).status).toBe(404);
    });
  });
});

/** JSON-RPC as an MCP client sends it: `tools/call` of `delete_thing` needs write, the rest read. */
const seen: ResourceRequest[] = [];
const mcpRule = (request: ResourceRequest): string[] => {
  seen.push(request);
  const body = request.body as { method?: string; params?: { name?: string } } | undefined;
  return body?.method === 'tools/call' && body.params?.name === 'delete_thing' ? ['read', 'write'] : ['read'];
};

describe.each(IN_PROCESS)('%s: a resource with its own scope rule (MCP)', (framework) => {
  const app = useApp({
    framework,
    // Express hands the rule `req.body`, which a host's parser made; bare node:http has none.
    hostParsers: framework === 'express',
    server: { issuer: ISSUER, protectedResources: [{ resource: MCP, requiredScope: mcpRule }] },
    resource: MCP,
  });
  const post = (token: string, message: unknown) =>
    app().request('POST', '/r/echo', {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(message),
    });

  it('a read token may send JSON-RPC by POST; the handler still reads the body', async () => {
    const { access_token } = await app().tokens({ scope: 'read' });
    const message = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const reply = await post(access_token, message);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json().body).toEqual(message);
    // The rule saw the parsed body where the framework had one (node:http: none was parsed).
    expect(seen.at(-1)).toEqual({
      method: 'POST',
      url: expect.stringMatching(/\/r\/echo$/),
      ...(framework !== 'node' && { body: message }),
    });
  });

  it.skipIf(framework === 'node')('a write tool needs step-up: 403 insufficient_scope naming the scope, then allowed with it', async () => {
    const { tokens } = app();
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'delete_thing' } };
    const refused = await post((await tokens({ scope: 'read' })).access_token, call);
    expect(refused.status).toBe(403);
    expect(challengeParams(refused.headers.get('www-authenticate'))).toMatchObject({
      error: 'insufficient_scope',
      scope: 'read write',
      resource_metadata: `https://mcp.example${WELL_KNOWN}/mcp`,
    });
    const allowed = await post((await tokens({ scope: 'read write' })).access_token, call);
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.json().body).toEqual(call);
  });
});

/**
 * A rule keyed on the path is given the path in its normal form (RFC 3986 §6.2.2: unreserved
 * characters decoded, other hex upper-cased), not as the client spelled it: Fastify and Hono route
 * `/r/%61ccount` to the handler of `/r/account`, where a read token got through a rule asking
 * `write` there. Express and node:http route it nowhere (404), but the rule, run before routing,
 * refuses it all the same.
 */
describe.each(IN_PROCESS)('%s: a scope rule keyed on the path', (framework) => {
  const urls: string[] = [];
  const pathRule = ({ url }: ResourceRequest): string[] => {
    urls.push(url);
    return new URL(url).pathname === '/r/account' ? ['read', 'write'] : ['read'];
  };
  const app = useApp({
    framework,
    server: { issuer: ISSUER, protectedResources: [{ resource: ROOT, requiredScope: pathRule }] },
    resource: ROOT,
    // Fastify runs a preHandler only for a route it matched: one with a parameter, for `%2F`.
    fastifyHost: async (fastify) => {
      await fastify.register(async (api) => {
        api.addHook('preHandler', (request, reply) => fastifyRequireToken(app().server, { resource: ROOT }).call(api, request, reply));
        api.get('/r/items/:id', async (request) => ({ params: request.params }));
      });
    },
  });
  const get = (path: string, token: string) => app().request('GET', path, { headers: { authorization: `Bearer ${token}` } });

  it('/r/%61ccount is /r/account to the rule: a read token is refused (403), a write token reaches what the framework routes', async () => {
    const { tokens, base } = app();
    const read = (await tokens({ scope: 'read' })).access_token;
    for (const path of ['/r/%61ccount', '/r/acc%6Funt', '/r/%61%63%63%6f%75%6e%74']) {
      urls.length = 0;
      const refused = await get(path, read);
      expect(refused.status, `${path}: ${refused.text}`).toBe(403);
      expect(challengeParams(refused.headers.get('www-authenticate'))).toMatchObject({ error: 'insufficient_scope', scope: 'read write' });
      expect(urls).toEqual([`${base}/r/account`]);
    }
    const write = (await tokens({ scope: 'read write' })).access_token;
    const routed = await get('/r/%61ccount', write);
    // Fastify and Hono decode the path before routing; Express and node:http do not.
    expect(routed.status, routed.text).toBe(framework === 'fastify' || framework === 'hono' ? 200 : 404);
    expect((await get('/r/account', read)).status).toBe(403);
  });

  it('%2F stays encoded (upper-cased), the query stays as sent, and a path without "%" reaches the rule unchanged', async () => {
    const { tokens, base } = app();
    const read = (await tokens({ scope: 'read' })).access_token;
    urls.length = 0;
    const item = await get('/r/items/%61%2fb?q=%61%2f', read);
    // Only this app's Fastify has that route; the others check before routing, then answer 404.
    expect(item.status, item.text).toBe(framework === 'fastify' ? 200 : 404);
    expect(urls).toEqual([`${base}/r/items/a%2Fb?q=%61%2f`]);
    urls.length = 0;
    const write = (await tokens({ scope: 'read write' })).access_token;
    expect((await get('/r/account?q=%61', write)).status).toBe(200);
    expect((await get('/r/items/x', read)).status).toBe(framework === 'fastify' ? 200 : 404);
    expect(urls).toEqual([`${base}/r/account?q=%61`, `${base}/r/items/x`]);
  });
});

describe('requireToken(server, { resource }) for a resource the server does not list', () => {
  it.each([
    ['express', expressRequireToken],
    ['fastify', fastifyRequireToken],
    ['hono', honoRequireToken],
    ['node', nodeRequireToken],
  ] as const)('%s: throws ConfigError when it is made, not on each request', (_name, requireToken) => {
    const server = new AuthorizationServer({
      storage: new MemoryStorage(),
      sessions: new FakeSessions(),
      protectedResources: [{ resource: API }],
    });
    expect(() => requireToken(server, { resource: MCP })).toThrow(ConfigError);
    expect(() => requireToken(server, { resource: API })).not.toThrow();
  });
});

describe('hono: the body read for a scope rule', () => {
  const app = useApp({
    framework: 'hono',
    server: { issuer: ISSUER, protectedResources: [{ resource: MCP, requiredScope: mcpRule }] },
    resource: MCP,
  });

  it('only a JSON body within the limit reaches the rule; the handler reads the request in full either way', async () => {
    const { tokens, request } = app();
    const { access_token } = await tokens({ scope: 'read' });
    const send = (contentType: string, body: string) =>
      request('POST', '/r/echo', { headers: { authorization: `Bearer ${access_token}`, 'content-type': contentType }, body });
    const big = { method: 'tools/list', padding: 'x'.repeat(70_000) };
    const reply = await send('application/json', JSON.stringify(big));
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json().body).toEqual(big);
    expect(seen.at(-1)!.body).toBeUndefined();
    // A body that does not say it is JSON is not read for the rule.
    expect((await send('text/plain', '{"method":"tools/list"}')).status).toBe(200);
    expect(seen.at(-1)!.body).toBeUndefined();
    await send('application/json; charset=utf-8', '{"method":"tools/list"}');
    expect(seen.at(-1)!.body).toEqual({ method: 'tools/list' });
  });
});
