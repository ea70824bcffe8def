/**
 * Clients: `saveClient` replaces, `findClient` returns what was saved, response and grant types
 * included, and what marks a client nobody reviewed (`registration`, `clientUri`, `logoUri`).
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
      const both = {
        ...codeOnly,
        id: id(),
        responseTypes: ['code', 'token'],
        grantTypes: ['authorization_code', 'refresh_token'],
      } satisfies ClientRecord;
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
      both.responseTypes.pop();
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

  conformanceCase(
    'clients: how an unreviewed client came to be and the home page and logo it stated round trip; absent stays absent',
    async (make) => {
      const storage = await make();
      const dynamic: ClientRecord = {
        id: id(),
        name: 'MCP Client',
        redirectUri: 'http://localhost:8090/callback',
        secretHash: null,
        createdAt: T0,
        responseTypes: ['code'],
        grantTypes: ['authorization_code', 'refresh_token'],
        registration: 'dynamic',
        clientUri: 'https://mcp.example',
        logoUri: 'https://mcp.example/logo.png',
      };
      await storage.saveClient(dynamic);
      same(await storage.findClient(dynamic.id), dynamic, 'findClient returns registration, clientUri and logoUri as saved');
      const document: ClientRecord = {
        id: `https://app.example/${id()}`,
        name: 'Metadata App',
        redirectUri: 'https://app.example/cb',
        secretHash: null,
        createdAt: T0,
        registration: 'metadata-document',
      };
      await storage.saveClient(document);
      same(await storage.findClient(document.id), document, "a metadata-document client's marker round trips, without uris");
      const { registration: _r, clientUri: _c, logoUri: _l, ...reviewed } = dynamic;
      await storage.saveClient(reviewed);
      same(
        await storage.findClient(dynamic.id),
        reviewed,
        'a client saved without them has none (absent: a reviewed client), even after a save with them',
      );
    },
  ),
];
