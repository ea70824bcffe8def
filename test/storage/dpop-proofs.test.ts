/**
 * The DPoP proof group (`DpopProofStorage`, docs/reference.md#storage-groups) beyond the
 * conformance kit: two PostgreSQL instances (two pools, as two servers behind a load balancer)
 * racing one proof accept it once; prune deletes the rows past their expiry and keeps the live
 * ones; MemoryStorage forgets expired proofs on its own, so a server that never prunes does not
 * grow without bound; and a database migrated by the previous version gains the table.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../src/index.js';
import { PostgresStorage, SCHEMA_VERSION } from '../../src/postgres/index.js';
import { MIGRATIONS, quote, routineNames, tableNames } from '../../src/postgres/schema.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from './pg.js';

const T = 1_800_000_000_000;
const pools = DATABASE_URL ? [makePool(10), makePool(10)] : [];
const schemas: string[] = [];

afterAll(async () => {
  if (pools[0]) for (const s of schemas) await dropSchema(pools[0], s);
  await Promise.all(pools.map((pool) => pool.end()));
});

describe('MemoryStorage: DPoP proofs seen', () => {
  it('forgets expired proofs without prune: 100 000 proofs of one second each keep the map small', async () => {
    const storage = new MemoryStorage();
    for (let i = 0; i < 100_000; i++) expect(await storage.rememberDpopProof(`k${i}`, T + i + 1_000, T + i)).toBe(true);
    const size = (storage as unknown as { dpopProofs: Map<string, number> }).dpopProofs.size;
    expect(size).toBeLessThan(4_096);
    // The live ones are still refused.
    expect(await storage.rememberDpopProof('k99999', T + 200_000, T + 99_999)).toBe(false);
  });

  it('prune deletes the expired proofs and keeps the live ones, and its result counts records only', async () => {
    const storage = new MemoryStorage();
    await storage.rememberDpopProof('old', T + 10, T);
    await storage.rememberDpopProof('live', T + 1_000, T);
    expect(storage.prune(T + 10)).toEqual({ interactions: 0, codes: 0, tokens: 0, grants: 0, devices: 0 });
    expect([...(storage as unknown as { dpopProofs: Map<string, number> }).dpopProofs.keys()]).toEqual(['live']);
    expect(await storage.rememberDpopProof('live', T + 2_000, T + 20)).toBe(false);
  });
});

describe.skipIf(!DATABASE_URL)('PostgresStorage: DPoP proofs seen', () => {
  async function migrated(): Promise<[PostgresStorage, PostgresStorage, string]> {
    const schema = schemaName('dpop');
    schemas.push(schema);
    const [a, b] = pools.map((pool) => new PostgresStorage(pool, { schema }));
    await a!.migrate();
    return [a!, b!, schema];
  }

  it('two instances on one database, racing 40 calls with one proof: exactly one accepts it', async () => {
    const [a, b] = await migrated();
    for (let round = 0; round < 5; round++) {
      const key = `race-${round}`;
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).rememberDpopProof(key, T + 60_000, T)));
      expect(answers.filter(Boolean)).toHaveLength(1);
    }
  });

  it('prune deletes the rows past their expiry, keeps the live ones, and counts records only', async () => {
    const [a, , schema] = await migrated();
    await a.rememberDpopProof('old', T + 10, T);
    await a.rememberDpopProof('live', T + 1_000, T);
    expect(await a.prune(T + 10)).toEqual({ interactions: 0, codes: 0, tokens: 0, grants: 0, devices: 0 });
    const { rows } = await pools[0]!.query(`SELECT key FROM "${schema}".authgate_dpop_proofs`);
    expect(rows.map((r) => r.key)).toEqual(['live']);
    expect(await a.rememberDpopProof('live', T + 2_000, T + 20)).toBe(false);
  });

  it('a database at version 9 (the previous one) is migrated to 10 and gains the table, its rows untouched', async () => {
    const schema = schemaName('dpop_upgrade');
    schemas.push(schema);
    const pool = pools[0]!;
    const storage = new PostgresStorage(pool, { schema });
    // Apply the migrations up to 9 as the previous version did, then migrate with this one.
    const previous = MIGRATIONS.filter((m) => m.version <= 9);
    expect(previous.at(-1)?.version).toBe(9);
    const t = tableNames(schema, 'authgate_');
    await pool.query(`CREATE SCHEMA ${quote(schema)}`);
    await pool.query(`CREATE TABLE ${t.migrations} (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`);
    for (const m of previous) {
      for (const statement of m.up(t, (name) => quote(`authgate_${name}`), routineNames(schema, 'authgate_'))) await pool.query(statement);
      await pool.query(`INSERT INTO ${t.migrations} VALUES ($1, $2, $3)`, [m.version, m.name, T]);
    }
    // A client row as version 9 wrote it (later versions add columns to the clients table).
    await pool.query(`INSERT INTO ${t.clients} (id, name, redirect_uri, secret_hash, created_at) VALUES ('kept', 'Kept', $1, NULL, $2)`, [
      'https://kept.example/cb',
      T,
    ]);
    expect(await storage.migrate()).toEqual({ from: 9, to: SCHEMA_VERSION });
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(10);
    expect(await storage.findClient('kept')).toMatchObject({ name: 'Kept' });
    expect(await storage.rememberDpopProof('k', T + 10, T)).toBe(true);
    expect(await storage.rememberDpopProof('k', T + 10, T)).toBe(false);
  });
});
