/**
 * The `combinedReads` group on PostgreSQL, through the server: the token endpoint, revocation and
 * introspection read the client with the code or token in one statement (`to_jsonb` rows, mapped
 * by the topic modules' row mappers). One adversarial sequence over time (wrong and foreign
 * credentials before the right ones, a public client's retries and a replay after a child was
 * used, a code at exactly its expiry, a replayed code, a revoked grant, JWT access tokens, a
 * personal access token, malformed and unknown tokens, HTTP Basic failures) must answer exactly
 * the same on a PostgresStorage with the group and on one without it (where the client and the
 * code or token are read apart), random values aside; and the same as on MemoryStorage. And the
 * `jsonb` rows map to exactly the records the plain rows give, for values whose `text[]` literal
 * needs quoting and for every optional field (the conformance kit's records have fewer).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CodeRecord,
  type GrantRecord,
  MemoryStorage,
  type OAuthGrantRecord,
  type OAuthResponse,
  type OAuthTokenRecord,
  type Storage,
  type TokenRecord,
} from '../../src/index.js';
import { PostgresStorage } from '../../src/postgres/index.js';
import { ADA, CALLBACK } from '../fixtures.js';
import { json, randomValuesNamed, setup } from '../helpers.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from './pg.js';

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

async function transcript(storage: Storage): Promise<string[]> {
  const t = await setup({
    storage,
    issuer: 'https://auth.example.com',
    accessTokenFormat: 'jwt',
    refreshRetryWindowSeconds: 30,
    lifetimes: { code: 60 },
  });
  const lines: string[] = [];
  const norm = randomValuesNamed();
  const record = (label: string, res: OAuthResponse | unknown) => {
    const value =
      res && typeof res === 'object' && 'status' in res && 'body' in res
        ? {
            status: (res as OAuthResponse).status,
            body: (res as OAuthResponse).body,
            challenge: (res as OAuthResponse).headers?.['www-authenticate'],
          }
        : res;
    lines.push(`${label}: ${norm(JSON.stringify(value))}`);
  };
  const creds = { client_id: t.client.clientId, client_secret: t.client.clientSecret };
  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  const token = (form: Record<string, string>, headers: Record<string, string> = {}) =>
    t.server.token(t.post('/v1/oauth/token', form, headers));
  const introspect = (form: Record<string, string>, headers?: Record<string, string>) =>
    t.server.introspect(t.post('/v1/oauth/introspect', form, headers));
  const revoke = (form: Record<string, string>, headers?: Record<string, string>) =>
    t.server.revoke(t.post('/v1/oauth/revoke', form, headers));

  // A code at exactly its expiry is expired, and that uses nothing up nor revokes anything.
  const late = await t.getCode({ scope: 'read' });
  t.clock.advance(60_000);
  record('code at exactly its expiry', await t.exchange(late));
  t.clock.advance(1);

  // A code: a wrong secret by Basic (with its challenge), an unknown client, a foreign client,
  // then the right one; a replay revokes what the code issued.
  const code = await t.getCode({ scope: 'read write' });
  const form = { grant_type: 'authorization_code', code, redirect_uri: CALLBACK };
  record('code, wrong secret by Basic', await token(form, { authorization: basic(t.client.clientId, 'wrong') }));
  record('code, unknown client by Basic', await token(form, { authorization: basic('nobody', 'x') }));
  record('code, foreign client', await token({ ...form, client_id: t.other.clientId, client_secret: t.other.clientSecret }));
  const exchanged = await token({ ...form, ...creds });
  record('code, right client', exchanged);
  record('code replay', await token({ ...form, ...creds }));
  record("api with the replayed code's access token", (await t.api('GET', json(exchanged)['access_token'] as string)).ok);
  record("refresh with the replayed code's refresh token", await t.refresh(json(exchanged)['refresh_token'] as string, creds));

  // A public client: exchange, refresh, retry within the window, the child used, then a retry of
  // the parent (a replay: the family is revoked).
  const app = await t.server.registerClient({ name: 'Public App', redirectUri: CALLBACK, public: true });
  const verifier = randomBytes(32).toString('base64url');
  const url = `/v1/oauth/authorize?${new URLSearchParams({
    client_id: app.clientId,
    redirect_uri: CALLBACK,
    response_type: 'code',
    scope: 'read',
    code_challenge: s256(verifier),
    code_challenge_method: 'S256',
  })}`;
  const decision = await t.server.authorize(t.get(url, t.ada));
  if (decision.type !== 'consent') throw new Error(JSON.stringify(decision));
  const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
  if (approved.type !== 'redirect') throw new Error(JSON.stringify(approved));
  const publicCode = new URL(approved.location).searchParams.get('code') ?? '';
  const publicForm = { grant_type: 'authorization_code', code: publicCode, redirect_uri: CALLBACK, code_verifier: verifier };
  record('public code, public client with a secret', await token({ ...publicForm, client_id: app.clientId, client_secret: 'x' }));
  record('public code, confidential client', await token({ ...publicForm, ...creds }));
  const publicPair = await token({ ...publicForm, client_id: app.clientId });
  record('public code', publicPair);
  const r0 = json(publicPair)['refresh_token'] as string;
  record('public refresh token, other client', await t.refresh(r0, creds));
  const refreshed = await t.refresh(r0, { client_id: app.clientId });
  record('public refresh', refreshed);
  t.clock.advance(1_000);
  const retried = await t.refresh(r0, { client_id: app.clientId });
  record('public retry', retried);
  const r1 = json(refreshed)['refresh_token'] as string;
  const r1b = json(retried)['refresh_token'] as string;
  record('introspect the retried sibling', await introspect({ token: r1b, ...creds }));
  t.clock.advance(1_000);
  record('rotate the first child, no credentials', await t.refresh(r1));
  record('the sibling after the child was used', await t.refresh(r1b, { client_id: app.clientId }));
  record('retry of the parent after a child was used', await t.refresh(r0, { client_id: app.clientId }));

  // Introspection and revocation: JWT access tokens, opaque refresh tokens, foreign, malformed.
  const live = await t.tokens({ scope: 'read' });
  record('introspect jwt', await introspect({ token: live.access_token, ...creds }));
  record('introspect refresh', await introspect({ token: live.refresh_token, ...creds }));
  record(
    'introspect refresh, foreign client',
    await introspect({ token: live.refresh_token, client_id: t.other.clientId, client_secret: t.other.clientSecret }),
  );
  record('introspect refresh, public client', await introspect({ token: live.refresh_token, client_id: app.clientId }));
  record('introspect refresh, wrong secret', await introspect({ token: live.refresh_token, ...creds, client_secret: 'no' }));
  record('introspect, unknown', await introspect({ token: 'unknown-token-value-0123456789', ...creds }));
  record('introspect, malformed jwt', await introspect({ token: 'eyJhbGciOiJub25lIn0.e30.', ...creds }));
  record('introspect, over-long', await introspect({ token: 'x'.repeat(5000), ...creds }));
  record('introspect, empty', await introspect({ token: '', ...creds }));
  record(
    'revoke refresh, foreign client',
    await revoke({ token: live.refresh_token, client_id: t.other.clientId, client_secret: t.other.clientSecret }),
  );
  record(
    'revoke refresh, wrong secret by Basic',
    await revoke({ token: live.refresh_token }, { authorization: basic(t.client.clientId, 'no') }),
  );
  record('refresh after the failed revocations', await t.refresh(live.refresh_token, creds));
  const live2 = await t.tokens({ scope: 'read' });
  record('revoke refresh', await revoke({ token: live2.refresh_token, ...creds }));
  record('refresh of a revoked grant', await t.refresh(live2.refresh_token, creds));
  record('introspect of a revoked grant', await introspect({ token: live2.refresh_token, ...creds }));
  record('revoke, unknown', await revoke({ token: 'unknown-token-value-0123456789', ...creds }));
  record('revoke, over-long', await revoke({ token: 'y'.repeat(5000), ...creds }));

  // A personal access token: revoked by whoever holds it, also with a foreign client's credentials.
  const personal = await t.server.createPersonalToken({ account: ADA, name: 'CI', scope: ['read'] });
  record('introspect personal', await introspect({ token: personal.token, ...creds }));
  record(
    'revoke personal, foreign client',
    await revoke({ token: personal.token, client_id: t.other.clientId, client_secret: t.other.clientSecret }),
  );
  record('api with the revoked personal token', (await t.api('GET', personal.token)).ok);
  record('authorizations', await t.server.listAuthorizations(ADA.uuid));
  return lines;
}

describe.skipIf(!DATABASE_URL)('combined reads on PostgreSQL, through the server', () => {
  const pool = makePool(4);
  const schemas = [schemaName('combined_a'), schemaName('combined_b')];
  beforeAll(async () => {
    for (const schema of schemas) await new PostgresStorage(pool, { schema }).migrate();
  });
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(pool, schema);
    await pool.end();
  });

  it('the same sequence answers the same with and without the group, and as on MemoryStorage', async () => {
    const withGroup = new PostgresStorage(pool, { schema: schemas[0] as string });
    const without = Object.assign(new PostgresStorage(pool, { schema: schemas[1] as string }), {
      findClientAndCode: undefined,
      findClientAndToken: undefined,
    });
    const combined = await transcript(withGroup);
    const separate = await transcript(without as unknown as Storage);
    const memory = await transcript(new MemoryStorage());
    expect(combined.length).toBeGreaterThan(30);
    expect(combined).toEqual(separate);
    expect(combined).toEqual(memory);
    // And what they all answer is right.
    const line = (label: string) => combined.find((l) => l.startsWith(`${label}: `)) ?? '';
    expect(line('code at exactly its expiry')).toContain('invalid_grant');
    expect(line('code, wrong secret by Basic')).toContain('Basic realm');
    expect(line('code, foreign client')).toContain('invalid_grant');
    expect(line('code, right client')).toContain('"status":200');
    expect(line("api with the replayed code's access token")).toBe("api with the replayed code's access token: false");
    expect(line("refresh with the replayed code's refresh token")).toContain('invalid_grant');
    expect(line('public refresh token, other client')).toContain('invalid_grant');
    expect(line('public refresh')).toContain('"status":200');
    expect(line('public retry')).toContain('"status":200');
    expect(line('the sibling after the child was used')).toContain('invalid_grant');
    expect(line('refresh after the failed revocations')).toContain('"status":200');
    expect(line('refresh of a revoked grant')).toContain('invalid_grant');
  });

  it('requests with wrong, foreign or unknown credentials racing the right one use nothing up (5 rounds)', async () => {
    const t = await setup({ storage: new PostgresStorage(pool, { schema: schemas[0] as string }) });
    const creds = { client_id: t.client.clientId, client_secret: t.client.clientSecret };
    const wrong = [
      ...Array.from({ length: 4 }, () => ({ ...creds, client_secret: 'wrong' })),
      ...Array.from({ length: 4 }, () => ({ client_id: t.other.clientId, client_secret: t.other.clientSecret })),
      ...Array.from({ length: 4 }, () => ({ client_id: 'nobody', client_secret: 'x' })),
    ];
    for (let round = 0; round < 5; round++) {
      const code = await t.getCode({ scope: 'read' });
      const exchanges = await Promise.all([...wrong.map((w) => t.exchange(code, w)), t.exchange(code)]);
      const issued = exchanges.pop() as OAuthResponse;
      expect(issued.status, issued.body).toBe(200);
      expect(exchanges.map((r) => r.status).sort()).toEqual([...Array(4).fill(400), ...Array(8).fill(401)]);
      const pair = json(issued) as { access_token: string; refresh_token: string };
      expect((await t.api('GET', pair.access_token)).ok).toBe(true);

      const refreshes = await Promise.all([...wrong.map((w) => t.refresh(pair.refresh_token, w)), t.refresh(pair.refresh_token, creds)]);
      const rotated = refreshes.pop() as OAuthResponse;
      expect(rotated.status, rotated.body).toBe(200);
      expect(refreshes.map((r) => r.status).sort()).toEqual([...Array(4).fill(400), ...Array(8).fill(401)]);
      const next = json(rotated) as { access_token: string; refresh_token: string };
      expect((await t.api('GET', next.access_token)).ok).toBe(true);
      expect((await t.refresh(next.refresh_token, creds)).status).toBe(200);
    }
  });

  it('a refresh racing the revocation of its token: afterwards nothing of the grant is usable (8 rounds)', async () => {
    const t = await setup({ storage: new PostgresStorage(pool, { schema: schemas[0] as string }) });
    const creds = { client_id: t.client.clientId, client_secret: t.client.clientSecret };
    for (let round = 0; round < 8; round++) {
      const pair = await t.tokens({ scope: 'read' });
      const [refreshed, revoked] = await Promise.all([
        t.refresh(pair.refresh_token, creds),
        t.server.revoke(t.post('/v1/oauth/revoke', { token: pair.refresh_token, ...creds })),
      ]);
      expect(revoked.status).toBe(200);
      expect((await t.api('GET', pair.access_token)).ok).toBe(false);
      if (refreshed.status === 200) {
        const next = json(refreshed) as { access_token: string; refresh_token: string };
        expect((await t.api('GET', next.access_token)).ok).toBe(false);
        expect((await t.refresh(next.refresh_token, creds)).status).toBe(400);
      } else {
        expect(json(refreshed)['error']).toBe('invalid_grant');
      }
    }
  });
});

describe.skipIf(!DATABASE_URL)('combined reads on PostgreSQL: jsonb rows give what plain rows give', () => {
  const pool = makePool(2);
  const schema = schemaName('combined_rows');
  const storage = new PostgresStorage(pool, { schema });
  beforeAll(() => storage.migrate());
  afterAll(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });

  it('text[] values that need quoting in an array literal, nested json with nulls, every optional field, a personal token', async () => {
    // Each of these is written differently in a text[] literal ({"a,b","\\"q\\"",NULL,...}) than in jsonb.
    const odd = [
      'https://api.example/a,b',
      'https://api.example/"q"',
      'https://api.example/\\z',
      'https://api.example/{}',
      ' padded ',
      'NULL',
      '',
      'ü😀',
    ];
    await storage.saveClient({
      id: 'app',
      name: 'N"a,m{e}\\',
      redirectUri: CALLBACK,
      secretHash: null,
      createdAt: 1,
      metadata: { list: [1, null, { deep: 1e20 }], text: 'x' },
    });
    const grant: OAuthGrantRecord = {
      id: 'g1',
      kind: 'oauth',
      clientId: 'app',
      account: { uuid: 'u1', name: 'Ada', email: 'ada@example.com' },
      scope: odd,
      createdAt: 2,
      revokedAt: null,
      openid: { authTime: 3 },
    };
    const code: CodeRecord = {
      hash: 'code-1',
      grantId: 'g1',
      clientId: 'app',
      redirectUri: CALLBACK,
      scope: odd,
      codeChallenge: null,
      codeChallengeMethod: null,
      expiresAt: 9_000_000_000_000,
      usedAt: null,
      resources: odd,
      dpop: { jkt: 'jkt-1' },
      openid: { authTime: 3, nonce: 'n"\\' },
    };
    await storage.createGrant(grant, { code });
    const base = { grantId: 'g1', clientId: 'app', scope: odd, issuedAt: 5, rotatedAt: null, revokedAt: null };
    const pair: OAuthTokenRecord[] = [
      { ...base, hash: 'a1', kind: 'access', expiresAt: 8_000_000_000_000, pairHash: null, audience: odd, dpop: { jkt: 'jkt-1' } },
      {
        ...base,
        hash: 'r1',
        kind: 'refresh',
        expiresAt: null,
        pairHash: 'a1',
        audience: odd,
        familyHash: 'f1',
        parentHash: 'p0',
        dpop: { jkt: 'jkt-1' },
      },
    ];
    expect((await storage.redeemCode('code-1', 10, pair)).ok).toBe(true);
    const child: OAuthTokenRecord = {
      ...base,
      hash: 'r2',
      kind: 'refresh',
      issuedAt: 11,
      expiresAt: null,
      pairHash: null,
      familyHash: 'f1',
      parentHash: 'r1',
    };
    const rotated = await storage.rotateRefreshToken('r1', 11, [child]);
    expect(rotated).toEqual({ ok: true, grant: (await storage.findToken('r1'))?.grant });
    // r1's child rotated: r1 gets childRotatedAt.
    expect((await storage.rotateRefreshToken('r2', 12, [])).ok).toBe(true);
    const personalGrant: GrantRecord = {
      id: 'g2',
      kind: 'personal',
      account: { uuid: 'u1', name: 'Ada', email: 'ada@example.com' },
      scope: odd,
      createdAt: 4,
      revokedAt: null,
      name: 'CI "deploy"',
      lastUsedAt: 6,
    };
    const personal: TokenRecord = {
      hash: 'pat-1',
      kind: 'personal',
      grantId: 'g2',
      scope: odd,
      issuedAt: 4,
      expiresAt: null,
      pairHash: null,
      rotatedAt: null,
      revokedAt: null,
    };
    await storage.createGrant(personalGrant, { tokens: [personal] });

    const found = await storage.findToken('r1');
    expect(found?.token.childRotatedAt).toBe(12);
    for (const clientId of ['app', 'nobody']) {
      expect(await storage.findClientAndCode(clientId, 'code-1')).toEqual({
        client: await storage.findClient(clientId),
        code: await storage.findCode('code-1'),
      });
      for (const hash of ['a1', 'r1', 'r2', 'pat-1', 'unknown']) {
        expect(await storage.findClientAndToken(clientId, hash)).toEqual({
          client: await storage.findClient(clientId),
          token: await storage.findToken(hash),
        });
      }
    }
    // And the plain rows are the records stored.
    expect((await storage.findCode('code-1'))?.resources).toEqual(odd);
    expect((await storage.findToken('r1'))?.token.audience).toEqual(odd);
    expect((await storage.findToken('pat-1'))?.grant).toEqual(personalGrant);
  });
});
