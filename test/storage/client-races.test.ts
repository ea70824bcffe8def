/**
 * On both stores, management calls run together never undo each other: a deleted client
 * stays deleted, a reset secret stays reset, a moved callback stays moved. Reads are delayed a
 * little, as a busy database would, so both calls read before either writes.
 */
import { describe, expect, it } from 'vitest';
import type { Storage } from '../../src/index.js';
import { setup } from '../helpers.js';
import { storesUnderTest } from './pg.js';

/** Every client read answers a little after it was made, as a busy database would. */
const slowReads = <S extends Storage>(storage: S): S => {
  const find = storage.findClient.bind(storage);
  storage.findClient = async (id: string) => {
    const found = await find(id);
    await new Promise((resolve) => setTimeout(resolve, 20));
    return found;
  };
  return storage;
};
const stores = storesUnderTest('clientraces', { wrap: slowReads });

describe.each(stores)('%s: concurrent client management', (_name, makeStorage) => {
  it('deleteClient racing updateClient: the client stays deleted', async () => {
    const t = await setup({ storage: makeStorage() });
    await Promise.all([
      t.server.deleteClient(t.client.clientId),
      t.server.updateClient(t.client.clientId, { name: 'Renamed' }).catch(() => null),
    ]);
    expect(await t.server.getClient(t.client.clientId)).toBeNull();
  });

  it('resetClientSecret racing updateClient: only the new secret works, and the rename is kept', async () => {
    const t = await setup({ storage: makeStorage() });
    const [reset] = await Promise.all([
      t.server.resetClientSecret(t.client.clientId),
      t.server.updateClient(t.client.clientId, { name: 'Renamed' }),
    ]);
    expect((await t.server.getClient(t.client.clientId))!.name).toBe('Renamed');
    const code = await t.getCode();
    expect((await t.exchange(code, { client_secret: t.client.clientSecret })).status).toBe(401);
    expect((await t.exchange(code, { client_secret: reset.clientSecret })).status).toBe(200);
  });

  it('updateClient (new callback) racing resetClientSecret: the new callback is kept', async () => {
    const t = await setup({ storage: makeStorage() });
    await Promise.all([
      t.server.updateClient(t.client.clientId, { redirectUri: 'https://new.example/cb', metadata: { a: 1 } }),
      t.server.resetClientSecret(t.client.clientId),
    ]);
    const info = (await t.server.getClient(t.client.clientId))!;
    expect(info.redirectUri).toBe('https://new.example/cb');
    expect(info.metadata).toEqual({ a: 1 });
    await t.server.updateClient(t.client.clientId, { metadata: null });
    expect((await t.server.getClient(t.client.clientId))!.metadata).toBeUndefined();
  });
});
