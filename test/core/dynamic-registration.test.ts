/**
 * Dynamic client registration (RFC 7591) in the core
 * (docs/reference.md#dynamic-registration-endpoint).
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryStorage, OAuthError, type AuditEvent, type ClientRecord } from '../../src/index.js';
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

  it('a storage failure while storing the client is a 500 reported to onError, not refused metadata; the retry registers', async () => {
    // A store that is down for one saveClient (the first one after the fixture's own clients).
    let down = false;
    class FlakyStorage extends MemoryStorage {
      override async saveClient(client: ClientRecord): Promise<void> {
        if (down) {
          down = false;
          throw new Error('storage unavailable: db-7.internal (detail that must not leak)');
        }
        return super.saveClient(client);
      }
    }
    const errors: unknown[] = [];
    const events: AuditEvent[] = [];
    const t = await setup({
      storage: new FlakyStorage(),
      allowDynamicRegistration: true,
      onError: (e) => errors.push(e),
      onAudit: (e) => events.push(e),
    });
    const body = { client_name: 'My CLI', redirect_uris: ['http://127.0.0.1/callback'] };
    events.length = 0; // the fixture's own two clients
    down = true;
    const failed = await t.server.registerDynamic(registration(body));
    expect(failed.status).toBe(500);
    expect(json(failed)).toEqual({
      error: 'server_error',
      error_description: 'The server could not complete the request. Try again later.',
    });
    expect(errors).toHaveLength(1);
    expect(events.filter((e) => e.type === 'client.registered')).toEqual([]);
    const retried = await t.server.registerDynamic(registration(body));
    expect(retried.status).toBe(201);
    expect(await t.server.getClient(json(retried).client_id as string)).toMatchObject({ name: 'My CLI', public: true, verified: false });
  });

  it('a refused field is told apart by the field, not by words of its description', async () => {
    const t = await setup({ allowDynamicRegistration: true });
    // The name check refuses a control character; its description says nothing of callbacks.
    const name = await t.server.registerDynamic(registration({ client_name: 'a\u0007b', redirect_uris: ['http://127.0.0.1/cb'] }));
    expect(json(name).error).toBe('invalid_client_metadata');
    expect(json(name).error_description).toMatch(/^The application name/);
    // The callback check refuses a fragment: invalid_redirect_uri.
    const callback = await t.server.registerDynamic(registration({ redirect_uris: ['http://127.0.0.1/cb#frag'] }));
    expect(json(callback).error).toBe('invalid_redirect_uri');
    expect(json(callback).error_description).toMatch(/^The callback URL /);
    // To the host, registerClient's refusal is the OAuthError it always was, equal to one made by hand.
    for (const input of [
      { name: 'x', redirectUri: 'http://127.0.0.1/cb#frag' },
      { name: '', redirectUri: 'http://127.0.0.1/cb' },
    ]) {
      const refused = (await t.server.registerClient(input).catch((e: unknown) => e)) as OAuthError;
      expect(refused).toStrictEqual(new OAuthError('invalid_request', refused.description));
    }
  });
});
