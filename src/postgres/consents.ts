/**
 * Consents: the scope an account has approved for a client, for each resource (RFC 8707) and for
 * requests without resource, one row per account and client; `approvals` is a jsonb array of
 * `{ resource, scope }` (docs/reference.md#stored-consents). Saving one takes the shared issuance
 * locks of its account and client, so that a revocation never misses a consent saved while it
 * runs (locks.ts).
 */
import { MAX_CONSENT_APPROVALS, type ConsentApproval, type ConsentRecord } from '../storage/types.js';
import type { Db } from './db.js';
import { issuanceLocks } from './locks.js';
import { ms, strings, typedParams, type Row } from './rows.js';

/**
 * The approvals of a row, each entry checked: one that is not `{ resource: string | null, scope:
 * string[] }` is left out (it approves nothing), never read as the broadest `null`.
 */
function approvals(value: unknown): ConsentApproval[] {
  if (!Array.isArray(value)) return [];
  const out: ConsentApproval[] = [];
  for (const entry of value as unknown[]) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { resource, scope } = entry as Record<string, unknown>;
    if ((typeof resource === 'string' || resource === null) && Array.isArray(scope) && scope.every((s) => typeof s === 'string')) {
      out.push({ resource, scope: [...scope] });
    }
  }
  return out;
}

/** Every column of the consents table, as `toConsent` reads them (statements.ts: no `*`). */
export const CONSENT_COLUMNS = 'account_uuid, client_id, scope, granted_at, approvals';

const toConsent = (r: Row): ConsentRecord => ({
  accountUuid: r['account_uuid'] as string,
  clientId: r['client_id'] as string,
  scope: strings(r['scope']),
  approvals: approvals(r['approvals']),
  grantedAt: ms(r['granted_at']),
});

/** The scope of an approval entry when it is an array, else an empty one (jsonb_array_elements throws on others). */
const scopeArray = (entry: string) => `CASE WHEN jsonb_typeof(${entry}->'scope') = 'array' THEN ${entry}->'scope' ELSE '[]'::jsonb END`;

/**
 * The approvals of `newer` then those of `older` (jsonb arrays), merged by resource (the JSON
 * `null` resource being one more), the scope values of each united in the order first seen, at
 * most MAX_CONSENT_APPROVALS resources: those approved least recently are dropped. The merge of
 * MemoryStorage (src/storage/memory.ts), in one expression.
 */
const mergedApprovals = (newer: string, older: string) => `(
  SELECT COALESCE(jsonb_agg(jsonb_build_object('resource', m.resource, 'scope', m.scope) ORDER BY m.first), '[]'::jsonb)
  FROM (
    SELECT v.resource, min(v.i) AS first,
      COALESCE(jsonb_agg(v.value ORDER BY v.i, v.j) FILTER (WHERE v.first_seen), '[]'::jsonb) AS scope
    FROM (
      SELECT a.entry->'resource' AS resource, a.i, s.value, s.j,
        s.value IS NOT NULL AND row_number() OVER (PARTITION BY a.entry->'resource', s.value ORDER BY a.i, s.j) = 1 AS first_seen
      FROM (
        -- An entry of another shape approves nothing, as toConsent reads it: dropped. One without
        -- a resource is never taken for the approval without resource (JSON null).
        SELECT e.entry, e.i FROM jsonb_array_elements(${newer} || ${older}) WITH ORDINALITY AS e(entry, i)
        WHERE jsonb_typeof(e.entry->'resource') IN ('string', 'null') AND jsonb_typeof(e.entry->'scope') = 'array'
          AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(${scopeArray('e.entry')}) AS x(value) WHERE jsonb_typeof(x.value) <> 'string')
      ) a
      LEFT JOIN LATERAL jsonb_array_elements(${scopeArray('a.entry')}) WITH ORDINALITY AS s(value, j) ON true
    ) v
    GROUP BY v.resource
    ORDER BY min(v.i)
    LIMIT ${MAX_CONSENT_APPROVALS}
  ) m
)`;

/** The values of two arrays, each once, in the order first seen. */
const united = (a: string, b: string) =>
  `ARRAY(SELECT u.s FROM unnest(${a} || ${b}) WITH ORDINALITY AS u(s, i) GROUP BY u.s ORDER BY min(u.i))`;

/**
 * One `INSERT ... ON CONFLICT DO UPDATE` that merges the scope (united) and the approvals (by
 * resource): concurrent approvals lose nothing. The statement first takes the shared issuance
 * locks of the account and the client (no round trip of its own), held until it commits: a
 * revocation that deletes consents waits for a consent being written, and then deletes it; one
 * already under way when the consent comes makes it wait, and the consent lands after it
 * (locks.ts). Without them, a consent inserted while the revocation's DELETE ran survived it, and
 * `prompt=none` went on issuing to an application the user had just revoked.
 */
export async function saveConsent(db: Db, consent: ConsentRecord): Promise<void> {
  const values: unknown[] = [];
  const upsert = consentUpsert(db, consent, values, 'FROM locked');
  await db.query('saveConsent', `WITH locked AS (${issuanceLocks(db.locks, '$1', '$2')}) ${upsert}`, values);
}

/**
 * The `INSERT ... ON CONFLICT DO UPDATE` of a consent (see `saveConsent`), its values appended to
 * `values` (the account and the client first), its row coming `from` the statement's CTE that
 * took the issuance locks (`FROM locked`): for `saveConsent`, and for `approveInteraction`
 * (approvals.ts), which saves it in the statement that creates the grant.
 */
export function consentUpsert(db: Db, consent: ConsentRecord, values: unknown[], from: string): string {
  // Each resource once, each scope value once: the merge above then only has rows to unite.
  const byResource = new Map<string | null, Set<string>>();
  for (const { resource, scope } of consent.approvals) {
    const set = byResource.get(resource) ?? new Set<string>();
    for (const value of scope) set.add(value);
    byResource.set(resource, set);
  }
  const approved = [...byResource].slice(0, MAX_CONSENT_APPROVALS).map(([resource, scope]) => ({ resource, scope: [...scope] }));
  const row = [consent.accountUuid, consent.clientId, [...new Set(consent.scope)], JSON.stringify(approved), ms(consent.grantedAt)];
  return `INSERT INTO ${db.t.consents} AS c (account_uuid, client_id, scope, approvals, granted_at)
    SELECT ${typedParams(values, row, ['text', 'text', 'text[]', 'jsonb', 'bigint'])} ${from}
    ON CONFLICT (account_uuid, client_id) DO UPDATE SET
      scope = ${united('c.scope', 'EXCLUDED.scope')},
      approvals = ${mergedApprovals('EXCLUDED.approvals', 'c.approvals')},
      granted_at = EXCLUDED.granted_at`;
}

/** The consent of this account for this client, or null. */
export async function findConsent(db: Db, accountUuid: string, clientId: string): Promise<ConsentRecord | null> {
  const { rows } = await db.query(
    'findConsent',
    `SELECT ${CONSENT_COLUMNS} FROM ${db.t.consents} WHERE account_uuid = $1 AND client_id = $2`,
    [accountUuid, clientId],
  );
  return rows[0] ? toConsent(rows[0]) : null;
}

/** Every consent of the account, the latest first. */
export async function listConsents(db: Db, accountUuid: string): Promise<ConsentRecord[]> {
  const { rows } = await db.query(
    'listConsents',
    `SELECT ${CONSENT_COLUMNS} FROM ${db.t.consents} WHERE account_uuid = $1 ORDER BY granted_at DESC, client_id`,
    [accountUuid],
  );
  return rows.map(toConsent);
}
