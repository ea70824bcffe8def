/**
 * Consents: round trips, and the scope of a second approval merged into the first, also when
 * approvals race.
 */
import { conformanceCase, type StorageConformanceCase } from './case.js';
import { check, same, sorted } from './check.js';
import { CONFORMANCE_RACERS, T0, id, warmUp } from './fixtures.js';

/** The cases on consents. */
export const consentCases: readonly StorageConformanceCase[] = [
  conformanceCase('consents: round trip, scope merged on save, grantedAt updated, listConsents per account', async (make) => {
    const storage = await make();
    const accountUuid = id();
    const clientA = id();
    const clientB = id();
    await storage.saveConsent({ accountUuid, clientId: clientA, scope: ['read'], grantedAt: T0 });
    same(
      await storage.findConsent(accountUuid, clientA),
      { accountUuid, clientId: clientA, scope: ['read'], grantedAt: T0 },
      'findConsent returns the saved consent',
    );
    await storage.saveConsent({ accountUuid, clientId: clientA, scope: ['write'], grantedAt: T0 + 5 });
    const merged = await storage.findConsent(accountUuid, clientA);
    check(merged, 'findConsent after a second save returns the consent');
    same(sorted(merged.scope), ['read', 'write'], 'saveConsent merges the new scope into the existing consent (read, then write: both)');
    same(merged.grantedAt, T0 + 5, 'saveConsent records the time of the latest approval');
    await storage.saveConsent({ accountUuid, clientId: clientA, scope: ['read'], grantedAt: T0 + 9 });
    same(
      sorted((await storage.findConsent(accountUuid, clientA))?.scope ?? []),
      ['read', 'write'],
      'saving a scope already granted neither duplicates nor drops a value',
    );
    await storage.saveConsent({ accountUuid, clientId: clientB, scope: ['read'], grantedAt: T0 + 1 });
    const other = id();
    await storage.saveConsent({ accountUuid: other, clientId: clientA, scope: ['read'], grantedAt: T0 });
    const listed = (await storage.listConsents(accountUuid))
      .map((c) => ({ ...c, scope: sorted(c.scope) }))
      .sort((a, b) => (a.clientId < b.clientId ? -1 : 1));
    const expected = [
      { accountUuid, clientId: clientA, scope: ['read', 'write'], grantedAt: T0 + 9 },
      { accountUuid, clientId: clientB, scope: ['read'], grantedAt: T0 + 1 },
    ].sort((a, b) => (a.clientId < b.clientId ? -1 : 1));
    same(listed, expected, 'listConsents returns every consent of the account, and only of that account');
    same(await storage.listConsents(id()), [], 'listConsents of an account without consents is empty');
    same(await storage.findConsent(accountUuid, id()), null, 'findConsent of an unknown pair is null');
  }),

  conformanceCase('consents: concurrent saveConsent calls for one account and client lose no scope', async (make) => {
    const storage = await make();
    const accountUuid = id();
    const clientId = id();
    await warmUp(storage);
    await Promise.all(
      Array.from({ length: CONFORMANCE_RACERS }, (_, i) =>
        storage.saveConsent({ accountUuid, clientId, scope: [i % 2 ? 'write' : 'read'], grantedAt: T0 + i }),
      ),
    );
    const consent = await storage.findConsent(accountUuid, clientId);
    check(consent, 'a consent exists after concurrent saves');
    same(
      sorted(consent.scope),
      ['read', 'write'],
      'concurrent approvals of read and of write must merge into one consent with both (an insert-or-merge in one step, e.g. INSERT ... ON CONFLICT DO UPDATE)',
    );
    same((await storage.listConsents(accountUuid)).length, 1, 'concurrent saves leave exactly one consent for the pair');
  }),
];
