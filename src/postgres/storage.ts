/**
 * `PostgresStorage`: the `Storage` contract on PostgreSQL. The class checks its options and
 * hands each method to the module of its topic, where the SQL is: clients.ts, interactions.ts,
 * consents.ts, grants.ts (with revocation), codes.ts, tokens.ts, devices.ts, and migrate.ts and prune.ts for
 * the upkeep of the tables. db.ts runs the statements and transactions.
 */
import type {
  ClientChanges,
  ClientRecord,
  CodeRecord,
  ConsentRecord,
  DeviceAuthorizationRecord,
  DevicePoll,
  PendingDeviceAuthorizationRecord,
  GrantRecord,
  InteractionRecord,
  OAuthGrantRecord,
  OAuthTokenRecord,
  PersonalTokenRead,
  RefreshFamily,
  SingleUseOutcome,
  Storage,
  TokenRecord,
} from '../storage/types.js';
import type { Account } from '../types.js';
import { deleteClient, findClient, listClients, saveClient, updateClientFields } from './clients.js';
import { findCode, redeemCode } from './codes.js';
import { findClientAndCode, findClientAndToken } from './combined.js';
import { findConsent, listConsents, saveConsent } from './consents.js';
import { Db } from './db.js';
import {
  createDeviceAuthorization,
  decideDeviceAuthorization,
  findDeviceAuthorization,
  pollDeviceAuthorization,
  redeemDeviceAuthorization,
} from './devices.js';
import { approveInteraction, findInteractionAndClient } from './approvals.js';
import { createGrant, revokeAccess, revokeAccountGrants, revokeClientGrants, revokeGrant } from './grants.js';
import { findInteraction, saveInteraction, takeInteraction } from './interactions.js';
import { migrate, type MigrateResult } from './migrate.js';
import { listPersonalTokens, touchPersonalToken } from './personal.js';
import type { PgPool } from './pool.js';
import { prune, type PruneResult } from './prune.js';
import { rememberDpopProof } from './dpop-proofs.js';
import { IDENTIFIER } from './schema.js';
import { findRefreshFamily, findToken, retryRefreshToken, rotateRefreshToken } from './tokens.js';

/**
 * Options of `new PostgresStorage(pool, options)`.
 * @group Storage
 */
export interface PostgresStorageOptions {
  /** The schema that holds authgate's tables; `migrate()` creates it when missing. Default `public`. */
  schema?: string;
  /** Put before every table and index name. Default `authgate_`. */
  tablePrefix?: string;
  /**
   * How long an operation waits for a connection of the pool, in milliseconds (an idle one, one
   * being opened, or one that another operation is to hand back), before it fails as a database
   * failure would: the request is answered (resources 503, the token endpoint 500) instead of
   * waiting for as long as the database does not answer, and requests do not queue without
   * limit while every connection is busy. A connection that comes later goes straight back to the
   * pool. Default 2000. `false`: no bound (only when the pool bounds it itself:
   * `connectionTimeoutMillis` of `pg.Pool`). A whole number from 1 to 2147483647.
   */
  acquireTimeoutMs?: number | false;
  /**
   * How long the database may take over one attempt of an operation once it has its connection,
   * in milliseconds: its statement, or its whole transaction from BEGIN to COMMIT. When it runs
   * out the operation fails as a database failure would, and the connection is destroyed, never
   * used again (its statement may still be on its way); a transaction cut short is rolled back by
   * the database, so a single-use step (a refresh-token rotation) either happened whole or not at
   * all. Also cuts a database that answers nothing at all (frozen, partitioned away), which the
   * server-side `statement_timeout` cannot. Not applied to `migrate()` and `prune()`, which may
   * take long on large tables. Default 3000. `false`: no bound. A whole number from 1 to
   * 2147483647.
   */
  queryTimeoutMs?: number | false;
  /**
   * Whether statements run as named prepared statements: parsed and planned once per connection
   * instead of at every call, which about halves the database's work per request on the hot paths
   * (BENCHMARKS.md, "Prepared statements"). Default `true`. Turn it off behind a pooler that
   * hands one client's statements to several server connections (PgBouncer in transaction mode
   * before 1.21, or without `max_prepared_statements`; some serverless proxies), and for a pool
   * whose `query` does not take `pg`'s query config objects (`{ name, text, values }`). Left on
   * behind such a pooler, the store turns it off by itself the first time the database says a
   * statement does not exist (or exists already), and runs that operation again unnamed. A store
   * sends fewer than fifty texts; a connection keeps those of every store that used it (about
   * 2.6 MB of plan caches per backend for one store's), and a process names at most 1000 texts.
   */
  preparedStatements?: boolean;
}

/** The default bounds of `PostgresStorageOptions` (ms): worst case about 5 s per storage call. */
export const DEFAULT_ACQUIRE_TIMEOUT_MS = 2000;
export const DEFAULT_QUERY_TIMEOUT_MS = 3000;

/** The option `preparedStatements`: a boolean, `true` when left out. */
function prepared(value: unknown): boolean {
  if (value === undefined) return true;
  if (typeof value !== 'boolean') throw new TypeError('PostgresStorage option "preparedStatements" must be true or false');
  return value;
}

/** `value` of option `name` as a bound: a whole number of milliseconds setTimeout can hold, or `false`. */
function bound(name: string, value: unknown, fallback: number): number | false {
  if (value === undefined) return fallback;
  if (value === false) return false;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 2_147_483_647) {
    throw new TypeError(
      `PostgresStorage option "${name}" must be a whole number of milliseconds from 1 to 2147483647, or false for no bound`,
    );
  }
  return value;
}

/**
 * `Storage` on PostgreSQL (`pg`). Several authgate processes may share one database: every
 * single-use step (redeeming a code, rotating a refresh token, taking an interaction) is one
 * conditional statement, atomic on its own, so exactly one of any number of concurrent
 * callers succeeds, whichever process they run in. A revocation of an account or a client waits
 * for the grants being issued to it meanwhile, in any process, and revokes them too (advisory
 * locks, docs/architecture.md). Times always come from the arguments (the server's injected
 * clock), never from the database's `now()`. Secrets arrive hashed from the core and are stored
 * as such.
 *
 * Call `migrate()` once at startup (safe when several instances start at once) and `prune()`
 * from time to time. The storage never ends the pool: the host owns it.
 *
 * Every operation is bounded in time (`acquireTimeoutMs`, `queryTimeoutMs`; by default 2 s to get
 * a connection and 3 s for the database to answer), so that a database that stops answering
 * fails requests within a known time, as an outage does, rather than holding them.
 * @group Storage
 */
export class PostgresStorage implements Storage {
  /** The pool and the table names, which every topic module takes. */
  private readonly db: Db;

  /**
   * @param pool a `pg.Pool` (or anything with its `query` and `connect`).
   * @throws TypeError when `schema` or `tablePrefix` is not a plain lower-case SQL identifier, or
   *   `acquireTimeoutMs` or `queryTimeoutMs` is neither a whole number of milliseconds nor `false`,
   *   or `preparedStatements` is not a boolean.
   */
  constructor(pool: PgPool, options: PostgresStorageOptions = {}) {
    if (!pool || typeof pool.query !== 'function' || typeof pool.connect !== 'function') {
      throw new TypeError('PostgresStorage needs a pg.Pool (an object with query() and connect())');
    }
    const schema = options.schema ?? 'public';
    const prefix = options.tablePrefix ?? 'authgate_';
    if (!IDENTIFIER.test(schema) || schema.length > 63) {
      throw new TypeError('PostgresStorage option "schema" must be a lower-case SQL identifier ([a-z_][a-z0-9_]*, at most 63 characters)');
    }
    if (prefix !== '' && (!IDENTIFIER.test(prefix) || prefix.length > 30)) {
      throw new TypeError(
        'PostgresStorage option "tablePrefix" must be empty or a lower-case SQL identifier ([a-z_][a-z0-9_]*, at most 30 characters)',
      );
    }
    this.db = new Db(
      pool,
      schema,
      prefix,
      {
        acquire: bound('acquireTimeoutMs', options.acquireTimeoutMs, DEFAULT_ACQUIRE_TIMEOUT_MS),
        query: bound('queryTimeoutMs', options.queryTimeoutMs, DEFAULT_QUERY_TIMEOUT_MS),
      },
      prepared(options.preparedStatements),
    );
  }

  // -------------------------------------------------------------------------------------------
  // Schema and upkeep.

  /**
   * Create or upgrade the tables to `SCHEMA_VERSION`. Idempotent, and safe when several
   * instances call it at once: one transaction holds a transaction-level advisory lock while it
   * reads the recorded version and applies what is missing, so the others wait and then find
   * nothing to do. A database already at a newer version (a newer authgate rolled out first) is
   * left alone.
   */
  migrate(): Promise<MigrateResult> {
    return migrate(this.db);
  }

  /**
   * Delete what can never be used again, as of `now` (default: the system clock):
   * - interactions and codes whose `expiresAt` has passed (a used code is kept until then, so
   *   its replay still revokes the family);
   * - access tokens that expired or were revoked (a rotation revokes the pair's access token),
   *   and personal access tokens that expired or were revoked;
   * - rotated refresh tokens once a child was rotated or `MAX_REFRESH_WINDOW_SECONDS` after
   *   their rotation (until then a retry needs the record), and revoked ones: a replay of one is still recognised by its family through the
   *   family's newest refresh token, which is kept while its grant lives, until it has expired
   *   and so has the access token issued with it. A family keeps one refresh row, however long
   *   its rotation chain;
   * - revoked grants, with everything left of their family (all of it is dead already);
   * - grants with no code and no token left;
   * - device authorizations (RFC 8628) whose `expiresAt` has passed, whatever their status;
   * - DPoP proofs seen whose `expiresAt` has passed (not counted in the result).
   * Consents and clients are never pruned. Safe to run while servers use the database.
   */
  prune(now: number = Date.now()): Promise<PruneResult> {
    return prune(this.db, now);
  }

  // -------------------------------------------------------------------------------------------
  // Clients.

  saveClient(client: ClientRecord): Promise<void> {
    return saveClient(this.db, client);
  }

  findClient(clientId: string): Promise<ClientRecord | null> {
    return findClient(this.db, clientId);
  }

  /** Oldest first, by the index on `owner` when one is given. */
  listClients(filter: { owner?: string }): Promise<ClientRecord[]> {
    return listClients(this.db, filter);
  }

  /** One UPDATE of the given columns; never re-creates a deleted client. */
  updateClientFields(clientId: string, changes: ClientChanges): Promise<boolean> {
    return updateClientFields(this.db, clientId, changes);
  }

  /**
   * One statement: every grant of the client revoked, its consents and the client deleted; after
   * the client's issuance lock, so it also reaches what is being issued meanwhile (locks.ts).
   */
  deleteClient(clientId: string, now: number): Promise<void> {
    return deleteClient(this.db, clientId, now);
  }

  // -------------------------------------------------------------------------------------------
  // Interactions.

  saveInteraction(interaction: InteractionRecord): Promise<void> {
    return saveInteraction(this.db, interaction);
  }

  findInteraction(idHash: string): Promise<InteractionRecord | null> {
    return findInteraction(this.db, idHash);
  }

  /** One `DELETE ... RETURNING`: of any number of concurrent callers, one gets the row. */
  takeInteraction(idHash: string, now: number): Promise<InteractionRecord | null> {
    return takeInteraction(this.db, idHash, now);
  }

  // -------------------------------------------------------------------------------------------
  // Consents.

  /**
   * One `INSERT ... ON CONFLICT DO UPDATE` that merges the scope: concurrent approvals lose
   * nothing. It holds the shared issuance locks of the account and the client (locks.ts), so a
   * revocation that deletes consents waits for a consent being written and then deletes it too.
   */
  saveConsent(consent: ConsentRecord): Promise<void> {
    return saveConsent(this.db, consent);
  }

  findConsent(accountUuid: string, clientId: string): Promise<ConsentRecord | null> {
    return findConsent(this.db, accountUuid, clientId);
  }

  listConsents(accountUuid: string): Promise<ConsentRecord[]> {
    return listConsents(this.db, accountUuid);
  }

  // -------------------------------------------------------------------------------------------
  // Grants, codes, tokens.

  /**
   * The grant and its first code or tokens in one statement, which takes the shared issuance
   * locks of the account and the client first (locks.ts): a revocation of either waits for it.
   */
  createGrant(grant: GrantRecord, issued: { code?: CodeRecord; tokens?: TokenRecord[] }): Promise<void> {
    return createGrant(this.db, grant, issued);
  }

  findCode(hash: string): Promise<CodeRecord | null> {
    return findCode(this.db, hash);
  }

  /**
   * Single use across processes: one statement, whose conditional `UPDATE ... RETURNING` marks
   * the code used and whose INSERT of the tokens reads that answer (codes.ts).
   */
  redeemCode(hash: string, now: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome> {
    return redeemCode(this.db, hash, now, tokens);
  }

  findToken(hash: string): Promise<{ token: TokenRecord; grant: GrantRecord } | null> {
    return findToken(this.db, hash);
  }

  /** One statement: the interaction and its request's client, each a `jsonb` row (approvals.ts). */
  findInteractionAndClient(idHash: string): Promise<{ interaction: InteractionRecord | null; client: ClientRecord | null }> {
    return findInteractionAndClient(this.db, idHash);
  }

  /**
   * One statement (approvals.ts): the interaction taken, and only then the consent saved and the
   * grant created with its code or tokens, under the issuance locks.
   */
  approveInteraction(
    idHash: string,
    now: number,
    consent: ConsentRecord,
    grant: OAuthGrantRecord,
    issued: { code?: CodeRecord; tokens?: TokenRecord[] },
  ): Promise<boolean> {
    return approveInteraction(this.db, idHash, now, consent, grant, issued);
  }

  /** One statement: the client and the code, each a `jsonb` row or NULL (combined.ts). */
  findClientAndCode(clientId: string, codeHash: string): Promise<{ client: ClientRecord | null; code: CodeRecord | null }> {
    return findClientAndCode(this.db, clientId, codeHash);
  }

  /** One statement: the client, and the token joined to its grant (combined.ts). */
  findClientAndToken(
    clientId: string,
    tokenHash: string,
  ): Promise<{ client: ClientRecord | null; token: { token: TokenRecord; grant: GrantRecord } | null }> {
    return findClientAndToken(this.db, clientId, tokenHash);
  }

  /**
   * Single use across processes: one statement calling the store's `rotate_refresh_token`
   * function (migrations 14 and 15), which marks the refresh token rotated with a conditional UPDATE and
   * revokes its access token; the statement inserts the new pair only when it did (tokens.ts).
   */
  rotateRefreshToken(hash: string, now: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome> {
    return rotateRefreshToken(this.db, hash, now, tokens);
  }

  retryRefreshToken(hash: string, now: number, windowMs: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome> {
    return retryRefreshToken(this.db, hash, now, windowMs, tokens);
  }

  /** Any stored refresh token of the family: while the family lives, its newest one is kept (see `prune`). */
  findRefreshFamily(familyHash: string): Promise<RefreshFamily | null> {
    return findRefreshFamily(this.db, familyHash);
  }

  // -------------------------------------------------------------------------------------------
  // Revocation: one flag on the grant, which every lookup joins.

  revokeGrant(grantId: string, now: number): Promise<void> {
    return revokeGrant(this.db, grantId, now);
  }

  /**
   * One statement: the consent is deleted and every grant of the pair revoked together; after the
   * account's issuance lock, so it also reaches what is being issued meanwhile (locks.ts).
   */
  revokeAccess(accountUuid: string, clientId: string, now: number): Promise<void> {
    return revokeAccess(this.db, accountUuid, clientId, now);
  }

  /** After the client's issuance lock, so it also reaches what is being issued meanwhile (locks.ts). */
  revokeClientGrants(clientId: string, now: number): Promise<void> {
    return revokeClientGrants(this.db, clientId, now);
  }

  /**
   * One statement: the account's consents deleted and every grant of it revoked together; after
   * the account's issuance lock, so it also reaches what is being issued meanwhile (locks.ts).
   */
  revokeAccountGrants(accountUuid: string, now: number): Promise<void> {
    return revokeAccountGrants(this.db, accountUuid, now);
  }

  // -------------------------------------------------------------------------------------------
  // Personal access tokens: grants of kind 'personal' (no client), each with one token of kind 'personal'.

  listPersonalTokens(accountUuid: string): Promise<PersonalTokenRead[]> {
    return listPersonalTokens(this.db, accountUuid);
  }

  /** One conditional `UPDATE`: a later use recorded by another instance is kept. */
  touchPersonalToken(grantId: string, at: number): Promise<void> {
    return touchPersonalToken(this.db, grantId, at);
  }

  // -------------------------------------------------------------------------------------------
  // DPoP proofs seen (RFC 9449 §11.1).

  /** One `INSERT ... ON CONFLICT`: exactly one of concurrent callers with a key, on any instance, gets `true`. */
  rememberDpopProof(key: string, expiresAt: number, now: number): Promise<boolean> {
    return rememberDpopProof(this.db, key, expiresAt, now);
  }

  // -------------------------------------------------------------------------------------------
  // Device authorizations (RFC 8628).

  /** One `INSERT ... ON CONFLICT`: a live record keeps its user code (`false`), an expired one is replaced. */
  createDeviceAuthorization(record: PendingDeviceAuthorizationRecord): Promise<boolean> {
    return createDeviceAuthorization(this.db, record);
  }

  findDeviceAuthorization(userCodeHash: string): Promise<DeviceAuthorizationRecord | null> {
    return findDeviceAuthorization(this.db, userCodeHash);
  }

  /** One conditional `UPDATE`: decided at most once, across processes; an approval holds the issuance locks (locks.ts). */
  decideDeviceAuthorization(hash: string, now: number, account: Account | null): Promise<boolean> {
    return decideDeviceAuthorization(this.db, hash, now, account);
  }

  /** One transaction on the locked row: judged, and a pending one's poll recorded. */
  pollDeviceAuthorization(hash: string, clientId: string, now: number, leewayMs: number): Promise<DevicePoll> {
    return pollDeviceAuthorization(this.db, hash, clientId, now, leewayMs);
  }

  /**
   * One transaction: marked redeemed only where still approved, with the grant and its tokens;
   * it holds the issuance locks of the account and the client (locks.ts).
   */
  redeemDeviceAuthorization(hash: string, now: number, grant: OAuthGrantRecord, tokens: OAuthTokenRecord[]): Promise<boolean> {
    return redeemDeviceAuthorization(this.db, hash, now, grant, tokens);
  }
}
