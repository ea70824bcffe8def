/**
 * Transaction-level advisory locks: the migration lock (migrate.ts), and the issuance locks that
 * keep a revocation from missing a grant, a device approval or a consent stored while it runs
 * (docs/architecture.md, "Revocation racing issuance").
 *
 * Why the issuance locks: a revocation is an UPDATE of every grant of an account or client. At
 * READ COMMITTED a statement sees the rows committed when it started; a grant that a concurrent
 * transaction inserts (a device redemption, an approval's code, an implicit token, a personal
 * access token) and commits while the revocation runs is not seen, so it stays live although it
 * was handed out before the revocation returned. A device approval (`status = 'approved'`) being
 * committed is missed the same way, and becomes a live grant at the next poll.
 *
 * The same holds for a consent: revokeAccess, revokeAccountGrants and deleteClient delete
 * consents in that statement, and a consent that saveConsent inserts and commits while it runs
 * survives, so that `prompt=none` goes on issuing to an application the user has just revoked.
 *
 * So every step that inserts a grant, approves a device authorization or saves a consent takes
 * two shared locks in its first statement, one keyed by the account and one by the client, and
 * holds them until it commits; shared locks do not wait for each other, so issuance is never
 * serialized. Each revocation takes the exclusive lock of its account (revokeAccountGrants,
 * revokeAccess) or its client (revokeClientGrants, deleteClient) in a statement of its own, then
 * runs its UPDATE in a second statement, which takes a new snapshot: it waits for every issuance
 * already under way, then sees it, and an issuance that starts later waits for the revocation to
 * commit, then finds the approval denied, inserts a grant issued after the revocation (which is
 * live, as any grant issued afterwards) or saves a consent given after it. The lock cannot be
 * folded into the revocation's UPDATE: a statement keeps the snapshot it took before it waited.
 *
 * A step of the core that writes twice takes the locks twice, and a revocation can come in
 * between: an approval saves its consent and then creates its grant, and a device approval saves
 * its consent and then decides, so one whose consent was being saved when the revocation came
 * answers after it (its grant or decision waits), with its consent deleted and its code or
 * approval live (issued after the revocation). The consent goes first for that reason: written
 * second, it would land after a revocation that had already revoked the first write, and survive
 * it.
 *
 * Codes and tokens added to an existing grant (redeemCode, rotateRefreshToken) take no lock:
 * every lookup reads the grant's revoked flag, so a revocation that commits before or after them
 * reaches them either way.
 *
 * The keys are the two-`int` form `(space, hashtext(value))`: `space` names the store (schema and
 * table prefix) and the kind, so stores in one database never wait for each other; `hashtext` is
 * PostgreSQL's own text hash, computed in SQL so that a statement can key a lock by a column it
 * reads (the client of a device authorization). A collision of two values only makes one wait
 * for the other, never lets anything through.
 */

/** FNV-1a of a string, as a signed 32-bit integer: the first key of a two-key advisory lock. */
export function lockKey(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

/** The lock spaces of one store: the first key of its account and its client locks. */
export interface LockSpaces {
  account: number;
  client: number;
}

/** The lock spaces of the tables of `schema` whose names start with `prefix`. */
export function lockSpaces(schema: string, prefix: string): LockSpaces {
  return { account: lockKey(`${schema}.${prefix}#account`), client: lockKey(`${schema}.${prefix}#client`) };
}

/**
 * A one-row `SELECT` that takes the shared issuance locks of an account and a client, for a
 * `WITH locked AS (...)` the statement then reads (`FROM locked`), so the locks are taken before
 * the statement writes a row. `account` and `client` are SQL expressions: parameters (`$3`) or
 * columns; `from` is an optional `FROM ... WHERE ...` for the columns.
 */
export function issuanceLocks(spaces: LockSpaces, account: string, client: string, from = ''): string {
  return `SELECT pg_advisory_xact_lock_shared(${spaces.account}, hashtext(${account})) AS account_lock,
    pg_advisory_xact_lock_shared(${spaces.client}, hashtext(${client})) AS client_lock ${from}`;
}

/** The statement that takes a revocation's exclusive lock on `$1`, an account or a client. */
export function revocationLock(spaces: LockSpaces, kind: keyof LockSpaces): string {
  return `SELECT pg_advisory_xact_lock(${spaces[kind]}, hashtext($1))`;
}
