/**
 * The scope a stored consent approved for each resource (RFC 8707), through the server on both
 * stores (docs/reference.md#stored-consents): the sequence of approvals, silent requests, a
 * second server instance and a revocation over time; and on PostgreSQL the upgrade of a version-7
 * database by migration 8, whose old consents, their approved resources unknown, cover no silent
 * request until the user approves again.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { AuthorizationServer, type ConsentRecord, type Storage } from '../../src/index.js';
import { PostgresStorage, SCHEMA_VERSION } from '../../src/postgres/index.js';
import { MIGRATIONS, quote, routineNames, tableNames } from '../../src/postgres/schema.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA, CALLBACK } from '../fixtures.js';
import { DATABASE_URL, dropSchema, makePool, schemaName, storesUnderTest } from './pg.js';

const API = 'https://api.example/v2';
const MCP = 'https://mcp.example/mcp';
const acceptResource = (resource: string) => resource === API || resource === MCP;
/** `read` and `write` each on its own (the default vocabulary has no `write` without `read`). */
const scopes = { values: ['read', 'write'], default: ['read'], allows: () => true };
const DAY = 86_400_000;

/** The approvals of a consent by resource (the approval without resource first), each scope sorted. */
const byResource = (consent: ConsentRecord | null) =>
  (consent?.approvals ?? [])
    .map((a) => ({ resource: a.resource, scope: [...a.scope].sort() }))
    .sort((a, b) => (a.resource === null ? -1 : b.resource === null ? 1 : a.resource.localeCompare(b.resource)));

/** `&resource=…` for each value. */
const resourceQuery = (resources: readonly string[]) => resources.map((r) => `&resource=${encodeURIComponent(r)}`).join('');

/** A server on `storage` with the user signed in, and the two steps the sequences take. */
function world(storage: Storage, clientId: string, clock = new FakeClock()) {
  const sessions = new FakeSessions(clock);
  const server = new AuthorizationServer({ storage, sessions, clock, acceptResource, scopes });
  const sid = sessions.signIn(ADA);
  const get = (url: string) => ({ method: 'GET', url, headers: { cookie: sid } });
  const authorizeUrl = (resources: readonly string[], scope: string, prompt?: string) =>
    `/v1/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', scope, ...(prompt && { prompt }) })}${resourceQuery(resources)}`;
  return {
    clock,
    server,
    /** The user approves a request for `resources` and `scope` on the consent step. */
    async approve(resources: readonly string[], scope = 'read') {
      const decision = await server.authorize(get(authorizeUrl(resources, scope)));
      if (decision.type !== 'consent') throw new Error(`expected consent, got ${JSON.stringify(decision)}`);
      const approved = await server.approve(decision.interaction.id, get('/'));
      expect(approved.type === 'redirect' && new URL(approved.location).searchParams.has('code')).toBe(true);
    },
    /** `prompt=none` for `resources` and `scope`: `code`, or the error it redirected with. */
    async silent(resources: readonly string[], scope = 'read') {
      const decision = await server.authorize(get(authorizeUrl(resources, scope, 'none')));
      if (decision.type !== 'redirect') throw new Error(`expected a redirect, got ${JSON.stringify(decision)}`);
      const params = new URL(decision.location).searchParams;
      return params.has('code') ? 'code' : params.get('error');
    },
  };
}

describe.each(storesUnderTest('consentres'))('%s: the resources a consent approved', (_name, makeStorage) => {
  it('approve for A → silent A works, B and no resource ask again; approve without resource → silent A works; revokeAccess → asks again', async () => {
    const storage = makeStorage();
    const clock = new FakeClock();
    const setupServer = new AuthorizationServer({ storage, sessions: new FakeSessions(clock), clock });
    const { clientId } = await setupServer.registerClient({ name: 'Example App', redirectUri: CALLBACK });
    const w = world(storage, clientId, clock);

    expect(await w.silent([API])).toBe('consent_required');
    await w.approve([API]);
    w.clock.advance(DAY);
    expect(await w.silent([API])).toBe('code');
    expect(await w.silent([MCP])).toBe('consent_required');
    expect(await w.silent([])).toBe('consent_required');
    expect(await w.silent([API, MCP])).toBe('consent_required');

    // Another server instance on the same store sees the same consent.
    const other = world(storage, clientId, w.clock);
    expect(await other.silent([API])).toBe('code');
    expect(await other.silent([MCP])).toBe('consent_required');

    // write for MCP: never write for API (the scope is approved per resource).
    w.clock.advance(DAY);
    await w.approve([MCP], 'read write');
    expect(await w.silent([MCP], 'read write')).toBe('code');
    expect(await other.silent([API], 'read write')).toBe('consent_required');
    expect(await other.silent([API, MCP], 'read write')).toBe('consent_required');
    expect(await other.silent([API, MCP], 'read')).toBe('code');

    w.clock.advance(DAY);
    await w.approve([]);
    expect(byResource(await storage.findConsent(ADA.uuid, clientId))).toEqual([
      { resource: null, scope: ['read'] },
      { resource: API, scope: ['read'] },
      { resource: MCP, scope: ['read', 'write'] },
    ]);
    for (const resources of [[API], [MCP], [API, MCP], []]) expect(await w.silent(resources)).toBe('code');
    // read without resource and write for MCP: write is still MCP's alone.
    expect(await w.silent([], 'write')).toBe('consent_required');
    expect(await w.silent([API], 'write')).toBe('consent_required');
    expect(await w.silent([MCP], 'write')).toBe('code');

    await w.server.revokeAccess({ accountUuid: ADA.uuid, clientId });
    for (const resources of [[API], []]) expect(await other.silent(resources)).toBe('consent_required');
    await w.approve([MCP]);
    expect(await w.silent([MCP])).toBe('code');
    expect(await w.silent([API])).toBe('consent_required');
  });
});

const pool = DATABASE_URL ? makePool(5) : undefined;
const schemas: string[] = [];
afterAll(async () => {
  if (!pool) return;
  for (const s of schemas) await dropSchema(pool, s);
  await pool.end();
});

describe.skipIf(!pool)('migration 8 on PostgreSQL', () => {
  const T = 1_700_000_000_000;

  /** A database at schema version 7, as authgate before consents kept their resources left it. */
  async function atVersion7(schema: string, prefix: string) {
    const t = tableNames(schema, prefix);
    await pool!.query(`CREATE SCHEMA ${quote(schema)}`);
    await pool!.query(`CREATE TABLE ${t.migrations} (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`);
    for (const m of MIGRATIONS.filter((m) => m.version <= 7)) {
      for (const statement of m.up(t, (name) => quote(prefix + name), routineNames(schema, prefix))) await pool!.query(statement);
      await pool!.query(`INSERT INTO ${t.migrations} VALUES ($1, $2, $3)`, [m.version, m.name, T]);
    }
    return t;
  }

  it.each([
    ['the default prefix', 'authgate_'],
    ['no prefix', ''],
    ['a long prefix', 'tenant_with_a_long_prefix_30_'],
  ])(
    'upgrades a version-7 database (%s): an old consent, its resources unknown, covers no silent request until approved again',
    async (_name, prefix) => {
      const schema = schemaName('v7');
      schemas.push(schema);
      const t = await atVersion7(schema, prefix);
      // A confidential client and the consent an earlier version stored for it (scope only).
      await pool!.query(
        `INSERT INTO ${t.clients} (id, name, redirect_uri, secret_hash, created_at) VALUES ('old-app', 'Old App', $1, 'x', $2)`,
        [CALLBACK, T],
      );
      await pool!.query(
        `INSERT INTO ${t.consents} (account_uuid, client_id, scope, granted_at) VALUES ($1, 'old-app', ARRAY['read'], $2)`,
        [ADA.uuid, T],
      );

      const storage = new PostgresStorage(pool!, { schema, tablePrefix: prefix });
      expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(8);
      expect(await storage.migrate()).toEqual({ from: 7, to: SCHEMA_VERSION });
      const old = { accountUuid: ADA.uuid, clientId: 'old-app', scope: ['read'], approvals: [], grantedAt: T };
      expect(await storage.findConsent(ADA.uuid, 'old-app')).toEqual(old);
      expect(await storage.listConsents(ADA.uuid)).toEqual([old]);

      const w = world(storage, 'old-app');
      // What the old consent was shown for is unknown: no silent request passes, not even one without resource.
      expect(await w.silent([API])).toBe('consent_required');
      expect(await w.silent([])).toBe('consent_required');
      await w.approve([API]);
      expect(await storage.findConsent(ADA.uuid, 'old-app')).toMatchObject({
        scope: ['read'],
        approvals: [{ resource: API, scope: ['read'] }],
      });
      expect(await w.silent([API])).toBe('code');
      expect(await w.silent([])).toBe('consent_required');
      await w.approve([]);
      expect(await w.silent([])).toBe('code');
      expect(await w.silent([MCP])).toBe('code');
      expect(await w.silent([MCP], 'read write')).toBe('consent_required');

      // A row an older server inserts (without the column) covers nothing; the column refuses
      // NULL and anything but an array.
      await pool!.query(`INSERT INTO ${t.consents} (account_uuid, client_id, scope, granted_at) VALUES ('x', 'y', ARRAY['read'], 1)`);
      expect(await storage.findConsent('x', 'y')).toEqual({
        accountUuid: 'x',
        clientId: 'y',
        scope: ['read'],
        approvals: [],
        grantedAt: 1,
      });
      for (const value of ['NULL', `'{}'::jsonb`, `'null'::jsonb`]) {
        await expect(
          pool!.query(
            `INSERT INTO ${t.consents} (account_uuid, client_id, scope, granted_at, approvals) VALUES ('x', 'z', ARRAY['read'], 1, ${value})`,
          ),
        ).rejects.toThrow(/null|check/i);
      }
      expect(await storage.migrate()).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
    },
  );

  it('an approval of another shape in a row (written by hand, or by another program) approves nothing; a save drops it', async () => {
    const schema = schemaName('shape');
    schemas.push(schema);
    const storage = new PostgresStorage(pool!, { schema });
    await storage.migrate();
    const t = tableNames(schema, 'authgate_');
    await pool!.query(`INSERT INTO ${t.clients} (id, name, redirect_uri, secret_hash, created_at) VALUES ('app', 'App', $1, 'x', $2)`, [
      CALLBACK,
      T,
    ]);
    // No resource (never to be read as the approval without resource), a number, a scope that is
    // no array or holds something else than strings.
    const odd = [
      { scope: ['read', 'write'] },
      { resource: 7, scope: ['read'] },
      { resource: API, scope: 'read' },
      { resource: null, scope: ['read', 7] },
      'read',
    ];
    await pool!.query(
      `INSERT INTO ${t.consents} (account_uuid, client_id, scope, granted_at, approvals) VALUES ($1, 'app', ARRAY['read', 'write'], $2, $3::jsonb)`,
      [ADA.uuid, T, JSON.stringify(odd)],
    );
    expect(await storage.findConsent(ADA.uuid, 'app')).toMatchObject({ approvals: [] });
    const w = world(storage, 'app');
    expect(await w.silent([])).toBe('consent_required');
    expect(await w.silent([API])).toBe('consent_required');
    await w.approve([MCP]);
    expect(await w.silent([MCP])).toBe('code');
    expect(await w.silent([])).toBe('consent_required');
    const { rows } = await pool!.query(`SELECT approvals FROM ${t.consents} WHERE client_id = 'app'`);
    expect(rows[0].approvals).toEqual([{ resource: MCP, scope: ['read'] }]);
  });
});
