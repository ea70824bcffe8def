/**
 * Access and refresh tokens: stored by the hash of their value, looked up joined to their grant
 * (whose revoked flag every lookup sees), and refresh tokens rotated at most once (retried, with
 * a sibling pair, while none of their children was rotated).
 */
import type { GrantRecord, OAuthTokenRecord, RefreshFamily, SingleUseOutcome, TokenRecord } from '../storage/types.js';
import type { Db, Tx } from './db.js';
import { GRANT_COLUMNS, ms, msOrNull, qualified, strings, toGrant, toOAuthGrant, typedParams, type Row } from './rows.js';

/**
 * Every column of the tokens table, as `toToken` reads them (statements.ts: no `*`), and the
 * same of the table `t` in a join.
 */
export const TOKEN_READ_COLUMNS =
  'hash, kind, grant_id, client_id, scope, issued_at, expires_at, pair_hash, rotated_at, revoked_at, family_hash, audience, dpop_jkt, parent_hash, child_rotated_at';
export const TOKEN_READ_COLUMNS_T = qualified(TOKEN_READ_COLUMNS, 't');

/** A token from its row (`TOKEN_READ_COLUMNS`). */
export const toToken = (r: Row): TokenRecord => {
  const token = toTokenFields(r);
  if (r['family_hash'] != null) token.familyHash = r['family_hash'] as string; // refresh tokens only
  if (r['parent_hash'] != null) token.parentHash = r['parent_hash'] as string; // likewise
  if (r['child_rotated_at'] != null) token.childRotatedAt = ms(r['child_rotated_at']);
  if (r['audience'] != null) token.audience = strings(r['audience']); // tokens issued for resources only
  if (r['dpop_jkt'] != null && token.kind !== 'personal') token.dpop = { jkt: r['dpop_jkt'] as string }; // DPoP-bound tokens only
  return token;
};
// One literal per kind: a personal token has no client (`client_id` NULL, migration 9).
const toTokenFields = (r: Row): TokenRecord =>
  r['kind'] === 'personal'
    ? {
        hash: r['hash'] as string,
        kind: 'personal',
        grantId: r['grant_id'] as string,
        scope: strings(r['scope']),
        issuedAt: ms(r['issued_at']),
        expiresAt: msOrNull(r['expires_at']),
        pairHash: (r['pair_hash'] as string | null) ?? null,
        rotatedAt: msOrNull(r['rotated_at']),
        revokedAt: msOrNull(r['revoked_at']),
      }
    : {
        hash: r['hash'] as string,
        kind: r['kind'] as OAuthTokenRecord['kind'],
        grantId: r['grant_id'] as string,
        clientId: r['client_id'] as string,
        scope: strings(r['scope']),
        issuedAt: ms(r['issued_at']),
        expiresAt: msOrNull(r['expires_at']),
        pairHash: (r['pair_hash'] as string | null) ?? null,
        rotatedAt: msOrNull(r['rotated_at']),
        revokedAt: msOrNull(r['revoked_at']),
      };

const TOKEN_COLUMNS =
  'hash, kind, grant_id, client_id, scope, issued_at, expires_at, pair_hash, rotated_at, revoked_at, family_hash, audience, parent_hash, dpop_jkt';
/** The type of each of `TOKEN_COLUMNS`, in the same order. */
const TOKEN_TYPES = 'text text text text text[] bigint bigint text bigint bigint text text[] text text'.split(' ');

/**
 * The rows of `tokens` as a `VALUES` list in `TOKEN_COLUMNS` order, their values appended to
 * `values`. Every value is cast to its column's type, so that the list also stands alone as a
 * table (`INSERT ... SELECT * FROM (VALUES ...) AS v WHERE ...`), where the database cannot take
 * the types from the target columns.
 */
function tokenRows(tokens: readonly TokenRecord[], values: unknown[]): string {
  const rows = tokens.map((token) => {
    const row = [
      token.hash,
      token.kind,
      token.grantId,
      token.kind === 'personal' ? null : token.clientId,
      token.scope,
      ms(token.issuedAt),
      msOrNull(token.expiresAt),
      token.pairHash,
      msOrNull(token.rotatedAt),
      msOrNull(token.revokedAt),
      token.familyHash ?? null,
      token.audience ?? null,
      token.parentHash ?? null,
      token.kind === 'personal' ? null : (token.dpop?.jkt ?? null),
    ];
    return `(${typedParams(values, row, TOKEN_TYPES)})`;
  });
  return `VALUES ${rows.join(', ')}`;
}

/**
 * `, issued AS (INSERT ...)`: a CTE that inserts `tokens` (their values appended to `values`)
 * only when `condition` holds, an SQL boolean over the statement's earlier CTEs; for a
 * single-use step that issues its tokens in its own statement (`redeemCode`,
 * `rotateRefreshToken`). Empty when there are none.
 */
export function issuedWhen(db: Db, tokens: readonly TokenRecord[], values: unknown[], condition: string): string {
  if (tokens.length === 0) return '';
  return `, issued AS (
    INSERT INTO ${db.t.tokens} (${TOKEN_COLUMNS})
    SELECT * FROM (${tokenRows(tokens, values)}) AS v WHERE ${condition}
  )`;
}

/** Insert `tokens` on `tx` in one statement, inside the transaction that issues them. */
export async function insertTokens(db: Db, tx: Tx, tokens: TokenRecord[]): Promise<void> {
  if (tokens.length === 0) return;
  const values: unknown[] = [];
  await tx.query(`INSERT INTO ${db.t.tokens} (${TOKEN_COLUMNS}) ${tokenRows(tokens, values)}`, values);
}

/** The token with this hash and its grant, in whatever state, or null: one query, joined. */
export async function findToken(db: Db, hash: string): Promise<{ token: TokenRecord; grant: GrantRecord } | null> {
  const { rows } = await db.query(
    'findToken',
    `SELECT ${TOKEN_READ_COLUMNS_T}, ${GRANT_COLUMNS('g')}
    FROM ${db.t.tokens} AS t JOIN ${db.t.grants} AS g ON g.id = t.grant_id WHERE t.hash = $1`,
    [hash],
  );
  return rows[0] ? { token: toToken(rows[0]), grant: toGrant(rows[0], 'g_') } : null;
}

/**
 * One statement: the store's `rotate_refresh_token` function (migration 14, rewritten by 15) locks the parent's
 * row, marks the refresh token rotated with a conditional `UPDATE ... WHERE rotated_at IS NULL
 * AND revoked_at IS NULL AND not expired AND grant not revoked`, revokes its paired access token
 * (and, for the first child of its parent rotated, ends the parent's retries and revokes the
 * siblings with their access tokens), and answers the grant; the statement that calls it
 * inserts the new pair only when it did. All of it commits together or not at all, in one round
 * trip. Parent before child, always (a retry of the parent locks the same row): a retry either
 * commits before, and its sibling is revoked here, or waits and then finds a child rotated; two
 * siblings rotated at once wait for each other, never deadlock. No grant: nothing changed, and a
 * `SELECT` says why.
 */
export async function rotateRefreshToken(db: Db, hash: string, now: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome> {
  const at = ms(now);
  const values: unknown[] = [hash, at];
  const issue = issuedWhen(db, tokens, values, '(SELECT g FROM rotated) IS NOT NULL');
  const { rows } = await db.query(
    'rotateRefreshToken',
    `WITH rotated AS (SELECT ${db.r.rotateRefreshToken}($1, $2) AS g)${issue}
    SELECT g FROM rotated`,
    values,
  );
  const grant = rows[0]?.['g'];
  if (grant) return { ok: true, grant: toOAuthGrant(grant as Row) };
  const why = await db.query(
    'rotateRefreshToken',
    `SELECT t.kind, t.grant_id, t.rotated_at, t.revoked_at, t.expires_at,
      g.revoked_at AS grant_revoked_at, g.id IS NULL AS grant_missing
    FROM ${db.t.tokens} AS t LEFT JOIN ${db.t.grants} AS g ON g.id = t.grant_id WHERE t.hash = $1`,
    [hash],
  );
  const token = why.rows[0];
  if (!token || token.kind !== 'refresh') return { ok: false, reason: 'missing' };
  if (token.rotated_at !== null) return { ok: false, reason: 'used', grantId: token.grant_id as string, usedAt: ms(token.rotated_at) };
  if (token.revoked_at !== null || token.grant_missing || token.grant_revoked_at !== null) return { ok: false, reason: 'revoked' };
  return { ok: false, reason: 'expired' };
}

/**
 * One transaction: a `SELECT ... FOR UPDATE` locks the rotated token's row while it can be retried
 * (rotated within the window, no child rotated, not revoked nor expired, grant live), then the
 * sibling pair is inserted. The row lock orders it with a rotation of a child, which locks the
 * same row first (`rotateRefreshToken`). No row: nothing changed, and a `SELECT` says why.
 */
export async function retryRefreshToken(
  db: Db,
  hash: string,
  now: number,
  windowMs: number,
  tokens: OAuthTokenRecord[],
): Promise<SingleUseOutcome> {
  const at = ms(now);
  return db.transaction('retryRefreshToken', async (tx) => {
    const { rows } = await tx.query(
      `SELECT ${GRANT_COLUMNS('g')}
      FROM ${db.t.tokens} AS t JOIN ${db.t.grants} AS g ON g.id = t.grant_id
      WHERE t.hash = $1 AND t.kind = 'refresh' AND t.rotated_at IS NOT NULL AND t.rotated_at >= $2::bigint - $3::bigint
        AND t.child_rotated_at IS NULL AND t.revoked_at IS NULL
        AND (t.expires_at IS NULL OR t.expires_at > $2)
        AND g.revoked_at IS NULL
      FOR UPDATE OF t`,
      [hash, at, windowMs],
    );
    const retried = rows[0];
    if (retried) {
      await insertTokens(db, tx, tokens);
      return { ok: true, grant: toOAuthGrant(retried, 'g_') };
    }
    const why = await tx.query(
      `SELECT t.kind, t.grant_id, t.rotated_at, t.child_rotated_at, t.revoked_at, t.expires_at,
        g.revoked_at AS grant_revoked_at, g.id IS NULL AS grant_missing
      FROM ${db.t.tokens} AS t LEFT JOIN ${db.t.grants} AS g ON g.id = t.grant_id WHERE t.hash = $1`,
      [hash],
    );
    const token = why.rows[0];
    if (!token || token.kind !== 'refresh' || token.rotated_at === null) return { ok: false, reason: 'missing' };
    const rotatedAt = ms(token.rotated_at);
    if (token.child_rotated_at !== null || now - rotatedAt > windowMs) {
      return { ok: false, reason: 'used', grantId: token.grant_id as string, usedAt: rotatedAt };
    }
    if (token.revoked_at !== null || token.grant_missing || token.grant_revoked_at !== null) return { ok: false, reason: 'revoked' };
    return { ok: false, reason: 'expired' };
  });
}

/** Any stored refresh token of the family: while the family lives, its newest one is kept (see `prune`). */
export async function findRefreshFamily(db: Db, familyHash: string): Promise<RefreshFamily | null> {
  const { rows } = await db.query(
    'findRefreshFamily',
    `SELECT grant_id, client_id FROM ${db.t.tokens}
    WHERE family_hash = $1 AND kind = 'refresh' LIMIT 1`,
    [familyHash],
  );
  return rows[0] ? { grantId: rows[0].grant_id as string, clientId: rows[0].client_id as string } : null;
}
