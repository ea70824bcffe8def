/**
 * Client authentication is one step (`authenticateClient`, src/checks/client-auth.ts) for every
 * endpoint that authenticates clients: token, revocation, introspection and device authorization
 * (docs/reference.md#client-authentication). Each case sends the same credentials to all four and
 * expects the same answer, through each way the step can end: no credentials, an id no store can
 * hold (answered without asking the store), the store's answer, and the store failing.
 */
import { describe, expect, it } from 'vitest';
import { DEVICE_CODE_GRANT, MemoryStorage, type AuditEvent, type ClientRecord, type OAuthResponse } from '../../src/index.js';
import { json, setup } from '../helpers.js';

type Endpoint = 'token' | 'revoke' | 'introspect' | 'device';
const ENDPOINTS: Endpoint[] = ['token', 'revoke', 'introspect', 'device'];

async function clientAuth() {
  let failFindClient = false;
  class Store extends MemoryStorage {
    override async findClient(clientId: string): Promise<ClientRecord | null> {
      if (failFindClient) throw new Error('storage unavailable');
      return super.findClient(clientId);
    }
    // The client read together with the code or token the request presents (combinedReads) fails as well.
    override async findClientAndCode(clientId: string, codeHash: string) {
      if (failFindClient) throw new Error('storage unavailable');
      return super.findClientAndCode(clientId, codeHash);
    }
    override async findClientAndToken(clientId: string, tokenHash: string) {
      if (failFindClient) throw new Error('storage unavailable');
      return super.findClientAndToken(clientId, tokenHash);
    }
  }
  const events: AuditEvent[] = [];
  const errors: unknown[] = [];
  const t = await setup({
    storage: new Store(),
    deviceAuthorization: {},
    allowCredentialsInQuery: false,
    onAudit: (e) => events.push(e),
    onError: (e) => errors.push(e),
  });
  const tv = await t.server.registerClient({
    name: 'TV',
    redirectUri: 'https://tv.example/cb',
    grantTypes: ['authorization_code', DEVICE_CODE_GRANT, 'refresh_token'],
  });
  const tokens = await t.tokens();
  /** `form` (with `headers`) sent to one endpoint, the rest of its request well formed. */
  const send = (
    endpoint: Endpoint,
    form: Record<string, string>,
    headers: Record<string, string> = {},
    query = '',
  ): Promise<OAuthResponse> => {
    switch (endpoint) {
      case 'token':
        return t.server.token(
          t.post(`/v1/oauth/token${query}`, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...form }, headers),
        );
      case 'revoke':
        return t.server.revoke(t.post(`/v1/oauth/revoke${query}`, { token: tokens.access_token, ...form }, headers));
      case 'introspect':
        return t.server.introspect(t.post(`/v1/oauth/introspect${query}`, { token: tokens.access_token, ...form }, headers));
      case 'device':
        return t.server.deviceAuthorization(
          t.post(`/v1/oauth/device${query}`, form, headers),
          'https://auth.example/v1/oauth/device/verify',
        );
    }
  };
  const failures = () => events.filter((e) => e.type === 'client.authentication_failed');
  return {
    ...t,
    tv,
    tokens,
    events,
    errors,
    send,
    failures,
    storeDown: (down: boolean) => {
      failFindClient = down;
    },
  };
}

const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });

describe('client authentication, one step for every endpoint', () => {
  it('a wrong secret, an unknown client and an id no store can hold: the same 401 invalid_client everywhere, each audited with the claimed id', async () => {
    const t = await clientAuth();
    const tooLong = 'c'.repeat(300); // within the parameter bound (512), but no store holds such an id: refused without asking it
    for (const endpoint of ENDPOINTS) {
      for (const [form, headers, claimed] of [
        [{ client_id: t.tv.clientId, client_secret: 'wrong' }, {}, t.tv.clientId],
        [{ client_id: 'no-such-client', client_secret: 'whatever' }, {}, 'no-such-client'],
        [{}, basic(t.tv.clientId, 'wrong'), t.tv.clientId],
        [{ client_id: tooLong, client_secret: 'x' }, {}, tooLong.slice(0, 200)],
      ] as const) {
        t.events.length = 0;
        const res = await t.send(endpoint, form, headers);
        expect(res.status, `${endpoint} ${JSON.stringify(form)}`).toBe(401);
        expect(json(res)).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed.' });
        expect(res.headers['www-authenticate'] !== undefined, endpoint).toBe('authorization' in headers);
        expect(t.failures(), endpoint).toEqual([expect.objectContaining({ type: 'client.authentication_failed', clientId: claimed })]);
      }
    }
    expect(t.errors).toEqual([]);
  });

  it('malformed credentials are invalid_request everywhere, before the store is asked', async () => {
    const t = await clientAuth();
    t.storeDown(true); // a store lookup would be a 500/503: none happens
    for (const endpoint of ENDPOINTS) {
      const inQuery = await t.send(endpoint, { client_id: t.tv.clientId }, {}, `?client_secret=${t.tv.clientSecret}`);
      expect(json(inQuery).error, endpoint).toBe('invalid_request');
      const twoMethods = await t.send(endpoint, { client_secret: t.tv.clientSecret }, basic(t.tv.clientId, t.tv.clientSecret));
      expect(json(twoMethods).error, endpoint).toBe('invalid_request');
      const otherId = await t.send(endpoint, { client_id: t.client.clientId }, basic(t.tv.clientId, t.tv.clientSecret));
      expect(json(otherId).error, endpoint).toBe('invalid_request');
    }
    expect(t.errors).toEqual([]);
    expect(t.failures()).toEqual([]);
  });

  it('the store failing is a server fault everywhere (500, or 503 at revocation), reported to onError and not as a failed authentication', async () => {
    const t = await clientAuth();
    t.storeDown(true);
    const statuses: Record<string, number> = {};
    for (const endpoint of ENDPOINTS) {
      statuses[endpoint] = (await t.send(endpoint, { client_id: t.tv.clientId, client_secret: t.tv.clientSecret })).status;
    }
    expect(statuses).toEqual({ token: 500, revoke: 503, introspect: 500, device: 500 });
    expect(t.errors).toHaveLength(4);
    expect(t.failures()).toEqual([]);
  });

  it('over time: failed attempts lock nothing out, the store coming back is enough, and the right secret works at each endpoint', async () => {
    const t = await clientAuth();
    for (const endpoint of ENDPOINTS) expect((await t.send(endpoint, {}, basic(t.tv.clientId, 'wrong'))).status).toBe(401);
    t.storeDown(true);
    expect((await t.send('device', { client_id: t.tv.clientId, client_secret: t.tv.clientSecret })).status).toBe(500);
    t.clock.advance(60_000);
    t.storeDown(false);
    const device = await t.send('device', { client_id: t.tv.clientId, client_secret: t.tv.clientSecret });
    expect(device.status, device.body).toBe(200);
    const own = { client_id: t.client.clientId, client_secret: t.client.clientSecret };
    const introspected = await t.send('introspect', own);
    expect(json(introspected)).toMatchObject({ active: true, client_id: t.client.clientId });
    const refreshed = await t.send('token', {}, basic(t.client.clientId, t.client.clientSecret));
    expect(refreshed.status, refreshed.body).toBe(200);
    // The tokens just rotated away are dead; revoking the new pair with the client's credentials works.
    expect((await t.api('GET', t.tokens.access_token)).ok).toBe(false);
    const fresh = json(refreshed)['access_token'] as string;
    const revoked = await t.server.revoke(t.post('/v1/oauth/revoke', { token: fresh, ...own }));
    expect(revoked.status).toBe(200);
    expect((await t.api('GET', fresh)).ok).toBe(false);
    // Without credentials, the endpoints that may go without them still answer; the device endpoint may not.
    expect((await t.send('device', {})).status).toBe(401);
  });
});
