/**
 * Managing clients and accounts (docs/reference.md#managing-clients): a client's `owner` and
 * `metadata` round trip (the core), and, when the storage has the group, the client
 * administration group (`listClients`, `updateClientFields`, `deleteClient`) and the account
 * administration group (`revokeAccountGrants`): the server's management calls need them,
 * nothing else does.
 */
import type { ClientRecord, ConsentRecord } from '../../storage/types.js';
import { conformanceCase, groupCase, type StorageConformanceCase } from './case.js';
import { check, same } from './check.js';
import { CALLBACK, T0, hash, id, makeAccount, withCode, withPair } from './fixtures.js';

const client = (over: Partial<ClientRecord> = {}): ClientRecord => ({
  id: id(),
  name: 'Example App',
  redirectUri: CALLBACK,
  secretHash: hash(),
  createdAt: T0,
  ...over,
});

const consent = (accountUuid: string, clientId: string): ConsentRecord => ({
  accountUuid,
  clientId,
  scope: ['read'],
  approvals: [{ resource: null, scope: ['read'] }],
  grantedAt: T0,
});

/** The cases on managing clients and accounts. */
export const managementCases: readonly StorageConformanceCase[] = [
  conformanceCase(
    'clients: owner and metadata round trip as saved (metadata as JSON), absent stays absent, copies are copies',
    async (make) => {
      const storage = await make();
      const limits = { rpm: 60 };
      const owned = client({ owner: id(), metadata: { team: 'Platform', tags: ['cli', 'beta'], limits, note: null } });
      await storage.saveClient(owned);
      same(await storage.findClient(owned.id), owned, 'findClient returns owner and metadata as saved');
      const found = await storage.findClient(owned.id);
      check(found?.metadata, 'the owned client has metadata');
      (found.metadata['tags'] as string[]).push('changed');
      limits.rpm = 1; // the saved client's own metadata, changed after the save
      same(
        (await storage.findClient(owned.id))?.metadata?.['tags'],
        ['cli', 'beta'],
        'mutating returned metadata must not change the stored one',
      );
      same(
        (await storage.findClient(owned.id))?.metadata?.['limits'],
        { rpm: 60 },
        'mutating saved metadata must not change the stored one',
      );
      const { owner: _owner, metadata: _metadata, ...plain } = owned;
      await storage.saveClient(plain);
      same(await storage.findClient(owned.id), plain, 'a save without owner and metadata removes them');
    },
  ),

  groupCase(
    'clientAdministration',
    'listClients (optional): the clients of one owner, oldest first; every client without a filter',
    async (storage) => {
      const owner = id();
      const second = client({ owner, createdAt: T0 + 2, name: 'Second' });
      const first = client({ owner, createdAt: T0 + 1, name: 'First' });
      const other = client({ owner: id(), createdAt: T0 });
      const none = client();
      for (const c of [second, first, other, none]) await storage.saveClient(c);
      same(await storage.listClients({ owner }), [first, second], "listClients({ owner }) answers that owner's clients, oldest first");
      same(await storage.listClients({ owner: id() }), [], 'an owner with no clients has none');
      const all = await storage.listClients({});
      const ids = all.map((c) => c.id);
      for (const c of [second, first, other, none])
        check(ids.includes(c.id), 'listClients({}) lists every client, with or without an owner');
      check(ids.indexOf(first.id) < ids.indexOf(second.id), 'listClients({}) lists older clients first');
      await storage.saveClient({ ...first, owner: id() });
      same(await storage.listClients({ owner }), [second], 'a client saved with another owner leaves the first owner');
    },
  ),

  groupCase(
    'clientAdministration',
    'deleteClient (optional): the client, its consents and every grant of it, for every account; others untouched; idempotent',
    async (storage) => {
      const doomed = client();
      const kept = client();
      await storage.saveClient(doomed);
      await storage.saveClient(kept);
      const ada = makeAccount();
      const bob = makeAccount();
      const adaTokens = await withPair(storage, {}, { clientId: doomed.id, account: ada });
      const bobCode = await withCode(storage, {}, { clientId: doomed.id, account: bob });
      const keptTokens = await withPair(storage, {}, { clientId: kept.id, account: ada });
      await storage.saveConsent(consent(ada.uuid, doomed.id));
      await storage.saveConsent(consent(bob.uuid, doomed.id));
      await storage.saveConsent(consent(ada.uuid, kept.id));

      await storage.deleteClient(doomed.id, T0 + 5);
      same(await storage.findClient(doomed.id), null, 'the deleted client is gone');
      same((await storage.findToken(adaTokens.access.hash))?.grant.revokedAt, T0 + 5, "the client's grants are revoked at `now`");
      const redeemed = await storage.redeemCode(bobCode.code.hash, T0 + 6, []);
      check(!redeemed.ok && redeemed.reason === 'revoked', 'a code of the deleted client is refused as revoked');
      same(await storage.findConsent(ada.uuid, doomed.id), null, 'consents given to the deleted client are deleted');
      same(await storage.findConsent(bob.uuid, doomed.id), null, "every account's consent to it is deleted");
      same(await storage.findClient(kept.id), kept, 'another client stays');
      same((await storage.findToken(keptTokens.access.hash))?.grant.revokedAt, null, "another client's grant stays live");
      check(await storage.findConsent(ada.uuid, kept.id), "the account's consent to another client stays");
      await storage.deleteClient(doomed.id, T0 + 9);
      same(
        (await storage.findToken(adaTokens.access.hash))?.grant.revokedAt,
        T0 + 5,
        'a second delete changes nothing (the first time stays)',
      );
    },
  ),

  groupCase(
    'accountAdministration',
    'revokeAccountGrants (optional): every grant of the account, to every client, and its consents; other accounts untouched',
    async (storage) => {
      const ada = makeAccount();
      const bob = makeAccount();
      const one = await withPair(storage, {}, { account: ada });
      const two = await withCode(storage, {}, { account: ada });
      const bobs = await withPair(storage, {}, { account: bob, clientId: one.grant.clientId });
      await storage.saveConsent(consent(ada.uuid, one.grant.clientId));
      await storage.saveConsent(consent(ada.uuid, two.grant.clientId));
      await storage.saveConsent(consent(bob.uuid, one.grant.clientId));

      await storage.revokeAccountGrants(ada.uuid, T0 + 7);
      same((await storage.findToken(one.access.hash))?.grant.revokedAt, T0 + 7, "the account's tokens are revoked through their grant");
      const redeemed = await storage.redeemCode(two.code.hash, T0 + 8, []);
      check(!redeemed.ok && redeemed.reason === 'revoked', "the account's unused code is refused as revoked");
      same(await storage.listConsents(ada.uuid), [], "the account's consents are deleted");
      same((await storage.findToken(bobs.access.hash))?.grant.revokedAt, null, "another account's grant to the same client stays live");
      check(await storage.findConsent(bob.uuid, one.grant.clientId), "another account's consent stays");
      await storage.revokeAccountGrants(ada.uuid, T0 + 9);
      same((await storage.findToken(one.access.hash))?.grant.revokedAt, T0 + 7, 'a second call changes nothing (the first time stays)');
    },
  ),
  groupCase(
    'clientAdministration',
    'updateClientFields (optional): only the given fields change, metadata null removes it, an unknown client is false and never inserted',
    async (storage) => {
      const owned = client({ owner: id(), metadata: { plan: 'free' } });
      await storage.saveClient(owned);
      check(await storage.updateClientFields(owned.id, { name: 'Renamed' }), 'updateClientFields of a stored client answers true');
      same(await storage.findClient(owned.id), { ...owned, name: 'Renamed' }, 'only the name changed');
      const secretHash = hash();
      check(
        await storage.updateClientFields(owned.id, { redirectUri: 'https://client.example/new', secretHash, metadata: { plan: 'pro' } }),
        'several fields at once',
      );
      same(
        await storage.findClient(owned.id),
        { ...owned, name: 'Renamed', redirectUri: 'https://client.example/new', secretHash, metadata: { plan: 'pro' } },
        'the callback, the secret hash and the metadata changed, nothing else',
      );
      await storage.updateClientFields(owned.id, { metadata: null });
      same((await storage.findClient(owned.id))?.metadata, undefined, 'metadata: null removes the metadata');
      const missing = id();
      same(await storage.updateClientFields(missing, { name: 'Ghost' }), false, 'an unknown client answers false');
      same(await storage.findClient(missing), null, 'and is not created');
    },
  ),
  groupCase(
    'clientAdministration',
    'updateClientFields (optional): openid replaces the OpenID Connect section, null removes it, other changes keep it',
    async (storage) => {
      const owned = client({ openid: { defaultMaxAge: 30 } });
      await storage.saveClient(owned);
      const openid = {
        postLogoutRedirectUris: ['https://client.example/bye', 'https://client.example/bye2'],
        subjectType: 'public' as const,
      };
      check(await storage.updateClientFields(owned.id, { openid }), 'updateClientFields with openid answers true');
      same((await storage.findClient(owned.id))?.openid, openid, 'the section is the new one, whole (defaultMaxAge gone)');
      await storage.updateClientFields(owned.id, { name: 'Renamed' });
      same((await storage.findClient(owned.id))?.openid, openid, 'another change keeps it');
      await storage.updateClientFields(owned.id, { openid: null });
      const { openid: _removed, ...rest } = owned;
      same(await storage.findClient(owned.id), { ...rest, name: 'Renamed' }, 'openid: null removes it, nothing else changes');
    },
  ),
];
