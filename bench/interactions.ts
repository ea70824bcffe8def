/**
 * What an anonymous request costs in storage (docs/reference.md#interactions): every
 * unauthenticated `GET /v1/oauth/authorize` for a valid client stores a `login` interaction until
 * it expires (`lifetimes.interaction`, 10 minutes by default) or `prune()` runs after that.
 *
 * Measures, for N anonymous authorization requests as the adapters make them (bound to a
 * browser, with `state` and a PKCE challenge, the usual shape):
 * - MemoryStorage: heap bytes per pending interaction (heap after N minus before, both after GC);
 * - PostgresStorage (when DATABASE_URL is set): the average row size (`pg_column_size`) and the
 *   table's total size with its indexes and TOAST (`pg_total_relation_size`) per row, in a
 *   schema of its own that is dropped at the end.
 *
 *   node --expose-gc --import tsx bench/interactions.ts [N]        (default N = 20000)
 *
 * The cap (`maxPendingAnonymousInteractions`) is switched off here, so every request stays.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { AuthorizationServer, MemoryStorage, bindBrowser, type OAuthRequest, type Storage } from '../src/index.js';
import { PostgresStorage } from '../src/postgres/index.js';
import { FakeClock, FakeSessions } from '../src/testing/index.js';

const N = Number(process.argv[2] ?? 20_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

function heapUsed(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

/** An anonymous browser's first authorization request, as an adapter hands it to the core. */
function anonymousRequest(clientId: string): OAuthRequest {
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: 'https://client.example/cb',
    response_type: 'code',
    scope: 'read write',
    state: randomBytes(16).toString('base64url'),
    code_challenge: randomBytes(32).toString('base64url'),
    code_challenge_method: 'S256',
  });
  return bindBrowser({ method: 'GET', url: `http://as.example/v1/oauth/authorize?${query}`, headers: {} }).request;
}

async function fill(storage: Storage, count: number): Promise<void> {
  const clock = new FakeClock();
  const server = new AuthorizationServer({ storage, sessions: new FakeSessions(clock), clock, maxPendingAnonymousInteractions: null });
  const { clientId } = await server.registerClient({ name: 'Bench App', redirectUri: 'https://client.example/cb' });
  for (let i = 0; i < count; i++) {
    const decision = await server.authorize(anonymousRequest(clientId));
    if (decision.type !== 'login') throw new Error(`expected a login decision, got ${decision.type}`);
  }
}

async function memory(): Promise<void> {
  const storage = new MemoryStorage();
  await fill(storage, 1); // the client and the server's warm-up are not counted
  const before = heapUsed();
  await fill(storage, N);
  const after = heapUsed();
  console.log(`MemoryStorage: ${N} pending anonymous interactions, ${((after - before) / N).toFixed(0)} heap bytes each`);
}

async function postgres(url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const schema = `ag_bench_interactions_${randomBytes(4).toString('hex')}`;
  try {
    const storage = new PostgresStorage(pool, { schema });
    await storage.migrate();
    await fill(storage, N);
    const table = `"${schema}".authgate_interactions`;
    const { rows } = await pool.query(`SELECT count(*)::int AS n, avg(pg_column_size(t.*))::int AS row_bytes,
      pg_total_relation_size('${table}') AS total FROM ${table} t`);
    const { n, row_bytes: rowBytes, total } = rows[0] as { n: number; row_bytes: number; total: string };
    console.log(
      `PostgresStorage: ${n} rows, ${rowBytes} bytes per row (pg_column_size), ` +
        `${(Number(total) / n).toFixed(0)} bytes per row with indexes and TOAST (pg_total_relation_size)`,
    );
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  }
}

await memory();
const url = process.env['DATABASE_URL'];
if (url) await postgres(url);
else console.log('PostgresStorage: skipped (DATABASE_URL is not set)');
