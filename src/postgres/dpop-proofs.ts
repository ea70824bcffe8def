/**
 * The DPoP proof group (`DpopProofStorage`, RFC 9449 §11.1): the proofs already seen, one row
 * each, so that of several instances exactly one accepts a proof.
 */
import type { Db } from './db.js';
import { ms } from './rows.js';

/**
 * One `INSERT ... ON CONFLICT`: a new key is inserted, an expired one replaced (`true`); a live
 * one is left as it is and no row comes back (`false`). A concurrent insert of the same key waits
 * for the first to commit and then sees it live, so exactly one caller gets `true`.
 */
export async function rememberDpopProof(db: Db, key: string, expiresAt: number, now: number): Promise<boolean> {
  const { rows } = await db.query(
    'rememberDpopProof',
    `INSERT INTO ${db.t.dpopProofs} AS p (key, expires_at) VALUES ($1, $2)
    ON CONFLICT (key) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE p.expires_at <= $3
    RETURNING 1`,
    [key, ms(expiresAt), ms(now)],
  );
  return rows.length === 1;
}
