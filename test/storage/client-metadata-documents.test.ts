/**
 * A client ID metadata document client (docs/reference.md#client-id-metadata-documents) on both
 * stores: nothing about it is stored as a client, and its URL client id is carried by the
 * consent, the grant, the code and the tokens like any other (PostgreSQL has no client foreign key).
 */
import { describe, expect, it } from 'vitest';
import { sha256Base64url } from '../../src/crypto.js';
import { ADA } from '../fixtures.js';
import { json, setup } from '../helpers.js';
import { storesUnderTest } from './pg.js';

const stores = storesUnderTest('cimd');

const CLIENT_ID = 'https://agent.example/oauth/client-metadata.json';
const CALLBACK = 'https://agent.example/callback';
const VERIFIER = 'w'.repeat(43);

describe.each(stores)('%s: a metadata-document client', (_name, makeStorage) => {
  it('authorizes, exchanges, refreshes and revokes, and is never stored as a client', async () => {
    const storage = makeStorage();
    const document = { client_id: CLIENT_ID, redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token'] };
    const t = await setup({
      storage,
      clientMetadataDocuments: {
        fetch: async () => ({ status: 200, headers: new Headers({ 'content-type': 'application/json' }), body: JSON.stringify(document) }),
      },
    });
    const query = new URLSearchParams({
      client_id: CLIENT_ID,
      redirect_uri: CALLBACK,
      response_type: 'code',
      code_challenge: sha256Base64url(VERIFIER),
      code_challenge_method: 'S256',
    });
    const consent = await t.server.authorize(t.get(`/v1/oauth/authorize?${query}`, t.ada));
    if (consent.type !== 'consent') throw new Error(JSON.stringify(consent));
    const approved = await t.server.approve(consent.interaction.id, t.get('/', t.ada));
    if (approved.type !== 'redirect') throw new Error(JSON.stringify(approved));
    const code = new URL(approved.location).searchParams.get('code')!;
    const exchanged = await t.server.token(
      t.post('/v1/oauth/token', {
        grant_type: 'authorization_code',
        code,
        client_id: CLIENT_ID,
        redirect_uri: CALLBACK,
        code_verifier: VERIFIER,
      }),
    );
    expect(exchanged.status).toBe(200);
    const { access_token, refresh_token } = json(exchanged) as { access_token: string; refresh_token: string };
    expect(await t.api('GET', access_token)).toMatchObject({ ok: true, token: { clientId: CLIENT_ID } });
    const refreshed = await t.refresh(refresh_token, { client_id: CLIENT_ID });
    expect(refreshed.status).toBe(200);
    expect(await storage.findClient(CLIENT_ID)).toBeNull();
    expect((await storage.listConsents(ADA.uuid)).map((c) => c.clientId)).toContain(CLIENT_ID);
    const revoked = await t.server.revoke(
      t.post('/v1/oauth/revoke', { token: (json(refreshed) as { access_token: string }).access_token, client_id: CLIENT_ID }),
    );
    expect(revoked.status).toBe(200);
  });
});
