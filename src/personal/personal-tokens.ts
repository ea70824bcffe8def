import { BoundedMap } from '../bounded-map.js';
import { audit, type Context } from '../context.js';
import { randomId, randomToken, sha256Base64url } from '../crypto.js';
import { OAuthError } from '../errors.js';
import { plainLine, plausibleId } from '../rules.js';
import { copyAccount } from '../storage/copy.js';
import { requireGroup } from '../storage/groups.js';
import type { PersonalGrantRecord, PersonalTokenRead, PersonalTokenRecord, Storage, TokenRead } from '../storage/types.js';
import { liveness } from '../tokens/lookup.js';
import type { Account, CreatedPersonalToken, PersonalTokenInfo, PersonalTokenInput, PersonalVerifiedToken } from '../types.js';

/**
 * Personal access tokens (docs/reference.md#personal-access-tokens): a token an account creates
 * for itself, with a name, a scope and an optional expiry. Each is a grant of kind `personal` (no
 * client, its `name`) and one token record of kind `personal` (no client), so the lookup,
 * revocation (`revokeGrant`) and prune of OAuth tokens serve it unchanged.
 */

/** Longest name of a personal token. */
const MAX_NAME = 100;
/** Longest expiry: ten years, as every other lifetime option. */
const MAX_EXPIRES_IN = 10 * 365 * 24 * 3600;
/** `lastUsedAt` is written at most once per this interval per token and server instance. */
export const LAST_USED_INTERVAL = 60_000;

/**
 * Which ids had something written lately, to write again only after `interval` ms: a bounded map
 * (oldest first, by insertion order). A token pushed out is written at its next use: at worst one
 * write per use while more than `max` tokens are in use at once.
 */
export class RecentWrites {
  private readonly at: BoundedMap<string, number>;
  constructor(
    max: number,
    private readonly interval: number,
  ) {
    this.at = new BoundedMap(max);
  }

  /** Whether something of `id` is to be written at `now`, and if so remember it. */
  due(id: string, now: number): boolean {
    const last = this.at.get(id);
    // A clock that went back counts as due: the stored time keeps the later one anyway.
    if (last !== undefined && now >= last && now - last < this.interval) return false;
    this.at.set(id, now);
    return true;
  }

  get size(): number {
    return this.at.size;
  }
}

/** The account as a token's grant keeps it: a uuid, a name and an email, each a string. */
function checkedAccount(account: unknown): Account {
  const a = account as Partial<Account> | null;
  if (!a || typeof a !== 'object' || !plausibleId(a.uuid) || typeof a.name !== 'string' || typeof a.email !== 'string') {
    throw new OAuthError('invalid_request', 'The account must have a uuid, a name and an email.');
  }
  return copyAccount(a as Account);
}

/** The scope asked for, in the server's vocabulary (a list or the wire form); absent: the default scope. */
function checkedScope(ctx: Context, scope: unknown): string[] {
  const text = Array.isArray(scope) && scope.every((s) => typeof s === 'string') ? scope.join(' ') : scope;
  if (text !== undefined && (typeof text !== 'string' || text === '')) {
    throw new OAuthError('invalid_scope', 'The scope must be a list of scope values of this server.');
  }
  const parsed = ctx.scopes.parse(text);
  if (parsed === null || parsed.length === 0) {
    throw new OAuthError('invalid_scope', `The scope must be made of this server's scope values: ${ctx.scopes.values.join(', ')}.`);
  }
  return parsed;
}

/** Create a personal token: stored hashed, its value returned once. */
export async function createPersonalToken(ctx: Context, input: PersonalTokenInput): Promise<CreatedPersonalToken> {
  requireGroup(ctx.storage, 'personalTokens');
  const account = checkedAccount(input?.account);
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (!plainLine(name, MAX_NAME)) {
    throw new OAuthError('invalid_request', `The token name must be 1 to ${MAX_NAME} characters, without control characters.`);
  }
  const scope = checkedScope(ctx, input.scope);
  const expiresIn = input.expiresIn ?? null;
  if (expiresIn !== null && (!Number.isSafeInteger(expiresIn) || expiresIn <= 0 || expiresIn > MAX_EXPIRES_IN)) {
    throw new OAuthError(
      'invalid_request',
      `expiresIn must be a whole number of seconds from 1 to ${MAX_EXPIRES_IN}, or null for no expiry.`,
    );
  }
  // As at every code exchange and refresh: no new credential for a disabled or deleted account.
  const active = ctx.options.isAccountActive;
  if (active && !(await active(account.uuid))) throw new OAuthError('invalid_request', 'The account is not active.');
  const now = ctx.clock.now();
  const token = `${ctx.options.tokenPrefixes.personalToken}${randomToken()}`;
  const grant: PersonalGrantRecord = {
    id: randomId(),
    kind: 'personal',
    account,
    scope,
    createdAt: now,
    revokedAt: null,
    name,
    lastUsedAt: null,
  };
  const record: PersonalTokenRecord = {
    hash: sha256Base64url(token),
    kind: 'personal',
    grantId: grant.id,
    scope,
    issuedAt: now,
    expiresAt: expiresIn === null ? null : now + expiresIn * 1000,
    pairHash: null,
    rotatedAt: null,
    revokedAt: null,
  };
  await ctx.storage.createGrant(grant, { tokens: [record] });
  audit(ctx, { type: 'personal_token.created', accountUuid: account.uuid, tokenId: grant.id, scope, expiresAt: record.expiresAt });
  return { token, ...info({ grant, token: record }) };
}

/** Whether a store's answer is what it must be: a personal token and its personal grant (checked at run time: the store is the host's). */
const isPersonal = (read: PersonalTokenRead): boolean => read.grant.kind === 'personal' && read.token.kind === 'personal';

/** What a host may show of a stored personal token (never its hash). */
function info({ grant, token }: PersonalTokenRead): PersonalTokenInfo {
  return {
    id: grant.id,
    name: grant.name,
    scope: [...token.scope],
    createdAt: grant.createdAt,
    expiresAt: token.expiresAt,
    lastUsedAt: grant.lastUsedAt,
  };
}

/** The live (not revoked) personal tokens of an account, newest first; expired ones stay until pruned. */
export async function listPersonalTokens(ctx: Context, accountUuid: string): Promise<PersonalTokenInfo[]> {
  const store = requireGroup(ctx.storage, 'personalTokens');
  if (!plausibleId(accountUuid)) return [];
  const found = await store.listPersonalTokens(accountUuid);
  return found
    .filter((p) => p.grant.account.uuid === accountUuid && isPersonal(p) && p.grant.revokedAt === null && p.token.revokedAt === null)
    .map(info)
    .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1));
}

/**
 * Revoke a personal token of this account; `false` (and nothing changes) when the account has no
 * such live token: the id of another account's token, one already revoked, or one expired (it
 * is dead already, and stays listed until `prune`; docs/reference.md#personal-access-tokens).
 */
export async function revokePersonalToken(ctx: Context, accountUuid: string, id: string): Promise<boolean> {
  const store = requireGroup(ctx.storage, 'personalTokens');
  if (!plausibleId(accountUuid) || typeof id !== 'string') return false;
  const found = (await store.listPersonalTokens(accountUuid)).find(
    (p) => p.grant.id === id && p.grant.account.uuid === accountUuid && isPersonal(p),
  );
  const now = ctx.clock.now();
  // Live as at the bearer check (`verifyPersonal`): an expired token is dead already.
  if (!found || liveness(found, now) !== 'live') return false;
  await ctx.storage.revokeGrant(id, now);
  audit(ctx, { type: 'personal_token.revoked', accountUuid, tokenId: id, via: 'account' });
  return true;
}

/**
 * The bearer check of a personal token (found, of kind `personal`), after the OAuth checks
 * refused it as no access token: `null` when it is not usable (revoked, expired: reported as
 * `personal_token.used_after_expiry`, at most once a minute), else the verified token, its
 * last use recorded (at most once a minute, never awaited: a failure goes to `report`).
 */
export function verifyPersonal(
  ctx: Context,
  found: NonNullable<TokenRead>,
  now: number,
  report: (error: unknown) => void,
): PersonalVerifiedToken | null {
  const { token, grant } = found;
  // A personal token belongs to a personal grant (a store that says otherwise is broken: refused).
  if (token.kind !== 'personal' || grant.kind !== 'personal') return null;
  const state = liveness(found, now);
  if (state === 'revoked') return null;
  if (state === 'expired') {
    if (token.expiresAt !== null && ctx.personal.expiredUses.due(grant.id, now)) {
      audit(ctx, {
        type: 'personal_token.used_after_expiry',
        accountUuid: grant.account.uuid,
        tokenId: grant.id,
        expiresAt: token.expiresAt,
      });
    }
    return null;
  }
  if (ctx.personal.uses.due(grant.id, now)) touch(ctx.storage, grant.id, now, report);
  return {
    kind: 'personal',
    // Copies: the records may be the store's own (readToken).
    account: ctx.storage.readToken ? copyAccount(grant.account) : grant.account,
    scope: [...token.scope],
    expiresAt: token.expiresAt ?? Number.MAX_SAFE_INTEGER,
    personalToken: { id: grant.id, name: grant.name },
  };
}

/** Record a use, without waiting for the store: whatever fails (also synchronously) is reported. */
function touch(storage: Storage, grantId: string, now: number, report: (error: unknown) => void): void {
  try {
    const done = storage.touchPersonalToken?.(grantId, now);
    if (done) done.then(undefined, report);
  } catch (error) {
    report(error);
  }
}

/** Fresh memories for a server instance (`Context.personal`). */
export const personalMemory = (): Context['personal'] => ({
  uses: new RecentWrites(10_000, LAST_USED_INTERVAL),
  expiredUses: new RecentWrites(10_000, LAST_USED_INTERVAL),
});
