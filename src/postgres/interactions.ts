/**
 * Pending interactions (a sign-in or a consent the browser is sent to), keyed by the hash of
 * their id, each taken at most once.
 */
import type { InteractionRecord } from '../storage/types.js';
import type { Account } from '../types.js';
import type { Db } from './db.js';
import { ms, msOrNull, type Row } from './rows.js';

function toInteraction(r: Row): InteractionRecord {
  // `kind` and `account` are read back as they were saved (a `consent` names its account).
  const record = {
    idHash: r['id_hash'] as string,
    kind: r['kind'] as InteractionRecord['kind'],
    request: r['request'] as InteractionRecord['request'],
    requestedAt: ms(r['requested_at']),
    expiresAt: ms(r['expires_at']),
    loginAfter: msOrNull(r['login_after']),
  } as InteractionRecord;
  if (r['account'] !== null && r['account'] !== undefined) record.account = r['account'] as Account;
  return record;
}

/** Insert the interaction, or replace the one with its id hash. */
export async function saveInteraction(db: Db, interaction: InteractionRecord): Promise<void> {
  await db.query(
    'saveInteraction',
    `INSERT INTO ${db.t.interactions}
    (id_hash, kind, request, requested_at, expires_at, login_after, account)
    VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7::jsonb)
    ON CONFLICT (id_hash) DO UPDATE SET kind = EXCLUDED.kind, request = EXCLUDED.request,
      requested_at = EXCLUDED.requested_at, expires_at = EXCLUDED.expires_at,
      login_after = EXCLUDED.login_after, account = EXCLUDED.account`,
    [
      interaction.idHash,
      interaction.kind,
      JSON.stringify(interaction.request),
      ms(interaction.requestedAt),
      ms(interaction.expiresAt),
      msOrNull(interaction.loginAfter),
      interaction.account ? JSON.stringify(interaction.account) : null,
    ],
  );
}

/** The interaction with this id hash, expired or not, or null. */
export async function findInteraction(db: Db, idHash: string): Promise<InteractionRecord | null> {
  const { rows } = await db.query('findInteraction', `SELECT * FROM ${db.t.interactions} WHERE id_hash = $1`, [idHash]);
  return rows[0] ? toInteraction(rows[0]) : null;
}

/** One `DELETE ... RETURNING`: of any number of concurrent callers, one gets the row. */
export async function takeInteraction(db: Db, idHash: string, now: number): Promise<InteractionRecord | null> {
  const { rows } = await db.query('takeInteraction', `DELETE FROM ${db.t.interactions} WHERE id_hash = $1 RETURNING *`, [idHash]);
  const record = rows[0] ? toInteraction(rows[0]) : null;
  return record && now < record.expiresAt ? record : null;
}
