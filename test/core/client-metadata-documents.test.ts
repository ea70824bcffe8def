/**
 * Client ID metadata documents (docs/reference.md#client-id-metadata-documents): an https URL as
 * `client_id`, resolved through the document a fetcher serves. These tests inject a fetcher that
 * serves local documents; test/security/client-metadata-fetch.test.ts covers the default one.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AuthorizationServer, ConfigError, interactionResponse, MemoryStorage } from '../../src/index.js';
import type { MetadataFetcher, MetadataResponse } from '../../src/client-metadata/metadata-fetcher.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { sha256Base64url } from '../../src/crypto.js';
import { findClient, isMetadataDocumentClient } from '../../src/checks/clients.js';
import { ADA, json, setup } from '../helpers.js';

const CLIENT_ID = 'https://app.example/oauth/client.json';
const CALLBACK = 'https://app.example/callback';
const VERIFIER = 'v'.repeat(43);
const CHALLENGE = sha256Base64url(VERIFIER);

const documentFor = (overrides: Record<string, unknown> = {}) => ({
  client_id: CLIENT_ID,
  client_name: 'Example Agent',
  redirect_uris: [CALLBACK, 'http://127.0.0.1:33418/callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  ...overrides,
});

/** A fetcher serving one answer per URL, counting its calls. */
function serve(answers: Record<string, Partial<MetadataResponse> & { json?: unknown; cacheControl?: string; contentType?: string }>) {
  const calls: string[] = [];
  const fetch: MetadataFetcher = async (url) => {
    calls.push(url);
    const answer = answers[url];
    if (!answer) throw new Error('unreachable');
    const headers = new Headers({ 'content-type': answer.contentType ?? 'application/json' });
    if (answer.cacheControl) headers.set('cache-control', answer.cacheControl);
    return { status: answer.status ?? 200, headers, body: answer.body ?? JSON.stringify(answer.json) };
  };
  return { fetch, calls };
}

async function cimdSetup(
  answer: Parameters<typeof serve>[0][string] = { json: documentFor(), cacheControl: 'max-age=300' },
  extra: Record<string, unknown> = {},
) {
  const served = serve({ [CLIENT_ID]: answer });
  const t = await setup({ issuer: 'https://auth.example', clientMetadataDocuments: { fetch: served.fetch, ...extra } });
  const authorizeUrl = (params: Record<string, string> = {}) =>
    `/v1/oauth/authorize?${new URLSearchParams({
      client_id: CLIENT_ID,
      redirect_uri: CALLBACK,
      response_type: 'code',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
      ...params,
    })}`;
  const authorize = (params: Record<string, string> = {}) => t.server.authorize(t.get(authorizeUrl(params), t.ada));
  return { ...t, served, authorize };
}

describe('client ID metadata documents', () => {
  afterEach(() => vi.restoreAllMocks());

  it('are off by default: a URL client id is looked up in storage, nothing is fetched, and metadata does not advertise them', async () => {
    const served = serve({ [CLIENT_ID]: { json: documentFor() } });
    const t = await setup({ issuer: 'https://auth.example' });
    const decision = await t.server.authorize(
      t.get(`/v1/oauth/authorize?${new URLSearchParams({ client_id: CLIENT_ID, redirect_uri: CALLBACK, response_type: 'code' })}`, t.ada),
    );
    expect(decision).toMatchObject({ type: 'error', error: 'invalid_client' });
    expect(served.calls).toEqual([]);
    expect(json(await t.server.metadata())).not.toHaveProperty('client_id_metadata_document_supported');
  });

  it('are advertised in the authorization server metadata when on', async () => {
    const t = await cimdSetup();
    expect(json(await t.server.metadata()).client_id_metadata_document_supported).toBe(true);
  });

  it('the consent page marks a document client as unverified and names who publishes its client id', async () => {
    const t = await cimdSetup();
    const decision = await t.authorize();
    if (decision.type !== 'consent') throw new Error(decision.type);
    const page = interactionResponse(decision, t.get('/', t.ada));
    expect(page.body).toContain('(unverified)');
    expect(page.body).toContain('app.example');
  });

  it('a full flow: authorize with a document client → consent → code → exchange with PKCE → the token works', async () => {
    const t = await cimdSetup();
    const decision = await t.authorize();
    expect(decision.type).toBe('consent');
    if (decision.type !== 'consent') return;
    // Nobody at the platform reviewed a document client: marked so, with who publishes the id.
    expect(decision.interaction.client).toEqual({ id: CLIENT_ID, name: 'Example Agent', verified: false, idHost: 'app.example' });
    const described = await t.server.describeInteraction(decision.interaction.id);
    expect(described?.client).toMatchObject({ id: CLIENT_ID, name: 'Example Agent' });
    const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
    expect(approved.type).toBe('redirect');
    if (approved.type !== 'redirect') return;
    const location = new URL(approved.location);
    expect(`${location.origin}${location.pathname}`).toBe(CALLBACK);
    const code = location.searchParams.get('code')!;
    const res = await t.server.token(
      t.post('/v1/oauth/token', {
        grant_type: 'authorization_code',
        code,
        client_id: CLIENT_ID,
        redirect_uri: CALLBACK,
        code_verifier: VERIFIER,
      }),
    );
    expect(res.status).toBe(200);
    const body = json(res) as { access_token: string; refresh_token: string };
    expect(body.refresh_token).toBeTruthy();
    const checked = await t.api('GET', body.access_token);
    expect(checked).toMatchObject({ ok: true });
    // The document was fetched once: the later lookups (approve, token) used the cache.
    expect(t.served.calls).toEqual([CLIENT_ID]);
    // And the refresh works for the public client.
    const refreshed = await t.refresh(body.refresh_token, { client_id: CLIENT_ID });
    expect(refreshed.status).toBe(200);
  });

  it("accepts any of the document's redirect URIs, exactly, and refuses another with an error page (never a redirect)", async () => {
    const t = await cimdSetup();
    expect((await t.authorize({ redirect_uri: 'http://127.0.0.1:33418/callback' })).type).toBe('consent');
    // A loopback callback on another port: exact comparison for documents.
    expect(await t.authorize({ redirect_uri: 'http://127.0.0.1:40000/callback' })).toMatchObject({
      type: 'error',
      error: 'invalid_redirect_uri',
    });
    expect(await t.authorize({ redirect_uri: 'https://evil.example/callback' })).toMatchObject({
      type: 'error',
      error: 'invalid_redirect_uri',
    });
    // A document without the request's redirect URI: the same error page.
    const missing = await cimdSetup({ json: documentFor({ redirect_uris: ['https://app.example/elsewhere'] }) });
    expect(await missing.authorize()).toMatchObject({ type: 'error', error: 'invalid_redirect_uri' });
  });

  it('requires PKCE (public client) and refuses the implicit flow, at the verified callback', async () => {
    const t = await cimdSetup();
    const noPkce = await t.authorize({ code_challenge: '', code_challenge_method: '' });
    expect(noPkce.type).toBe('redirect');
    if (noPkce.type === 'redirect') expect(new URL(noPkce.location).searchParams.get('error')).toBe('invalid_request');
    const implicit = await t.authorize({ response_type: 'token' });
    expect(implicit.type).toBe('redirect');
    if (implicit.type === 'redirect')
      expect(new URL(implicit.location.replace('#', '?')).searchParams.get('error')).toBe('unauthorized_client');
  });

  it('cannot be combined with plain PKCE', () => {
    expect(
      () =>
        new AuthorizationServer({
          storage: new MemoryStorage(),
          sessions: new FakeSessions(new FakeClock()),
          allowPlainPkce: true,
          clientMetadataDocuments: { fetch: serve({}).fetch },
        }),
    ).toThrow(ConfigError);
  });

  it('need a fetcher of the host on a runtime without node:https', () => {
    const make = (options: Record<string, unknown>) => () =>
      new AuthorizationServer({
        storage: new MemoryStorage(),
        sessions: new FakeSessions(new FakeClock()),
        clientMetadataDocuments: options,
      });
    const original = process.getBuiltinModule;
    try {
      (process as { getBuiltinModule?: unknown }).getBuiltinModule = undefined;
      expect(make({})).toThrow(/clientMetadataDocuments\.fetch/);
      expect(make({ fetch: serve({}).fetch })).not.toThrow();
    } finally {
      process.getBuiltinModule = original;
    }
    expect(make({})).not.toThrow();
  });

  describe('a document that cannot be used is an error page at authorize and invalid_client at the token endpoint', () => {
    const cases: Array<[string, Parameters<typeof serve>[0][string]]> = [
      ['wrong client_id', { json: documentFor({ client_id: 'https://app.example/other.json' }) }],
      ['client_id differing only in case', { json: documentFor({ client_id: CLIENT_ID.toUpperCase() }) }],
      ['no client_id', { json: documentFor({ client_id: undefined }) }],
      ['no redirect_uris', { json: documentFor({ redirect_uris: [] }) }],
      ['an invalid redirect URI', { json: documentFor({ redirect_uris: [CALLBACK, 'http://app.example/plain'] }) }],
      ['token_endpoint_auth_method client_secret_basic', { json: documentFor({ token_endpoint_auth_method: 'client_secret_basic' }) }],
      ['token_endpoint_auth_method private_key_jwt', { json: documentFor({ token_endpoint_auth_method: 'private_key_jwt' }) }],
      ['a client_secret', { json: documentFor({ client_secret: 's3cret' }) }],
      ['an implicit response type', { json: documentFor({ response_types: ['code', 'token'] }) }],
      ['a client_credentials grant', { json: documentFor({ grant_types: ['authorization_code', 'client_credentials'] }) }],
      ['a control character in client_name', { json: documentFor({ client_name: 'Evil\nApp' }) }],
      ['non-JSON', { body: '<html>hello</html>', contentType: 'text/html' }],
      ['JSON served as text/plain', { json: documentFor(), contentType: 'text/plain' }],
      ['malformed JSON', { body: '{"client_id":', contentType: 'application/json' }],
      ['a JSON array', { json: [documentFor()] }],
      ['a redirect', { status: 302, body: '' }],
      ['not found', { status: 404, body: '' }],
      ['oversize', { json: documentFor({ padding: 'x'.repeat(6000) }) }],
      ['oversize in bytes, not in characters', { json: documentFor({ padding: 'é'.repeat(2600) }) }],
    ];
    for (const [name, answer] of cases) {
      it(name, async () => {
        const t = await cimdSetup(answer);
        const decision = await t.authorize();
        expect(decision).toMatchObject({ type: 'error', error: 'invalid_client' });
        const res = await t.server.token(
          t.post('/v1/oauth/token', {
            grant_type: 'authorization_code',
            code: 'x',
            client_id: CLIENT_ID,
            redirect_uri: CALLBACK,
            code_verifier: VERIFIER,
          }),
        );
        expect(res.status).toBe(401);
        expect(json(res).error).toBe('invalid_client');
      });
    }
  });

  it('an unreachable document is an error page, and invalid_client at the token endpoint', async () => {
    const t = await setup({ clientMetadataDocuments: { fetch: async () => Promise.reject(new Error('ECONNREFUSED')) } });
    const url = `/v1/oauth/authorize?${new URLSearchParams({ client_id: CLIENT_ID, redirect_uri: CALLBACK, response_type: 'code', code_challenge: CHALLENGE, code_challenge_method: 'S256' })}`;
    expect(await t.server.authorize(t.get(url, t.ada))).toMatchObject({ type: 'error', error: 'invalid_client' });
  });

  it('a slow document is given up after the time limit', async () => {
    let signal: AbortSignal | undefined;
    const t = await setup({
      clientMetadataDocuments: {
        fetch: (_url, limits) => {
          signal = limits.signal;
          return new Promise(() => {}); // never answers, ignores the signal
        },
      },
    });
    const url = `/v1/oauth/authorize?${new URLSearchParams({ client_id: CLIENT_ID, redirect_uri: CALLBACK, response_type: 'code', code_challenge: CHALLENGE, code_challenge_method: 'S256' })}`;
    const started = performance.now();
    expect(await t.server.authorize(t.get(url, t.ada))).toMatchObject({ type: 'error', error: 'invalid_client' });
    expect(performance.now() - started).toBeLessThan(4000);
    expect(signal?.aborted).toBe(true);
  }, 10_000);

  it('holds at most 32 fetches at once: a flood of distinct URLs is refused beyond that, without a fetch', async () => {
    const waiting: Array<() => void> = [];
    const calls: string[] = [];
    const fetch: MetadataFetcher = (url) => {
      calls.push(url);
      return new Promise((done) => {
        waiting.push(() =>
          done({
            status: 200,
            headers: new Headers({ 'content-type': 'application/json' }),
            body: JSON.stringify(documentFor({ client_id: url })),
          }),
        );
      });
    };
    const t = await setup({ clientMetadataDocuments: { fetch } });
    const go = (id: string) =>
      t.server.authorize(
        t.get(
          `/v1/oauth/authorize?${new URLSearchParams({ client_id: id, redirect_uri: CALLBACK, response_type: 'code', code_challenge: CHALLENGE, code_challenge_method: 'S256' })}`,
          t.ada,
        ),
      );
    const held = Array.from({ length: 32 }, (_, i) => go(`https://flood.example/c${i}`));
    await new Promise((done) => setTimeout(done, 10));
    expect(calls).toHaveLength(32);
    expect(await go('https://flood.example/one-more')).toMatchObject({ type: 'error', error: 'invalid_client' });
    expect(calls).toHaveLength(32);
    for (const release of waiting) release();
    for (const decision of await Promise.all(held)) expect(decision.type).toBe('consent');
    // Once they are done, a new URL is fetched again.
    const after = go('https://flood.example/later');
    await new Promise((done) => setTimeout(done, 10));
    waiting.at(-1)!();
    expect((await after).type).toBe('consent');
  });

  it('a secret sent by a document client is invalid_client', async () => {
    const t = await cimdSetup();
    const res = await t.server.token(
      t.post('/v1/oauth/token', {
        grant_type: 'authorization_code',
        code: 'x',
        client_id: CLIENT_ID,
        client_secret: 'guess',
        code_verifier: VERIFIER,
      }),
    );
    expect(res.status).toBe(401);
    expect(json(res).error).toBe('invalid_client');
  });

  describe('client ids that are not a document URL are never fetched', () => {
    const ids = [
      'http://app.example/oauth/client.json',
      'https://app.example',
      'https://app.example/',
      'https://app.example/client.json#fragment',
      'https://user:pass@app.example/client.json',
      'https://user@app.example/client.json',
      'https://app.example/a/../client.json',
      'https://app.example/./client.json',
      'https://app.example/a/%2e%2e/client.json',
      'https://app.example:8443/client.json',
      'https://APP.example/client.json',
      `https://app.example/${'x'.repeat(200)}`,
    ];
    for (const id of ids) {
      it(id.slice(0, 60), async () => {
        const served = serve({});
        const t = await setup({ clientMetadataDocuments: { fetch: served.fetch } });
        const url = `/v1/oauth/authorize?${new URLSearchParams({ client_id: id, redirect_uri: CALLBACK, response_type: 'code', code_challenge: CHALLENGE, code_challenge_method: 'S256' })}`;
        const decision = await t.server.authorize(t.get(url, t.ada));
        expect(decision.type).toBe('error');
        expect(served.calls).toEqual([]);
      });
    }
  });

  it('the host policy hook is asked for every use, and may refuse any client id before a fetch', async () => {
    const allow = vi.fn((id: string) => id !== CLIENT_ID);
    const t = await cimdSetup(undefined, { allow });
    expect(await t.authorize()).toMatchObject({ type: 'error', error: 'invalid_client' });
    expect(allow).toHaveBeenCalledWith(CLIENT_ID);
    expect(t.served.calls).toEqual([]);
    const asyncAllow = await cimdSetup(undefined, { allow: async () => true });
    expect((await asyncAllow.authorize()).type).toBe('consent');
  });

  describe('caching', () => {
    it('keeps a document for its max-age, then fetches it again', async () => {
      const t = await cimdSetup({ json: documentFor(), cacheControl: 'public, max-age=60' });
      await t.authorize();
      await t.authorize();
      expect(t.served.calls).toHaveLength(1);
      t.clock.advance(61_000);
      await t.authorize();
      expect(t.served.calls).toHaveLength(2);
    });

    it('does not keep a no-store, no-cache or header-less document', async () => {
      for (const cacheControl of ['no-store', 'no-cache, max-age=60', undefined]) {
        const t = await cimdSetup({ json: documentFor(), ...(cacheControl && { cacheControl }) });
        await t.authorize();
        await t.authorize();
        expect(t.served.calls, String(cacheControl)).toHaveLength(2);
      }
    });

    it('caps max-age at maxCacheSeconds', async () => {
      const t = await cimdSetup({ json: documentFor(), cacheControl: 'max-age=86400' }, { maxCacheSeconds: 10 });
      await t.authorize();
      t.clock.advance(11_000);
      await t.authorize();
      expect(t.served.calls).toHaveLength(2);
    });

    it('keeps at most maxEntries documents, forgetting the oldest', async () => {
      const ids = ['https://a.example/c', 'https://b.example/c', 'https://c.example/c'];
      const answers = Object.fromEntries(ids.map((id) => [id, { json: documentFor({ client_id: id }), cacheControl: 'max-age=600' }]));
      const served = serve(answers);
      const t = await setup({ clientMetadataDocuments: { fetch: served.fetch, maxEntries: 2 } });
      const go = (id: string) =>
        t.server.authorize(
          t.get(
            `/v1/oauth/authorize?${new URLSearchParams({ client_id: id, redirect_uri: CALLBACK, response_type: 'code', code_challenge: CHALLENGE, code_challenge_method: 'S256' })}`,
            t.ada,
          ),
        );
      for (const id of ids) expect((await go(id)).type).toBe('consent');
      await go(ids[2]!);
      await go(ids[1]!);
      expect(served.calls).toHaveLength(3);
      await go(ids[0]!); // forgotten
      expect(served.calls).toHaveLength(4);
    });

    it('does not keep an invalid document, and shares one fetch between concurrent requests', async () => {
      const t = await cimdSetup({ json: documentFor({ client_id: 'https://other.example/x' }), cacheControl: 'max-age=600' });
      await t.authorize();
      await t.authorize();
      expect(t.served.calls).toHaveLength(2);
      const u = await cimdSetup();
      await Promise.all([u.authorize(), u.authorize(), u.authorize()]);
      expect(u.served.calls).toHaveLength(1);
    });
  });

  it('a document client is told apart from a registered one (its name and callbacks are unreviewed)', async () => {
    const t = await cimdSetup();
    const ctx = (t.server as unknown as { ctx: Parameters<typeof findClient>[0] }).ctx;
    const document = await findClient(ctx, CLIENT_ID);
    const registered = await findClient(ctx, t.client.clientId);
    expect(document && isMetadataDocumentClient(document)).toBe(true);
    expect(registered && isMetadataDocumentClient(registered)).toBe(false);
    expect(document).toMatchObject({ id: CLIENT_ID, name: 'Example Agent', secretHash: null, redirectUri: CALLBACK });
    // Without client_name, the host of the URL names it.
    const unnamed = await cimdSetup({ json: documentFor({ client_name: undefined }) });
    const consent = await unnamed.authorize();
    expect(consent.type === 'consent' && consent.interaction.client.name).toBe('app.example');
  });

  it('registered clients are found in storage exactly as before, with the feature on', async () => {
    const t = await cimdSetup();
    const spy = vi.spyOn(t.storage, 'findClient');
    const tokens = await t.tokens();
    expect(tokens.access_token).toBeTruthy();
    expect(spy.mock.calls.every(([id]) => id === t.client.clientId)).toBe(true);
    expect(t.served.calls).toEqual([]);
    expect(ADA).toBeTruthy();
  });
});
