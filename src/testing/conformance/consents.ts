/**
 * Consents: round trips, and the scope and resources (RFC 8707) of a second approval merged into
 * the first, also when approvals race.
 */
import { conformanceCase, type StorageConformanceCase } from './case.js';
import { check, same, sorted } from './check.js';
import { CONFORMANCE_RACERS, T0, id, warmUp } from './fixtures.js';

/** Resource identifiers the cases approve. */
const API = 'https://api.example/v2';
const MCP = 'https://mcp.example/mcp';
const FILES = 'https://files.example/';
/** What an approval of a request without `resource` stores (a fresh array each time: a store may keep it). */
const noResource = () => ({ anyResource: true, resources: [] as string[] });

/** The cases on consents. */
export const consentCases: readonly StorageConformanceCase[] = [
  conformanceCase('consents: round trip, scope merged on save, grantedAt updated, listConsents per account', async (make) => {
    const storage = await make();
    const accountUuid = id();
    const clientA = id();
    const clientB = id();
    await storage.saveConsent({ accountUuid, clientId: clientA, scope: ['read'], ...noResource(), grantedAt: T0 });
    same(
      await storage.findConsent(accountUuid, clientA),
      { accountUuid, clientId: clientA, scope: ['read'], ...noResource(), grantedAt: T0 },
      'findConsent returns the saved consent',
    );
    await storage.saveConsent({ accountUuid, clientId: clientA, scope: ['write'], ...noResource(), grantedAt: T0 + 5 });
    const merged = await storage.findConsent(accountUuid, clientA);
    check(merged, 'findConsent after a second save returns the consent');
    same(sorted(merged.scope), ['read', 'write'], 'saveConsent merges the new scope into the existing consent (read, then write: both)');
    same(merged.grantedAt, T0 + 5, 'saveConsent records the time of the latest approval');
    await storage.saveConsent({ accountUuid, clientId: clientA, scope: ['read'], ...noResource(), grantedAt: T0 + 9 });
    same(
      sorted((await storage.findConsent(accountUuid, clientA))?.scope ?? []),
      ['read', 'write'],
      'saving a scope already granted neither duplicates nor drops a value',
    );
    await storage.saveConsent({ accountUuid, clientId: clientB, scope: ['read'], ...noResource(), grantedAt: T0 + 1 });
    const other = id();
    await storage.saveConsent({ accountUuid: other, clientId: clientA, scope: ['read'], ...noResource(), grantedAt: T0 });
    const listed = (await storage.listConsents(accountUuid))
      .map((c) => ({ ...c, scope: sorted(c.scope) }))
      .sort((a, b) => (a.clientId < b.clientId ? -1 : 1));
    const expected = [
      { accountUuid, clientId: clientA, scope: ['read', 'write'], ...noResource(), grantedAt: T0 + 9 },
      { accountUuid, clientId: clientB, scope: ['read'], ...noResource(), grantedAt: T0 + 1 },
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
        storage.saveConsent({ accountUuid, clientId, scope: [i % 2 ? 'write' : 'read'], ...noResource(), grantedAt: T0 + i }),
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

  conformanceCase(
    'consents: the approved resources (RFC 8707) are kept, united on save; anyResource once true stays true',
    async (make) => {
      const storage = await make();
      const accountUuid = id();
      const clientId = id();
      const find = async () => {
        const found = await storage.findConsent(accountUuid, clientId);
        check(found, 'findConsent returns the saved consent');
        return { anyResource: found.anyResource, resources: sorted(found.resources ?? []) };
      };
      await storage.saveConsent({ accountUuid, clientId, scope: ['read'], anyResource: false, resources: [API], grantedAt: T0 });
      same(
        await storage.findConsent(accountUuid, clientId),
        { accountUuid, clientId, scope: ['read'], anyResource: false, resources: [API], grantedAt: T0 },
        'findConsent returns anyResource and resources as saved (a store must keep both: without them prompt=none never passes)',
      );
      await storage.saveConsent({ accountUuid, clientId, scope: ['read'], anyResource: false, resources: [MCP, API], grantedAt: T0 + 1 });
      same(
        await find(),
        { anyResource: false, resources: sorted([API, MCP]) },
        'saveConsent unites the resources with those of the existing consent, each once (API, then MCP and API: both, once)',
      );
      const copy = await storage.findConsent(accountUuid, clientId);
      copy?.resources.push(FILES);
      same((await find()).resources, sorted([API, MCP]), 'mutating the resources of a found consent must not change the stored one');
      await storage.saveConsent({ accountUuid, clientId, scope: ['read'], anyResource: true, resources: [], grantedAt: T0 + 2 });
      same(
        await find(),
        { anyResource: true, resources: sorted([API, MCP]) },
        'an approval without resource sets anyResource and keeps the resources approved before',
      );
      await storage.saveConsent({ accountUuid, clientId, scope: ['read'], anyResource: false, resources: [FILES], grantedAt: T0 + 3 });
      same(
        await find(),
        { anyResource: true, resources: sorted([API, FILES, MCP]) },
        'a later approval for named resources never clears anyResource (approvals only widen a consent)',
      );
      const listed = (await storage.listConsents(accountUuid))[0];
      check(listed, 'listConsents returns the consent');
      same(
        { anyResource: listed.anyResource, resources: sorted(listed.resources ?? []) },
        { anyResource: true, resources: sorted([API, FILES, MCP]) },
        'listConsents returns anyResource and resources too',
      );
    },
  ),

  conformanceCase('consents: concurrent approvals of different resources lose none, nor anyResource', async (make) => {
    const storage = await make();
    const accountUuid = id();
    const clientId = id();
    await warmUp(storage);
    const approvals = [
      { anyResource: false, resources: [API] },
      { anyResource: false, resources: [MCP] },
      { anyResource: false, resources: [FILES] },
      { anyResource: true, resources: [] },
    ];
    await Promise.all(
      Array.from({ length: CONFORMANCE_RACERS }, (_, i) =>
        storage.saveConsent({ accountUuid, clientId, scope: ['read'], ...approvals[i % approvals.length]!, grantedAt: T0 + i }),
      ),
    );
    const consent = await storage.findConsent(accountUuid, clientId);
    check(consent, 'a consent exists after concurrent saves');
    same(
      { anyResource: consent.anyResource, resources: sorted(consent.resources ?? []) },
      { anyResource: true, resources: sorted([API, FILES, MCP]) },
      'concurrent approvals of API, MCP, FILES and of no resource must merge into one consent with all three and anyResource (an insert-or-merge in one step)',
    );
  }),
];
