/**
 * Personal access tokens (docs/reference.md#personal-access-tokens): grants of kind `personal`
 * (no client, a name), each with one token of kind `personal`. Created, revoked and pruned as
 * every grant; here the two queries of their own.
 */
import type { PersonalTokenRead } from '../storage/types.js';
import type { Db } from './db.js';
import { GRANT_COLUMNS, ms, toGrant } from './rows.js';
import { TOKEN_READ_COLUMNS_T, toToken } from './tokens.js';

/** Every stored personal token of the account, with its grant: one query on the account's personal grants (an index of migration 9). */
export async function listPersonalTokens(db: Db, accountUuid: string): Promise<PersonalTokenRead[]> {
  const { rows } = await db.query(
    'listPersonalTokens',
    `SELECT ${TOKEN_READ_COLUMNS_T}, ${GRANT_COLUMNS('g')}
    FROM ${db.t.grants} AS g JOIN ${db.t.tokens} AS t ON t.grant_id = g.id AND t.kind = 'personal'
    WHERE g.account_uuid = $1 AND g.kind = 'personal'`,
    [accountUuid],
  );
  const out: PersonalTokenRead[] = [];
  for (const row of rows) {
    const token = toToken(row);
    const grant = toGrant(row, 'g_');
    if (token.kind === 'personal' && grant.kind === 'personal') out.push({ token, grant });
  }
  return out;
}

/** The last use, unless a later one is recorded already (several instances write in any order). */
export async function touchPersonalToken(db: Db, grantId: string, at: number): Promise<void> {
  await db.query(
    'touchPersonalToken',
    `UPDATE ${db.t.grants} SET last_used_at = $2
    WHERE id = $1 AND kind = 'personal' AND (last_used_at IS NULL OR last_used_at < $2)`,
    [grantId, ms(at)],
  );
}
