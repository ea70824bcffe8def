/**
 * PostgreSQL migration 11 (the OpenID Connect sections): a database at version 10 holding a
 * client, a grant and a code as version 10 wrote them is migrated, its rows read back without
 * sections (absent, not null); then a server with the `openid` option on that database runs the
 * whole OpenID Connect code flow (ID token at the exchange, a new one on refresh with the
 * grant's `auth_time`, userinfo), so each section really round-trips through PostgreSQL.
 */
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256Base64url } from '../../src/crypto.js';
import { AuthorizationServer } from '../../src/index.js';
import { PostgresStorage, SCHEMA_VERSION } from '../../src/postgres/index.js';
import { MIGRATIONS, quote, routineNames, tableNames } from '../../src/postgres/schema.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA, CALLBACK } from '../fixtures.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from './pg.js';

const ISSUER = 'https://auth.example.com';
const pool = DATABASE_URL ? makePool(5) : undefined;
const schemas: string[] = [];

afterAll(async () => {
  if (pool) for (const s of schemas) await dropSchema(pool, s);
  await pool?.end();
});

describe.skipIf(!pool)('migration 11 on PostgreSQL: the OpenID Connect sections', () => {
  it('a version-10 database gains the columns, its rows read without sections, and an OpenID Connect flow then round-trips', async () => {
    const schema = schemaName('oidc11');
    schemas.push(schema);
    const t = tableNames(schema, 'authgate_');
    const q = (text: string, values: unknown[] = []) => pool!.query(text, values);
    await q(`CREATE SCHEMA ${quote(schema)}`);
    await q(`CREATE TABLE ${t.migrations} (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`);
    for (const m of MIGRATIONS.filter((m) => m.version <= 10)) {
      for (const statement of m.up(t, (name) => quote(`authgate_${name}`), routineNames(schema, 'authgate_'))) await q(statement);
      await q(`INSERT INTO ${t.migrations} VALUES ($1, $2, $3)`, [m.version, m.name, 0]);
    }
    const clock = new FakeClock();
    const now = clock.now();
    const secret = 'a-client-secret-of-the-old-version-0123456789';
    // Rows as version 10 wrote them.
    await q(`INSERT INTO ${t.clients} (id, name, redirect_uri, secret_hash, created_at) VALUES ('old', 'Old App', $1, $2, $3)`, [
      CALLBACK,
      sha256Base64url(secret),
      now,
    ]);
    await q(
      `INSERT INTO ${t.grants} (id, client_id, account_uuid, account, scope, created_at, revoked_at, kind)
      VALUES ('g-old', 'old', $1, $2::jsonb, '{read}', $3, NULL, 'oauth')`,
      [ADA.uuid, JSON.stringify(ADA), now],
    );
    await q(
      `INSERT INTO ${t.codes} (hash, grant_id, client_id, redirect_uri, scope, code_challenge, code_challenge_method, expires_at, used_at)
      VALUES ($1, 'g-old', 'old', $2, '{read}', NULL, NULL, $3, NULL)`,
      [sha256Base64url('old-code'), CALLBACK, now + 600_000],
    );

    const storage = new PostgresStorage(pool!, { schema });
    expect(await storage.migrate()).toEqual({ from: 10, to: SCHEMA_VERSION });
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(11);
    const client = await storage.findClient('old');
    expect(client).toMatchObject({ id: 'old', name: 'Old App' });
    expect(client && 'openid' in client).toBe(false);
    const code = await storage.findCode(sha256Base64url('old-code'));
    expect(code && 'openid' in code).toBe(false);

    const sessions = new FakeSessions(clock);
    const server = new AuthorizationServer({ storage, sessions, clock, issuer: ISSUER, openid: { claims: (a) => ({ email: a.email }) } });
    const post = (form: Record<string, string>) => ({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'old', client_secret: secret, ...form }).toString(),
    });
    // The old code exchanges as before: no ID token (its grant has no section).
    const old = JSON.parse((await server.token(post({ grant_type: 'authorization_code', code: 'old-code', redirect_uri: CALLBACK }))).body);
    expect(old.access_token).toBeTypeOf('string');
    expect(old.id_token).toBeUndefined();

    // A new OpenID Connect flow with the same client, through PostgreSQL.
    const signedInAt = clock.now();
    const ada = sessions.signIn(ADA);
    clock.advance(5_000);
    const url = `/v1/oauth/authorize?${new URLSearchParams({ client_id: 'old', redirect_uri: CALLBACK, response_type: 'code', scope: 'openid email', nonce: 'pg-nonce' })}`;
    const consent = await server.authorize({ method: 'GET', url, headers: { cookie: ada } });
    if (consent.type !== 'consent') throw new Error(`consent expected: ${JSON.stringify(consent)}`);
    const approved = await server.approve(consent.interaction.id, { method: 'GET', url: '/', headers: { cookie: ada } });
    if (approved.type !== 'redirect') throw new Error('redirect expected');
    const newCode = new URL(approved.location).searchParams.get('code')!;
    const stored = await storage.findCode(sha256Base64url(newCode));
    expect(stored?.openid).toEqual({ authTime: signedInAt, nonce: 'pg-nonce' });
    const body = JSON.parse((await server.token(post({ grant_type: 'authorization_code', code: newCode, redirect_uri: CALLBACK }))).body);
    const keys = createLocalJWKSet(JSON.parse((await server.jwks({ method: 'GET' })).body));
    const verify = async (token: string) =>
      (await jwtVerify(token, keys, { issuer: ISSUER, audience: 'old', currentDate: new Date(clock.now()) })).payload;
    expect(await verify(body.id_token)).toMatchObject({ sub: ADA.uuid, nonce: 'pg-nonce', auth_time: Math.floor(signedInAt / 1000) });
    clock.advance(60_000);
    const refreshed = JSON.parse((await server.token(post({ grant_type: 'refresh_token', refresh_token: body.refresh_token }))).body);
    const again = await verify(refreshed.id_token);
    expect(again).toMatchObject({ sub: ADA.uuid, auth_time: Math.floor(signedInAt / 1000) });
    expect(again.nonce).toBeUndefined();
    const info = await server.userinfo({
      method: 'GET',
      url: '/v1/oauth/userinfo',
      headers: { authorization: `Bearer ${refreshed.access_token}` },
    });
    expect(JSON.parse(info.body)).toEqual({ sub: ADA.uuid, email: ADA.email });
  });
});
