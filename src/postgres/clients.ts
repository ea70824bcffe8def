/**
 * Registered clients: one row per client, replaced on every save.
 */
import type { ClientChanges, ClientRecord } from '../storage/types.js';
import type { Db } from './db.js';
import { ms, strings, type Row } from './rows.js';

/**
 * Every column of the clients table, as `toClient` reads them: statements name their columns,
 * never `*` (statements.ts). test/storage/postgres.test.ts ("prepared statements") holds it to the
 * migrated table.
 */
export const CLIENT_COLUMNS =
  'id, name, redirect_uri, secret_hash, created_at, response_types, grant_types, registration, client_uri, logo_uri, owner, metadata, openid, dpop_bound_access_tokens';

export function toClient(r: Row): ClientRecord {
  const client: ClientRecord = {
    id: r['id'] as string,
    name: r['name'] as string,
    redirectUri: r['redirect_uri'] as string,
    secretHash: (r['secret_hash'] as string | null) ?? null,
    createdAt: ms(r['created_at']),
  };
  // NULL stays absent: the server's defaults.
  if (Array.isArray(r['response_types'])) client.responseTypes = strings(r['response_types']) as ClientRecord['responseTypes'];
  if (Array.isArray(r['grant_types'])) client.grantTypes = strings(r['grant_types']) as ClientRecord['grantTypes'];
  // Columns of migration 4: NULL (every client stored before it) stays absent, a reviewed client.
  if (r['registration'] != null) client.registration = r['registration'] as ClientRecord['registration'];
  if (r['client_uri'] != null) client.clientUri = r['client_uri'] as string;
  if (r['logo_uri'] != null) client.logoUri = r['logo_uri'] as string;
  // Columns of migration 7: NULL stays absent.
  if (r['owner'] != null) client.owner = r['owner'] as string;
  if (r['metadata'] != null) client.metadata = r['metadata'] as Record<string, unknown>;
  if (r['dpop_bound_access_tokens'] === true) client.dpopBoundAccessTokens = true;
  // Migration 11: NULL stays absent.
  if (r['openid'] != null) client.openid = r['openid'] as NonNullable<ClientRecord['openid']>;
  return client;
}

/** Insert the client, or replace every field of the one with its id. */
export async function saveClient(db: Db, client: ClientRecord): Promise<void> {
  await db.query(
    'saveClient',
    `INSERT INTO ${db.t.clients} (id, name, redirect_uri, secret_hash, created_at, response_types, grant_types,
      registration, client_uri, logo_uri, owner, metadata, dpop_bound_access_tokens, openid)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14::jsonb)
    ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, redirect_uri = EXCLUDED.redirect_uri,
      secret_hash = EXCLUDED.secret_hash, created_at = EXCLUDED.created_at,
      response_types = EXCLUDED.response_types, grant_types = EXCLUDED.grant_types,
      registration = EXCLUDED.registration, client_uri = EXCLUDED.client_uri, logo_uri = EXCLUDED.logo_uri,
      owner = EXCLUDED.owner, metadata = EXCLUDED.metadata, dpop_bound_access_tokens = EXCLUDED.dpop_bound_access_tokens, openid = EXCLUDED.openid`,
    [
      client.id,
      client.name,
      client.redirectUri,
      client.secretHash,
      ms(client.createdAt),
      client.responseTypes ?? null,
      client.grantTypes ?? null,
      client.registration ?? null,
      client.clientUri ?? null,
      client.logoUri ?? null,
      client.owner ?? null,
      client.metadata === undefined ? null : JSON.stringify(client.metadata),
      client.dpopBoundAccessTokens === true,
      client.openid === undefined ? null : JSON.stringify(client.openid),
    ],
  );
}

/** The client with this id, or null. */
export async function findClient(db: Db, clientId: string): Promise<ClientRecord | null> {
  const { rows } = await db.query('findClient', `SELECT ${CLIENT_COLUMNS} FROM ${db.t.clients} WHERE id = $1`, [clientId]);
  return rows[0] ? toClient(rows[0]) : null;
}

/** Only the given columns of an existing client, in one UPDATE (never an INSERT): `false` when it is gone. */
export async function updateClientFields(db: Db, clientId: string, changes: ClientChanges): Promise<boolean> {
  const { rowCount } = await db.query(
    'updateClientFields',
    `UPDATE ${db.t.clients} SET
      name = CASE WHEN $2 THEN $3 ELSE name END,
      redirect_uri = CASE WHEN $4 THEN $5 ELSE redirect_uri END,
      secret_hash = CASE WHEN $6 THEN $7 ELSE secret_hash END,
      metadata = CASE WHEN $8 THEN $9::jsonb ELSE metadata END,
      openid = CASE WHEN $10 THEN $11::jsonb ELSE openid END
    WHERE id = $1`,
    [
      clientId,
      changes.name !== undefined,
      changes.name ?? null,
      changes.redirectUri !== undefined,
      changes.redirectUri ?? null,
      changes.secretHash !== undefined,
      changes.secretHash ?? null,
      changes.metadata !== undefined,
      changes.metadata == null ? null : JSON.stringify(changes.metadata),
      changes.openid !== undefined,
      changes.openid == null ? null : JSON.stringify(changes.openid),
    ],
  );
  return (rowCount ?? 0) > 0;
}

/** The clients (of one owner when given), oldest first; ties in id order, so the order is stable. */
export async function listClients(db: Db, filter: { owner?: string }): Promise<ClientRecord[]> {
  const { rows } =
    filter.owner === undefined
      ? await db.query('listClients', `SELECT ${CLIENT_COLUMNS} FROM ${db.t.clients} ORDER BY created_at, id`, [])
      : await db.query('listClients', `SELECT ${CLIENT_COLUMNS} FROM ${db.t.clients} WHERE owner = $1 ORDER BY created_at, id`, [
          filter.owner,
        ]);
  return rows.map(toClient);
}

/**
 * One statement, after the client's exclusive issuance lock (`Db.revoke`, locks.ts): every grant
 * of the client revoked, its consents and the client deleted. Codes and tokens stay until
 * `prune()`, refused through their revoked grant.
 */
export async function deleteClient(db: Db, clientId: string, now: number): Promise<void> {
  await db.revoke(
    'deleteClient',
    'client',
    clientId,
    `WITH revoked AS (
      UPDATE ${db.t.grants} SET revoked_at = $2 WHERE client_id = $1 AND revoked_at IS NULL
    ), consents AS (
      DELETE FROM ${db.t.consents} WHERE client_id = $1
    ), devices AS (
      UPDATE ${db.t.deviceAuthorizations} SET status = 'denied', account = NULL WHERE status = 'approved' AND client_id = $1
    )
    DELETE FROM ${db.t.clients} WHERE id = $1`,
    [clientId, ms(now)],
  );
}
