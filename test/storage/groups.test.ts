/**
 * Storage in named groups (docs/reference.md#storage-groups): a store of `CoreStorage` alone
 * passes the core cases of the conformance kit and serves every OAuth flow; each group's cases
 * run only on a store that has the whole group and fail, naming what is missing, on one that has
 * part of it; and the server requires a group in one way: at construction for the option that
 * turns its feature on, else in the feature's calls, with a `ConfigError` that names the group
 * and its methods. The method lists are checked complete against their interfaces at compile time.
 */
import { describe, expect, it } from 'vitest';
import {
  AuthorizationServer,
  ConfigError,
  CORE_STORAGE_METHODS,
  MemoryStorage,
  STORAGE_GROUPS,
  type CoreStorage,
  type PersonalTokenStorage,
  type Storage,
  type StorageGroup,
} from '../../src/index.js';
import { methodList } from '../../src/storage/groups.js';
import { runStorageConformance, StorageConformanceError, storageConformanceCases } from '../../src/testing/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA, CALLBACK } from '../fixtures.js';

/** A store of `MemoryStorage`'s methods named in `methods` and no other (bound to one memory). */
function storeWith(methods: readonly string[], memory = new MemoryStorage()): Storage {
  const source = memory as unknown as Record<string, (...args: unknown[]) => unknown>;
  return Object.fromEntries(methods.map((name) => [name, source[name]!.bind(memory)])) as unknown as Storage;
}

const coreOnly = () => storeWith(CORE_STORAGE_METHODS);
const GROUPS = Object.keys(STORAGE_GROUPS) as StorageGroup[];
const casesOf = (group: StorageGroup | undefined) => storageConformanceCases.filter((c) => c.group === group);

describe('the conformance kit, group by group', () => {
  it('a store of CoreStorage alone passes every case: the core ones run, each group case passes without running', async () => {
    const results = await runStorageConformance(coreOnly);
    expect(results.filter((r) => !r.ok).map((r) => `${r.name}: ${String(r.error)}`)).toEqual([]);
    expect(results).toHaveLength(storageConformanceCases.length);
    // Every group has cases, and so does the core.
    for (const group of [undefined, ...GROUPS]) expect(casesOf(group).length, String(group)).toBeGreaterThan(0);
  });

  it('the core cases do run on it: a core-only store that breaks a core rule fails them', async () => {
    const memory = new MemoryStorage();
    const broken = { ...storeWith(CORE_STORAGE_METHODS, memory), findClient: async () => null } as Storage;
    const results = await runStorageConformance(() => broken, { only: ['clients:'] });
    expect(results.length).toBeGreaterThan(0);
    expect(results.some((r) => !r.ok)).toBe(true);
  });

  it.each(GROUPS)('%s: with the whole group its cases run (and pass on MemoryStorage); the other groups are skipped', async (group) => {
    const memory = new MemoryStorage();
    const called = new Set<string>();
    const store = storeWith([...CORE_STORAGE_METHODS, ...STORAGE_GROUPS[group]], memory) as unknown as Record<string, unknown>;
    for (const method of STORAGE_GROUPS[group]) {
      const inner = store[method] as (...args: unknown[]) => unknown;
      store[method] = (...args: unknown[]) => {
        called.add(method);
        return inner(...args);
      };
    }
    const results = await runStorageConformance(() => store as unknown as Storage);
    expect(results.filter((r) => !r.ok).map((r) => `${r.name}: ${String(r.error)}`)).toEqual([]);
    expect([...called].sort()).toEqual([...STORAGE_GROUPS[group]].sort());
  });

  const halves = GROUPS.filter((g) => STORAGE_GROUPS[g].length > 1).flatMap((group) =>
    STORAGE_GROUPS[group].map((left) => [group, left] as const),
  );
  it.each(halves)(
    '%s without %s: every case of the group fails, naming the group and the missing method; the rest pass',
    async (group, left) => {
      const methods = [...CORE_STORAGE_METHODS, ...STORAGE_GROUPS[group].filter((m) => m !== left)];
      const results = await runStorageConformance(() => storeWith(methods));
      const groupNames = new Set(casesOf(group).map((c) => c.name));
      for (const result of results) {
        if (!groupNames.has(result.name)) {
          expect(result.ok, `${result.name}: ${String(result.error)}`).toBe(true);
          continue;
        }
        expect(result.ok, result.name).toBe(false);
        expect(result.error).toBeInstanceOf(StorageConformanceError);
        const message = (result.error as Error).message;
        expect(message).toContain(`part of the ${group} group`);
        expect(message).toContain(`it lacks ${left}`);
      }
    },
  );
});

describe('the server on a store of CoreStorage alone', () => {
  const setup = (options: { deviceAuthorization?: object } = {}) => {
    const clock = new FakeClock();
    const sessions = new FakeSessions(clock);
    const server = new AuthorizationServer({ storage: coreOnly(), sessions, clock, ...options });
    return { clock, sessions, server };
  };
  const configError = async (call: () => Promise<unknown>) => {
    const error = await call().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  };

  it('serves the code flow, a refresh and the bearer check', async () => {
    const { server, sessions } = setup();
    const app = await server.registerClient({ name: 'App', redirectUri: CALLBACK });
    const cookie = sessions.signIn(ADA);
    const query = new URLSearchParams({ client_id: app.clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'read' });
    const consent = await server.authorize({ method: 'GET', url: `/v1/oauth/authorize?${query}`, headers: { cookie } });
    if (consent.type !== 'consent') throw new Error(consent.type);
    const approved = await server.approve(consent.interaction.id, { method: 'GET', url: '/', headers: { cookie } });
    if (approved.type !== 'redirect') throw new Error(approved.type);
    const code = new URL(approved.location).searchParams.get('code')!;
    const post = (form: Record<string, string>) =>
      server.token({
        method: 'POST',
        url: '/v1/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...form, client_id: app.clientId, client_secret: app.clientSecret }).toString(),
      });
    const tokens = JSON.parse((await post({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK })).body);
    const refreshed = JSON.parse((await post({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).body);
    const bearer = await server.authenticate({ method: 'GET', url: '/', headers: { authorization: `Bearer ${refreshed.access_token}` } });
    expect(bearer.ok && bearer.token.account).toEqual(ADA);
    // The client administration group is missing: updateClient falls back to findClient + saveClient.
    expect((await server.updateClient(app.clientId, { name: 'Renamed' })).name).toBe('Renamed');
  });

  it("each feature's calls throw a ConfigError that names its group and the group's methods", async () => {
    const { server } = setup();
    const personal = await configError(() => server.createPersonalToken({ account: ADA, name: 'CI' }));
    expect(personal.option).toBe('storage');
    expect(personal.message).toContain('personalTokens group (listPersonalTokens(), touchPersonalToken())');
    expect(personal.message).toContain('it lacks all of them');
    await configError(() => server.listPersonalTokens(ADA.uuid));
    await configError(() => server.revokePersonalToken(ADA.uuid, 'x'));
    const clients = await configError(() => server.listClients());
    expect(clients.message).toContain('clientAdministration group (listClients(), updateClientFields(), deleteClient())');
    await configError(() => server.deleteClient('x'));
    const account = await configError(() => server.revokeAllForAccount(ADA.uuid));
    expect(account.message).toContain('accountAdministration group (revokeAccountGrants())');
  });

  it('deviceAuthorization on a store without its group: a ConfigError at construction, naming the option, the group and what it lacks', () => {
    const error = (() => {
      try {
        setup({ deviceAuthorization: {} });
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).option).toBe('deviceAuthorization');
    expect((error as ConfigError).message).toContain('deviceAuthorization group (createDeviceAuthorization(), findDeviceAuthorization()');
    const half = storeWith([...CORE_STORAGE_METHODS, ...STORAGE_GROUPS.deviceAuthorization.filter((m) => m !== 'pollDeviceAuthorization')]);
    expect(() => new AuthorizationServer({ storage: half, sessions: new FakeSessions(), deviceAuthorization: {} })).toThrow(
      /it lacks pollDeviceAuthorization\(\)$/,
    );
  });

  it('a store without its core: a ConfigError naming the core methods', () => {
    const { revokeClientGrants: _dropped, ...rest } = storeWith(CORE_STORAGE_METHODS) as unknown as Record<string, unknown>;
    expect(() => new AuthorizationServer({ storage: rest as unknown as Storage, sessions: new FakeSessions() })).toThrow(
      /option "storage": expected a Storage: it lacks revokeClientGrants \(the core methods, CORE_STORAGE_METHODS, are saveClient, .*revokeClientGrants: /,
    );
  });
});

describe('the method lists are the interfaces, checked by the compiler', () => {
  it('a list that leaves a method out, or names one the group does not have, does not compile', () => {
    const personal = methodList<PersonalTokenStorage>();
    // @ts-expect-error touchPersonalToken is missing
    personal(['listPersonalTokens']);
    // @ts-expect-error revokeGrant is not a method of the group
    personal(['listPersonalTokens', 'touchPersonalToken', 'revokeGrant']);
    expect(personal(['touchPersonalToken', 'listPersonalTokens'])).toHaveLength(2);
    // And a store typed CoreStorage needs nothing else.
    const core: CoreStorage = new MemoryStorage();
    expect(CORE_STORAGE_METHODS.every((m) => typeof core[m] === 'function')).toBe(true);
    expect(Object.isFrozen(STORAGE_GROUPS) && Object.isFrozen(STORAGE_GROUPS.personalTokens)).toBe(true);
  });
});
