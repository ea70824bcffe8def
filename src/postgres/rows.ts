/**
 * Rows to records, what every topic shares: times, text arrays, and a grant joined to a code or
 * a token. bigint columns arrive as strings from `pg`: every time goes through `ms()`.
 */
import type { GrantRecord } from '../storage/types.js';

/** A row as `pg` returns it. */
export type Row = Record<string, unknown>;

/** A time (ms since epoch) from a bigint column or an argument; throws unless it is a safe integer. */
export function ms(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new TypeError('PostgresStorage: a stored time is not a safe integer');
  return n;
}
/** `ms()` of a nullable time. */
export const msOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : ms(value));
/** A `text[]` column as strings. */
export const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

/** A grant from columns named with `prefix` (`g_id`, `g_client_id`, ... in joins). */
export const toGrant = (r: Row, prefix = ''): GrantRecord => {
  const grant: GrantRecord = {
    id: r[`${prefix}id`] as string,
    clientId: r[`${prefix}client_id`] as string,
    account: r[`${prefix}account`] as GrantRecord['account'],
    scope: strings(r[`${prefix}scope`]),
    createdAt: ms(r[`${prefix}created_at`]),
    revokedAt: msOrNull(r[`${prefix}revoked_at`]),
  };
  // A personal access token's grant only (schema version 5); absent on OAuth grants.
  const name = r[`${prefix}name`];
  if (typeof name === 'string') {
    grant.name = name;
    grant.lastUsedAt = msOrNull(r[`${prefix}last_used_at`]);
  }
  return grant;
};

/** The columns of the grant `alias`, named as `toGrant(row, 'g_')` reads them. */
export const GRANT_COLUMNS = (alias: string) =>
  `${alias}.id AS g_id, ${alias}.client_id AS g_client_id, ${alias}.account AS g_account, ${alias}.scope AS g_scope, ` +
  `${alias}.created_at AS g_created_at, ${alias}.revoked_at AS g_revoked_at, ${alias}.name AS g_name, ${alias}.last_used_at AS g_last_used_at`;
