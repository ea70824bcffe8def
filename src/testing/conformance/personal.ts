/**
 * Personal access tokens (the `personalTokens` group, `PersonalTokenStorage`; a storage without
 * it passes these cases, one with part of it fails them): a grant of no client with a `name`,
 * stored by `createGrant` with one token of kind `personal`, found like any token, listed by
 * account, its last use kept as the latest of concurrent writes, and revoked with `revokeGrant`.
 */
import type { GrantRecord, PersonalGrantRecord, PersonalTokenRecord, Storage } from '../../storage/types.js';
import type { Account } from '../../types.js';
import { groupCase, type StorageConformanceCase } from './case.js';
import { canonical, check, same } from './check.js';
import { CONFORMANCE_RACERS, T0, hash, id, makeAccount, warmUp, withPair } from './fixtures.js';

/** A personal token of `account` as the core creates it: its grant (no client, a name) and its one token (no client). */
function makePersonal(
  account: Account,
  over: Partial<Omit<PersonalTokenRecord, 'kind'>> = {},
): { grant: PersonalGrantRecord; token: PersonalTokenRecord } {
  const grant: PersonalGrantRecord = {
    id: id(),
    kind: 'personal',
    account,
    scope: ['read'],
    createdAt: T0,
    revokedAt: null,
    name: `CI deploy ${String.fromCharCode(0x2713)}`, // a name beyond ASCII
    lastUsedAt: null,
  };
  const token: PersonalTokenRecord = {
    hash: hash(),
    kind: 'personal',
    grantId: grant.id,
    scope: ['read'],
    issuedAt: T0,
    expiresAt: null,
    pairHash: null,
    rotatedAt: null,
    revokedAt: null,
    ...over,
  };
  return { grant, token };
}

/** Store a personal token with `createGrant`. */
async function withPersonal(storage: Storage, account: Account, over: Partial<Omit<PersonalTokenRecord, 'kind'>> = {}) {
  const personal = makePersonal(account, over);
  await storage.createGrant(personal.grant, { tokens: [personal.token] });
  return personal;
}

const byId = <T extends { grant: GrantRecord }>(list: T[]) => [...list].sort((a, b) => (a.grant.id < b.grant.id ? -1 : 1));

/** The cases on personal access tokens. */
export const personalCases: readonly StorageConformanceCase[] = [
  groupCase(
    'personalTokens',
    'personal tokens (optional): createGrant keeps the name and lastUsedAt; findToken and readToken find the token; listPersonalTokens lists those of the account, revoked ones too, and nothing else',
    async (storage) => {
      const account = makeAccount();
      const first = await withPersonal(storage, account);
      const second = await withPersonal(storage, account, { expiresAt: T0 + 90_000, scope: ['read', 'write'] });
      await withPersonal(storage, makeAccount());
      // An OAuth grant of the same account, of another client: never listed.
      await withPair(storage, {}, { account });
      same(await storage.findToken(first.token.hash), first, 'findToken returns the personal token with its grant (name, lastUsedAt null)');
      if (storage.readToken) same(await storage.readToken(second.token.hash), second, 'readToken answers as findToken does');
      same(
        byId(await storage.listPersonalTokens(account.uuid)),
        byId([first, second]),
        'listPersonalTokens returns every personal token of the account (grant and token), and no OAuth grant or token of another account',
      );
      same(await storage.listPersonalTokens(id()), [], 'listPersonalTokens of an account without any is empty');
      await storage.revokeGrant(first.grant.id, T0 + 3);
      const listed = byId(await storage.listPersonalTokens(account.uuid)).find((p) => p.grant.id === first.grant.id);
      same(listed?.grant.revokedAt, T0 + 3, 'a revoked personal token is still listed, its grant revoked at now');
      same((await storage.findToken(first.token.hash))?.grant.revokedAt, T0 + 3, 'findToken shows it revoked');
    },
  ),

  groupCase(
    'personalTokens',
    'touchPersonalToken: keeps the latest use, never an earlier one, and touches no OAuth grant',
    async (storage) => {
      const account = makeAccount();
      const { grant, token } = await withPersonal(storage, account);
      await storage.touchPersonalToken(grant.id, T0 + 60_001);
      same((await storage.findToken(token.hash))?.grant.lastUsedAt, T0 + 60_001, 'lastUsedAt is the time touched');
      await storage.touchPersonalToken(grant.id, T0 + 5);
      same(
        (await storage.findToken(token.hash))?.grant.lastUsedAt,
        T0 + 60_001,
        'an earlier time (another instance, late) does not replace a later one',
      );
      same((await storage.listPersonalTokens(account.uuid))[0]?.grant.lastUsedAt, T0 + 60_001, 'listPersonalTokens shows lastUsedAt');
      const oauth = await withPair(storage, {}, { account });
      await storage.touchPersonalToken(oauth.grant.id, T0 + 70_000);
      same(
        await storage.findToken(oauth.access.hash),
        { token: oauth.access, grant: oauth.grant },
        'an OAuth grant is not touched (no lastUsedAt)',
      );
      await storage.touchPersonalToken(id(), T0); // unknown grant: no error
    },
  ),

  groupCase(
    'personalTokens',
    'touchPersonalToken racing itself and revokeGrant: the latest use stays, and the token stays revoked',
    async (storage) => {
      const account = makeAccount();
      const { grant, token } = await withPersonal(storage, account);
      await warmUp(storage);
      const times = Array.from({ length: CONFORMANCE_RACERS }, (_, i) => T0 + 1000 * (i + 1));
      // Shuffled, so the latest time is not the last to arrive.
      const order = [...times].sort((a, b) => ((a * 7919) % 13) - ((b * 7919) % 13));
      await Promise.all([
        ...order.slice(0, 10).map((at) => storage.touchPersonalToken(grant.id, at)),
        storage.revokeGrant(grant.id, T0 + 500),
        ...order.slice(10).map((at) => storage.touchPersonalToken(grant.id, at)),
        ...order.map(() => storage.findToken(token.hash)),
      ]);
      const found = await storage.findToken(token.hash);
      check(
        found?.grant.lastUsedAt === times[times.length - 1],
        `concurrent touches must leave the latest time (${times[times.length - 1]}), got ${canonical(found?.grant.lastUsedAt)}: write it with one conditional statement (UPDATE ... WHERE last_used_at IS NULL OR last_used_at < $at)`,
      );
      same(found?.grant.revokedAt, T0 + 500, 'a touch never clears or moves the revocation');
    },
  ),
];
