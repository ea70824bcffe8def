/**
 * The tables: their names (schema and prefix from the options) and the migrations that create
 * and upgrade them. `migrate.ts` applies the migrations.
 */

/** A plain lower-case SQL identifier: the only schema names and table prefixes accepted, so names can be quoted safely. */
export const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/**
 * The current schema version this code knows: the version of the last of `MIGRATIONS`.
 * @group Storage
 */
export const SCHEMA_VERSION = 15;

/** The qualified, quoted name of every table. */
export interface Tables {
  migrations: string;
  clients: string;
  interactions: string;
  consents: string;
  grants: string;
  codes: string;
  tokens: string;
  deviceAuthorizations: string;
  dpopProofs: string;
}

/** Quote an identifier that has already been checked against IDENTIFIER. */
export const quote = (name: string) => `"${name}"`;

/** The tables of `schema` whose names start with `prefix` (both checked against IDENTIFIER). */
export function tableNames(schema: string, prefix: string): Tables {
  const table = (name: string) => `${quote(schema)}.${quote(prefix + name)}`;
  return {
    migrations: table('migrations'),
    clients: table('clients'),
    interactions: table('interactions'),
    consents: table('consents'),
    grants: table('grants'),
    codes: table('codes'),
    tokens: table('tokens'),
    deviceAuthorizations: table('device_authorizations'),
    dpopProofs: table('dpop_proofs'),
  };
}

/**
 * The qualified, quoted name of every function the migrations create: a step that must run
 * several statements in order, each seeing what committed before it, in one round trip.
 */
export interface Routines {
  /** Migration 14: a refresh token's rotation, after its parent's row lock (tokens.ts). */
  rotateRefreshToken: string;
}

/** The functions of `schema` whose names start with `prefix` (both checked against IDENTIFIER). */
export function routineNames(schema: string, prefix: string): Routines {
  return { rotateRefreshToken: `${quote(schema)}.${quote(`${prefix}rotate_refresh_token`)}` };
}

/** One step of the schema, applied once to a database whose recorded version is lower than `version`. */
export interface Migration {
  version: number;
  name: string;
  /** The statements, given the table names, a function that names an index, and the function names. */
  up: (t: Tables, index: (name: string) => string, r: Routines) => string[];
}

/**
 * The migrations, in order. Each runs once, inside the transaction that holds the migration lock,
 * and records its version. Add new ones at the end; never change one that has shipped.
 */
export const MIGRATIONS: readonly Migration[] = [
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
  {
    version: 3,
    // NULL: a code or token issued without `resource`, as every one stored before this migration.
    name: 'resource indicators: the resources of a code, the audience of a token (RFC 8707)',
    up: (t) => [`ALTER TABLE ${t.codes} ADD COLUMN resources text[]`, `ALTER TABLE ${t.tokens} ADD COLUMN audience text[]`],
  },
  {
    version: 4,
    // NULL registration: a client the platform registered, as is every client stored before this
    // migration. client_uri and logo_uri are what a client stated about itself (RFC 7591 §2).
    name: 'clients nobody reviewed: registration, client_uri, logo_uri',
    up: (t) => [
      `ALTER TABLE ${t.clients}
        ADD COLUMN registration text CHECK (registration IN ('dynamic', 'metadata-document')),
        ADD COLUMN client_uri text,
        ADD COLUMN logo_uri text`,
    ],
  },
  {
    version: 5,
    // A personal access token (docs/reference.md#personal-access-tokens) is a grant of no client
    // (client_id '') with a name, and one token of kind 'personal'. NULL name: an OAuth grant, as
    // is every grant stored before this migration. The kind check is replaced (version 1 named
    // it after the table, as PostgreSQL names a column's CHECK).
    name: 'personal access tokens: grant name and last use, token kind personal',
    up: (t, index) => [
      `ALTER TABLE ${t.grants} ADD COLUMN name text, ADD COLUMN last_used_at bigint`,
      `ALTER TABLE ${t.tokens}
        DROP CONSTRAINT IF EXISTS ${index('tokens_kind_check')},
        ADD CONSTRAINT ${index('tokens_kind_check')} CHECK (kind IN ('access', 'refresh', 'personal'))`,
    ],
  },
  {
    version: 6,
    // RFC 8628. The clients' grant_types check of migration 2 is replaced by one that also allows
    // the device grant: its name is PostgreSQL's default for that column check.
    name: 'device authorization grant (RFC 8628): device authorizations; the device grant type for clients',
    up: (t, index) => [
      `CREATE TABLE ${t.deviceAuthorizations} (
        hash text COLLATE "C" PRIMARY KEY,
        user_code_hash text COLLATE "C" NOT NULL,
        client_id text COLLATE "C" NOT NULL,
        scope text[] NOT NULL,
        resources text[],
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        poll_interval integer NOT NULL,
        last_polled_at bigint,
        status text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'redeemed')),
        account jsonb,
        decided_at bigint
      )`,
      `CREATE UNIQUE INDEX ${index('device_authorizations_user_code_hash')} ON ${t.deviceAuthorizations} (user_code_hash)`,
      `CREATE INDEX ${index('device_authorizations_expires_at')} ON ${t.deviceAuthorizations} (expires_at)`,
      `ALTER TABLE ${t.clients}
        DROP CONSTRAINT IF EXISTS ${index('clients_grant_types_check')},
        ADD CONSTRAINT ${index('clients_grant_types_check')}
          CHECK (grant_types <@ ARRAY['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']::text[])`,
    ],
  },
  {
    version: 7,
    // NULL owner and metadata: a client without them, as is every client stored before this migration.
    name: 'client management: owner and metadata of a client',
    up: (t, index) => [
      `ALTER TABLE ${t.clients} ADD COLUMN owner text COLLATE "C", ADD COLUMN metadata jsonb`,
      `CREATE INDEX ${index('clients_owner')} ON ${t.clients} (owner) WHERE owner IS NOT NULL`,
    ],
  },
  {
    version: 8,
    // The scope a consent approved for each resource (RFC 8707), and for requests without
    // resource: a JSON array of { resource: string | null, scope: string[] }
    // (docs/reference.md#stored-consents). A consent stored before this migration was shown for
    // resources nobody recorded: '[]' makes it cover no silent request until the user approves
    // again. The same default holds for a row an older server inserts after the upgrade.
    name: 'consents: the scope approved for each resource (RFC 8707)',
    up: (t) => [
      `ALTER TABLE ${t.consents}
        ADD COLUMN approvals jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(approvals) = 'array')`,
    ],
  },
  {
    version: 9,
    // Declared variants instead of sentinels (docs/reference.md#storage-groups). A grant has a
    // kind: 'oauth' (its client) or 'personal' (a personal access token: no client, a name),
    // so client_id is NULL where there is no client, never ''; a personal token's client_id
    // too. An interaction has a purpose: 'authorization' (its request) or 'device' (a device
    // verification: what it decides, in `device`, and no request). The rows stored before it
    // are converted: a grant of client '' is a personal one, a personal token loses its '', and
    // an interaction whose request carried `device` becomes a device step (the sign-in step
    // returns to the request's redirectUri; the confirmation keeps the device authorization's
    // hash, the client, the scope, the resources and the browser binding), so a device
    // verification under way keeps resuming. The checks tie each column to its variant. An
    // instance of an earlier version still running against it writes its OAuth grants, tokens
    // and authorization steps as before, but its personal tokens (client_id '') are refused and
    // its device steps (a request with `device`) read as broken authorization steps (an error
    // page when resumed): upgrade every instance right after migrating.
    name: 'declared variants: grant kinds (no client_id on personal grants and tokens), interaction purposes',
    up: (t, index) => [
      `ALTER TABLE ${t.grants} ADD COLUMN kind text NOT NULL DEFAULT 'oauth', ALTER COLUMN client_id DROP NOT NULL`,
      `UPDATE ${t.grants} SET kind = 'personal', client_id = NULL, name = coalesce(name, '') WHERE client_id = ''`,
      `UPDATE ${t.grants} SET name = NULL, last_used_at = NULL WHERE kind = 'oauth' AND (name IS NOT NULL OR last_used_at IS NOT NULL)`,
      `ALTER TABLE ${t.grants}
        ADD CONSTRAINT ${index('grants_kind_check')} CHECK (kind IN ('oauth', 'personal')),
        ADD CONSTRAINT ${index('grants_kind_client_check')} CHECK ((kind = 'oauth') = (client_id IS NOT NULL) AND client_id <> ''),
        ADD CONSTRAINT ${index('grants_kind_name_check')}
          CHECK (CASE kind WHEN 'personal' THEN name IS NOT NULL ELSE name IS NULL AND last_used_at IS NULL END)`,
      `CREATE INDEX ${index('grants_personal')} ON ${t.grants} (account_uuid) WHERE kind = 'personal'`,
      `ALTER TABLE ${t.tokens} ALTER COLUMN client_id DROP NOT NULL`,
      `UPDATE ${t.tokens} SET client_id = NULL WHERE kind = 'personal'`,
      `ALTER TABLE ${t.tokens}
        ADD CONSTRAINT ${index('tokens_kind_client_check')} CHECK ((kind = 'personal') = (client_id IS NULL) AND client_id <> '')`,
      `ALTER TABLE ${t.interactions}
        ADD COLUMN purpose text NOT NULL DEFAULT 'authorization',
        ADD COLUMN device jsonb,
        ALTER COLUMN request DROP NOT NULL`,
      `UPDATE ${t.interactions} SET purpose = 'device', request = NULL,
        device = CASE kind
          WHEN 'login' THEN jsonb_build_object('returnTo', request->'redirectUri')
          ELSE jsonb_strip_nulls(jsonb_build_object(
            'codeHash', request->'device'->'codeHash', 'clientId', request->'clientId', 'scope', request->'scope',
            'resources', request->'resources', 'browserHash', request->'browserHash', 'returnTo', request->'redirectUri'))
        END
      WHERE request ? 'device'`,
      `ALTER TABLE ${t.interactions}
        ADD CONSTRAINT ${index('interactions_purpose_check')} CHECK (purpose IN ('authorization', 'device')),
        ADD CONSTRAINT ${index('interactions_purpose_fields_check')}
          CHECK ((purpose = 'authorization') = (request IS NOT NULL) AND (purpose = 'device') = (device IS NOT NULL))`,
    ],
  },
  {
    version: 10,
    // The DPoP proof group (RFC 9449 §11.1): one row per proof seen, keyed by the core's hash of
    // the key's thumbprint and the proof's jti, kept until the proof would be refused anyway.
    // A table of its own: nothing else reads it, and prune empties it by expiry.
    name: 'dpop_proofs: DPoP proofs seen, for the replay check across instances',
    up: (t, index) => [
      `CREATE TABLE ${t.dpopProofs} (
        key text COLLATE "C" PRIMARY KEY,
        expires_at bigint NOT NULL
      )`,
      `CREATE INDEX ${index('dpop_proofs_expires')} ON ${t.dpopProofs} (expires_at)`,
    ],
  },
  {
    version: 11,
    // OpenID Connect: each record's section as one jsonb column, NULL for every record without
    // one (all those stored before, and every request without `openid`). An interaction's request
    // is jsonb already and carries its section as it is.
    name: 'openid: the OpenID Connect sections of clients, grants and codes',
    up: (t) => [
      `ALTER TABLE ${t.clients} ADD COLUMN openid jsonb`,
      `ALTER TABLE ${t.grants} ADD COLUMN openid jsonb`,
      `ALTER TABLE ${t.codes} ADD COLUMN openid jsonb`,
    ],
  },
  {
    version: 12,
    // DPoP (RFC 9449): the key thumbprint a token (§6) or a code (`dpop_jkt`, §10) is bound to,
    // NULL for a bearer token and an unbound code; a client that uses DPoP-bound tokens only (§5.2).
    name: 'dpop bindings: the key of a bound token or code, and clients that require DPoP',
    up: (t) => [
      `ALTER TABLE ${t.tokens} ADD COLUMN dpop_jkt text COLLATE "C"`,
      `ALTER TABLE ${t.codes} ADD COLUMN dpop_jkt text COLLATE "C"`,
      `ALTER TABLE ${t.clients} ADD COLUMN dpop_bound_access_tokens boolean NOT NULL DEFAULT false`,
    ],
  },
  {
    version: 13,
    // Refresh retries (docs/reference.md#refresh-token-rotation-and-families): each refresh token
    // minted by a refresh names the token presented for it (parent_hash; NULL for the first of a
    // family, and for every token stored before this migration), and a rotated token records when
    // one of its children was first rotated (child_rotated_at), after which it cannot be retried.
    // The index finds a parent's children (siblings) when one of them is rotated.
    name: 'tokens: parent_hash and child_rotated_at, for refresh retries',
    up: (t, index) => [
      `ALTER TABLE ${t.tokens} ADD COLUMN parent_hash text COLLATE "C", ADD COLUMN child_rotated_at bigint`,
      `CREATE INDEX ${index('tokens_parent_hash')} ON ${t.tokens} (parent_hash) WHERE parent_hash IS NOT NULL`,
    ],
  },
  {
    version: 14,
    // A refresh token's rotation in one round trip instead of a transaction's six. Its steps must
    // run in order, each with a snapshot taken after the one before: the parent's row lock first
    // (which orders it with a retry of the parent, whose new sibling must then be seen and
    // revoked), then the conditional UPDATE that rotates it, then its parent's and siblings'
    // rows. One SQL statement keeps the snapshot it took before it waited for the lock, and would
    // miss a sibling committed meanwhile; a VOLATILE function's statements each take a new one.
    // Its answer: the grant as jsonb (the rotation happened), or NULL (nothing changed). The new
    // pair is inserted by the statement that calls it (tokens.ts). A later change of the tokens
    // table that this function must follow replaces it in a migration of its own.
    name: 'rotate_refresh_token: a refresh token rotated in one round trip',
    up: (t, _index, r) => [
      `CREATE FUNCTION ${r.rotateRefreshToken}(p_hash text, p_at bigint) RETURNS jsonb
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        rotated record;
      BEGIN
        PERFORM 1 FROM ${t.tokens} AS t JOIN ${t.tokens} AS p ON p.hash = t.parent_hash WHERE t.hash = p_hash FOR UPDATE OF p;
        UPDATE ${t.tokens} AS t SET rotated_at = p_at
        FROM ${t.grants} AS g
        WHERE t.hash = p_hash AND t.kind = 'refresh' AND t.rotated_at IS NULL AND t.revoked_at IS NULL
          AND (t.expires_at IS NULL OR t.expires_at > p_at)
          AND g.id = t.grant_id AND g.revoked_at IS NULL
        RETURNING t.pair_hash, t.parent_hash, to_jsonb(g) AS grant_row INTO rotated;
        IF NOT FOUND THEN
          RETURN NULL;
        END IF;
        IF rotated.parent_hash IS NOT NULL THEN
          WITH parent AS (
            UPDATE ${t.tokens} SET child_rotated_at = p_at WHERE hash = rotated.parent_hash AND child_rotated_at IS NULL
          ), siblings AS (
            UPDATE ${t.tokens} SET revoked_at = p_at
            WHERE parent_hash = rotated.parent_hash AND hash <> p_hash AND kind = 'refresh' AND rotated_at IS NULL AND revoked_at IS NULL
            RETURNING pair_hash
          )
          UPDATE ${t.tokens} SET revoked_at = p_at
          WHERE (hash = rotated.pair_hash OR hash IN (SELECT pair_hash FROM siblings)) AND revoked_at IS NULL;
        ELSIF rotated.pair_hash IS NOT NULL THEN
          UPDATE ${t.tokens} SET revoked_at = p_at WHERE hash = rotated.pair_hash AND revoked_at IS NULL;
        END IF;
        RETURN rotated.grant_row;
      END
      $fn$`,
    ],
  },
  {
    version: 15,
    // Migration 14's function, its last UPDATE rewritten: `hash = x OR hash IN (subquery)` cannot
    // be answered from the primary key, so every rotation of a refresh token that has a parent
    // (every one after a chain's first) read the whole tokens table, under the parent's row lock:
    // 24 ms at 100 000 tokens, growing with the table. `hash IN (x UNION ALL subquery)` is a
    // nested loop on the primary key (1.3 ms at 500 000 tokens). Same signature and answers:
    // an instance of the previous version that calls it meanwhile gets the same outcome.
    name: 'rotate_refresh_token: the access tokens it revokes found by primary key',
    up: (t, _index, r) => [
      `CREATE OR REPLACE FUNCTION ${r.rotateRefreshToken}(p_hash text, p_at bigint) RETURNS jsonb
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        rotated record;
      BEGIN
        PERFORM 1 FROM ${t.tokens} AS t JOIN ${t.tokens} AS p ON p.hash = t.parent_hash WHERE t.hash = p_hash FOR UPDATE OF p;
        UPDATE ${t.tokens} AS t SET rotated_at = p_at
        FROM ${t.grants} AS g
        WHERE t.hash = p_hash AND t.kind = 'refresh' AND t.rotated_at IS NULL AND t.revoked_at IS NULL
          AND (t.expires_at IS NULL OR t.expires_at > p_at)
          AND g.id = t.grant_id AND g.revoked_at IS NULL
        RETURNING t.pair_hash, t.parent_hash, to_jsonb(g) AS grant_row INTO rotated;
        IF NOT FOUND THEN
          RETURN NULL;
        END IF;
        IF rotated.parent_hash IS NOT NULL THEN
          WITH parent AS (
            UPDATE ${t.tokens} SET child_rotated_at = p_at WHERE hash = rotated.parent_hash AND child_rotated_at IS NULL
          ), siblings AS (
            UPDATE ${t.tokens} SET revoked_at = p_at
            WHERE parent_hash = rotated.parent_hash AND hash <> p_hash AND kind = 'refresh' AND rotated_at IS NULL AND revoked_at IS NULL
            RETURNING pair_hash
          )
          UPDATE ${t.tokens} SET revoked_at = p_at
          WHERE hash IN (SELECT rotated.pair_hash UNION ALL SELECT pair_hash FROM siblings) AND revoked_at IS NULL;
        ELSIF rotated.pair_hash IS NOT NULL THEN
          UPDATE ${t.tokens} SET revoked_at = p_at WHERE hash = rotated.pair_hash AND revoked_at IS NULL;
        END IF;
        RETURN rotated.grant_row;
      END
      $fn$`,
    ],
  },
];
