/**
 * Pending interactions (a sign-in or a consent the browser is sent to), keyed by the hash of
 * their id, each taken at most once.
 */
import type { AuthorizationRequestRecord, DeviceVerificationRecord, InteractionRecord } from '../storage/types.js';
import type { Account } from '../types.js';
import type { Db } from './db.js';
import { ms, msOrNull, type Row } from './rows.js';

/**
 * An interaction from its row, by what it is for (`purpose`, migration 9: an authorization
 * request's step keeps `request`, a device verification's `device`) and its `kind` (a `consent`
 * names its account).
 */
/** Every column of the interactions table, as `toInteraction` reads them (statements.ts: no `*`). */
export const INTERACTION_COLUMNS = 'id_hash, kind, request, requested_at, expires_at, login_after, account, purpose, device';

export function toInteraction(r: Row): InteractionRecord {
  const idHash = r['id_hash'] as string;
  const requestedAt = ms(r['requested_at']);
  const expiresAt = ms(r['expires_at']);
  const loginAfter = msOrNull(r['login_after']);
  const consent = r['kind'] === 'consent';
  if (r['purpose'] === 'device') {
    return consent
      ? {
          idHash,
          kind: 'consent',
          purpose: 'device',
          device: r['device'] as DeviceVerificationRecord,
          requestedAt,
          expiresAt,
          loginAfter,
          account: r['account'] as Account,
        }
      : { idHash, kind: 'login', purpose: 'device', device: r['device'] as { returnTo: string }, requestedAt, expiresAt, loginAfter };
  }
  const request = r['request'] as AuthorizationRequestRecord;
  return consent
    ? { idHash, kind: 'consent', purpose: 'authorization', request, requestedAt, expiresAt, loginAfter, account: r['account'] as Account }
    : { idHash, kind: 'login', purpose: 'authorization', request, requestedAt, expiresAt, loginAfter };
}

/** Insert the interaction, or replace the one with its id hash. */
export async function saveInteraction(db: Db, interaction: InteractionRecord): Promise<void> {
  const device = interaction.purpose === 'device';
  await db.query(
    'saveInteraction',
    `INSERT INTO ${db.t.interactions}
    (id_hash, kind, purpose, request, device, requested_at, expires_at, login_after, account)
    VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8, $9::jsonb)
    ON CONFLICT (id_hash) DO UPDATE SET kind = EXCLUDED.kind, purpose = EXCLUDED.purpose, request = EXCLUDED.request,
      device = EXCLUDED.device, requested_at = EXCLUDED.requested_at, expires_at = EXCLUDED.expires_at,
      login_after = EXCLUDED.login_after, account = EXCLUDED.account`,
    [
      interaction.idHash,
      interaction.kind,
      interaction.purpose,
      device ? null : JSON.stringify(interaction.request),
      device ? JSON.stringify(interaction.device) : null,
      ms(interaction.requestedAt),
      ms(interaction.expiresAt),
      msOrNull(interaction.loginAfter),
      interaction.account ? JSON.stringify(interaction.account) : null,
    ],
  );
}

/** The interaction with this id hash, expired or not, or null. */
export async function findInteraction(db: Db, idHash: string): Promise<InteractionRecord | null> {
  const { rows } = await db.query('findInteraction', `SELECT ${INTERACTION_COLUMNS} FROM ${db.t.interactions} WHERE id_hash = $1`, [
    idHash,
  ]);
  return rows[0] ? toInteraction(rows[0]) : null;
}

/** One `DELETE ... RETURNING`: of any number of concurrent callers, one gets the row. */
export async function takeInteraction(db: Db, idHash: string, now: number): Promise<InteractionRecord | null> {
  const { rows } = await db.query(
    'takeInteraction',
    `DELETE FROM ${db.t.interactions} WHERE id_hash = $1 RETURNING ${INTERACTION_COLUMNS}`,
    [idHash],
  );
  const record = rows[0] ? toInteraction(rows[0]) : null;
  return record && now < record.expiresAt ? record : null;
}
