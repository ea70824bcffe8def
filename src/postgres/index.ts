/**
 * authgate on PostgreSQL: `PostgresStorage`, a complete `Storage` on a `pg.Pool`, for platforms
 * that run several authgate instances on one database.
 *
 * @example
 * import pg from 'pg';
 * import { PostgresStorage } from 'authgate/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const storage = new PostgresStorage(pool);
 * await storage.migrate();                       // at startup: creates or upgrades the tables
 * const server = new AuthorizationServer({ storage, sessions });
 * setInterval(() => storage.prune(), 3600_000);  // from time to time: delete expired rows
 * @packageDocumentation
 */
import type {
  ClientRecord,
  CodeRecord,
  ConsentRecord,
  GrantRecord,
  InteractionRecord,
  RefreshFamily,
  SingleUseOutcome,
  Storage,
  TokenRecord,
} from '../storage/types.js';
import type { Account } from '../types.js';

/** The result of a query, as `pg` returns it. */
export interface PgQueryResult {
  // Rows are mapped field by field below; `pg` types them as `any` too.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  rows: any[];
  rowCount: number | null;
}

/** A connection checked out of the pool (`pg.PoolClient`). */
export interface PgPoolClient {
  query(text: string, values?: unknown[]): Promise<PgQueryResult>;
  /** `release(true)` destroys the connection instead of returning it to the pool. */
  release(destroy?: boolean | Error): void;
}

/**
 * What `PostgresStorage` needs of a pool: `pg.Pool` fits, and so does any pool with the same
 * `query` and `connect` (e.g. a pool of a `pg`-compatible driver).
 */
export interface PgPool {
  query(text: string, values?: unknown[]): Promise<PgQueryResult>;
  connect(): Promise<PgPoolClient>;
}

/** Options of `new PostgresStorage(pool, options)`. */
export interface PostgresStorageOptions {
  /** The schema that holds authgate's tables; `migrate()` creates it when missing. Default `public`. */
  schema?: string;
  /** Put before every table and index name. Default `authgate_`. */
  tablePrefix?: string;
}

/** What `prune()` deleted, by kind of row. */
export interface PruneResult {
  interactions: number;
  codes: number;
  tokens: number;
  grants: number;
}

/** What `migrate()` did: the schema version before and after. Equal when nothing was to do. */
export interface MigrateResult {
  from: number;
  to: number;
}

/**
 * A database failure, with a message that names the operation and never a value.
 * - `duplicate`: a row with the same key already exists (SQLSTATE 23505) or a row it refers to is
 *   missing (23503): a bug or a misuse, never retried.
 * - `serialization`: the database reported a conflict with a concurrent transaction (40001,
 *   40P01) and the operation failed again when retried once.
 * - `database`: anything else (connection refused, timeout, missing table: run `migrate()`).
 * The original error is in `cause`, for logs only: authgate answers `server_error` to clients.
 */
export class PostgresStorageError extends Error {
  override readonly name = 'PostgresStorageError';
  constructor(
    readonly kind: 'duplicate' | 'serialization' | 'database',
    readonly operation: string,
    readonly sqlState: string | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** The current schema version this code knows. */
export const SCHEMA_VERSION = 2;

interface Tables {
  migrations: string;
  clients: string;
  interactions: string;
  consents: string;
  grants: string;
  codes: string;
  tokens: string;
}

/** Quote an identifier that has already been checked against IDENTIFIER. */
const quote = (name: string) => `"${name}"`;

/**
 * The migrations, in order. Each runs once, inside the transaction that holds the migration lock,
 * and records its version. Add new ones at the end; never change one that has shipped.
 */
const MIGRATIONS: ReadonlyArray<{ version: number; name: string; up: (t: Tables, index: (name: string) => string) => string[] }> = [
  {
    version: 1,
    name: 'clients, interactions, consents, grants, codes, tokens',
    up: (t, index) => [
      `CREATE TABLE ${t.clients} (
        id text COLLATE "C" PRIMARY KEY,
        name text NOT NULL,
        redirect_uri text NOT NULL,
        secret_hash text COLLATE "C",
        created_at bigint NOT NULL
      )`,
      `CREATE TABLE ${t.interactions} (
        id_hash text COLLATE "C" PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('login', 'consent')),
        request jsonb NOT NULL,
        requested_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        login_after bigint,
        account jsonb
      )`,
      `CREATE INDEX ${index('interactions_expires_at')} ON ${t.interactions} (expires_at)`,
      `CREATE TABLE ${t.consents} (
        account_uuid text COLLATE "C" NOT NULL,
        client_id text COLLATE "C" NOT NULL,
        scope text[] NOT NULL,
        granted_at bigint NOT NULL,
        PRIMARY KEY (account_uuid, client_id)
      )`,
      `CREATE TABLE ${t.grants} (
        id text COLLATE "C" PRIMARY KEY,
        client_id text COLLATE "C" NOT NULL,
        account_uuid text COLLATE "C" NOT NULL,
        account jsonb NOT NULL,
        scope text[] NOT NULL,
        created_at bigint NOT NULL,
        revoked_at bigint
      )`,
      `CREATE INDEX ${index('grants_account_client')} ON ${t.grants} (account_uuid, client_id)`,
      `CREATE INDEX ${index('grants_client')} ON ${t.grants} (client_id)`,
      `CREATE INDEX ${index('grants_revoked_at')} ON ${t.grants} (revoked_at) WHERE revoked_at IS NOT NULL`,
      `CREATE TABLE ${t.codes} (
        hash text COLLATE "C" PRIMARY KEY,
        grant_id text COLLATE "C" NOT NULL REFERENCES ${t.grants} (id) ON DELETE CASCADE,
        client_id text COLLATE "C" NOT NULL,
        redirect_uri text NOT NULL,
        scope text[] NOT NULL,
        code_challenge text,
        code_challenge_method text CHECK (code_challenge_method IN ('S256', 'plain')),
        expires_at bigint NOT NULL,
        used_at bigint
      )`,
      `CREATE INDEX ${index('codes_grant_id')} ON ${t.codes} (grant_id)`,
      `CREATE INDEX ${index('codes_expires_at')} ON ${t.codes} (expires_at)`,
      `CREATE TABLE ${t.tokens} (
        hash text COLLATE "C" PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
        grant_id text COLLATE "C" NOT NULL REFERENCES ${t.grants} (id) ON DELETE CASCADE,
        client_id text COLLATE "C" NOT NULL,
        scope text[] NOT NULL,
        issued_at bigint NOT NULL,
        expires_at bigint,
        pair_hash text COLLATE "C",
        rotated_at bigint,
        revoked_at bigint
      )`,
      `CREATE INDEX ${index('tokens_grant_id')} ON ${t.tokens} (grant_id)`,
      `CREATE INDEX ${index('tokens_expires_at')} ON ${t.tokens} (expires_at) WHERE expires_at IS NOT NULL`,
    ],
  },
  {
    version: 2,
    // Clients' NULL types: the server's defaults, as for every client stored before this migration.
    name: 'refresh token families; client response and grant types',
    up: (t, index) => [
      `ALTER TABLE ${t.tokens} ADD COLUMN family_hash text COLLATE "C"`,
      `CREATE INDEX ${index('tokens_family_hash')} ON ${t.tokens} (family_hash) WHERE family_hash IS NOT NULL`,
      `ALTER TABLE ${t.clients}
        ADD COLUMN response_types text[] CHECK (response_types <@ ARRAY['code', 'token']::text[]),
        ADD COLUMN grant_types text[] CHECK (grant_types <@ ARRAY['authorization_code', 'refresh_token']::text[])`,
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// Rows to records. bigint columns arrive as strings from `pg`: every time goes through `ms()`.

type Row = Record<string, unknown>;

function ms(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new TypeError('PostgresStorage: a stored time is not a safe integer');
  return n;
}
const msOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : ms(value));
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

function toClient(r: Row): ClientRecord {
  const client: ClientRecord = {
    id: r['id'] as string,
    name: r['name'] as string,
    redirectUri: r['redirect_uri'] as string,
    secretHash: (r['secret_hash'] as string | null) ?? null,
    createdAt: ms(r['created_at']),
  };
  // NULL stays absent: the server's defaults.
  if (Array.isArray(r['response_types'])) client.responseTypes = strings(r['response_types']) as ClientRecord['responseTypes'];
  if (Array.isArray(r['grant_types'])) client.grantTypes = strings(r['grant_types']) as ClientRecord['grantTypes'];
  return client;
}

function toInteraction(r: Row): InteractionRecord {
  const record: InteractionRecord = {
    idHash: r['id_hash'] as string,
    kind: r['kind'] as InteractionRecord['kind'],
    request: r['request'] as InteractionRecord['request'],
    requestedAt: ms(r['requested_at']),
    expiresAt: ms(r['expires_at']),
    loginAfter: msOrNull(r['login_after']),
  };
  if (r['account'] !== null && r['account'] !== undefined) record.account = r['account'] as Account;
  return record;
}

const toConsent = (r: Row): ConsentRecord => ({
  accountUuid: r['account_uuid'] as string,
  clientId: r['client_id'] as string,
  scope: strings(r['scope']),
  grantedAt: ms(r['granted_at']),
});

/** A grant from columns named with `prefix` (`g_id`, `g_client_id`, ... in joins). */
const toGrant = (r: Row, prefix = ''): GrantRecord => ({
  id: r[`${prefix}id`] as string,
  clientId: r[`${prefix}client_id`] as string,
  account: r[`${prefix}account`] as GrantRecord['account'],
  scope: strings(r[`${prefix}scope`]),
  createdAt: ms(r[`${prefix}created_at`]),
  revokedAt: msOrNull(r[`${prefix}revoked_at`]),
});

const toCode = (r: Row): CodeRecord => ({
  hash: r['hash'] as string,
  grantId: r['grant_id'] as string,
  clientId: r['client_id'] as string,
  redirectUri: r['redirect_uri'] as string,
  scope: strings(r['scope']),
  codeChallenge: (r['code_challenge'] as string | null) ?? null,
  codeChallengeMethod: (r['code_challenge_method'] as CodeRecord['codeChallengeMethod']) ?? null,
  expiresAt: ms(r['expires_at']),
  usedAt: msOrNull(r['used_at']),
});

const toToken = (r: Row): TokenRecord => {
  const token = toTokenFields(r);
  if (r['family_hash'] != null) token.familyHash = r['family_hash'] as string; // refresh tokens only
  return token;
};
const toTokenFields = (r: Row): TokenRecord => ({
  hash: r['hash'] as string,
  kind: r['kind'] as TokenRecord['kind'],
  grantId: r['grant_id'] as string,
  clientId: r['client_id'] as string,
  scope: strings(r['scope']),
  issuedAt: ms(r['issued_at']),
  expiresAt: msOrNull(r['expires_at']),
  pairHash: (r['pair_hash'] as string | null) ?? null,
  rotatedAt: msOrNull(r['rotated_at']),
  revokedAt: msOrNull(r['revoked_at']),
});

const GRANT_COLUMNS = (alias: string) =>
  `${alias}.id AS g_id, ${alias}.client_id AS g_client_id, ${alias}.account AS g_account, ${alias}.scope AS g_scope, ` +
  `${alias}.created_at AS g_created_at, ${alias}.revoked_at AS g_revoked_at`;

const TOKEN_COLUMNS = 'hash, kind, grant_id, client_id, scope, issued_at, expires_at, pair_hash, rotated_at, revoked_at, family_hash';

// ---------------------------------------------------------------------------------------------
// Errors.

const RETRYABLE = new Set(['40001', '40P01']); // serialization_failure, deadlock_detected

const sqlStateOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
};

function storageError(operation: string, error: unknown, retried: boolean): PostgresStorageError {
  if (error instanceof PostgresStorageError) return error;
  const state = sqlStateOf(error);
  const at = `authgate PostgresStorage.${operation}`;
  if (state === '23505' || state === '23503') {
    const what = state === '23505' ? 'a row with the same key already exists' : 'a row it refers to does not exist';
    return new PostgresStorageError('duplicate', operation, state, `${at}: ${what} (SQLSTATE ${state}).`, { cause: error });
  }
  if (state && RETRYABLE.has(state)) {
    return new PostgresStorageError('serialization', operation, state,
      `${at}: the database reported a conflict with a concurrent transaction (SQLSTATE ${state})${retried ? ', again after one retry' : ''}.`, { cause: error });
  }
  const hint = state === '42P01' ? ' A table is missing: call migrate() first.' : '';
  return new PostgresStorageError('database', operation, state, `${at} failed${state ? ` (SQLSTATE ${state})` : ''}.${hint}`, { cause: error });
}

/**
 * A 32-bit key for the migration lock, from the schema name (FNV-1a): migrations of every table
 * prefix in one schema take turns, so none races another's CREATE SCHEMA.
 */
function lockKey(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}
/** The first half of the two-key advisory lock: "auth" in ASCII. */
const LOCK_NAMESPACE = 0x61757468;

/**
 * `Storage` on PostgreSQL (`pg`). Several authgate processes may share one database: every
 * single-use step (redeeming a code, rotating a refresh token, taking an interaction) is one
 * conditional statement inside one transaction, so exactly one of any number of concurrent
 * callers succeeds, whichever process they run in. Times always come from the arguments (the
 * server's injected clock), never from the database's `now()`. Secrets arrive hashed from the
 * core and are stored as such.
 *
 * Call `migrate()` once at startup (safe when several instances start at once) and `prune()`
 * from time to time. The storage never ends the pool: the host owns it.
 */
export class PostgresStorage implements Storage {
  /** The qualified, quoted table names. */
  private readonly t: Tables;
  private readonly schema: string;
  private readonly prefix: string;

  /**
   * @param pool a `pg.Pool` (or anything with its `query` and `connect`).
   * @throws TypeError when `schema` or `tablePrefix` is not a plain lower-case SQL identifier.
   */
  constructor(private readonly pool: PgPool, options: PostgresStorageOptions = {}) {
    if (!pool || typeof pool.query !== 'function' || typeof pool.connect !== 'function') {
      throw new TypeError('PostgresStorage needs a pg.Pool (an object with query() and connect())');
    }
    const schema = options.schema ?? 'public';
    const prefix = options.tablePrefix ?? 'authgate_';
    if (!IDENTIFIER.test(schema) || schema.length > 63) {
      throw new TypeError('PostgresStorage option "schema" must be a lower-case SQL identifier ([a-z_][a-z0-9_]*, at most 63 characters)');
    }
    if (prefix !== '' && (!IDENTIFIER.test(prefix) || prefix.length > 30)) {
      throw new TypeError('PostgresStorage option "tablePrefix" must be empty or a lower-case SQL identifier ([a-z_][a-z0-9_]*, at most 30 characters)');
    }
    this.schema = schema;
    this.prefix = prefix;
    const table = (name: string) => `${quote(schema)}.${quote(prefix + name)}`;
    this.t = {
      migrations: table('migrations'),
      clients: table('clients'),
      interactions: table('interactions'),
      consents: table('consents'),
      grants: table('grants'),
      codes: table('codes'),
      tokens: table('tokens'),
    };
  }

  // -------------------------------------------------------------------------------------------
  // Schema.

  /**
   * Create or upgrade the tables to `SCHEMA_VERSION`. Idempotent, and safe when several
   * instances call it at once: one transaction holds a transaction-level advisory lock while it
   * reads the recorded version and applies what is missing, so the others wait and then find
   * nothing to do. A database already at a newer version (a newer authgate rolled out first) is
   * left alone.
   */
  async migrate(): Promise<MigrateResult> {
    return this.transaction('migrate', async (db) => {
      await db.query('SELECT pg_advisory_xact_lock($1::int, $2::int)', [LOCK_NAMESPACE, lockKey(this.schema)]);
      const exists = await db.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [this.schema]);
      if (exists.rowCount === 0) await db.query(`CREATE SCHEMA ${quote(this.schema)}`);
      await db.query(`CREATE TABLE IF NOT EXISTS ${this.t.migrations} (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at bigint NOT NULL
      )`);
      const current = await db.query(`SELECT coalesce(max(version), 0) AS version FROM ${this.t.migrations}`);
      const from = Number(current.rows[0]?.version ?? 0);
      let to = from;
      for (const migration of MIGRATIONS) {
        if (migration.version <= from) continue;
        for (const statement of migration.up(this.t, (name) => quote(this.prefix + name))) await db.query(statement);
        // Metadata only: when this database was upgraded, by the machine's clock.
        await db.query(`INSERT INTO ${this.t.migrations} (version, name, applied_at) VALUES ($1, $2, $3)`,
          [migration.version, migration.name, Date.now()]);
        to = migration.version;
      }
      return { from, to };
    });
  }

  /**
   * Delete what can never be used again, as of `now` (default: the system clock):
   * - interactions and codes whose `expiresAt` has passed (a used code is kept until then, so
   *   its replay still revokes the family);
   * - access tokens that expired or were revoked (a rotation revokes the pair's access token);
   * - rotated refresh tokens: a replay of one is still recognised by its family through the
   *   family's newest refresh token, which is kept while its grant lives, until it has expired
   *   and so has the access token issued with it. A family keeps one refresh row, however long
   *   its rotation chain;
   * - revoked grants, with everything left of their family (all of it is dead already);
   * - grants with no code and no token left.
   * Consents and clients are never pruned. Safe to run while servers use the database.
   */
  async prune(now: number = Date.now()): Promise<PruneResult> {
    const at = ms(now);
    return this.retrying('prune', async () => {
      const count = async (text: string) => (await this.pool.query(text, [at])).rowCount ?? 0;
      const interactions = await count(`DELETE FROM ${this.t.interactions} WHERE expires_at <= $1`);
      const codes = await count(`DELETE FROM ${this.t.codes} WHERE expires_at <= $1`);
      const access = await count(`DELETE FROM ${this.t.tokens}
        WHERE kind = 'access' AND (revoked_at IS NOT NULL OR (expires_at IS NOT NULL AND expires_at <= $1))`);
      // A family's newest refresh token stays while it, or the access token issued with it, can be used.
      const refresh = await count(`DELETE FROM ${this.t.tokens} AS r
        WHERE r.kind = 'refresh' AND (r.rotated_at IS NOT NULL OR r.revoked_at IS NOT NULL
          OR (r.expires_at IS NOT NULL AND r.expires_at <= $1
              AND NOT EXISTS (SELECT 1 FROM ${this.t.tokens} AS a WHERE a.hash = r.pair_hash AND a.revoked_at IS NULL
                              AND (a.expires_at IS NULL OR a.expires_at > $1))))`);
      const tokens = access + refresh;
      const grants = await count(`DELETE FROM ${this.t.grants} AS g
        WHERE (g.revoked_at IS NOT NULL AND g.revoked_at <= $1)
           OR (g.created_at <= $1
               AND NOT EXISTS (SELECT 1 FROM ${this.t.codes} AS c WHERE c.grant_id = g.id)
               AND NOT EXISTS (SELECT 1 FROM ${this.t.tokens} AS k WHERE k.grant_id = g.id))`);
      return { interactions, codes, tokens, grants };
    });
  }

  // -------------------------------------------------------------------------------------------
  // Clients.

  async saveClient(client: ClientRecord): Promise<void> {
    await this.query('saveClient', `INSERT INTO ${this.t.clients} (id, name, redirect_uri, secret_hash, created_at, response_types, grant_types)
      VALUES ($1, $2, $3, $4, $5, $6, $7)
      ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, redirect_uri = EXCLUDED.redirect_uri,
        secret_hash = EXCLUDED.secret_hash, created_at = EXCLUDED.created_at,
        response_types = EXCLUDED.response_types, grant_types = EXCLUDED.grant_types`,
    [client.id, client.name, client.redirectUri, client.secretHash, ms(client.createdAt), client.responseTypes ?? null, client.grantTypes ?? null]);
  }

  async findClient(clientId: string): Promise<ClientRecord | null> {
    const { rows } = await this.query('findClient', `SELECT * FROM ${this.t.clients} WHERE id = $1`, [clientId]);
    return rows[0] ? toClient(rows[0]) : null;
  }

  // -------------------------------------------------------------------------------------------
  // Interactions.

  async saveInteraction(interaction: InteractionRecord): Promise<void> {
    await this.query('saveInteraction', `INSERT INTO ${this.t.interactions}
      (id_hash, kind, request, requested_at, expires_at, login_after, account)
      VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7::jsonb)
      ON CONFLICT (id_hash) DO UPDATE SET kind = EXCLUDED.kind, request = EXCLUDED.request,
        requested_at = EXCLUDED.requested_at, expires_at = EXCLUDED.expires_at,
        login_after = EXCLUDED.login_after, account = EXCLUDED.account`,
    [
      interaction.idHash, interaction.kind, JSON.stringify(interaction.request), ms(interaction.requestedAt),
      ms(interaction.expiresAt), msOrNull(interaction.loginAfter), interaction.account ? JSON.stringify(interaction.account) : null,
    ]);
  }

  async findInteraction(idHash: string): Promise<InteractionRecord | null> {
    const { rows } = await this.query('findInteraction', `SELECT * FROM ${this.t.interactions} WHERE id_hash = $1`, [idHash]);
    return rows[0] ? toInteraction(rows[0]) : null;
  }

  /** One `DELETE ... RETURNING`: of any number of concurrent callers, one gets the row. */
  async takeInteraction(idHash: string, now: number): Promise<InteractionRecord | null> {
    const { rows } = await this.query('takeInteraction', `DELETE FROM ${this.t.interactions} WHERE id_hash = $1 RETURNING *`, [idHash]);
    const record = rows[0] ? toInteraction(rows[0]) : null;
    return record && now < record.expiresAt ? record : null;
  }

  // -------------------------------------------------------------------------------------------
  // Consents.

  /** One `INSERT ... ON CONFLICT DO UPDATE` that merges the scope: concurrent approvals lose nothing. */
  async saveConsent(consent: ConsentRecord): Promise<void> {
    await this.query('saveConsent', `INSERT INTO ${this.t.consents} AS c (account_uuid, client_id, scope, granted_at)
      VALUES ($1, $2, $3::text[], $4)
      ON CONFLICT (account_uuid, client_id) DO UPDATE SET
        scope = ARRAY(SELECT u.s FROM unnest(c.scope || EXCLUDED.scope) WITH ORDINALITY AS u(s, i) GROUP BY u.s ORDER BY min(u.i)),
        granted_at = EXCLUDED.granted_at`,
    [consent.accountUuid, consent.clientId, [...new Set(consent.scope)], ms(consent.grantedAt)]);
  }

  async findConsent(accountUuid: string, clientId: string): Promise<ConsentRecord | null> {
    const { rows } = await this.query('findConsent', `SELECT * FROM ${this.t.consents} WHERE account_uuid = $1 AND client_id = $2`, [accountUuid, clientId]);
    return rows[0] ? toConsent(rows[0]) : null;
  }

  async listConsents(accountUuid: string): Promise<ConsentRecord[]> {
    const { rows } = await this.query('listConsents', `SELECT * FROM ${this.t.consents} WHERE account_uuid = $1 ORDER BY granted_at DESC, client_id`, [accountUuid]);
    return rows.map(toConsent);
  }

  // -------------------------------------------------------------------------------------------
  // Grants, codes, tokens.

  /** The grant and its first code or tokens in one transaction. */
  async createGrant(grant: GrantRecord, issued: { code?: CodeRecord; tokens?: TokenRecord[] }): Promise<void> {
    await this.transaction('createGrant', async (db) => {
      await db.query(`INSERT INTO ${this.t.grants} (id, client_id, account_uuid, account, scope, created_at, revoked_at)
        VALUES ($1, $2, $3, $4::jsonb, $5::text[], $6, $7)`,
      [grant.id, grant.clientId, grant.account.uuid, JSON.stringify(grant.account), grant.scope, ms(grant.createdAt), msOrNull(grant.revokedAt)]);
      const code = issued.code;
      if (code) {
        await db.query(`INSERT INTO ${this.t.codes}
          (hash, grant_id, client_id, redirect_uri, scope, code_challenge, code_challenge_method, expires_at, used_at)
          VALUES ($1, $2, $3, $4, $5::text[], $6, $7, $8, $9)`,
        [code.hash, code.grantId, code.clientId, code.redirectUri, code.scope, code.codeChallenge, code.codeChallengeMethod, ms(code.expiresAt), msOrNull(code.usedAt)]);
      }
      await this.insertTokens(db, issued.tokens ?? []);
    });
  }

  async findCode(hash: string): Promise<CodeRecord | null> {
    const { rows } = await this.query('findCode', `SELECT * FROM ${this.t.codes} WHERE hash = $1`, [hash]);
    return rows[0] ? toCode(rows[0]) : null;
  }

  /**
   * One transaction: a conditional `UPDATE ... WHERE used_at IS NULL AND expires_at > $now AND
   * grant not revoked RETURNING` marks the code used (a concurrent caller blocks on the row and
   * then sees it used), and the tokens are inserted in the same transaction. No row: nothing
   * changed, and a `SELECT` says why.
   */
  async redeemCode(hash: string, now: number, tokens: TokenRecord[]): Promise<SingleUseOutcome> {
    const at = ms(now);
    return this.transaction('redeemCode', async (db) => {
      const { rows } = await db.query(`UPDATE ${this.t.codes} AS c SET used_at = $2
        FROM ${this.t.grants} AS g
        WHERE c.hash = $1 AND c.used_at IS NULL AND c.expires_at > $2 AND g.id = c.grant_id AND g.revoked_at IS NULL
        RETURNING ${GRANT_COLUMNS('g')}`, [hash, at]);
      if (rows[0]) {
        await this.insertTokens(db, tokens);
        return { ok: true, grant: toGrant(rows[0], 'g_') };
      }
      const why = await db.query(`SELECT c.grant_id, c.used_at, c.expires_at, g.revoked_at AS grant_revoked_at, g.id IS NULL AS grant_missing
        FROM ${this.t.codes} AS c LEFT JOIN ${this.t.grants} AS g ON g.id = c.grant_id WHERE c.hash = $1`, [hash]);
      const code = why.rows[0];
      if (!code) return { ok: false, reason: 'missing' };
      if (code.used_at !== null) return { ok: false, reason: 'used', grantId: code.grant_id as string, usedAt: ms(code.used_at) };
      if (at >= ms(code.expires_at)) return { ok: false, reason: 'expired' };
      return { ok: false, reason: 'revoked' };
    });
  }

  async findToken(hash: string): Promise<{ token: TokenRecord; grant: GrantRecord } | null> {
    const { rows } = await this.query('findToken', `SELECT t.*, ${GRANT_COLUMNS('g')}
      FROM ${this.t.tokens} AS t JOIN ${this.t.grants} AS g ON g.id = t.grant_id WHERE t.hash = $1`, [hash]);
    return rows[0] ? { token: toToken(rows[0]), grant: toGrant(rows[0], 'g_') } : null;
  }

  /**
   * One transaction: a conditional `UPDATE ... WHERE rotated_at IS NULL AND revoked_at IS NULL
   * AND not expired AND grant not revoked RETURNING` marks the refresh token rotated, the paired
   * access token is revoked, and the new pair inserted; all of it commits together or not at
   * all. No row: nothing changed, and a `SELECT` says why.
   */
  async rotateRefreshToken(hash: string, now: number, tokens: TokenRecord[]): Promise<SingleUseOutcome> {
    const at = ms(now);
    return this.transaction('rotateRefreshToken', async (db) => {
      const { rows } = await db.query(`UPDATE ${this.t.tokens} AS t SET rotated_at = $2
        FROM ${this.t.grants} AS g
        WHERE t.hash = $1 AND t.kind = 'refresh' AND t.rotated_at IS NULL AND t.revoked_at IS NULL
          AND (t.expires_at IS NULL OR t.expires_at > $2)
          AND g.id = t.grant_id AND g.revoked_at IS NULL
        RETURNING t.pair_hash, ${GRANT_COLUMNS('g')}`, [hash, at]);
      const rotated = rows[0];
      if (rotated) {
        if (rotated.pair_hash !== null) {
          await db.query(`UPDATE ${this.t.tokens} SET revoked_at = $2 WHERE hash = $1 AND revoked_at IS NULL`, [rotated.pair_hash, at]);
        }
        await this.insertTokens(db, tokens);
        return { ok: true, grant: toGrant(rotated, 'g_') };
      }
      const why = await db.query(`SELECT t.kind, t.grant_id, t.rotated_at, t.revoked_at, t.expires_at,
          g.revoked_at AS grant_revoked_at, g.id IS NULL AS grant_missing
        FROM ${this.t.tokens} AS t LEFT JOIN ${this.t.grants} AS g ON g.id = t.grant_id WHERE t.hash = $1`, [hash]);
      const token = why.rows[0];
      if (!token || token.kind !== 'refresh') return { ok: false, reason: 'missing' };
      if (token.rotated_at !== null) return { ok: false, reason: 'used', grantId: token.grant_id as string, usedAt: ms(token.rotated_at) };
      if (token.revoked_at !== null || token.grant_missing || token.grant_revoked_at !== null) return { ok: false, reason: 'revoked' };
      return { ok: false, reason: 'expired' };
    });
  }

  /** Any stored refresh token of the family: while the family lives, its newest one is kept (see `prune`). */
  async findRefreshFamily(familyHash: string): Promise<RefreshFamily | null> {
    const { rows } = await this.query('findRefreshFamily', `SELECT grant_id, client_id FROM ${this.t.tokens}
      WHERE family_hash = $1 AND kind = 'refresh' LIMIT 1`, [familyHash]);
    return rows[0] ? { grantId: rows[0].grant_id as string, clientId: rows[0].client_id as string } : null;
  }

  // -------------------------------------------------------------------------------------------
  // Revocation: one flag on the grant, which every lookup joins.

  async revokeGrant(grantId: string, now: number): Promise<void> {
    await this.query('revokeGrant', `UPDATE ${this.t.grants} SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, [grantId, ms(now)]);
  }

  /** One statement: the consent is deleted and every grant of the pair revoked together. */
  async revokeAccess(accountUuid: string, clientId: string, now: number): Promise<void> {
    await this.query('revokeAccess', `WITH deleted AS (
        DELETE FROM ${this.t.consents} WHERE account_uuid = $1 AND client_id = $2
      )
      UPDATE ${this.t.grants} SET revoked_at = $3 WHERE account_uuid = $1 AND client_id = $2 AND revoked_at IS NULL`,
    [accountUuid, clientId, ms(now)]);
  }

  async revokeClientGrants(clientId: string, now: number): Promise<void> {
    await this.query('revokeClientGrants', `UPDATE ${this.t.grants} SET revoked_at = $2 WHERE client_id = $1 AND revoked_at IS NULL`, [clientId, ms(now)]);
  }

  // -------------------------------------------------------------------------------------------
  // Plumbing.

  private async insertTokens(db: PgPoolClient, tokens: TokenRecord[]): Promise<void> {
    if (tokens.length === 0) return;
    const values: unknown[] = [];
    const rows = tokens.map((token) => {
      const base = values.length;
      values.push(token.hash, token.kind, token.grantId, token.clientId, token.scope, ms(token.issuedAt),
        msOrNull(token.expiresAt), token.pairHash, msOrNull(token.rotatedAt), msOrNull(token.revokedAt), token.familyHash ?? null);
      return `(${Array.from({ length: 11 }, (_, i) => `$${base + i + 1}${i === 4 ? '::text[]' : ''}`).join(', ')})`;
    });
    await db.query(`INSERT INTO ${this.t.tokens} (${TOKEN_COLUMNS}) VALUES ${rows.join(', ')}`, values);
  }

  /** One statement on the pool, retried once on a serialization failure or deadlock. */
  private query(operation: string, text: string, values: unknown[]): Promise<PgQueryResult> {
    return this.retrying(operation, () => this.pool.query(text, values));
  }

  private async retrying<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (!RETRYABLE.has(sqlStateOf(error) ?? '')) throw storageError(operation, error, false);
    }
    try {
      return await work();
    } catch (error) {
      throw storageError(operation, error, true);
    }
  }

  /**
   * Run `work` in one READ COMMITTED transaction on one connection: COMMIT when it returns,
   * ROLLBACK when it throws. A serialization failure or deadlock is retried once from the start
   * (nothing of the first attempt survived the rollback).
   */
  private async transaction<T>(operation: string, work: (db: PgPoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let db: PgPoolClient;
      try {
        db = await this.pool.connect();
      } catch (error) {
        throw storageError(operation, error, false);
      }
      let broken = false;
      try {
        await db.query('BEGIN ISOLATION LEVEL READ COMMITTED');
        const result = await work(db);
        await db.query('COMMIT');
        return result;
      } catch (error) {
        try {
          await db.query('ROLLBACK');
        } catch {
          broken = true; // the connection is gone or unusable: do not hand it back to the pool
        }
        if (attempt === 1 && RETRYABLE.has(sqlStateOf(error) ?? '')) continue;
        throw storageError(operation, error, attempt > 1);
      } finally {
        db.release(broken);
      }
    }
  }
}

/**
 * Open a pool on `connectionString`, build a `PostgresStorage` on it and migrate the schema: the
 * one call a small app (or the demo) needs. `close()` ends the pool. Needs `pg` installed.
 *
 * @example
 * const { storage, close } = await openPostgresStorage(process.env.DATABASE_URL!);
 */
export async function openPostgresStorage(
  connectionString: string,
  options: PostgresStorageOptions & { max?: number } = {},
): Promise<{ storage: PostgresStorage; pool: PgPool; close(): Promise<void> }> {
  let pg: typeof import('pg').default;
  try {
    pg = (await import('pg')).default;
  } catch (error) {
    throw new Error('openPostgresStorage needs the pg package: npm install pg', { cause: error });
  }
  const { max, ...storageOptions } = options;
  const pool = new pg.Pool({ connectionString, ...(max !== undefined && { max }) });
  // An idle connection that dies (database restart) must not crash the process.
  pool.on('error', () => {});
  try {
    const storage = new PostgresStorage(pool, storageOptions);
    await storage.migrate();
    return { storage, pool, close: () => pool.end() };
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
}
