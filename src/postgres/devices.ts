/**
 * Device authorizations (RFC 8628): created with a user code unique among live ones, decided once
 * on the verification page, and polled at the token endpoint until exchanged once.
 */
import type {
  DeviceAuthorizationFields,
  DeviceAuthorizationRecord,
  DevicePoll,
  OAuthGrantRecord,
  OAuthTokenRecord,
  PendingDeviceAuthorizationRecord,
} from '../storage/types.js';
import type { Account } from '../types.js';
import type { Db } from './db.js';
import { insertGrant } from './grants.js';
import { issuanceLocks } from './locks.js';
import { ms, msOrNull, strings, type Row } from './rows.js';
import { insertTokens } from './tokens.js';

/** Every column of the device authorizations table, as `toDevice` reads them (statements.ts: no `*`). */
export const DEVICE_COLUMNS =
  'hash, user_code_hash, client_id, scope, resources, created_at, expires_at, poll_interval, last_polled_at, status, account, decided_at';

function toDevice(r: Row): DeviceAuthorizationRecord {
  const fields: DeviceAuthorizationFields = {
    hash: r['hash'] as string,
    userCodeHash: r['user_code_hash'] as string,
    clientId: r['client_id'] as string,
    scope: strings(r['scope']),
    createdAt: ms(r['created_at']),
    expiresAt: ms(r['expires_at']),
    interval: Number(r['poll_interval']),
    lastPolledAt: msOrNull(r['last_polled_at']),
  };
  if (r['resources'] != null) fields.resources = strings(r['resources']);
  // The columns of each status (the CHECK of migration 9 holds every row to them).
  const status = r['status'] as DeviceAuthorizationRecord['status'];
  switch (status) {
    case 'pending':
      return { ...fields, status, account: null, decidedAt: null };
    case 'denied':
      return { ...fields, status, account: null, decidedAt: ms(r['decided_at']) };
    default: {
      const account = r['account'] as Account | null;
      if (account === null) throw new TypeError(`PostgresStorage: a device authorization ${status} by no account`);
      return { ...fields, status, account, decidedAt: ms(r['decided_at']) };
    }
  }
}

/**
 * One `INSERT ... ON CONFLICT (user_code_hash) DO UPDATE ... WHERE` the holder of the user code
 * has expired: a live holder keeps it (no row returned: `false`), an expired one is replaced.
 */
export async function createDeviceAuthorization(db: Db, d: PendingDeviceAuthorizationRecord): Promise<boolean> {
  const { rows } = await db.query(
    'createDeviceAuthorization',
    `INSERT INTO ${db.t.deviceAuthorizations} AS d
    (hash, user_code_hash, client_id, scope, resources, created_at, expires_at, poll_interval, last_polled_at, status, account, decided_at)
    VALUES ($1, $2, $3, $4::text[], $5::text[], $6, $7, $8, $9, $10, $11::jsonb, $12)
    ON CONFLICT (user_code_hash) DO UPDATE SET hash = EXCLUDED.hash, client_id = EXCLUDED.client_id, scope = EXCLUDED.scope,
      resources = EXCLUDED.resources, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at,
      poll_interval = EXCLUDED.poll_interval, last_polled_at = EXCLUDED.last_polled_at, status = EXCLUDED.status,
      account = EXCLUDED.account, decided_at = EXCLUDED.decided_at
    WHERE d.expires_at <= EXCLUDED.created_at
    RETURNING 1`,
    [
      d.hash,
      d.userCodeHash,
      d.clientId,
      d.scope,
      d.resources ?? null,
      ms(d.createdAt),
      ms(d.expiresAt),
      d.interval,
      msOrNull(d.lastPolledAt),
      d.status,
      null, // pending: no account and no decision yet
      null,
    ],
  );
  return rows.length === 1;
}

/** The record holding this user code, whatever its status or expiry, or null. */
export async function findDeviceAuthorization(db: Db, userCodeHash: string): Promise<DeviceAuthorizationRecord | null> {
  const { rows } = await db.query(
    'findDeviceAuthorization',
    `SELECT ${DEVICE_COLUMNS} FROM ${db.t.deviceAuthorizations} WHERE user_code_hash = $1`,
    [userCodeHash],
  );
  return rows[0] ? toDevice(rows[0]) : null;
}

/**
 * One conditional `UPDATE ... WHERE status = 'pending' AND expires_at > $now`: of concurrent
 * deciders, one wins. An approval is a grant in waiting (the next poll redeems it), so it takes
 * the shared issuance locks of the account and of the record's client in the same statement,
 * before it writes: a revocation of either waits for it, then denies it (locks.ts).
 */
export async function decideDeviceAuthorization(db: Db, hash: string, now: number, account: Account | null): Promise<boolean> {
  const { rowCount } = account
    ? await db.query(
        'decideDeviceAuthorization',
        `WITH locked AS (${issuanceLocks(db.locks, '$4', 'l.client_id', `FROM ${db.t.deviceAuthorizations} AS l WHERE l.hash = $1`)})
        UPDATE ${db.t.deviceAuthorizations} SET status = 'approved', account = $3::jsonb, decided_at = $2 FROM locked
        WHERE hash = $1 AND status = 'pending' AND expires_at > $2`,
        [hash, ms(now), JSON.stringify(account), account.uuid],
      )
    : await db.query(
        'decideDeviceAuthorization',
        `UPDATE ${db.t.deviceAuthorizations} SET status = 'denied', decided_at = $2
        WHERE hash = $1 AND status = 'pending' AND expires_at > $2`,
        [hash, ms(now)],
      );
  return rowCount === 1;
}

/**
 * One transaction: the row is locked (`SELECT ... FOR UPDATE`, so concurrent polls of one device
 * code take turns), judged as `Storage.pollDeviceAuthorization` says, and updated.
 */
export async function pollDeviceAuthorization(db: Db, hash: string, clientId: string, now: number, leewayMs: number): Promise<DevicePoll> {
  const at = ms(now);
  return db.transaction('pollDeviceAuthorization', async (tx) => {
    const { rows } = await tx.query(`SELECT ${DEVICE_COLUMNS} FROM ${db.t.deviceAuthorizations} WHERE hash = $1 FOR UPDATE`, [hash]);
    const record = rows[0] ? toDevice(rows[0]) : null;
    if (!record || record.clientId !== clientId) return { status: 'missing' };
    if (record.status === 'redeemed') return { status: 'redeemed' };
    if (at >= record.expiresAt) return { status: 'expired' };
    if (record.status === 'approved') return { status: 'approved', record: { ...record, status: 'approved' } };
    if (record.status === 'denied') return { status: 'denied' };
    const tooSoon = record.lastPolledAt !== null && at - record.lastPolledAt < record.interval * 1000 - leewayMs;
    const interval = tooSoon ? record.interval + 5 : record.interval;
    await tx.query(`UPDATE ${db.t.deviceAuthorizations} SET last_polled_at = $2, poll_interval = $3 WHERE hash = $1`, [hash, at, interval]);
    return tooSoon ? { status: 'slow_down', interval } : { status: 'pending' };
  });
}

/**
 * One transaction: a conditional `UPDATE ... WHERE status = 'approved' AND expires_at > $now`
 * marks the record redeemed (of concurrent callers, one matches), then the grant and its tokens
 * are inserted; a failure rolls all of it back, so the approval waits for the next poll. The
 * UPDATE first takes the shared issuance locks of the grant's account and client, held until
 * the COMMIT: a revocation of either waits for the redemption and then revokes its grant, or
 * denies the approval first, and the UPDATE then matches nothing (locks.ts).
 */
export async function redeemDeviceAuthorization(
  db: Db,
  hash: string,
  now: number,
  grant: OAuthGrantRecord,
  tokens: OAuthTokenRecord[],
): Promise<boolean> {
  return db.transaction('redeemDeviceAuthorization', async (tx) => {
    const { rowCount } = await tx.query(
      `WITH locked AS (${issuanceLocks(db.locks, '$3', '$4')})
      UPDATE ${db.t.deviceAuthorizations} SET status = 'redeemed' FROM locked
      WHERE hash = $1 AND status = 'approved' AND expires_at > $2`,
      [hash, ms(now), grant.account.uuid, grant.clientId],
    );
    if (rowCount !== 1) return false;
    await insertGrant(db, tx, grant);
    await insertTokens(db, tx, tokens);
    return true;
  });
}
