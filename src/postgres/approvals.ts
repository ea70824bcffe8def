/**
 * The combined approval (the `combinedApproval` group): a user's approval of an authorization
 * request as one read (the interaction with its request's client) and one statement that takes
 * the interaction and, only if it took it unexpired, saves the consent and creates the grant
 * with its code or tokens, under the issuance locks of the account and the client (locks.ts).
 * Two round trips where the separate steps make five.
 */
import type { ClientRecord, CodeRecord, ConsentRecord, InteractionRecord, OAuthGrantRecord, TokenRecord } from '../storage/types.js';
import { toClient } from './clients.js';
import { consentUpsert } from './consents.js';
import type { Db } from './db.js';
import { grantCreation } from './grants.js';
import { toInteraction } from './interactions.js';
import { issuanceLocks } from './locks.js';
import { ms, type Row } from './rows.js';

/** `findInteraction`, and the client of an authorization step's request, in one statement (`jsonb` rows, as combined.ts). */
export async function findInteractionAndClient(
  db: Db,
  idHash: string,
): Promise<{ interaction: InteractionRecord | null; client: ClientRecord | null }> {
  const { rows } = await db.query(
    'findInteractionAndClient',
    `SELECT to_jsonb(i) AS interaction,
      (SELECT to_jsonb(c) FROM ${db.t.clients} AS c WHERE i.purpose = 'authorization' AND c.id = i.request->>'clientId') AS client
    FROM ${db.t.interactions} AS i WHERE i.id_hash = $1`,
    [idHash],
  );
  const row = rows[0];
  if (!row) return { interaction: null, client: null };
  return { interaction: toInteraction(row['interaction'] as Row), client: row['client'] ? toClient(row['client'] as Row) : null };
}

/**
 * One statement: the interaction's `DELETE ... RETURNING` (of concurrent callers, one gets the
 * row), then, only when it was unexpired at `now`, the issuance locks of the account and the
 * client, and, reading them, the consent's upsert and the grant's INSERT with its code or
 * tokens. All of it commits together or not at all; an expired interaction is deleted alone.
 */
export async function approveInteraction(
  db: Db,
  idHash: string,
  now: number,
  consent: ConsentRecord,
  grant: OAuthGrantRecord,
  issued: { code?: CodeRecord; tokens?: TokenRecord[] },
): Promise<boolean> {
  const values: unknown[] = [idHash, ms(now), grant.account.uuid, grant.clientId];
  const upsert = consentUpsert(db, consent, values, 'FROM locked');
  const created = grantCreation(db, grant, issued, values, 'FROM locked');
  const { rows } = await db.query(
    'approveInteraction',
    `WITH taken AS (
      DELETE FROM ${db.t.interactions} WHERE id_hash = $1 RETURNING expires_at
    ),
    locked AS (${issuanceLocks(db.locks, '$3', '$4', 'FROM taken WHERE taken.expires_at > $2')}),
    consented AS (${upsert}), ${created}
    SELECT id FROM created`,
    values,
  );
  return rows.length === 1;
}
