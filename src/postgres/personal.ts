/**
 * Personal access tokens (docs/reference.md#personal-access-tokens): grants of no client
 * (`client_id = ''`) with a name, each with one token of kind `personal`. Created, revoked and
 * pruned as every grant; here the two queries of their own.
 */
import type { PersonalTokenRead } from '../storage/types.js';
import type { Db } from './db.js';
import { GRANT_COLUMNS, ms, toGrant } from './rows.js';
import { toToken } from './tokens.js';

/** Every stored personal token of the account, with its grant: one query on the (account, client) index. */
export async function listPersonalTokens(db: Db, accountUuid: string): Promise<PersonalTokenRead[]> {
  const { rows } = await db.query(
    'listPersonalTokens',
    `SELECT t.*, ${GRANT_COLUMNS('g')}
    FROM ${db.t.grants} AS g JOIN ${db.t.tokens} AS t ON t.grant_id = g.id AND t.kind = 'personal'
    WHERE g.account_uuid = $1 AND g.client_id = '' AND g.name IS NOT NULL`,
    [accountUuid],
  );
  return rows.map((row) => ({ token: toToken(row), grant: toGrant(row, 'g_') }));
}

/** The last use, unless a later one is recorded already (several instances write in any order). */
export async function touchPersonalToken(db: Db, grantId: string, at: number): Promise<void> {
  await db.query(
    'touchPersonalToken',
    `UPDATE ${db.t.grants} SET last_used_at = $2
    WHERE id = $1 AND name IS NOT NULL AND (last_used_at IS NULL OR last_used_at < $2)`,
    [grantId, ms(at)],
  );
}
