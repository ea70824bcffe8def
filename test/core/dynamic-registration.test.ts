/**
 * Dynamic client registration (RFC 7591) in the core
 * (docs/reference.md#dynamic-registration-endpoint).
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/index.js';
import { json, setup } from '../helpers.js';

describe('dynamic client registration (RFC 7591)', () => {
  const registration = (body: unknown) => ({
    method: 'POST',
    url: '/v1/oauth/register',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

  it('is off by default (404)', async () => {
    const t = await setup();
    expect((await t.server.registerDynamic(registration({ redirect_uris: ['http://127.0.0.1/cb'] }))).status).toBe(404);
  });

  it('registers a public client that can then complete a PKCE flow', async () => {
    const events: AuditEvent[] = [];
    const t = await setup({ allowDynamicRegistration: true, onAudit: (e) => events.push(e) });
    const res = await t.server.registerDynamic(
      registration({ client_name: 'My CLI', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' }),
    );
    expect(res.status).toBe(201);
    const client = json(res);
    expect(client).toMatchObject({
      client_name: 'My CLI',
      redirect_uris: ['http://127.0.0.1/callback'],
      token_endpoint_auth_method: 'none',
    });
    expect(client).not.toHaveProperty('client_secret');
    expect(events).toContainEqual(expect.objectContaining({ type: 'client.registered', public: true, clientId: client.client_id }));
    const verifier = randomBytes(32).toString('base64url');
    const d = await t.server.authorize(
      t.get(
        `/v1/oauth/authorize?${new URLSearchParams({ client_id: client.client_id as string, redirect_uri: 'http://127.0.0.1:4567/callback', response_type: 'code', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' })}`,
        t.ada,
      ),
    );
    expect(d.type).toBe('consent');
  });

  it('the host hook decides; bad metadata is invalid_client_metadata or invalid_redirect_uri', async () => {
    const t = await setup({ allowDynamicRegistration: true, onDynamicRegistration: ({ clientName }) => clientName !== 'Evil' });
    expect((await t.server.registerDynamic(registration({ client_name: 'Evil', redirect_uris: ['http://127.0.0.1/cb'] }))).status).toBe(
      403,
    );
    for (const [body, error] of [
      [{ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: [] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['http://127.0.0.1/a', 'http://127.0.0.1/b'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
      [{ redirect_uris: ['http://127.0.0.1/cb'], grant_types: ['password'] }, 'invalid_client_metadata'],
      [{ redirect_uris: ['http://127.0.0.1/cb'], client_name: 5 }, 'invalid_client_metadata'],
      [[1, 2], 'invalid_client_metadata'],
    ] as const) {
      const res = await t.server.registerDynamic(registration(body));
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(json(res).error).toBe(error);
    }
    expect(json(await t.server.registerDynamic({ ...registration({}), body: '{not json' })).error).toBe('invalid_client_metadata');
    expect(
      json(await t.server.registerDynamic({ ...registration({}), headers: { 'content-type': 'application/x-www-form-urlencoded' } })).error,
    ).toBe('invalid_client_metadata');
  });
});
