import { describe, expect, it } from 'vitest';
import { AuthorizationServer, ConfigError, isOAuthError, MemoryStorage } from '../../src/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { setup } from '../helpers.js';

/**
 * Registering an application (docs/reference.md#clients) and the constructor's option validation.
 */
describe('registering an application', () => {
  it('yields a client ID and a client secret, and echoes name and callback URL', async () => {
    const t = await setup();
    const client = await t.server.registerClient({ name: 'My App', redirectUri: 'https://my.example/callback' });
    expect(client.clientId).toMatch(/^[0-9a-f]{64}$/);
    expect(client.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(client).toMatchObject({ name: 'My App', redirectUri: 'https://my.example/callback' });
  });

  it('stores the secret only as a hash', async () => {
    const t = await setup();
    const client = await t.server.registerClient({ name: 'My App', redirectUri: 'https://my.example/callback' });
    const stored = await t.storage.findClient(client.clientId);
    expect(stored).not.toBeNull();
    expect(JSON.stringify(stored)).not.toContain(client.clientSecret);
    expect(stored!.secretHash).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it.each([
    'http://my.example/cb',
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    'data:text/html,x',
    'file:///etc/passwd',
    'https://my.example/cb#frag',
    'https://user:pw@my.example/cb',
    'https://my.example@evil.example/cb',
    '/relative/cb',
    'https://*.example/cb',
    'https://my.example/cb?code=1',
    'https://my.example/cb?state=x',
    ' https://my.example/cb',
    'https://my.example/c b',
    'https://my.example\\cb',
    '',
  ])('refuses the callback URL %j', async (redirectUri) => {
    const t = await setup();
    const error = await t.server.registerClient({ name: 'x', redirectUri }).catch((e: unknown) => e);
    expect(isOAuthError(error)).toBe(true);
  });

  it.each(['http://localhost:3000/cb', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb', 'https://my.example/cb?tenant=1'])(
    'accepts the callback URL %j',
    async (redirectUri) => {
      const t = await setup();
      await expect(t.server.registerClient({ name: 'x', redirectUri })).resolves.toMatchObject({ redirectUri });
    },
  );

  it('names the option when the callback URL is missing or given as redirectUris (a client has exactly one)', async () => {
    const t = await setup();
    const before = (await t.storage.listClients({})).length;
    const described = async (input: Record<string, unknown>) => {
      const error = await t.server.registerClient({ name: 'x', ...input } as never).catch((e: unknown) => e);
      expect(isOAuthError(error), JSON.stringify(input)).toBe(true);
      return (error as { error: string; description: string }).description;
    };
    expect(await described({})).toBe('The callback URL (redirectUri) is missing: a client has exactly one callback URL, a string.');
    expect(await described({ redirectUris: ['https://my.example/cb', 'https://my.example/cb2'] })).toBe(
      'registerClient takes one callback URL as redirectUri (a string), not redirectUris: a client has exactly one callback URL.',
    );
    expect(await described({ redirectUri: ['https://my.example/cb'] })).toBe(
      'The callback URL (redirectUri) must be a string: a client has exactly one callback URL.',
    );
    expect(await t.storage.listClients({})).toHaveLength(before);
  });

  it('refuses an empty or over-long name', async () => {
    const t = await setup();
    for (const name of ['', '   ', 'x'.repeat(201), 'a\u0000b', 'line\nbreak']) {
      expect(isOAuthError(await t.server.registerClient({ name, redirectUri: 'https://a.example/cb' }).catch((e: unknown) => e))).toBe(
        true,
      );
    }
  });
});

describe('options', () => {
  const base = () => ({ storage: new MemoryStorage(), sessions: new FakeSessions() });

  it('accepts the minimal options and applies the default lifetimes', () => {
    const server = new AuthorizationServer(base());
    expect(server.options.lifetimes).toEqual({ code: 600, accessToken: 2_592_000, refreshToken: null, interaction: 600, grant: null });
    expect(Object.isFrozen(server.options)).toBe(true);
  });

  it.each([
    [
      { storage: undefined },
      'storage',
      /^authgate: option "storage": none given: pass new MemoryStorage\(\) .*PostgresStorage .*own store/,
    ],
    [{ storage: {} }, 'storage', /saveClient/],
    [
      { storage: { findClient() {} } },
      'storage',
      /expected a Storage: it lacks saveClient, saveInteraction, .*revokeClientGrants \(the core methods/,
    ],
    [{ sessions: {} }, 'sessions', /current/],
    [{ clock: { now: 5 } }, 'clock', /now/],
    [{ lifetimes: { code: -5 } }, 'lifetimes.code', /expected|Too small|>/i],
    [{ lifetimes: { accessToken: 1.5 } }, 'lifetimes.accessToken', /int/i],
    [{ lifetimes: { bogus: 1 } }, 'lifetimes', /bogus/],
    [{ issuer: 'http://auth.example' }, 'issuer', /https/],
    [{ issuer: 'https://auth.example/?x=1' }, 'issuer', /query/],
    [{ realm: 'bad"realm' }, 'realm', /quotes/],
    [{ requireClientAuthOnRefresh: 'yes' }, 'requireClientAuthOnRefresh', /boolean/],
    [{ unknownOption: 1 }, 'unknownOption', /unknown option/],
  ])('%j is a ConfigError naming %s', (override, option, expected) => {
    let error: unknown;
    try {
      new AuthorizationServer({ ...base(), ...override } as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).option).toBe(option);
    expect((error as ConfigError).message).toContain(`"${option}"`);
    expect((error as ConfigError).message).toMatch(expected);
  });

  it('a FakeClock drives every lifetime', () => {
    const clock = new FakeClock(1000);
    clock.advance(500);
    expect(clock.now()).toBe(1500);
    clock.set(42);
    expect(clock.now()).toBe(42);
    expect(() => clock.advance(-1)).toThrow(RangeError);
  });
});
