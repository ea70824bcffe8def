import { describe, expect, it } from 'vitest';
import { ConfigError, oauthRoutes, routeWhere, type OAuthRequest, type OAuthResponse, type ResourceRequest } from '../../src/index.js';
import { json, setup } from '../helpers.js';

/**
 * Protected resources (RFC 9728; docs/reference.md#protected-resources-rfc-9728): the option,
 * the metadata documents, and the bearer check for one resource (its scope rule, its challenges).
 */
const ISSUER = 'https://auth.example';
const API = 'https://api.example/v2';
const MCP = 'https://mcp.example/mcp';
const ROOT = 'https://api.example';
const API_METADATA = 'https://api.example/.well-known/oauth-protected-resource/v2';

/** An MCP-like rule: `tools/call` of `delete_thing` needs write, every other JSON-RPC message read. */
const mcpRule = (request: ResourceRequest): string[] => {
  const body = request.body as { method?: string; params?: { name?: string } } | undefined;
  return body?.method === 'tools/call' && body.params?.name === 'delete_thing' ? ['read', 'write'] : ['read'];
};

const call = (token: string | undefined, method = 'POST', url = '/mcp'): OAuthRequest => ({
  method,
  url,
  headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
});

const RESOURCES = {
  issuer: ISSUER,
  protectedResources: [
    { resource: API, name: 'Example API' },
    { resource: MCP, requiredScope: mcpRule },
  ],
};

describe('the protectedResources option', () => {
  it('resolves each resource: default scopes, the URL and path of its document, frozen', async () => {
    const { server } = await setup({ protectedResources: [{ resource: API }, { resource: 'https://api.example' }] });
    const [api, root] = server.options.protectedResources!;
    expect(api).toEqual({
      resource: API,
      scopes: ['read', 'write'],
      metadataUrl: API_METADATA,
      metadataPath: '/.well-known/oauth-protected-resource/v2',
    });
    expect(root!.metadataUrl).toBe('https://api.example/.well-known/oauth-protected-resource');
    expect(Object.isFrozen(server.options.protectedResources)).toBe(true);
    expect(Object.isFrozen(api)).toBe(true);
    expect(Object.isFrozen(api!.scopes)).toBe(true);
  });

  it('a root identifier with or without its slash has the document without a suffix', async () => {
    const { server } = await setup({ protectedResources: [{ resource: 'https://api.example/' }] });
    expect(server.options.protectedResources![0]!.metadataPath).toBe('/.well-known/oauth-protected-resource');
  });

  it('without it nothing changes: no resources', async () => {
    const { server } = await setup();
    expect(server.options.protectedResources).toBeUndefined();
  });

  it.each([
    ['http://api.example/v2', 'http only for loopback'],
    ['https://api.example/v2#x', 'a fragment'],
    ['https://api.example/v2?x=1', 'a query'],
    ['https://user@api.example/v2', 'user information'],
    ['/v2', 'not absolute'],
    ['https://api.example/:id', 'a route pattern character in the path'],
  ])('%s is refused (%s)', async (resource) => {
    await expect(setup({ protectedResources: [{ resource }] })).rejects.toThrow(ConfigError);
    await expect(setup({ protectedResources: [{ resource }] })).rejects.toThrow(/protectedResources\.0\.resource/);
  });

  it('http on a loopback host is accepted (development)', async () => {
    const { server } = await setup({ protectedResources: [{ resource: 'http://127.0.0.1:8080/mcp' }] });
    expect(server.options.protectedResources![0]!.metadataUrl).toBe('http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp');
  });

  it('refuses a repeated identifier, an unknown scope value, an unknown option and a rule that is not a function', async () => {
    await expect(setup({ protectedResources: [{ resource: API }, { resource: API }] })).rejects.toThrow(/protectedResources\.1\.resource/);
    await expect(setup({ protectedResources: [{ resource: ROOT }, { resource: `${ROOT}/` }] })).rejects.toThrow(
      /protectedResources\.1\.resource/,
    );
    await expect(setup({ protectedResources: [{ resource: API, scopes: ['admin'] }] })).rejects.toThrow(/protectedResources\.0\.scopes/);
    await expect(setup({ protectedResources: [{ resource: API, audience: 'x' } as never] })).rejects.toThrow(ConfigError);
    await expect(setup({ protectedResources: [{ resource: API, requiredScope: 'read' as never }] })).rejects.toThrow(
      /protectedResources\.0\.requiredScope/,
    );
  });

  it("scopes are checked against the server's own vocabulary", async () => {
    const scopes = { values: ['tools:read', 'tools:write'], default: ['tools:read'], allows: () => true };
    const { server } = await setup({ scopes, protectedResources: [{ resource: MCP }] });
    expect(server.options.protectedResources![0]!.scopes).toEqual(['tools:read', 'tools:write']);
    await expect(setup({ scopes, protectedResources: [{ resource: MCP, scopes: ['read'] }] })).rejects.toThrow(ConfigError);
  });

  it('protectedResource() finds one, and throws ConfigError for an unknown identifier', async () => {
    const { server } = await setup(RESOURCES);
    expect(server.protectedResource(API).name).toBe('Example API');
    expect(() => server.protectedResource('https://unknown.example')).toThrow(ConfigError);
  });
});

describe('protected resource metadata (RFC 9728 §2, §3)', () => {
  it('the document of each resource: resource, the issuer, scopes, header bearer tokens, its name', async () => {
    const { server } = await setup({
      ...RESOURCES,
      protectedResources: [{ resource: API, name: 'Example API', scopes: ['read'] }, { resource: MCP }],
    });
    expect(server.protectedResourceMetadataDocument(API)).toEqual({
      resource: API,
      authorization_servers: [ISSUER],
      scopes_supported: ['read'],
      bearer_methods_supported: ['header'],
      resource_name: 'Example API',
    });
    // Without a name, no resource_name; default scopes: every value of the server.
    expect(server.protectedResourceMetadataDocument(MCP)).toEqual({
      resource: MCP,
      authorization_servers: [ISSUER],
      scopes_supported: ['read', 'write'],
      bearer_methods_supported: ['header'],
    });
  });

  it('200 JSON, cacheable as the authorization server metadata; HEAD too', async () => {
    const { server } = await setup(RESOURCES);
    for (const method of ['GET', 'HEAD']) {
      const res = server.protectedResourceMetadata(API, { method });
      expect(res.status).toBe(200);
      expect(res.headers).toEqual({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=3600' });
      expect(json(res).resource).toBe(API);
    }
  });

  it('405 for other methods, 404 for an unknown resource and without an issuer', async () => {
    const { server } = await setup(RESOURCES);
    const post = server.protectedResourceMetadata(API, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers['allow']).toBe('GET, HEAD');
    expect(server.protectedResourceMetadata('https://unknown.example', { method: 'GET' }).status).toBe(404);
    expect(server.protectedResourceMetadata(undefined, { method: 'GET' }).status).toBe(404);
    const bare = await setup({ protectedResources: [{ resource: API }] });
    expect(bare.server.protectedResourceMetadata(API, { method: 'GET' }).status).toBe(404);
    expect(bare.server.protectedResourceMetadataDocument(API)).toBeNull();
  });
});

describe("the adapter kit's routes for the documents", () => {
  it('one route per well-known path; resources on several hosts that share one are told apart by the host', async () => {
    const { server } = await setup({
      issuer: ISSUER,
      protectedResources: [{ resource: 'https://api.example' }, { resource: 'https://mcp.example' }, { resource: API }],
    });
    const routes = oauthRoutes('/v1/oauth', server).filter((r) => r.path.startsWith('/.well-known/oauth-protected-resource'));
    expect(routes.map((r) => [r.path, r.body])).toEqual([
      ['/.well-known/oauth-protected-resource', 'none'],
      ['/.well-known/oauth-protected-resource/v2', 'none'],
    ]);
    const answer = async (route: number, url: string) =>
      (await routes[route]!.handle(server, { method: 'GET', url, headers: {} }, routeWhere({}))) as OAuthResponse;
    expect(json(await answer(0, 'https://mcp.example/.well-known/oauth-protected-resource')).resource).toBe('https://mcp.example');
    expect(json(await answer(0, 'https://api.example/.well-known/oauth-protected-resource')).resource).toBe('https://api.example');
    expect((await answer(0, 'https://elsewhere.example/.well-known/oauth-protected-resource')).status).toBe(404);
    // One resource on a path answers whatever the host (a proxy may have changed it).
    expect(json(await answer(1, 'http://127.0.0.1:3000/.well-known/oauth-protected-resource/v2')).resource).toBe(API);
  });

  it('without a server, or without protectedResources, no such route', async () => {
    const { server } = await setup({ issuer: ISSUER });
    const documents = (routes: { path: string }[]) => routes.filter((r) => r.path.includes('oauth-protected-resource'));
    expect(documents(oauthRoutes('/v1/oauth'))).toEqual([]);
    expect(documents(oauthRoutes('/v1/oauth', server))).toEqual([]);
  });
});

describe('authenticate for a protected resource', () => {
  const challengeOf = (result: Awaited<ReturnType<Awaited<ReturnType<typeof setup>>['server']['authenticate']>>) => {
    if (result.ok) throw new Error('expected a challenge');
    return { status: result.response.status, header: result.response.headers['www-authenticate'], body: json(result.response) };
  };

  it('a 401 without a token names the metadata document and the scope the request needs (RFC 9728 §5.1)', async () => {
    const t = await setup(RESOURCES);
    const get = challengeOf(await t.server.authenticate(call(undefined, 'GET', '/v2/account'), { resource: API }));
    expect(get.status).toBe(401);
    expect(get.header).toBe(`Bearer realm="authgate", scope="read", resource_metadata="${API_METADATA}"`);
    const post = challengeOf(await t.server.authenticate(call(undefined, 'POST', '/v2/things'), { resource: API }));
    expect(post.header).toBe(`Bearer realm="authgate", scope="read write", resource_metadata="${API_METADATA}"`);
  });

  it('without `resource` the challenge stays as it was: no resource_metadata, no scope', async () => {
    const t = await setup(RESOURCES);
    expect(challengeOf(await t.server.authenticate(call(undefined, 'GET'))).header).toBe('Bearer realm="authgate"');
  });

  it('an invalid token: 401 invalid_token with resource_metadata', async () => {
    const t = await setup(RESOURCES);
    const res = challengeOf(await t.server.authenticate(call('nope'), { resource: MCP, body: { method: 'initialize' } }));
    expect(res.status).toBe(401);
    expect(res.header).toBe(
      'Bearer realm="authgate", error="invalid_token", error_description="The access token is invalid, expired or revoked.", ' +
        'scope="read", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp"',
    );
  });

  it('a malformed request (400) names the document too, without a scope', async () => {
    const t = await setup(RESOURCES);
    const res = challengeOf(
      await t.server.authenticate({ method: 'GET', url: '/v2', headers: { authorization: 'Bearer a b' } }, { resource: API }),
    );
    expect(res.status).toBe(400);
    expect(res.header).toMatch(
      /error="invalid_request".*, resource_metadata="https:\/\/api\.example\/\.well-known\/oauth-protected-resource\/v2"$/,
    );
    expect(res.header).not.toContain('scope=');
  });

  it("the resource's own rule decides by the parsed body: a read token may POST JSON-RPC, not call a write tool", async () => {
    const t = await setup(RESOURCES);
    const { access_token } = await t.tokens({ scope: 'read' });
    const list = await t.server.authenticate(call(access_token), { resource: MCP, body: { jsonrpc: '2.0', method: 'tools/list' } });
    expect(list.ok).toBe(true);
    // Without a resource, the same POST needs write (the server's method rule).
    expect((await t.server.authenticate(call(access_token))).ok).toBe(false);
    const write = challengeOf(
      await t.server.authenticate(call(access_token), { resource: MCP, body: { method: 'tools/call', params: { name: 'delete_thing' } } }),
    );
    expect(write.status).toBe(403);
    expect(write.header).toBe(
      'Bearer realm="authgate", error="insufficient_scope", error_description="The access token does not allow this request.", ' +
        'scope="read write", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp"',
    );
    expect(write.body.error).toBe('insufficient_scope');
    const { access_token: wide } = await t.tokens({ scope: 'read write' });
    const allowed = await t.server.authenticate(call(wide), {
      resource: MCP,
      body: { method: 'tools/call', params: { name: 'delete_thing' } },
    });
    expect(allowed).toMatchObject({ ok: true, token: { scope: ['read', 'write'] } });
  });

  it('the rule sees method, URL and body; readBody is called once, only for a rule, and only when no body was given', async () => {
    const seen: ResourceRequest[] = [];
    const t = await setup({
      ...RESOURCES,
      protectedResources: [
        {
          resource: MCP,
          requiredScope: (r) => {
            seen.push(r);
            return ['read'];
          },
        },
        { resource: API },
      ],
    });
    const { access_token } = await t.tokens({ scope: 'read' });
    let reads = 0;
    const readBody = async () => {
      reads++;
      return { method: 'ping' };
    };
    expect((await t.server.authenticate(call(access_token), { resource: MCP, readBody })).ok).toBe(true);
    expect(reads).toBe(1);
    expect(seen.at(-1)).toEqual({ method: 'POST', url: '/mcp', body: { method: 'ping' } });
    expect((await t.server.authenticate(call(access_token), { resource: MCP, body: { method: 'given' }, readBody })).ok).toBe(true);
    expect(reads).toBe(1);
    expect(seen.at(-1)!.body).toEqual({ method: 'given' });
    // No body at all: the rule is called without one.
    await t.server.authenticate(call(access_token), { resource: MCP });
    expect(seen.at(-1)).toEqual({ method: 'POST', url: '/mcp' });
    // The server's rule (no requiredScope) never reads a body.
    await t.server.authenticate(call(access_token, 'GET'), { resource: API, readBody });
    expect(reads).toBe(1);
  });

  it('the default rule for a resource without its own: read for GET and HEAD, write otherwise', async () => {
    const t = await setup(RESOURCES);
    const { access_token } = await t.tokens({ scope: 'read' });
    expect((await t.server.authenticate(call(access_token, 'GET'), { resource: API })).ok).toBe(true);
    const post = challengeOf(await t.server.authenticate(call(access_token, 'POST'), { resource: API }));
    expect(post.status).toBe(403);
    expect(post.header).toContain('scope="read write", resource_metadata="https://api.example/');
  });

  it('an unknown resource or a rule that answers something other than scope values is a 503, reported', async () => {
    const errors: unknown[] = [];
    const bad = (() => ['read"']) as (r: ResourceRequest) => string[];
    const t = await setup({ ...RESOURCES, onError: (e) => errors.push(e), protectedResources: [{ resource: MCP, requiredScope: bad }] });
    const { access_token } = await t.tokens({ scope: 'read' });
    const unknown = await t.server.authenticate(call(access_token), { resource: 'https://unknown.example' });
    expect(unknown.ok ? 0 : unknown.response.status).toBe(503);
    const quoted = await t.server.authenticate(call(access_token), { resource: MCP });
    expect(quoted.ok ? 0 : quoted.response.status).toBe(503);
    expect(quoted.ok ? '' : (quoted.response.headers['www-authenticate'] ?? '')).not.toContain('read"');
    expect(errors).toHaveLength(2);
    expect(errors[0]).toBeInstanceOf(ConfigError);
  });

  it('resourceCheck(resource) resolves the resource once and answers as authenticate(request, { resource }), over time', async () => {
    const t = await setup(RESOURCES);
    expect(() => t.server.resourceCheck('https://unknown.example')).toThrow(ConfigError);
    const mcp = t.server.resourceCheck(MCP);
    const api = t.server.resourceCheck(API);
    const { access_token, refresh_token } = await t.tokens({ scope: 'read' });
    const forApi = (await t.tokens({ scope: 'read write', resource: API })).access_token;
    const write = { jsonrpc: '2.0', method: 'tools/call', params: { name: 'delete_thing' } };
    const ping = { jsonrpc: '2.0', method: 'ping' };
    const same = async () => {
      const cases: Array<[OAuthRequest, string, unknown]> = [
        [call(undefined), MCP, undefined],
        [call('not-a-token'), MCP, undefined],
        [{ method: 'GET', url: '/mcp', headers: { authorization: 'Bearer a b' } }, MCP, undefined],
        [call(access_token), MCP, ping],
        [call(access_token), MCP, write],
        [call(forApi), MCP, ping],
        [call(forApi, 'POST', '/v2/things'), API, undefined],
        [call(access_token, 'POST', '/v2/things'), API, undefined],
        [call(access_token, 'GET', '/v2/things'), API, undefined],
      ];
      for (const [request, resource, body] of cases) {
        const check = resource === MCP ? mcp : api;
        const expected = await t.server.authenticate(request, { resource, body });
        expect(await check(request, { body })).toEqual(expected);
        // Lazily read, as Hono's adapter hands it over.
        expect(await check(request, { readBody: () => body })).toEqual(expected);
      }
      return (await mcp(call(access_token), { body: ping })).ok;
    };
    expect(await same()).toBe(true);
    // Rotation revokes the access token: both refuse it alike.
    expect((await t.refresh(refresh_token)).status).toBe(200);
    expect(await same()).toBe(false);
    // Thirty days on, every token issued has expired.
    t.clock.advance(2_592_000_000);
    expect(await same()).toBe(false);
  });

  it('an expired or revoked token is invalid_token for a resource as without', async () => {
    const t = await setup(RESOURCES);
    const { access_token } = await t.tokens({ scope: 'read' });
    t.clock.advance(2_592_000_000);
    const res = challengeOf(await t.server.authenticate(call(access_token, 'GET'), { resource: API }));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
  });
});

describe('step-up (MCP): a wider scope needs a new authorization', () => {
  it('a refresh that asks for a wider scope answers invalid_scope, and the old token still refreshes', async () => {
    const t = await setup(RESOURCES);
    const read = await t.tokens({ scope: 'read' });
    const wider = await t.refresh(read.refresh_token, { scope: 'read write' });
    expect(wider.status).toBe(400);
    expect(json(wider).error).toBe('invalid_scope');
    expect((await t.refresh(read.refresh_token)).status).toBe(200);
    // The client re-authorizes for the scope the 403 named, and then may make the request.
    const stepped = await t.tokens({ scope: 'read write' });
    const body = { method: 'tools/call', params: { name: 'delete_thing' } };
    expect((await t.server.authenticate(call(stepped.access_token), { resource: MCP, body })).ok).toBe(true);
  });
});

describe('audience (RFC 8707) at a protected resource', () => {
  const challengeOf = (result: Awaited<ReturnType<Awaited<ReturnType<typeof setup>>['server']['authenticate']>>) => {
    if (result.ok) throw new Error('expected a challenge');
    return { status: result.response.status, header: result.response.headers['www-authenticate'], body: json(result.response) };
  };

  it('a token issued for one resource is refused at another (401 invalid_token); one issued without resource is accepted by both', async () => {
    const t = await setup(RESOURCES);
    const forApi = await t.tokens({ scope: 'read write', resource: API });
    const forMcp = await t.tokens({ scope: 'read write', resource: MCP });
    const unbound = await t.tokens({ scope: 'read write' });
    const at = (token: string, resource: string) =>
      t.server.authenticate(call(token, 'GET', '/x'), { resource, body: { method: 'initialize' } });

    expect((await at(forApi.access_token, API)).ok).toBe(true);
    expect((await at(forMcp.access_token, MCP)).ok).toBe(true);

    const refused = challengeOf(await at(forApi.access_token, MCP));
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_token');
    expect(refused.header).toContain('resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp"');
    expect(challengeOf(await at(forMcp.access_token, API)).status).toBe(401);

    // Issued before or without resource indicators: not restricted (today's behaviour).
    expect((await at(unbound.access_token, API)).ok).toBe(true);
    expect((await at(unbound.access_token, MCP)).ok).toBe(true);
  });

  it('a refresh may keep or narrow the resources granted, never widen them: invalid_target', async () => {
    const t = await setup(RESOURCES);
    const code = await t.getCode({ scope: 'read', resource: API });
    const first = json(await t.exchange(code));
    const refreshed = json(await t.refresh(first.refresh_token as string, { resource: API }));
    expect((await t.server.authenticate(call(refreshed.access_token as string, 'GET'), { resource: API })).ok).toBe(true);
    expect(challengeOf(await t.server.authenticate(call(refreshed.access_token as string, 'GET'), { resource: MCP })).status).toBe(401);
    // Widening at refresh: invalid_target, nothing used up.
    const widened = await t.refresh(refreshed.refresh_token as string, { resource: MCP });
    expect(widened.status).toBe(400);
    expect(json(widened).error).toBe('invalid_target');
  });
});

describe('the authorization server metadata (RFC 8414) with protected resources', () => {
  it('lists their identifiers as protected_resources (RFC 9728 §4); without the option, no such member', async () => {
    const withResources = await setup(RESOURCES);
    expect(withResources.server.metadataDocument()?.protected_resources).toEqual([API, MCP]);
    const without = await setup({ issuer: ISSUER });
    expect(without.server.metadataDocument()).not.toHaveProperty('protected_resources');
  });
});

describe('an audience-bound token at the plain resource check (regression: security review of issue 16)', () => {
  it('requireToken(server) without a resource refuses a token issued for a resource (401 invalid_token), opaque and JWT', async () => {
    for (const format of ['opaque', 'jwt'] as const) {
      const t = await setup({ ...RESOURCES, accessTokenFormat: format });
      const forMcp = await t.tokens({ scope: 'read write', resource: MCP });
      for (const method of ['GET', 'POST', 'DELETE']) {
        const result = await t.api(method, forMcp.access_token);
        expect(result.ok, `${format} ${method}`).toBe(false);
        if (!result.ok) {
          expect(result.response.status).toBe(401);
          expect(json(result.response).error).toBe('invalid_token');
        }
      }
      // Still good where it was issued for, and a token without resource still works everywhere.
      expect((await t.server.authenticate(call(forMcp.access_token, 'GET'), { resource: MCP, body: { method: 'initialize' } })).ok).toBe(
        true,
      );
      expect((await t.api('GET', (await t.tokens({ scope: 'read' })).access_token)).ok).toBe(true);
    }
  });

  it('a token bound to a third-party resource (acceptResource) cannot be replayed at the platform API', async () => {
    const THIRD = 'https://thirdparty.example/mcp';
    const t = await setup({ issuer: ISSUER, acceptResource: (r: string) => r === THIRD });
    const bound = await t.tokens({ scope: 'read write', resource: THIRD });
    expect((await t.api('DELETE', bound.access_token)).ok).toBe(false);
  });
});
