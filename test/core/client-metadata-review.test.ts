/**
 * Regressions from the security review of issue 16: a client described by a client ID metadata
 * document is listed among the user's authorized applications (so the user can revoke it), and a
 * refresh sent without credentials still asks the document and the host's `allow` hook.
 */
import { describe, expect, it } from 'vitest';
import type { MetadataFetcher } from '../../src/client-metadata/metadata-fetcher.js';
import { sha256Base64url } from '../../src/crypto.js';
import { ADA } from '../fixtures.js';
import { json, setup } from '../helpers.js';

const CLIENT_ID = 'https://app.example/oauth/client.json';
const CALLBACK = 'https://app.example/callback';
const VERIFIER = 'v'.repeat(43);
const DOCUMENT = {
  client_id: CLIENT_ID,
  client_name: 'Agent',
  redirect_uris: [CALLBACK],
  grant_types: ['authorization_code', 'refresh_token'],
  token_endpoint_auth_method: 'none',
};

async function documentClientTokens(options: { allow?: () => boolean; served?: () => boolean } = {}) {
  const fetch: MetadataFetcher = async () =>
    options.served?.() === false
      ? { status: 404, headers: new Headers(), body: '' }
      : { status: 200, headers: new Headers({ 'content-type': 'application/json' }), body: JSON.stringify(DOCUMENT) };
  const t = await setup({
    issuer: 'https://auth.example',
    clientMetadataDocuments: { fetch, ...(options.allow && { allow: options.allow }) },
  });
  const query = new URLSearchParams({
    client_id: CLIENT_ID,
    redirect_uri: CALLBACK,
    response_type: 'code',
    code_challenge: sha256Base64url(VERIFIER),
    code_challenge_method: 'S256',
  });
  const decision = await t.server.authorize(t.get(`/v1/oauth/authorize?${query}`, t.ada));
  if (decision.type !== 'consent') throw new Error(decision.type);
  const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
  if (approved.type !== 'redirect') throw new Error(approved.type);
  const code = new URL(approved.location).searchParams.get('code')!;
  const res = await t.server.token(
    t.post('/v1/oauth/token', {
      grant_type: 'authorization_code',
      code,
      client_id: CLIENT_ID,
      redirect_uri: CALLBACK,
      code_verifier: VERIFIER,
    }),
  );
  if (res.status !== 200) throw new Error(res.body);
  return { t, tokens: json(res) as { access_token: string; refresh_token: string } };
}

describe('client ID metadata document clients after the consent', () => {
  it('listAuthorizations lists the document client, and revokeAccess removes it', async () => {
    const { t, tokens } = await documentClientTokens();
    const listed = await t.server.listAuthorizations(ADA.uuid);
    expect(listed.map((a) => a.client)).toEqual([{ id: CLIENT_ID, name: 'Agent' }]);
    await t.server.revokeAccess({ accountUuid: ADA.uuid, clientId: CLIENT_ID });
    expect(await t.server.listAuthorizations(ADA.uuid)).toEqual([]);
    expect((await t.api('GET', tokens.access_token)).ok).toBe(false);
  });

  it.each([
    ['the host refuses the client (allow)', { allowAfter: false, servedAfter: true }],
    ['the document is gone', { allowAfter: true, servedAfter: false }],
  ])('%s: a refresh without client_id is refused too (invalid_client), nothing rotated', async (_name, { allowAfter, servedAfter }) => {
    let allowed = true;
    let served = true;
    const { t, tokens } = await documentClientTokens({ allow: () => allowed, served: () => served });
    allowed = allowAfter;
    served = servedAfter;
    const refused = await t.server.token(t.post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }));
    expect(refused.status, refused.body).toBe(401);
    expect(json(refused).error).toBe('invalid_client');
    expect((await t.storage.findToken(sha256Base64url(tokens.refresh_token)))?.token.rotatedAt).toBeNull();
  });
});

describe('names a client chose for itself hold no bidirectional controls (they could reorder the consent page)', () => {
  it.each(['\u202eevil', 'Agent\u2066x\u2069', 'A\u200fB'])(
    'dynamic registration refuses client_name %j (invalid_client_metadata)',
    async (name) => {
      const t = await setup({ allowDynamicRegistration: true });
      const res = await t.server.registerDynamic({
        method: 'POST',
        url: '/v1/oauth/register',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: name, redirect_uris: ['http://127.0.0.1/callback'] }),
      });
      expect(res.status).toBe(400);
      expect(json(res).error).toBe('invalid_client_metadata');
    },
  );

  it('a metadata document whose client_name holds one is refused (error page, nothing issued)', async () => {
    const fetch: MetadataFetcher = async () => ({
      status: 200,
      headers: new Headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({ ...DOCUMENT, client_name: 'Agent\u202e' }),
    });
    const t = await setup({ issuer: 'https://auth.example', clientMetadataDocuments: { fetch } });
    const query = new URLSearchParams({
      client_id: CLIENT_ID,
      redirect_uri: CALLBACK,
      response_type: 'code',
      code_challenge: sha256Base64url(VERIFIER),
      code_challenge_method: 'S256',
    });
    expect(await t.server.authorize(t.get(`/v1/oauth/authorize?${query}`, t.ada))).toMatchObject({ type: 'error' });
  });
});
