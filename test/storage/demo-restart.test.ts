/**
 * The demo started twice on one database (`npm run demo` with DATABASE_URL, stopped, started
 * again) keeps one StatusBoard client: the second start finds it by owner and metadata
 * (examples/platform/demo-clients.ts), moves its callback to the new port, and issues it a new
 * secret, which works while the first start's no longer does. On MemoryStorage (one store
 * shared by two starts) and PostgreSQL (a fresh pool per start, as two processes would have).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startDemo } from '../../examples/start-demo.js';
import { DEMO_USERS } from '../../examples/platform/sign-in.js';
import { MemoryStorage, type Storage } from '../../src/index.js';
import { PostgresStorage } from '../../src/postgres/index.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from './pg.js';

const pool = DATABASE_URL ? makePool(5) : undefined;
const schema = schemaName('demo');
afterAll(async () => {
  if (!pool) return;
  await dropSchema(pool, schema);
  await pool.end();
});

const memory = new MemoryStorage();
const stores: [string, () => Promise<{ storage: Storage; close(): Promise<void> }>][] = [
  ['MemoryStorage', async () => ({ storage: memory, close: async () => {} })],
  ...(DATABASE_URL
    ? [
        [
          'PostgresStorage',
          async () => {
            const own = makePool(3); // each start its own pool, as each `npm run demo` process has
            const storage = new PostgresStorage(own, { schema });
            await storage.migrate();
            return { storage, close: () => own.end() };
          },
        ] as [string, () => Promise<{ storage: Storage; close(): Promise<void> }>],
      ]
    : []),
];

const ada = DEMO_USERS[0]!.account.uuid;

describe.each(stores)('%s: the demo started twice', (_name, open) => {
  /** Start the demo, run `use` on it, stop it. */
  async function start<T>(use: (demo: Awaited<ReturnType<typeof startDemo>>) => Promise<T>): Promise<T> {
    const { storage, close } = await open();
    const demo = await startDemo({ platformPort: 0, appPort: 0, storage });
    try {
      return await use(demo);
    } finally {
      await demo.close();
      await close();
    }
  }
  /** The token endpoint's answer to a made-up code: `invalid_grant` when the secret is right, `invalid_client` when not. */
  const exchange = async (platformUrl: string, clientId: string, clientSecret: string, redirectUri: string) => {
    const response = await fetch(`${platformUrl}/v1/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: 'made-up',
        redirect_uri: redirectUri,
        client_id: clientId,
        client_secret: clientSecret,
      }),
    });
    return ((await response.json()) as { error: string }).error;
  };

  it('leaves one StatusBoard client, with the second start’s callback and secret, and one Nimbus CLI', async () => {
    let firstCli = '';
    const first = await start(async (demo) => {
      expect(demo.client.reused).toBe(false);
      firstCli = demo.cli.clientId;
      return demo.client;
    });
    await start(async (demo) => {
      expect(demo.client.reused).toBe(true);
      expect(demo.client.clientId).toBe(first.clientId);
      expect(demo.client.clientSecret).not.toBe(first.clientSecret);
      const server = demo.platform.server;
      const statusBoards = (await server.listClients({ owner: ada })).filter((c) => c.metadata?.['role'] === 'statusboard');
      expect(statusBoards).toHaveLength(1);
      expect(statusBoards[0]).toMatchObject({
        name: 'StatusBoard',
        redirectUri: `${demo.appUrl}/callback`,
        metadata: { role: 'statusboard', managedBy: 'demo' },
      });
      expect((await server.listClients()).filter((c) => c.name === 'StatusBoard')).toHaveLength(1);
      // The device-flow CLI is reused too: one "Nimbus CLI", the same public client.
      expect(demo.cli.clientId).toBe(firstCli);
      expect((await server.listClients()).filter((c) => c.name === 'Nimbus CLI')).toHaveLength(1);

      const { clientId, clientSecret, redirectUri } = demo.client;
      expect(await exchange(demo.platformUrl, clientId, clientSecret, redirectUri)).toBe('invalid_grant'); // the new secret works
      expect(await exchange(demo.platformUrl, clientId, first.clientSecret, redirectUri)).toBe('invalid_client'); // the old one died

      // And the StatusBoard this start runs is that client.
      const connect = await fetch(`${demo.appUrl}/connect`, { redirect: 'manual' });
      expect(new URL(connect.headers.get('location')!).searchParams.get('client_id')).toBe(clientId);
    });
  });
});
