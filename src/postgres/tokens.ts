/**
 * Access and refresh tokens: stored by the hash of their value, looked up joined to their grant
 * (whose revoked flag every lookup sees), and refresh tokens rotated at most once.
 */
import type { GrantRecord, OAuthTokenRecord, RefreshFamily, SingleUseOutcome, TokenRecord } from '../storage/types.js';
import type { Db } from './db.js';
import type { PgPoolClient } from './pool.js';
import { GRANT_COLUMNS, ms, msOrNull, strings, toGrant, toOAuthGrant, type Row } from './rows.js';

/** A token from its row (`t.*`). */
export const toToken = (r: Row): TokenRecord => {
  const token = toTokenFields(r);
  if (r['family_hash'] != null) token.familyHash = r['family_hash'] as string; // refresh tokens only
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
  'hash, kind, grant_id, client_id, scope, issued_at, expires_at, pair_hash, rotated_at, revoked_at, family_hash, audience, dpop_jkt';

/** Insert `tokens` on `tx` in one statement, inside the transaction that issues them. */
export async function insertTokens(db: Db, tx: PgPoolClient, tokens: TokenRecord[]): Promise<void> {
  if (tokens.length === 0) return;
  const values: unknown[] = [];
  const rows = tokens.map((token) => {
    const base = values.length;
    values.push(
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
      token.kind === 'personal' ? null : (token.dpop?.jkt ?? null),
    );
    return `(${Array.from({ length: 13 }, (_, i) => `$${base + i + 1}${i === 4 || i === 11 ? '::text[]' : ''}`).join(', ')})`;
  });
  await tx.query(`INSERT INTO ${db.t.tokens} (${TOKEN_COLUMNS}) VALUES ${rows.join(', ')}`, values);
}

/** The token with this hash and its grant, in whatever state, or null: one query, joined. */
export async function findToken(db: Db, hash: string): Promise<{ token: TokenRecord; grant: GrantRecord } | null> {
  const { rows } = await db.query(
    'findToken',
    `SELECT t.*, ${GRANT_COLUMNS('g')}
    FROM ${db.t.tokens} AS t JOIN ${db.t.grants} AS g ON g.id = t.grant_id WHERE t.hash = $1`,
    [hash],
  );
  return rows[0] ? { token: toToken(rows[0]), grant: toGrant(rows[0], 'g_') } : null;
}

/**
 * One transaction: a conditional `UPDATE ... WHERE rotated_at IS NULL AND revoked_at IS NULL
 * AND not expired AND grant not revoked RETURNING` marks the refresh token rotated, the paired
 * access token is revoked, and the new pair inserted; all of it commits together or not at
 * all. No row: nothing changed, and a `SELECT` says why.
 */
export async function rotateRefreshToken(db: Db, hash: string, now: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome> {
  const at = ms(now);
  return db.transaction('rotateRefreshToken', async (tx) => {
    const { rows } = await tx.query(
      `UPDATE ${db.t.tokens} AS t SET rotated_at = $2
      FROM ${db.t.grants} AS g
      WHERE t.hash = $1 AND t.kind = 'refresh' AND t.rotated_at IS NULL AND t.revoked_at IS NULL
        AND (t.expires_at IS NULL OR t.expires_at > $2)
        AND g.id = t.grant_id AND g.revoked_at IS NULL
      RETURNING t.pair_hash, ${GRANT_COLUMNS('g')}`,
      [hash, at],
    );
    const rotated = rows[0];
    if (rotated) {
      if (rotated.pair_hash !== null) {
        await tx.query(`UPDATE ${db.t.tokens} SET revoked_at = $2 WHERE hash = $1 AND revoked_at IS NULL`, [rotated.pair_hash, at]);
      }
      await insertTokens(db, tx, tokens);
      return { ok: true, grant: toOAuthGrant(rotated, 'g_') };
    }
    const why = await tx.query(
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
