/**
 * Grants: what an account allowed a client, created with its first code or tokens, and revoked
 * with one flag that every code and token lookup joins, so revoking a grant revokes its whole
 * family at once. Creating a grant takes the shared issuance locks of its account and client,
 * and revoking every grant of an account or client the exclusive one, so that a revocation
 * never misses a grant created while it runs (locks.ts).
 */
import type { CodeRecord, GrantRecord, TokenRecord } from '../storage/types.js';
import { codeInsert } from './codes.js';
import type { Db, Tx } from './db.js';
import { issuanceLocks } from './locks.js';
import { ms, msOrNull, typedParams } from './rows.js';
import { issuedWhen } from './tokens.js';

/**
 * The grant and its first code or tokens in one statement, so in one round trip and atomic on its
 * own: its first CTE takes the shared issuance locks of the account and the client, the grant's
 * INSERT reads it (so the locks come first), and the code's and tokens' INSERTs read the grant's
 * (so they come after it); the locks are held until the statement commits, so a revocation of
 * either account or client waits for it, and then sees it. Nothing here reads a row a revocation
 * writes, so the snapshot the statement took before it waited for the locks loses nothing (a
 * revocation's UPDATE, by contrast, must wait in a statement of its own: locks.ts).
 */
export async function createGrant(db: Db, grant: GrantRecord, issued: { code?: CodeRecord; tokens?: TokenRecord[] }): Promise<void> {
  const values: unknown[] = [];
  const created = grantCreation(db, grant, issued, values, 'FROM locked');
  await db.query(
    'createGrant',
    `WITH locked AS (${issuanceLocks(db.locks, '$3', '$2')}), ${created}
    SELECT id FROM created`,
    values,
  );
}

/**
 * `created AS (INSERT ... RETURNING id)` of the grant, its row coming `from` the statement's CTE
 * that took the issuance locks, followed by the CTEs that insert its code or tokens, reading
 * `created` (so after it); the values appended to `values`, the grant's first (its id, client
 * and account are `$1`, `$2` and `$3` when `values` starts empty).
 */
export function grantCreation(
  db: Db,
  grant: GrantRecord,
  issued: { code?: CodeRecord; tokens?: TokenRecord[] },
  values: unknown[],
  from: string,
): string {
  const params = typedParams(values, grantValues(grant), GRANT_TYPES);
  const code = issued.code ? `, coded AS (${codeInsert(db, issued.code, values, 'FROM created')})` : '';
  const tokens = issuedWhen(db, issued.tokens ?? [], values, 'EXISTS (SELECT 1 FROM created)');
  return `created AS (
      INSERT INTO ${db.t.grants} (${GRANT_INSERT_COLUMNS})
      SELECT ${params} ${from}
      RETURNING id
    )${code}${tokens}`;
}

const GRANT_INSERT_COLUMNS = 'id, client_id, account_uuid, account, scope, created_at, revoked_at, name, last_used_at, kind, openid';
/** The type of each of `GRANT_INSERT_COLUMNS`, in the same order. */
const GRANT_TYPES = 'text text text jsonb text[] bigint bigint text bigint text jsonb'.split(' ');

/**
 * A grant's columns, in `GRANT_INSERT_COLUMNS` order. A personal token's grant has no client
 * (`client_id` NULL, which takes no client lock either: `hashtext(NULL)` is NULL, and the lock
 * functions are strict), an OAuth grant no name and no last use (migration 9's checks).
 */
const grantValues = (grant: GrantRecord): unknown[] => [
  grant.id,
  grant.kind === 'personal' ? null : grant.clientId,
  grant.account.uuid,
  JSON.stringify(grant.account),
  grant.scope,
  ms(grant.createdAt),
  msOrNull(grant.revokedAt),
  grant.kind === 'personal' ? grant.name : null,
  grant.kind === 'personal' ? msOrNull(grant.lastUsedAt) : null,
  grant.kind,
  grant.kind === 'oauth' && grant.openid !== undefined ? JSON.stringify(grant.openid) : null,
];

/**
 * The INSERT of a grant, inside a transaction of the caller's that already holds the issuance
 * locks of its account and client (devices.ts).
 */
export async function insertGrant(db: Db, tx: Tx, grant: GrantRecord): Promise<void> {
  const values: unknown[] = [];
  await tx.query(
    `INSERT INTO ${db.t.grants} (${GRANT_INSERT_COLUMNS}) VALUES (${typedParams(values, grantValues(grant), GRANT_TYPES)})`,
    values,
  );
}

/** Set the grant's revoked flag, unless it is set already (the first revocation's time stays). */
export async function revokeGrant(db: Db, grantId: string, now: number): Promise<void> {
  await db.query('revokeGrant', `UPDATE ${db.t.grants} SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, [grantId, ms(now)]);
}

/**
 * One statement, after the account's exclusive issuance lock (`Db.revoke`): the consent is
 * deleted and every grant of the pair revoked together.
 */
export async function revokeAccess(db: Db, accountUuid: string, clientId: string, now: number): Promise<void> {
  await db.revoke(
    'revokeAccess',
    'account',
    accountUuid,
    `WITH deleted AS (
      DELETE FROM ${db.t.consents} WHERE account_uuid = $1 AND client_id = $2
    ), devices AS (
      UPDATE ${db.t.deviceAuthorizations} SET status = 'denied', account = NULL
      WHERE status = 'approved' AND client_id = $2 AND account->>'uuid' = $1
    )
    UPDATE ${db.t.grants} SET revoked_at = $3 WHERE account_uuid = $1 AND client_id = $2 AND revoked_at IS NULL`,
    [accountUuid, clientId, ms(now)],
  );
}

/** After the client's exclusive issuance lock (`Db.revoke`): every grant of the client, of every account, revoked; consents stay. */
export async function revokeClientGrants(db: Db, clientId: string, now: number): Promise<void> {
  await db.revoke(
    'revokeClientGrants',
    'client',
    clientId,
    `WITH devices AS (
      UPDATE ${db.t.deviceAuthorizations} SET status = 'denied', account = NULL WHERE status = 'approved' AND client_id = $1
    )
    UPDATE ${db.t.grants} SET revoked_at = $2 WHERE client_id = $1 AND revoked_at IS NULL`,
    [clientId, ms(now)],
  );
}

/**
 * One statement, after the account's exclusive issuance lock (`Db.revoke`): every grant of the
 * account revoked (every client's) and its consents deleted.
 */
export async function revokeAccountGrants(db: Db, accountUuid: string, now: number): Promise<void> {
  await db.revoke(
    'revokeAccountGrants',
    'account',
    accountUuid,
    `WITH deleted AS (
      DELETE FROM ${db.t.consents} WHERE account_uuid = $1
    ), devices AS (
      UPDATE ${db.t.deviceAuthorizations} SET status = 'denied', account = NULL WHERE status = 'approved' AND account->>'uuid' = $1
    )
    UPDATE ${db.t.grants} SET revoked_at = $2 WHERE account_uuid = $1 AND revoked_at IS NULL`,
    [accountUuid, ms(now)],
  );
}
