/**
 * `requireToken(server)` protecting the host's routes under /v2 in every framework (RFC 6750 §3;
 * docs/reference.md#resource-check, docs/reference.md#scope): GET /v2/account returns the verified
 * token (`res.locals.oauth`, `request.oauth`, `c.get('oauth')`), POST /v2/things needs `write`.
 */
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { VerifiedToken } from '../../src/index.js';
import { ACCESS_TOKEN_SECONDS, ADA, FRAMEWORKS, useApp, type Reply } from './app.js';

/** The parameters of a `WWW-Authenticate: Bearer ...` challenge. */
function bearerChallenge(reply: Reply): Record<string, string> {
  const value = reply.headers.get('www-authenticate') ?? '';
  expect(value).toMatch(/^Bearer /);
  const params: Record<string, string> = {};
  for (const match of value.slice('Bearer '.length).matchAll(/(\w+)="([^"]*)"/g)) params[match[1]!] = match[2]!;
  return params;
}

describe.each(FRAMEWORKS)('%s: requireToken on the resource API', (framework) => {
  const app = useApp({ framework });

  it('no token → 401 with WWW-Authenticate Bearer realm and no error attribute; the route does not run', async () => {
    const { api } = app();
    for (const [method, path] of [
      ['GET', '/v2/account'],
      ['POST', '/v2/things'],
    ] as const) {
      const reply = await api(method, path);
      expect(reply.status).toBe(401);
      const challenge = bearerChallenge(reply);
      expect(challenge.realm).toBeTruthy();
      expect(challenge).not.toHaveProperty('error');
      expect(reply.text).not.toContain('"oauth"');
      expect(reply.text).not.toContain('created');
    }
  });

  it('another scheme (Basic) counts as no token', async () => {
    const { api } = app();
    const reply = await api('GET', '/v2/account', undefined, { authorization: 'Basic YTpi' });
    expect(reply.status).toBe(401);
    expect(bearerChallenge(reply)).not.toHaveProperty('error');
  });

  it('a token only in the URL query is ignored (as no token)', async () => {
    const { tokens, api } = app();
    const { access_token } = await tokens();
    const reply = await api('GET', `/v2/account?access_token=${access_token}`);
    expect(reply.status).toBe(401);
    expect(bearerChallenge(reply)).not.toHaveProperty('error');
  });

  it.each([
    ['unknown', 'A'.repeat(43)],
    ['malformed', 'not a token!'.replace(/ /g, '%')],
  ])('a bad (%s) token → 401 error="invalid_token"', async (_name, token) => {
    const { api } = app();
    const reply = await api('GET', '/v2/account', token);
    expect(reply.status).toBe(401);
    const challenge = bearerChallenge(reply);
    expect(challenge.error).toBe('invalid_token');
    expect(challenge.realm).toBeTruthy();
    expect(reply.json<{ error: string }>().error).toBe('invalid_token');
  });

  it('a refresh token used as a bearer token → 401 invalid_token', async () => {
    const { tokens, api } = app();
    const { refresh_token } = await tokens();
    const reply = await api('GET', '/v2/account', refresh_token);
    expect(reply.status).toBe(401);
    expect(bearerChallenge(reply).error).toBe('invalid_token');
  });

  it('an expired token (30 days) → 401 invalid_token; 1 ms before it still works', async () => {
    const { tokens, api, clock } = app();
    const { access_token } = await tokens();
    clock.advance(ACCESS_TOKEN_SECONDS * 1000 - 1);
    expect((await api('GET', '/v2/account', access_token)).status).toBe(200);
    clock.advance(1);
    const reply = await api('GET', '/v2/account', access_token);
    expect(reply.status).toBe(401);
    expect(bearerChallenge(reply).error).toBe('invalid_token');
  });

  it('a read token doing POST → 403 error="insufficient_scope" with scope="read write"; the route does not run', async () => {
    const { tokens, api } = app();
    const { access_token } = await tokens({ scope: 'read' });
    const reply = await api('POST', '/v2/things', access_token);
    expect(reply.status).toBe(403);
    const challenge = bearerChallenge(reply);
    expect(challenge.error).toBe('insufficient_scope');
    expect(challenge.scope).toBe('read write');
    expect(reply.text).not.toContain('created');
    // GET works with the same token.
    expect((await api('GET', '/v2/account', access_token)).status).toBe(200);
  });

  it('a read write token → POST works and the route sees the token', async () => {
    const { tokens, api, client } = app();
    const { access_token } = await tokens({ scope: 'read write' });
    const reply = await api('POST', '/v2/things', access_token);
    expect(reply.status, reply.text).toBe(201);
    const body = reply.json<{ created: boolean; oauth: VerifiedToken }>();
    expect(body.created).toBe(true);
    expect(body.oauth.clientId).toBe(client.clientId);
    expect(body.oauth.scope).toEqual(['read', 'write']);
  });

  it("the verified token the route sees carries kind 'oauth', clientId, account, scope and expiresAt (ms since epoch)", async () => {
    const { tokens, api, client, clock } = app();
    const issuedAt = clock.now();
    const { access_token } = await tokens({ scope: 'read' });
    const reply = await api('GET', '/v2/account', access_token);
    expect(reply.status).toBe(200);
    const { oauth } = reply.json<{ oauth: VerifiedToken }>();
    expect(oauth).toEqual({
      kind: 'oauth',
      clientId: client.clientId,
      account: ADA,
      scope: ['read'],
      expiresAt: issuedAt + ACCESS_TOKEN_SECONDS * 1000,
    });
  });

  it('the Bearer scheme name is case-insensitive', async () => {
    const { tokens, request } = app();
    const { access_token } = await tokens();
    const reply = await request('GET', '/v2/account', { headers: { authorization: `bearer ${access_token}` } });
    expect(reply.status).toBe(200);
  });

  it('a token in the header and in the query → 400 invalid_request', async () => {
    const { tokens, api } = app();
    const { access_token } = await tokens();
    const reply = await api('GET', `/v2/account?access_token=${access_token}`, access_token);
    expect(reply.status).toBe(400);
    expect(bearerChallenge(reply).error).toBe('invalid_request');
  });

  it('two Authorization headers → 400 invalid_request, whichever comes first (Node keeps only the first one)', async () => {
    // fetch merges repeated headers into one line, so this request is written with node:http (a
    // raw header list, which also needs its own Host line).
    const { tokens, base } = app();
    const { access_token } = await tokens();
    const send = (values: string[]) =>
      new Promise<{ status: number; challenge: string }>((resolve, reject) => {
        const req = httpRequest(
          `${base}/v2/account`,
          { headers: ['host', new URL(base).host, ...values.flatMap((v) => ['authorization', v])] },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, challenge: String(res.headers['www-authenticate']) }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    for (const values of [
      [`Bearer ${access_token}`, 'Bearer AAAA'],
      ['Bearer AAAA', `Bearer ${access_token}`],
      [`Bearer ${access_token}`, `Bearer ${access_token}`],
    ]) {
      const reply = await send(values);
      expect(reply.status).toBe(400);
      expect(reply.challenge).toContain('error="invalid_request"');
    }
  });

  it('a token revoked by the user (revokeAccess) stops working at once', async () => {
    const { tokens, api, server, client } = app();
    const { access_token } = await tokens();
    await server.revokeAccess({ accountUuid: ADA.uuid, clientId: client.clientId });
    expect((await api('GET', '/v2/account', access_token)).status).toBe(401);
  });
});
