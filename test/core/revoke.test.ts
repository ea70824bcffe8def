import { describe, expect, it } from 'vitest';
import { MemoryStorage, type AuditEvent } from '../../src/index.js';
import { ADA, BOB, json, setup } from '../helpers.js';

/**
 * The revocation endpoint (RFC 7009; docs/reference.md#revocation-endpoint) and the user revoking
 * access (docs/reference.md#revocation-semantics).
 */
describe('revocation endpoint (RFC 7009)', () => {
  it('revoking an access token: empty JSON object, and the token cannot be used again', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    const res = await t.server.revoke(t.post('/v1/oauth/revoke', { token: tokens.access_token }));
    expect(res.status).toBe(200);
    expect(res.body).toBe('{}');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    const api = await t.api('GET', tokens.access_token);
    expect(api.ok).toBe(false);
    if (!api.ok) expect(api.response.status).toBe(401);
  });

  it('token in the query of a POST and as a Bearer header, as some clients send it', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    const res = await t.server.revoke({
      method: 'POST',
      url: `/v1/oauth/revoke?token=${tokens.access_token}`,
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({});
    expect((await t.api('GET', tokens.access_token)).ok).toBe(false);
  });

  it('revoking either token of a pair revokes both', async () => {
    const t = await setup();
    const a = await t.tokens();
    await t.server.revoke(t.post('/v1/oauth/revoke', { token: a.access_token }));
    expect(json(await t.refresh(a.refresh_token)).error).toBe('invalid_grant');
    const b = await t.tokens();
    await t.server.revoke(t.post('/v1/oauth/revoke', { token: b.refresh_token, token_type_hint: 'refresh_token' }));
    expect((await t.api('GET', b.access_token)).ok).toBe(false);
    expect(json(await t.refresh(b.refresh_token)).error).toBe('invalid_grant');
  });

  it("revoking one authorization leaves the user's other authorizations alone", async () => {
    const t = await setup();
    const a = await t.tokens();
    const b = await t.tokens();
    await t.server.revoke(t.post('/v1/oauth/revoke', { token: a.access_token }));
    expect((await t.api('GET', b.access_token)).ok).toBe(true);
  });

  it('unknown, already revoked or malformed tokens: 200 {} (RFC 7009 §2.2), twice in a row too', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    for (const token of [tokens.access_token, tokens.access_token, 'unknown', 'x'.repeat(5000)]) {
      const res = await t.server.revoke(t.post('/v1/oauth/revoke', { token }));
      expect(res.status).toBe(200);
      expect(res.body).toBe('{}');
    }
  });

  it('missing token: 400 invalid_request', async () => {
    const t = await setup();
    const res = await t.server.revoke(t.post('/v1/oauth/revoke', {}));
    expect(res.status).toBe(400);
    expect(json(res).error).toBe('invalid_request');
  });

  it('client credentials, when sent, must be right, and a client may revoke only its own tokens', async () => {
    const t = await setup();
    const tokens = await t.tokens();
    const wrong = await t.server.revoke(
      t.post('/v1/oauth/revoke', { token: tokens.access_token, client_id: t.client.clientId, client_secret: 'bad' }),
    );
    expect(wrong.status).toBe(401);
    const foreign = await t.server.revoke(
      t.post('/v1/oauth/revoke', { token: tokens.access_token, client_id: t.other.clientId, client_secret: t.other.clientSecret }),
    );
    expect(foreign.status).toBe(400);
    expect(json(foreign).error).toBe('unauthorized_client');
    expect((await t.api('GET', tokens.access_token)).ok).toBe(true);
    const own = await t.server.revoke(
      t.post('/v1/oauth/revoke', { token: tokens.access_token, client_id: t.client.clientId, client_secret: t.client.clientSecret }),
    );
    expect(own.status).toBe(200);
    expect((await t.api('GET', tokens.access_token)).ok).toBe(false);
  });

  it('GET is refused with 405', async () => {
    const t = await setup();
    const res = await t.server.revoke({ method: 'GET', url: '/v1/oauth/revoke?token=x', headers: {} });
    expect(res.status).toBe(405);
    expect(res.headers['allow']).toBe('POST');
    expect(json(res).error).toBe('invalid_request');
  });
});

describe('user revokes access', () => {
  it('revokeAccess invalidates every token of the application for that user; prompt=none then answers consent_required', async () => {
    const t = await setup();
    const a = await t.tokens();
    const b = await t.tokens({ scope: 'read write' });
    const code = await t.getCode();
    const implicit = new URLSearchParams((await t.authorizeAndApprove({ response_type: 'token' })).hash.slice(1)).get('access_token')!;
    await t.server.revokeAccess({ accountUuid: ADA.uuid, clientId: t.client.clientId });
    for (const token of [a.access_token, b.access_token, implicit]) expect((await t.api('GET', token)).ok).toBe(false);
    expect(json(await t.refresh(a.refresh_token)).error).toBe('invalid_grant');
    expect(json(await t.exchange(code)).error).toBe('invalid_grant');
    const none = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none' }), t.ada));
    expect(none.type === 'redirect' && new URL(none.location).searchParams.get('error')).toBe('consent_required');
  });

  it('leaves other users and other applications alone, and a new approval works again', async () => {
    const t = await setup();
    const adaTokens = await t.tokens();
    const bob = t.sessions.signIn(BOB);
    const bobCode = await t.getCode({}, bob);
    const bobTokens = json(await t.exchange(bobCode));
    await t.server.revokeAccess({ accountUuid: ADA.uuid, clientId: t.other.clientId });
    expect((await t.api('GET', adaTokens.access_token)).ok).toBe(true);
    await t.server.revokeAccess({ accountUuid: ADA.uuid, clientId: t.client.clientId });
    expect((await t.api('GET', bobTokens.access_token as string)).ok).toBe(true);
    const fresh = await t.tokens();
    expect((await t.api('GET', fresh.access_token)).ok).toBe(true);
  });
  it('reads what it reports before the next await: a readToken record that changes afterwards does not change the audit event', async () => {
    const events: AuditEvent[] = [];
    const inner = new MemoryStorage();
    let viewed: { token: { clientId?: string; grantId: string } } | null = null;
    // A store whose readToken hands out a record it reuses, and changes it after revokeGrant.
    const storage = new Proxy(inner, {
      get(target, name) {
        if (name === 'readToken')
          return async (hash: string) => {
            const found = await target.readToken(hash);
            viewed = found && { ...found, token: { ...found.token } };
            return viewed;
          };
        if (name === 'revokeGrant')
          return async (grantId: string, now: number) => {
            await target.revokeGrant(grantId, now);
            if (viewed) viewed.token.clientId = 'reused-by-another-lookup';
          };
        const value = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const t = await setup({ storage, onAudit: (e) => events.push(e) });
    const tokens = await t.tokens();
    const res = await t.server.revoke(
      t.post('/v1/oauth/revoke', { token: tokens.access_token, client_id: t.client.clientId, client_secret: t.client.clientSecret }),
    );
    expect(res.status).toBe(200);
    expect(events.filter((e) => e.type === 'token.revoked')).toMatchObject([{ clientId: t.client.clientId }]);
  });
});
