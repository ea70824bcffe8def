/**
 * Rows to records, what every topic shares: times, text arrays, and a grant joined to a code or
 * a token. bigint columns arrive as strings from `pg`: every time goes through `ms()`.
 */
import type { GrantRecord, OAuthGrantRecord } from '../storage/types.js';

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

/**
 * Append `row` to a statement's `values` and answer its placeholders, each cast to its column's
 * type (`$4::jsonb, $5::text[], ...`): for statements built from parts whose values share one
 * list, and rows that stand alone (`INSERT ... SELECT`), where the database cannot take the types
 * from the target columns.
 */
export function typedParams(values: unknown[], row: readonly unknown[], types: readonly string[]): string {
  const base = values.length;
  values.push(...row);
  return types.map((type, i) => `$${base + i + 1}::${type}`).join(', ');
}

/**
 * A grant from columns named with `prefix` (`g_id`, `g_client_id`, ... in joins), by its kind
 * (migration 9): an OAuth grant has its client, a personal access token's grant its name and
 * last use and no client. One literal per kind, as rows are read on every bearer check.
 */
export const toGrant = (r: Row, prefix = ''): GrantRecord =>
  r[`${prefix}kind`] === 'personal'
    ? {
        id: r[`${prefix}id`] as string,
        kind: 'personal',
        account: r[`${prefix}account`] as GrantRecord['account'],
        scope: strings(r[`${prefix}scope`]),
        createdAt: ms(r[`${prefix}created_at`]),
        revokedAt: msOrNull(r[`${prefix}revoked_at`]),
        name: r[`${prefix}name`] as string,
        lastUsedAt: msOrNull(r[`${prefix}last_used_at`]),
      }
    : oauthGrantRow(r, prefix);

/** An OAuth grant's row: one literal, and its OpenID Connect section only when the row has one. */
function oauthGrantRow(r: Row, prefix: string): OAuthGrantRecord {
  const grant: OAuthGrantRecord = {
    id: r[`${prefix}id`] as string,
    kind: 'oauth',
    clientId: r[`${prefix}client_id`] as string,
    account: r[`${prefix}account`] as GrantRecord['account'],
    scope: strings(r[`${prefix}scope`]),
    createdAt: ms(r[`${prefix}created_at`]),
    revokedAt: msOrNull(r[`${prefix}revoked_at`]),
  };
  // Migration 11: NULL (a grant of a plain OAuth request) stays absent.
  const openid = r[`${prefix}openid`];
  if (openid != null) grant.openid = openid as { authTime: number };
  return grant;
}

/**
 * The grant of a code or a refresh token: an OAuth grant, as only those have codes and refresh
 * tokens. A row that says otherwise is broken data, refused as `ms()` refuses a broken time.
 */
export function toOAuthGrant(r: Row, prefix = ''): OAuthGrantRecord {
  const grant = toGrant(r, prefix);
  if (grant.kind !== 'oauth') throw new TypeError('PostgresStorage: a code or refresh token of a grant that is not an OAuth grant');
  return grant;
}

/** `columns` (a comma-separated list) of the table `alias`: `a.x, a.y`. */
export const qualified = (columns: string, alias: string): string =>
  columns
    .split(', ')
    .map((column) => `${alias}.${column}`)
    .join(', ');

/** The columns of the grant `alias`, named as `toGrant(row, 'g_')` reads them. */
export const GRANT_COLUMNS = (alias: string) =>
  `${alias}.id AS g_id, ${alias}.kind AS g_kind, ${alias}.client_id AS g_client_id, ${alias}.account AS g_account, ` +
  `${alias}.scope AS g_scope, ${alias}.created_at AS g_created_at, ${alias}.revoked_at AS g_revoked_at, ` +
  `${alias}.name AS g_name, ${alias}.last_used_at AS g_last_used_at, ${alias}.openid AS g_openid`;
