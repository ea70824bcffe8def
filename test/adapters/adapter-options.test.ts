/**
 * Every adapter checks what it is given when its routes are made, as `new AuthorizationServer()`
 * checks its options (the adapter kit's `checkAdapterOptions`): a `ConfigError` naming the
 * argument or option, never an option silently ignored (`loginURL`), a route table that answers
 * nothing (`basePath: 'oauth/'` made `oauth//token`), or a raw `TypeError` at the first request
 * (`createOAuthRouter({})`). Construction only: the in-process targets (the worker builds the same
 * Hono adapter).
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { createOAuthRouter, requireToken as expressRequireToken } from '../../adapters/express/index.js';
import { oauthPlugin, requireToken as fastifyRequireToken } from '../../adapters/fastify/index.js';
import { createOAuthApp, requireToken as honoRequireToken } from '../../adapters/hono/index.js';
import { createOAuthHandler, requireToken as nodeRequireToken } from '../../adapters/node/index.js';
import { AuthorizationServer, ConfigError, MemoryStorage } from '../../src/index.js';
import { FakeSessions } from '../../src/testing/index.js';
import { IN_PROCESS } from './app.js';

const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions: new FakeSessions() });

type Options = Record<string, unknown>;

/** Each adapter, made as a host makes it (Fastify: registered and readied, where a plugin's error surfaces). */
const adapters = {
  express: {
    name: 'createOAuthRouter',
    serverName: 'server',
    make: async (s: unknown, o: Options) => void createOAuthRouter(s as never, o),
  },
  fastify: {
    name: 'oauthPlugin',
    serverName: 'options.server',
    make: async (s: unknown, o: Options) => {
      const app = Fastify();
      try {
        await app.register(oauthPlugin, { ...o, server: s } as never);
        await app.ready();
      } finally {
        await app.close().catch(() => {});
      }
    },
  },
  hono: { name: 'createOAuthApp', serverName: 'server', make: async (s: unknown, o: Options) => void createOAuthApp(s as never, o) },
  node: {
    name: 'createOAuthHandler',
    serverName: 'server',
    make: async (s: unknown, o: Options) => void createOAuthHandler(s as never, o),
  },
};

const requireTokens = {
  express: (s: unknown, o: Options) => expressRequireToken(s as never, o),
  fastify: (s: unknown, o: Options) => fastifyRequireToken(s as never, o),
  hono: (s: unknown, o: Options) => honoRequireToken(s as never, o),
  node: (s: unknown, o: Options) => nodeRequireToken(s as never, o),
};

/** The ConfigError `make` fails with (or undefined when it does not fail). */
async function configError(make: () => Promise<unknown> | unknown): Promise<ConfigError | undefined> {
  try {
    await make();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  return undefined;
}

describe.each(IN_PROCESS)('%s: the options are checked when the routes are made', (framework) => {
  const { name, serverName, make } = adapters[framework];
  const refused = (options: Options) => configError(() => make(server, options));

  it('a misspelt option is refused, naming it and the right one (loginURL: did you mean "loginUrl"?)', async () => {
    const error = await refused({ loginURL: '/signin' });
    expect(error?.option).toBe('loginURL');
    expect(error?.message).toBe(`authgate: option "loginURL": unknown option of ${name}; did you mean "loginUrl"?`);
    expect((await refused({ basepath: '/oauth' }))?.message).toContain('did you mean "basePath"?');
    expect((await refused({ on_consent: () => {} }))?.message).toContain('did you mean "onConsent"?');
  });

  it('an unknown option is refused, listing the ones the adapter takes', async () => {
    const error = await refused({ issuer: 'https://x.example' });
    expect(error?.option).toBe('issuer');
    expect(error?.message).toMatch(
      new RegExp(`^authgate: option "issuer": unknown option of ${name}; ${name} takes "loginUrl", "basePath", `),
    );
  });

  it.each(['oauth/', 'oauth', '/oauth/', '/', '/a//b', '/oauth?x=1', '/oauth#x', '/o auth', 'https://a.example/oauth', 42])(
    'basePath %j is refused with what it should look like',
    async (basePath) => {
      const error = await refused({ basePath });
      expect(error?.option).toBe('basePath');
      expect(error?.message).toContain(`${name}: expected '' or a path that starts with "/" and does not end with one, such as "/oauth"`);
      expect(error?.message).toContain(`got ${typeof basePath === 'string' ? JSON.stringify(basePath) : basePath}`);
    },
  );

  it('basePath "", "/auth/oauth2" and route syntax are taken', async () => {
    for (const basePath of ['', '/auth/oauth2', '/t/:tenant/oauth', '/v1/oauth']) expect(await refused({ basePath })).toBeUndefined();
  });

  it.each([
    ['loginUrl', 'login'],
    ['loginUrl', '//evil.example/login'],
    ['loginUrl', ''],
    ['loginUrl', 'javascript:alert(1)'],
    ['siteName', ''],
    ['siteName', 7],
    ['browserCookiePath', 'x'],
    ['browserCookiePath', '/; Domain=evil.example'],
    ['bodyLimit', 0],
    ['bodyLimit', -1],
    ['bodyLimit', 1.5],
    ['bodyLimit', '65536'],
    ['onLogin', '/login'],
    ['onConsent', {}],
    ['onDeviceVerification', true],
  ])('%s %j is refused, naming the option and the adapter', async (option, value) => {
    const error = await refused({ [option]: value });
    expect(error?.option).toBe(option);
    expect(error?.message).toMatch(new RegExp(`^authgate: option "${option}": ${name}: expected `));
  });

  it('every option right, or undefined, is taken', async () => {
    const hook = () => {};
    const all: Options = {
      loginUrl: 'https://accounts.example/signin?next=oauth',
      basePath: '/auth',
      siteName: 'Nimbus',
      browserCookiePath: '/',
      bodyLimit: 1024,
      onLogin: hook,
      onConsent: hook,
      onDeviceVerification: hook,
      ...(framework === 'hono' || framework === 'node' ? { trustProxy: true } : {}),
    };
    expect(await refused(all)).toBeUndefined();
    expect(await refused({ loginUrl: '/login', basePath: undefined, onLogin: undefined })).toBeUndefined();
    expect(await refused({})).toBeUndefined();
  });

  it(
    framework === 'hono' || framework === 'node'
      ? 'trustProxy must be true or false'
      : 'trustProxy is not an option (the framework decides)',
    async () => {
      const error = await refused({ trustProxy: 'yes' });
      expect(error?.option).toBe('trustProxy');
      expect(error?.message).toContain(
        framework === 'hono' || framework === 'node' ? 'expected true or false, got "yes"' : 'unknown option',
      );
    },
  );

  it(`a missing or wrong server is named (${serverName}), not a TypeError at the first request`, async () => {
    for (const wrong of [undefined, {}, { loginUrl: '/login' }, 'server']) {
      const error = await configError(() => make(wrong, {}));
      expect(error?.option).toBe(serverName);
      expect(error?.message).toContain(`${name}: expected an AuthorizationServer (new AuthorizationServer({ storage, sessions, ... }))`);
    }
  });

  it('requireToken names a missing server and an unknown option', async () => {
    const make = requireTokens[framework];
    expect((await configError(() => make(undefined, {})))?.message).toContain('requireToken: expected an AuthorizationServer');
    const typo = await configError(() => make(server, { resorce: 'https://x.example/mcp' }));
    expect(typo?.option).toBe('resorce');
    expect(typo?.message).toContain('unknown option of requireToken');
    expect(await configError(() => make(server, {}))).toBeUndefined();
  });
});

describe('Express: createOAuthRouter({}) with the options where the server goes', () => {
  it('names the server argument, as the issue saw it', () => {
    expect(() => createOAuthRouter({} as never)).toThrow(
      'authgate: option "server": createOAuthRouter: expected an AuthorizationServer (new AuthorizationServer({ storage, sessions, ... })), got an object',
    );
  });
});
