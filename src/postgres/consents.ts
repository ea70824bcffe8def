/**
 * Consents: the scope and resources an account has approved for a client, one row per account
 * and client.
 */
import type { ConsentRecord } from '../storage/types.js';
import type { Db } from './db.js';
import { ms, strings, type Row } from './rows.js';

const toConsent = (r: Row): ConsentRecord => ({
  accountUuid: r['account_uuid'] as string,
  clientId: r['client_id'] as string,
  scope: strings(r['scope']),
  anyResource: r['any_resource'] === true,
  resources: strings(r['resources']),
  grantedAt: ms(r['granted_at']),
});

/** The values of two arrays, each once, in the order first seen. */
const united = (a: string, b: string) =>
  `ARRAY(SELECT u.s FROM unnest(${a} || ${b}) WITH ORDINALITY AS u(s, i) GROUP BY u.s ORDER BY min(u.i))`;

/**
 * One `INSERT ... ON CONFLICT DO UPDATE` that merges the scope and the resources (united,
 * `any_resource` once true stays true): concurrent approvals lose nothing.
 */
export async function saveConsent(db: Db, consent: ConsentRecord): Promise<void> {
  await db.query(
    'saveConsent',
    `INSERT INTO ${db.t.consents} AS c (account_uuid, client_id, scope, any_resource, resources, granted_at)
    VALUES ($1, $2, $3::text[], $4, $5::text[], $6)
    ON CONFLICT (account_uuid, client_id) DO UPDATE SET
      scope = ${united('c.scope', 'EXCLUDED.scope')},
      any_resource = c.any_resource OR EXCLUDED.any_resource,
      resources = ${united('c.resources', 'EXCLUDED.resources')},
      granted_at = EXCLUDED.granted_at`,
    [
      consent.accountUuid,
      consent.clientId,
      [...new Set(consent.scope)],
      consent.anyResource === true,
      [...new Set(consent.resources)],
      ms(consent.grantedAt),
    ],
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
