/**
 * The resources (RFC 8707) of a stored consent, through the server on both stores
 * (docs/reference.md#stored-consents): the sequence of approvals, silent
 * requests, a second server instance and a revocation over time; and on PostgreSQL the upgrade
 * of a version-7 database by migration 8, whose old consents, their approved resources unknown,
 * cover no silent request until the user approves again.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { AuthorizationServer, type Storage } from '../../src/index.js';
import { PostgresStorage, SCHEMA_VERSION } from '../../src/postgres/index.js';
import { MIGRATIONS, quote, tableNames } from '../../src/postgres/schema.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA, CALLBACK } from '../fixtures.js';
import { DATABASE_URL, dropSchema, makePool, schemaName, storesUnderTest } from './pg.js';

const API = 'https://api.example/v2';
const MCP = 'https://mcp.example/mcp';
const acceptResource = (resource: string) => resource === API || resource === MCP;
const DAY = 86_400_000;

/** `&resource=…` for each value. */
const resourceQuery = (resources: readonly string[]) => resources.map((r) => `&resource=${encodeURIComponent(r)}`).join('');

/** A server on `storage` with the user signed in, and the two steps the sequences take. */
function world(storage: Storage, clientId: string, clock = new FakeClock()) {
  const sessions = new FakeSessions(clock);
  const server = new AuthorizationServer({ storage, sessions, clock, acceptResource });
  const sid = sessions.signIn(ADA);
  const get = (url: string) => ({ method: 'GET', url, headers: { cookie: sid } });
  const authorizeUrl = (resources: readonly string[], prompt?: string) =>
    `/v1/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', ...(prompt && { prompt }) })}${resourceQuery(resources)}`;
  return {
    clock,
    server,
    /** The user approves a request for `resources` on the consent step. */
    async approve(resources: readonly string[]) {
      const decision = await server.authorize(get(authorizeUrl(resources)));
      if (decision.type !== 'consent') throw new Error(`expected consent, got ${JSON.stringify(decision)}`);
      const approved = await server.approve(decision.interaction.id, get('/'));
      expect(approved.type === 'redirect' && new URL(approved.location).searchParams.has('code')).toBe(true);
    },
    /** `prompt=none` for `resources`: `code`, or the error it redirected with. */
    async silent(resources: readonly string[]) {
      const decision = await server.authorize(get(authorizeUrl(resources, 'none')));
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

    w.clock.advance(DAY);
    await w.approve([]);
    expect(await storage.findConsent(ADA.uuid, clientId)).toMatchObject({ scope: ['read'], anyResource: true, resources: [API] });
    for (const resources of [[API], [MCP], [API, MCP], []]) expect(await w.silent(resources)).toBe('code');

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
      for (const statement of m.up(t, (name) => quote(prefix + name))) await pool!.query(statement);
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
      const old = { accountUuid: ADA.uuid, clientId: 'old-app', scope: ['read'], anyResource: false, resources: [], grantedAt: T };
      expect(await storage.findConsent(ADA.uuid, 'old-app')).toEqual(old);
      expect(await storage.listConsents(ADA.uuid)).toEqual([old]);

      const w = world(storage, 'old-app');
      // What the old consent was shown for is unknown: no silent request passes, not even one without resource.
      expect(await w.silent([API])).toBe('consent_required');
      expect(await w.silent([])).toBe('consent_required');
      await w.approve([API]);
      expect(await storage.findConsent(ADA.uuid, 'old-app')).toMatchObject({ scope: ['read'], anyResource: false, resources: [API] });
      expect(await w.silent([API])).toBe('code');
      expect(await w.silent([])).toBe('consent_required');
      await w.approve([]);
      expect(await w.silent([])).toBe('code');
      expect(await w.silent([MCP])).toBe('code');

      // The columns refuse NULL: a row without them would be a consent of unknown resources again.
      await expect(
        pool!.query(
          `INSERT INTO ${t.consents} (account_uuid, client_id, scope, granted_at, any_resource, resources) VALUES ('x', 'y', ARRAY['read'], 1, NULL, NULL)`,
        ),
      ).rejects.toThrow(/null/i);
      expect(await storage.migrate()).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
    },
  );
});
