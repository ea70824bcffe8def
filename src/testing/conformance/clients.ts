/**
 * Clients: `saveClient` replaces, `findClient` returns what was saved, response and grant types included.
 */
import type { ClientRecord } from '../../storage/types.js';
import { conformanceCase, type StorageConformanceCase } from './case.js';
import { check, same } from './check.js';
import { T0, CALLBACK, id, hash } from './fixtures.js';

/** The cases on clients. */
export const clientCases: readonly StorageConformanceCase[] = [
  conformanceCase('clients: saveClient/findClient round trip, a second save replaces, null when unknown', async (make) => {
    const storage = await make();
    const client: ClientRecord = { id: id(), name: 'Example App', redirectUri: CALLBACK, secretHash: hash(), createdAt: T0 };
    await storage.saveClient(client);
    same(await storage.findClient(client.id), client, 'findClient returns the saved client');
    const replaced = { ...client, name: 'Renamed', secretHash: hash(), redirectUri: 'https://client.example/other' };
    await storage.saveClient(replaced);
    same(await storage.findClient(client.id), replaced, 'saveClient with an existing id replaces the record');
    const publicClient: ClientRecord = { id: id(), name: 'CLI', redirectUri: 'http://127.0.0.1/cb', secretHash: null, createdAt: T0 + 1 };
    await storage.saveClient(publicClient);
    same(await storage.findClient(publicClient.id), publicClient, 'a public client (secretHash null) round trips');
    same(await storage.findClient(id()), null, 'findClient of an unknown id is null');
  }),

  conformanceCase(
    'clients: the response and grant types a client may use round trip; absent stays absent; copies are copies',
    async (make) => {
      const storage = await make();
      const codeOnly: ClientRecord = {
        id: id(),
        name: 'Registered CLI',
        redirectUri: 'http://127.0.0.1/cb',
        secretHash: null,
        createdAt: T0,
        responseTypes: ['code'],
        grantTypes: ['authorization_code'],
      };
      await storage.saveClient(codeOnly);
      same(await storage.findClient(codeOnly.id), codeOnly, 'findClient returns responseTypes and grantTypes as saved');
      const both: ClientRecord = {
        ...codeOnly,
        id: id(),
        responseTypes: ['code', 'token'],
        grantTypes: ['authorization_code', 'refresh_token'],
      };
      await storage.saveClient(both);
      same(await storage.findClient(both.id), both, 'several response and grant types round trip in order');
      const widened: ClientRecord = { ...codeOnly, grantTypes: ['authorization_code', 'refresh_token'] };
      await storage.saveClient(widened);
      same(await storage.findClient(codeOnly.id), widened, 'saveClient with an existing id replaces the types too');
      const plain: ClientRecord = {
        id: codeOnly.id,
        name: 'Registered CLI',
        redirectUri: 'http://127.0.0.1/cb',
        secretHash: null,
        createdAt: T0,
      };
      await storage.saveClient(plain);
      same(
        await storage.findClient(codeOnly.id),
        plain,
        'a client saved without types has none (absent: the server defaults), even after a save with them',
      );
      const found = await storage.findClient(both.id);
      check(found?.responseTypes && found.grantTypes, 'client with types saved');
      found.responseTypes.pop();
      found.grantTypes.pop();
      both.responseTypes!.pop();
      same(
        (await storage.findClient(both.id))?.responseTypes,
        ['code', 'token'],
        "mutating a saved or returned client's responseTypes must not change the stored one",
      );
      same(
        (await storage.findClient(both.id))?.grantTypes,
        ['authorization_code', 'refresh_token'],
        "mutating a returned client's grantTypes must not change the stored one",
      );
    },
  ),
];
