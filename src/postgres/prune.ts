/**
 * `prune()`: delete the rows that can never be used again.
 */
import { MAX_REFRESH_WINDOW_SECONDS } from '../storage/types.js';
import type { Db } from './db.js';
import { ms } from './rows.js';

/**
 * What `prune()` deleted, by kind of row.
 * @group Storage
 */
export interface PruneResult {
  interactions: number;
  codes: number;
  tokens: number;
  grants: number;
  /** Expired device authorizations (RFC 8628), whatever their status. */
  devices: number;
}

/**
 * Delete, as of `now`, what can never be used again: one statement per kind of row, not one
 * transaction (each statement's condition keeps what is still needed). The whole run is retried
 * once on a serialization failure or deadlock. The rules are listed at `PostgresStorage.prune`.
 */
export async function prune(db: Db, now: number): Promise<PruneResult> {
  const at = ms(now);
  return db.retrying('prune', async () => {
    const count = async (text: string) => (await db.pool.query(text, [at])).rowCount ?? 0;
    const interactions = await count(`DELETE FROM ${db.t.interactions} WHERE expires_at <= $1`);
    const codes = await count(`DELETE FROM ${db.t.codes} WHERE expires_at <= $1`);
    // Access and personal access tokens alike.
    const access = await count(`DELETE FROM ${db.t.tokens}
      WHERE kind IN ('access', 'personal') AND (revoked_at IS NOT NULL OR (expires_at IS NOT NULL AND expires_at <= $1))`);
    // A family's newest refresh token stays while it, or the access token issued with it, can be
    // used; a rotated one stays while it may be retried (no child rotated, MAX_REFRESH_WINDOW_SECONDS).
    const refresh = await count(`DELETE FROM ${db.t.tokens} AS r
      WHERE r.kind = 'refresh' AND ((r.rotated_at IS NOT NULL
          AND (r.child_rotated_at IS NOT NULL OR r.rotated_at <= $1::bigint - ${MAX_REFRESH_WINDOW_SECONDS * 1000})) OR r.revoked_at IS NOT NULL
        OR (r.expires_at IS NOT NULL AND r.expires_at <= $1
            AND NOT EXISTS (SELECT 1 FROM ${db.t.tokens} AS a WHERE a.hash = r.pair_hash AND a.revoked_at IS NULL
                            AND (a.expires_at IS NULL OR a.expires_at > $1))))`);
    const tokens = access + refresh;
    const grants = await count(`DELETE FROM ${db.t.grants} AS g
      WHERE (g.revoked_at IS NOT NULL AND g.revoked_at <= $1)
         OR (g.created_at <= $1
             AND NOT EXISTS (SELECT 1 FROM ${db.t.codes} AS c WHERE c.grant_id = g.id)
             AND NOT EXISTS (SELECT 1 FROM ${db.t.tokens} AS k WHERE k.grant_id = g.id))`);
    const devices = await count(`DELETE FROM ${db.t.deviceAuthorizations} WHERE expires_at <= $1`);
    await count(`DELETE FROM ${db.t.dpopProofs} WHERE expires_at <= $1`); // not counted: PruneResult counts records
    return { interactions, codes, tokens, grants, devices };
  });
}
