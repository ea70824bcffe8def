/**
 * Consents: the scope an account has approved for a client, one row per account and client.
 */
import type { ConsentRecord } from '../storage/types.js';
import type { Db } from './db.js';
import { ms, strings, type Row } from './rows.js';

const toConsent = (r: Row): ConsentRecord => ({
  accountUuid: r['account_uuid'] as string,
  clientId: r['client_id'] as string,
  scope: strings(r['scope']),
  grantedAt: ms(r['granted_at']),
});

/** One `INSERT ... ON CONFLICT DO UPDATE` that merges the scope: concurrent approvals lose nothing. */
export async function saveConsent(db: Db, consent: ConsentRecord): Promise<void> {
  await db.query(
    'saveConsent',
    `INSERT INTO ${db.t.consents} AS c (account_uuid, client_id, scope, granted_at)
    VALUES ($1, $2, $3::text[], $4)
    ON CONFLICT (account_uuid, client_id) DO UPDATE SET
      scope = ARRAY(SELECT u.s FROM unnest(c.scope || EXCLUDED.scope) WITH ORDINALITY AS u(s, i) GROUP BY u.s ORDER BY min(u.i)),
      granted_at = EXCLUDED.granted_at`,
    [consent.accountUuid, consent.clientId, [...new Set(consent.scope)], ms(consent.grantedAt)],
  );
}

/** The consent of this account for this client, or null. */
export async function findConsent(db: Db, accountUuid: string, clientId: string): Promise<ConsentRecord | null> {
  const { rows } = await db.query('findConsent', `SELECT * FROM ${db.t.consents} WHERE account_uuid = $1 AND client_id = $2`, [
    accountUuid,
    clientId,
  ]);
  return rows[0] ? toConsent(rows[0]) : null;
}

/** Every consent of the account, the latest first. */
export async function listConsents(db: Db, accountUuid: string): Promise<ConsentRecord[]> {
  const { rows } = await db.query(
    'listConsents',
    `SELECT * FROM ${db.t.consents} WHERE account_uuid = $1 ORDER BY granted_at DESC, client_id`,
    [accountUuid],
  );
  return rows.map(toConsent);
}
