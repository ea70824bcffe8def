/**
 * Revocation: `revokeGrant` reaches the whole family (also tokens issued while it races
 * rotations and redemptions), `revokeAccess` and `revokeClientGrants` reach what they name and
 * nothing else.
 */
import type { OAuthTokenRecord } from '../../storage/types.js';
import { conformanceCase, type StorageConformanceCase } from './case.js';
import { check, canonical, same, expectFailure } from './check.js';
import { CONFORMANCE_RACERS, T0, id, makeAccount, makePair, withCode, withPair, warmUp, isLive } from './fixtures.js';

/** The cases on revocation. */
export const revocationCases: readonly StorageConformanceCase[] = [
  conformanceCase(
    'revokeGrant: revokes the whole family at once, is idempotent (the first revokedAt stays), touches no other grant',
    async (make) => {
      const storage = await make();
      const { grant, access, refresh } = await withPair(storage);
      const other = await withPair(storage, {}, { clientId: grant.clientId, account: grant.account });
      await storage.revokeGrant(grant.id, T0 + 7);
      const found = await storage.findToken(access.hash);
      same(found?.grant.revokedAt, T0 + 7, 'findToken shows the grant revoked at now');
      same((await storage.findToken(refresh.hash))?.grant.revokedAt, T0 + 7, 'every token of the family shows the grant revoked');
      expectFailure(
        await storage.rotateRefreshToken(refresh.hash, T0 + 8, makePair(grant, T0 + 8)),
        'revoked',
        'rotateRefreshToken after revokeGrant',
      );
      await storage.revokeGrant(grant.id, T0 + 99);
      same((await storage.findToken(access.hash))?.grant.revokedAt, T0 + 7, 'a second revokeGrant keeps the first revokedAt');
      same(
        (await storage.findToken(other.access.hash))?.grant.revokedAt,
        null,
        'another grant of the same account and client is untouched',
      );
      await storage.revokeGrant(id(), T0); // unknown grant: no error
      const { grant: g2, code: c2 } = await withCode(storage);
      await storage.revokeGrant(g2.id, T0 + 1);
      expectFailure(await storage.redeemCode(c2.hash, T0 + 2, []), 'revoked', 'redeemCode after revokeGrant');
    },
  ),

  conformanceCase('revokeGrant racing rotations and redemptions leaves no live token in the family', async (make) => {
    const storage = await make();
    const half = CONFORMANCE_RACERS / 2;
    // Two rounds: the revocation issued before the racers, and in the middle of them.
    for (const revokeFirst of [true, false]) {
      const { grant, refresh } = await withPair(storage);
      const { grant: g2, code } = await withCode(storage);
      const rotatePairs = Array.from({ length: CONFORMANCE_RACERS }, () => makePair(grant, T0 + 20));
      const redeemPairs = Array.from({ length: CONFORMANCE_RACERS }, () => makePair(g2, T0 + 20));
      const rotate = (pairs: OAuthTokenRecord[][]) => pairs.map((p) => storage.rotateRefreshToken(refresh.hash, T0 + 20, p));
      const redeem = (pairs: OAuthTokenRecord[][]) => pairs.map((p) => storage.redeemCode(code.hash, T0 + 20, p));
      const revoke = () => [storage.revokeGrant(grant.id, T0 + 20), storage.revokeGrant(g2.id, T0 + 20)];
      await warmUp(storage);
      await Promise.all(
        revokeFirst
          ? [...revoke(), ...rotate(rotatePairs), ...redeem(redeemPairs)]
          : [
              ...rotate(rotatePairs.slice(0, half)),
              ...redeem(redeemPairs.slice(0, half)),
              ...revoke(),
              ...rotate(rotatePairs.slice(half)),
              ...redeem(redeemPairs.slice(half)),
            ],
      );
      for (const token of [refresh, ...rotatePairs.flat(), ...redeemPairs.flat()]) {
        const found = await storage.findToken(token.hash);
        check(
          !isLive(found, T0 + 21),
          `a token issued while its grant was being revoked is still live afterwards: ${canonical(found)}. Revocation must reach every token of the family, also those inserted concurrently (e.g. every lookup joins the grant's revoked flag).`,
        );
      }
    }
  }),

  conformanceCase('revokeAccess: deletes the consent and revokes every grant of that account and client, and only those', async (make) => {
    const storage = await make();
    const account = makeAccount();
    const clientId = id();
    const otherClient = id();
    await storage.saveConsent({
      accountUuid: account.uuid,
      clientId,
      scope: ['read'],
      approvals: [{ resource: null, scope: ['read'] }],
      grantedAt: T0,
    });
    await storage.saveConsent({
      accountUuid: account.uuid,
      clientId: otherClient,
      scope: ['read'],
      approvals: [{ resource: null, scope: ['read'] }],
      grantedAt: T0,
    });
    const first = await withPair(storage, {}, { account, clientId });
    const second = await withCode(storage, {}, { account, clientId });
    const earlier = await withPair(storage, {}, { account, clientId });
    await storage.revokeGrant(earlier.grant.id, T0 + 1);
    const keepClient = await withPair(storage, {}, { account, clientId: otherClient });
    const keepAccount = await withPair(storage, {}, { account: makeAccount(), clientId });
    await storage.saveConsent({
      accountUuid: keepAccount.grant.account.uuid,
      clientId,
      scope: ['read'],
      approvals: [{ resource: null, scope: ['read'] }],
      grantedAt: T0,
    });

    await storage.revokeAccess(account.uuid, clientId, T0 + 50);
    same(await storage.findConsent(account.uuid, clientId), null, 'the consent of the account and client is deleted');
    same((await storage.findToken(first.access.hash))?.grant.revokedAt, T0 + 50, 'a grant of the pair is revoked at now');
    expectFailure(
      await storage.redeemCode(second.code.hash, T0 + 51, []),
      'revoked',
      'redeemCode of a pending code of the pair after revokeAccess',
    );
    same((await storage.findToken(earlier.access.hash))?.grant.revokedAt, T0 + 1, 'a grant revoked earlier keeps its revokedAt');
    same(
      (await storage.findToken(keepClient.access.hash))?.grant.revokedAt,
      null,
      "the same account's grant of another client is untouched",
    );
    same(
      (await storage.findToken(keepAccount.access.hash))?.grant.revokedAt,
      null,
      "another account's grant of the same client is untouched",
    );
    check(await storage.findConsent(account.uuid, otherClient), "the account's consent for another client stays");
    check(await storage.findConsent(keepAccount.grant.account.uuid, clientId), "another account's consent for the client stays");
    await storage.revokeAccess(id(), id(), T0); // nothing to revoke: no error
  }),

  conformanceCase('revokeClientGrants: revokes every grant of the client for every account; consents stay', async (make) => {
    const storage = await make();
    const clientId = id();
    const a = await withPair(storage, {}, { clientId });
    const b = await withCode(storage, {}, { clientId });
    const other = await withPair(storage);
    await storage.saveConsent({
      accountUuid: a.grant.account.uuid,
      clientId,
      scope: ['read'],
      approvals: [{ resource: null, scope: ['read'] }],
      grantedAt: T0,
    });
    await storage.revokeClientGrants(clientId, T0 + 3);
    same((await storage.findToken(a.refresh.hash))?.grant.revokedAt, T0 + 3, 'a grant of the client is revoked at now');
    expectFailure(
      await storage.redeemCode(b.code.hash, T0 + 4, []),
      'revoked',
      "redeemCode of another account's pending code of the client",
    );
    same((await storage.findToken(other.access.hash))?.grant.revokedAt, null, "another client's grant is untouched");
    check(await storage.findConsent(a.grant.account.uuid, clientId), "the users' consents stay");
  }),
];
