/**
 * Consents: round trips, and the scope and the approvals (the scope approved for each resource,
 * RFC 8707) of a second approval merged into the first, also when approvals race.
 */
import { MAX_CONSENT_APPROVALS, type ConsentApproval, type ConsentRecord } from '../../storage/types.js';
import { conformanceCase, type StorageConformanceCase } from './case.js';
import { check, same, sorted } from './check.js';
import { CONFORMANCE_RACERS, T0, id, warmUp } from './fixtures.js';

/** Resource identifiers the cases approve. */
const API = 'https://api.example/v2';
const MCP = 'https://mcp.example/mcp';
const FILES = 'https://files.example/';
/** The approvals of a request without `resource` for `scope` (a fresh array each time: a store may keep it). */
const noResource = (...scope: string[]): ConsentApproval[] => [{ resource: null, scope }];
/** The approvals of a request for `resources` with `scope`. */
const approved = (resources: Array<string | null>, ...scope: string[]): ConsentApproval[] =>
  resources.map((resource) => ({ resource, scope: [...scope] }));
/** Approvals compared whatever their order: by resource (`null` first), each scope sorted. */
const normal = (approvals: readonly ConsentApproval[] | undefined) =>
  (approvals ?? [])
    .map((a) => ({ resource: a.resource, scope: sorted(a.scope ?? []) }))
    .sort((a, b) => (a.resource === b.resource ? 0 : a.resource === null || (b.resource !== null && a.resource < b.resource) ? -1 : 1));
/** A consent with its scope and approvals in that normal order. */
const normalConsent = (c: ConsentRecord) => ({ ...c, scope: sorted(c.scope), approvals: normal(c.approvals) });

/** The cases on consents. */
export const consentCases: readonly StorageConformanceCase[] = [
  conformanceCase('consents: round trip, scope merged on save, grantedAt updated, listConsents per account', async (make) => {
    const storage = await make();
    const accountUuid = id();
    const clientA = id();
    const clientB = id();
    await storage.saveConsent({ accountUuid, clientId: clientA, scope: ['read'], approvals: noResource('read'), grantedAt: T0 });
    same(
      await storage.findConsent(accountUuid, clientA),
      { accountUuid, clientId: clientA, scope: ['read'], approvals: noResource('read'), grantedAt: T0 },
      'findConsent returns the saved consent',
    );
    await storage.saveConsent({ accountUuid, clientId: clientA, scope: ['write'], approvals: noResource('write'), grantedAt: T0 + 5 });
    const merged = await storage.findConsent(accountUuid, clientA);
    check(merged, 'findConsent after a second save returns the consent');
    same(sorted(merged.scope), ['read', 'write'], 'saveConsent merges the new scope into the existing consent (read, then write: both)');
    same(
      normal(merged.approvals),
      noResource('read', 'write'),
      'saveConsent merges the approvals of one resource (here none: resource null) into one, its scope united',
    );
    same(merged.grantedAt, T0 + 5, 'saveConsent records the time of the latest approval');
    await storage.saveConsent({ accountUuid, clientId: clientA, scope: ['read'], approvals: noResource('read'), grantedAt: T0 + 9 });
    const again = await storage.findConsent(accountUuid, clientA);
    same(
      { scope: sorted(again?.scope ?? []), approvals: normal(again?.approvals) },
      { scope: ['read', 'write'], approvals: noResource('read', 'write') },
      'saving a scope already granted neither duplicates nor drops a value',
    );
    await storage.saveConsent({ accountUuid, clientId: clientB, scope: ['read'], approvals: noResource('read'), grantedAt: T0 + 1 });
    const other = id();
    await storage.saveConsent({ accountUuid: other, clientId: clientA, scope: ['read'], approvals: noResource('read'), grantedAt: T0 });
    const listed = (await storage.listConsents(accountUuid)).map(normalConsent).sort((a, b) => (a.clientId < b.clientId ? -1 : 1));
    const expected = [
      { accountUuid, clientId: clientA, scope: ['read', 'write'], approvals: noResource('read', 'write'), grantedAt: T0 + 9 },
      { accountUuid, clientId: clientB, scope: ['read'], approvals: noResource('read'), grantedAt: T0 + 1 },
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
        storage.saveConsent({
          accountUuid,
          clientId,
          scope: [i % 2 ? 'write' : 'read'],
          approvals: noResource(i % 2 ? 'write' : 'read'),
          grantedAt: T0 + i,
        }),
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
    'consents: the scope approved for each resource (RFC 8707) is kept, merged resource by resource on save',
    async (make) => {
      const storage = await make();
      const accountUuid = id();
      const clientId = id();
      const find = async () => {
        const found = await storage.findConsent(accountUuid, clientId);
        check(found, 'findConsent returns the saved consent');
        return normal(found.approvals);
      };
      await storage.saveConsent({ accountUuid, clientId, scope: ['read'], approvals: approved([API], 'read'), grantedAt: T0 });
      same(
        await storage.findConsent(accountUuid, clientId),
        { accountUuid, clientId, scope: ['read'], approvals: approved([API], 'read'), grantedAt: T0 },
        'findConsent returns the approvals as saved (a store must keep them: without them prompt=none never passes)',
      );
      await storage.saveConsent({
        accountUuid,
        clientId,
        scope: ['read', 'write'],
        approvals: approved([MCP], 'read', 'write'),
        grantedAt: T0 + 1,
      });
      same(
        await find(),
        normal([...approved([API], 'read'), ...approved([MCP], 'read', 'write')]),
        'saveConsent keeps the scope of each resource its own: read for API, then read write for MCP, never write for API',
      );
      await storage.saveConsent({ accountUuid, clientId, scope: ['write'], approvals: approved([API, FILES], 'write'), grantedAt: T0 + 2 });
      same(
        await find(),
        normal([...approved([API], 'read', 'write'), ...approved([MCP], 'read', 'write'), ...approved([FILES], 'write')]),
        'saveConsent unites the scope of a resource approved again (API: read, then write) and adds a new one (FILES: write)',
      );
      const copy = await storage.findConsent(accountUuid, clientId);
      copy?.approvals.push({ resource: null, scope: ['write'] });
      copy?.approvals[0]?.scope.push('admin');
      same(
        await find(),
        normal([...approved([API], 'read', 'write'), ...approved([MCP], 'read', 'write'), ...approved([FILES], 'write')]),
        'mutating the approvals of a found consent (the array or the scope of one) must not change the stored one',
      );
      await storage.saveConsent({ accountUuid, clientId, scope: ['read'], approvals: noResource('read'), grantedAt: T0 + 3 });
      same(
        await find(),
        normal([
          ...noResource('read'),
          ...approved([API], 'read', 'write'),
          ...approved([MCP], 'read', 'write'),
          ...approved([FILES], 'write'),
        ]),
        'an approval without resource is kept as the resource null, beside the resources approved before',
      );
      await storage.saveConsent({ accountUuid, clientId, scope: ['write'], approvals: approved([FILES], 'write'), grantedAt: T0 + 4 });
      same(
        (await find())[0],
        { resource: null, scope: ['read'] },
        'a later approval for a resource changes neither the approval without resource nor its scope (write for FILES is not write everywhere)',
      );
      const consent = await storage.findConsent(accountUuid, clientId);
      same(sorted(consent?.scope ?? []), ['read', 'write'], 'scope is every value approved, for any resource');
      const listed = (await storage.listConsents(accountUuid))[0];
      check(listed, 'listConsents returns the consent');
      same(
        normal(listed.approvals),
        normal([
          ...noResource('read'),
          ...approved([API], 'read', 'write'),
          ...approved([MCP], 'read', 'write'),
          ...approved([FILES], 'write'),
        ]),
        'listConsents returns the approvals too',
      );
    },
  ),

  conformanceCase('consents: concurrent approvals of different resources and scope values lose none, nor mix them', async (make) => {
    const storage = await make();
    const accountUuid = id();
    const clientId = id();
    await warmUp(storage);
    const requests = [
      { scope: ['read'], approvals: approved([API], 'read') },
      { scope: ['write'], approvals: approved([API], 'write') },
      { scope: ['write'], approvals: approved([MCP], 'write') },
      { scope: ['read'], approvals: noResource('read') },
      { scope: ['admin'], approvals: approved([FILES, MCP], 'admin') },
    ];
    // The requests in turn, CONFORMANCE_RACERS of them.
    const racers = Array.from({ length: Math.ceil(CONFORMANCE_RACERS / requests.length) }, () => requests)
      .flat()
      .slice(0, CONFORMANCE_RACERS);
    await Promise.all(
      racers.map(({ scope, approvals }, i) =>
        storage.saveConsent({ accountUuid, clientId, scope: [...scope], approvals, grantedAt: T0 + i }),
      ),
    );
    const consent = await storage.findConsent(accountUuid, clientId);
    check(consent, 'a consent exists after concurrent saves');
    same(
      normal(consent.approvals),
      normal([
        ...noResource('read'),
        ...approved([API], 'read', 'write'),
        ...approved([MCP], 'write', 'admin'),
        ...approved([FILES], 'admin'),
      ]),
      'concurrent approvals (read and write for API, write and admin for MCP, admin for FILES, read without resource) must merge into one consent, each resource with exactly the scope approved for it (an insert-or-merge in one step)',
    );
  }),

  conformanceCase(`consents: at most ${MAX_CONSENT_APPROVALS} resources kept, those approved most recently`, async (make) => {
    const storage = await make();
    const accountUuid = id();
    const clientId = id();
    const resource = (i: number) => `https://tenant-${i}.example/api`;
    const total = MAX_CONSENT_APPROVALS + 5;
    await storage.saveConsent({ accountUuid, clientId, scope: ['read'], approvals: noResource('read'), grantedAt: T0 });
    for (let i = 0; i < total; i++) {
      await storage.saveConsent({
        accountUuid,
        clientId,
        scope: ['read'],
        approvals: approved([resource(i)], 'read'),
        grantedAt: T0 + 1 + i,
      });
    }
    // Kept now: resource(total - MAX) to resource(total - 1). The oldest of them approved again is
    // among the most recent, so the next new one drops the one after it.
    const oldest = total - MAX_CONSENT_APPROVALS;
    const again = { accountUuid, clientId, scope: ['write'], approvals: approved([resource(oldest)], 'write'), grantedAt: T0 + 1 + total };
    await storage.saveConsent(again);
    await storage.saveConsent({
      accountUuid,
      clientId,
      scope: ['read'],
      approvals: approved([resource(total)], 'read'),
      grantedAt: T0 + 2 + total,
    });
    const consent = await storage.findConsent(accountUuid, clientId);
    check(consent, 'findConsent returns the consent');
    const expected = normal([
      ...approved([resource(total)], 'read'),
      ...approved([resource(oldest)], 'read', 'write'),
      ...Array.from({ length: MAX_CONSENT_APPROVALS - 2 }, (_, k) => approved([resource(total - 1 - k)], 'read')).flat(),
    ]);
    same(
      normal(consent.approvals),
      expected,
      `a consent keeps the ${MAX_CONSENT_APPROVALS} resources approved most recently (an approval again counts as recent), each with its scope; older ones, and here the approval without resource, are dropped (they are asked for again): nothing grows without bound`,
    );
  }),
];
