/**
 * Authorization codes: stored with their grant, redeemed at most once, and kept (marked used)
 * until they expire so that a replay is recognised.
 */
import type { CodeRecord, OAuthTokenRecord, SingleUseOutcome } from '../storage/types.js';
import type { Db } from './db.js';
import { GRANT_COLUMNS, ms, msOrNull, strings, toOAuthGrant, typedParams, type Row } from './rows.js';
import { issuedWhen } from './tokens.js';

/** Every column of the codes table, as `toCode` reads them (statements.ts: no `*`). */
export const CODE_COLUMNS =
  'hash, grant_id, client_id, redirect_uri, scope, code_challenge, code_challenge_method, expires_at, used_at, resources, openid, dpop_jkt';

export const toCode = (r: Row): CodeRecord => {
  const code = toCodeFields(r);
  if (r['resources'] != null) code.resources = strings(r['resources']);
  if (r['dpop_jkt'] != null) code.dpop = { jkt: r['dpop_jkt'] as string };
  if (r['openid'] != null) code.openid = r['openid'] as NonNullable<CodeRecord['openid']>;
  return code;
};
const toCodeFields = (r: Row): CodeRecord => ({
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

/**
 * The INSERT of a code, for the statement that creates its grant (grants.ts): its values are
 * appended to `values`, and its row comes `from` the statement's earlier CTEs (`FROM created`), so
 * it is inserted after them.
 */
export function codeInsert(db: Db, code: CodeRecord, values: unknown[], from: string): string {
  const row = [
    code.hash,
    code.grantId,
    code.clientId,
    code.redirectUri,
    code.scope,
    code.codeChallenge,
    code.codeChallengeMethod,
    ms(code.expiresAt),
    msOrNull(code.usedAt),
    code.resources ?? null,
    code.dpop?.jkt ?? null,
    code.openid === undefined ? null : JSON.stringify(code.openid),
  ];
  return `INSERT INTO ${db.t.codes}
    (hash, grant_id, client_id, redirect_uri, scope, code_challenge, code_challenge_method, expires_at, used_at, resources, dpop_jkt, openid)
    SELECT ${typedParams(values, row, CODE_TYPES)} ${from}`;
}

/** The type of each column `codeInsert` writes, in its order. */
const CODE_TYPES = 'text text text text text[] text text bigint bigint text[] text jsonb'.split(' ');

/** The code with this hash, used or expired or not, or null. */
export async function findCode(db: Db, hash: string): Promise<CodeRecord | null> {
  const { rows } = await db.query('findCode', `SELECT ${CODE_COLUMNS} FROM ${db.t.codes} WHERE hash = $1`, [hash]);
  return rows[0] ? toCode(rows[0]) : null;
}

/**
 * One statement: a conditional `UPDATE ... WHERE used_at IS NULL AND expires_at > $now AND
 * grant not revoked RETURNING` marks the code used (a concurrent caller blocks on the row and
 * then sees it used), and the tokens are inserted by the same statement, only when it did: both
 * land together or neither does, in one round trip instead of a transaction's four. No row:
 * nothing changed, and a `SELECT` says why.
 */
export async function redeemCode(db: Db, hash: string, now: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome> {
  const at = ms(now);
  const values: unknown[] = [hash, at];
  const issue = issuedWhen(db, tokens, values, 'EXISTS (SELECT 1 FROM redeemed)');
  const { rows } = await db.query(
    'redeemCode',
    `WITH redeemed AS (
      UPDATE ${db.t.codes} AS c SET used_at = $2
      FROM ${db.t.grants} AS g
      WHERE c.hash = $1 AND c.used_at IS NULL AND c.expires_at > $2 AND g.id = c.grant_id AND g.revoked_at IS NULL
      RETURNING ${GRANT_COLUMNS('g')}
    )${issue}
    SELECT * FROM redeemed`,
    values,
  );
  if (rows[0]) return { ok: true, grant: toOAuthGrant(rows[0], 'g_') };
  const why = await db.query(
    'redeemCode',
    `SELECT c.grant_id, c.used_at, c.expires_at, g.revoked_at AS grant_revoked_at, g.id IS NULL AS grant_missing
    FROM ${db.t.codes} AS c LEFT JOIN ${db.t.grants} AS g ON g.id = c.grant_id WHERE c.hash = $1`,
    [hash],
  );
  const code = why.rows[0];
  if (!code) return { ok: false, reason: 'missing' };
  if (code.used_at !== null) return { ok: false, reason: 'used', grantId: code.grant_id as string, usedAt: ms(code.used_at) };
  if (at >= ms(code.expires_at)) return { ok: false, reason: 'expired' };
  return { ok: false, reason: 'revoked' };
}
