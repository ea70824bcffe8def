/**
 * Migration 9 on PostgreSQL (declared variants, docs/reference.md#storage-groups): a database
 * at schema version 8 holding rows of every kind as the previous version wrote them (an OAuth
 * grant and its tokens, a personal access token with client_id '', an authorization request's
 * sign-in step, a device verification's sign-in and confirmation steps that rode on the request
 * with `device`, device authorizations pending, approved and denied by a revocation) is
 * upgraded, and each row is then used through the new code: the tokens authenticate, refresh and
 * revoke, the personal token is listed and revoked as before and no client revocation reaches
 * it, the steps resume and are decided, the devices poll. The checks of the new schema then
 * refuse rows that carry a sentinel.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { AuthorizationServer, DEVICE_CODE_GRANT, type OAuthRequest } from '../../src/index.js';
import { sha256Base64url } from '../../src/crypto.js';
import { PostgresStorage, SCHEMA_VERSION } from '../../src/postgres/index.js';
import { MIGRATIONS, quote, routineNames, tableNames, type Tables } from '../../src/postgres/schema.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA, BOB, CALLBACK } from '../fixtures.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from './pg.js';

const pool = DATABASE_URL ? makePool(10) : undefined;
const schemas: string[] = [];
afterAll(async () => {
  if (!pool) return;
  for (const s of schemas) await dropSchema(pool, s);
  await pool.end();
});

const VERIFY = '/v1/oauth/device/verify';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const secret = () => randomBytes(32).toString('base64url');

/** A database at schema version 8, as authgate before declared variants left it. */
async function atVersion8(schema: string, prefix: string): Promise<Tables> {
  const t = tableNames(schema, prefix);
  await pool!.query(`CREATE SCHEMA ${quote(schema)}`);
  await pool!.query(`CREATE TABLE ${t.migrations} (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`);
  for (const m of MIGRATIONS.filter((m) => m.version <= 8)) {
    for (const statement of m.up(t, (name) => quote(prefix + name), routineNames(schema, prefix))) await pool!.query(statement);
    await pool!.query(`INSERT INTO ${t.migrations} VALUES ($1, $2, $3)`, [m.version, m.name, 0]);
  }
  return t;
}

describe.skipIf(!pool)('migration 9 on PostgreSQL', () => {
  it.each([
    ['the default prefix', 'authgate_'],
    ['no prefix', ''],
  ])('upgrades a version-8 database (%s): every old row is used through the new code', async (_name, prefix) => {
    const schema = schemaName('v8');
    schemas.push(schema);
    const t = await atVersion8(schema, prefix);
    const storage = new PostgresStorage(pool!, { schema, tablePrefix: prefix });
    const clock = new FakeClock();
    const sessions = new FakeSessions(clock);
    const server = new AuthorizationServer({ storage, sessions, clock, deviceAuthorization: {} });
    const now = clock.now();
    // The client as version 8 wrote it (later versions add columns to the clients table).
    const app = { clientId: 'app-v8', clientSecret: secret() };
    await pool!.query(
      `INSERT INTO ${t.clients} (id, name, redirect_uri, secret_hash, created_at, response_types, grant_types)
      VALUES ($1, 'Example App', $2, $3, $4, NULL, $5)`,
      [app.clientId, CALLBACK, sha256Base64url(app.clientSecret), now, ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT]],
    );
    const ada = sessions.signIn(ADA);
    const get = (url: string, cookie = ada): OAuthRequest => ({ method: 'GET', url, headers: { cookie } });
    const post = (url: string, form: Record<string, string>): OAuthRequest => ({
      method: 'POST',
      url,
      headers: { ...FORM },
      body: new URLSearchParams({ ...form, client_id: app.clientId, client_secret: app.clientSecret }).toString(),
    });
    const bearer = (token: string) => server.authenticate({ method: 'GET', url: '/v2/x', headers: { authorization: `Bearer ${token}` } });
    const q = (text: string, values: unknown[] = []) => pool!.query(text, values);

    // --- Rows as version 8 wrote them (its INSERT statements, its values).
    const insertGrant = (id: string, clientId: string, name: string | null, lastUsedAt: number | null) =>
      q(
        `INSERT INTO ${t.grants} (id, client_id, account_uuid, account, scope, created_at, revoked_at, name, last_used_at)
        VALUES ($1, $2, $3, $4::jsonb, $5::text[], $6, NULL, $7, $8)`,
        [id, clientId, ADA.uuid, JSON.stringify(ADA), ['read'], now, name, lastUsedAt],
      );
    const insertToken = (value: string, kind: string, grantId: string, clientId: string, pairHash: string | null) =>
      q(
        `INSERT INTO ${t.tokens} (hash, kind, grant_id, client_id, scope, issued_at, expires_at, pair_hash, rotated_at, revoked_at, family_hash, audience)
        VALUES ($1, $2, $3, $4, $5::text[], $6, $7, $8, NULL, NULL, NULL, NULL)`,
        [sha256Base64url(value), kind, grantId, clientId, ['read'], now, kind === 'access' ? now + 3_600_000 : null, pairHash],
      );
    const insertInteraction = (id: string, kind: 'login' | 'consent', request: Record<string, unknown>, account: object | null) =>
      q(
        `INSERT INTO ${t.interactions} (id_hash, kind, request, requested_at, expires_at, login_after, account)
        VALUES ($1, $2, $3::jsonb, $4, $5, NULL, $6::jsonb)`,
        [sha256Base64url(id), kind, JSON.stringify(request), now, now + 600_000, account && JSON.stringify(account)],
      );
    const insertDevice = (deviceCode: string, status: string, account: object | null) =>
      q(
        `INSERT INTO ${t.deviceAuthorizations}
        (hash, user_code_hash, client_id, scope, resources, created_at, expires_at, poll_interval, last_polled_at, status, account, decided_at)
        VALUES ($1, $2, $3, $4::text[], NULL, $5, $6, 5, NULL, $7, $8::jsonb, $9)`,
        [
          sha256Base64url(deviceCode),
          sha256Base64url(`user-${deviceCode}`),
          app.clientId,
          ['read'],
          now,
          now + 600_000,
          status,
          account && JSON.stringify(account),
          status === 'pending' ? null : now,
        ],
      );

    // An OAuth grant with its access and refresh token.
    const access = secret();
    const refresh = secret();
    await insertGrant('g-oauth', app.clientId, null, null);
    await insertToken(access, 'access', 'g-oauth', app.clientId, null);
    await insertToken(refresh, 'refresh', 'g-oauth', app.clientId, sha256Base64url(access));
    // A personal access token: a grant of client '' with a name, and its token of client ''.
    const personal = secret();
    await insertGrant('g-personal', '', 'CI deploy', now - 5);
    await insertToken(personal, 'personal', 'g-personal', '', null);
    // An authorization request's sign-in step.
    const signIn = secret();
    await insertInteraction(
      signIn,
      'login',
      { clientId: app.clientId, redirectUri: CALLBACK, responseType: 'code', scope: ['read'], state: 's', prompt: [] },
      null,
    );
    // A device verification's sign-in step and its confirmation step, riding on the request.
    const deviceSignIn = secret();
    await insertInteraction(
      deviceSignIn,
      'login',
      { clientId: '', redirectUri: `${VERIFY}?user_code=WDJB-MJHT`, responseType: 'code', scope: [], prompt: [], device: {} },
      null,
    );
    const pendingDevice = secret();
    await insertDevice(pendingDevice, 'pending', null);
    const browser = secret();
    const confirmation = secret();
    await insertInteraction(
      confirmation,
      'consent',
      {
        clientId: app.clientId,
        redirectUri: VERIFY,
        responseType: 'code',
        scope: ['read'],
        prompt: [],
        device: { codeHash: sha256Base64url(pendingDevice) },
        browserHash: sha256Base64url(browser),
      },
      ADA,
    );
    // A device approved and not collected yet, and one an old revocation denied (its account kept).
    const approvedDevice = secret();
    await insertDevice(approvedDevice, 'approved', ADA);
    const deniedDevice = secret();
    await insertDevice(deniedDevice, 'denied', ADA);

    // --- The upgrade.
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(9);
    expect(await storage.migrate()).toEqual({ from: 8, to: SCHEMA_VERSION });
    const grantRows = await q(`SELECT id, kind, client_id, name FROM ${t.grants} ORDER BY id`);
    expect(grantRows.rows).toEqual([
      { id: 'g-oauth', kind: 'oauth', client_id: app.clientId, name: null },
      { id: 'g-personal', kind: 'personal', client_id: null, name: 'CI deploy' },
    ]);
    expect((await q(`SELECT client_id FROM ${t.tokens} WHERE kind = 'personal'`)).rows).toEqual([{ client_id: null }]);

    // --- The device approved and not collected yet gets its tokens (before the revocation below denies what is left).
    const poll = (deviceCode: string) => server.token(post('/v1/oauth/token', { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode }));
    expect((await poll(approvedDevice)).status).toBe(200);

    // --- The OAuth grant: its tokens authenticate, refresh, and go with a revocation.
    const verified = await bearer(access);
    expect(verified.ok && verified.token).toMatchObject({ kind: 'oauth', clientId: app.clientId, account: ADA });
    expect(await storage.findToken(sha256Base64url(access))).toMatchObject({
      grant: { id: 'g-oauth', kind: 'oauth', clientId: app.clientId },
    });
    const refreshed = await server.token(post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: refresh }));
    expect(refreshed.status, refreshed.body).toBe(200);
    const fresh = JSON.parse(refreshed.body).access_token as string;
    expect((await bearer(fresh)).ok).toBe(true);

    // --- The personal token: authenticates as documented, is listed, and no client revocation reaches it.
    const asPersonal = await bearer(personal);
    expect(asPersonal.ok && asPersonal.token).toEqual({
      kind: 'personal',
      account: ADA,
      scope: ['read'],
      expiresAt: Number.MAX_SAFE_INTEGER,
      personalToken: { id: 'g-personal', name: 'CI deploy' },
    });
    expect(await server.listPersonalTokens(ADA.uuid)).toEqual([
      { id: 'g-personal', name: 'CI deploy', scope: ['read'], createdAt: now, expiresAt: null, lastUsedAt: expect.any(Number) },
    ]);
    await server.revokeClientTokens(app.clientId);
    await server.revokeAccess({ accountUuid: ADA.uuid, clientId: '' });
    expect((await bearer(personal)).ok).toBe(true);
    expect((await bearer(fresh)).ok).toBe(false); // the OAuth grant went with its client's revocation

    // --- The authorization request's sign-in step resumes, and its consent issues a code.
    const consent = await server.resume(signIn, get('/'));
    if (consent.type !== 'consent') throw new Error(`expected a consent step, got ${JSON.stringify(consent)}`);
    const approved = await server.approve(consent.interaction.id, get('/'));
    expect(approved.type === 'redirect' && new URL(approved.location).searchParams.get('state')).toBe('s');

    // --- The device verification's steps: described, resumed back to the page, decided.
    expect(await server.describeInteraction(deviceSignIn)).toEqual({
      kind: 'login',
      purpose: 'device',
      client: { id: '', name: '' },
      scope: [],
      expiresAt: now + 600_000,
    });
    expect(await server.resume(deviceSignIn, get('/'))).toEqual({ type: 'redirect', location: `${VERIFY}?user_code=WDJB-MJHT` });
    expect(await server.describeInteraction(confirmation)).toMatchObject({
      kind: 'consent',
      purpose: 'device',
      client: { id: app.clientId },
    });
    expect(await server.checkDeviceBinding(confirmation, secret())).toMatchObject({ type: 'error', status: 400 });
    expect(await server.checkDeviceBinding(confirmation, browser)).toBeNull();
    expect(await server.approve(confirmation, get('/', sessions.signIn(BOB)))).toMatchObject({ type: 'error' }); // shown to Ada only
    expect(await server.approve(confirmation, get('/'))).toEqual({ type: 'redirect', location: `${VERIFY}?result=approved` });
    const collected = await poll(pendingDevice);
    expect(collected.status, collected.body).toBe(200);
    expect((await bearer(JSON.parse(collected.body).access_token)).ok).toBe(true);

    // --- The device authorization an old revocation denied stays denied (and names no account).
    const denied = await poll(deniedDevice);
    expect(JSON.parse(denied.body).error).toBe('access_denied');
    expect((await storage.findDeviceAuthorization(sha256Base64url(`user-${deniedDevice}`)))?.account).toBeNull();

    // --- The new checks refuse a sentinel, and a variant without its fields.
    const refused = (text: string, values: unknown[]) => expect(q(text, values)).rejects.toThrow(/check constraint/);
    const grantInsert = `INSERT INTO ${t.grants} (id, client_id, account_uuid, account, scope, created_at, kind, name) VALUES ($1, $2, 'u', '{}', '{}', 0, $3, $4)`;
    await refused(grantInsert, ['x1', '', 'oauth', null]);
    await refused(grantInsert, ['x2', null, 'oauth', null]);
    await refused(grantInsert, ['x3', 'c', 'personal', 'n']);
    await refused(grantInsert, ['x4', null, 'personal', null]);
    await refused(grantInsert, ['x5', 'c', 'oauth', 'a name']);
    await refused(grantInsert, ['x6', 'c', 'bogus', null]);
    await refused(
      `INSERT INTO ${t.tokens} (hash, kind, grant_id, client_id, scope, issued_at) VALUES ('x7', 'personal', 'g-personal', $1, '{}', 0)`,
      [''],
    );
    await refused(
      `INSERT INTO ${t.tokens} (hash, kind, grant_id, client_id, scope, issued_at) VALUES ('x8', 'access', 'g-oauth', NULL, '{}', 0)`,
      [],
    );
    const interactionInsert = `INSERT INTO ${t.interactions} (id_hash, kind, purpose, request, device, requested_at, expires_at) VALUES ($1, 'login', $2, $3::jsonb, $4::jsonb, 0, 1)`;
    await refused(interactionInsert, ['x9', 'device', null, null]);
    await refused(interactionInsert, ['x10', 'device', '{}', '{"returnTo":"/"}']);
    await refused(interactionInsert, ['x11', 'authorization', null, null]);
    await refused(interactionInsert, ['x12', 'bogus', '{}', null]);
    expect(await storage.migrate()).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
  });
});
