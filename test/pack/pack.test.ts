/**
 * Packaging: what a user gets from `npm install authgate`. Packs a clean copy (the `prepack` script builds), installs
 * the tarball into a fresh project outside this repository, and checks it from the outside: every
 * entry imports as ESM and loads through `require()` (Node >= 20.19), the declarations compile
 * under strict settings, and the tarball holds only what it should.
 *
 * Slow (build + one `npm install`), so everything is prepared once in `beforeAll`. Set
 * `AUTHGATE_KEEP_PACK_DIR=1` to keep the temporary project for a look after a failure.
 */
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const ENTRIES = ['authgate', 'authgate/express', 'authgate/fastify', 'authgate/hono', 'authgate/testing', 'authgate/node'] as const;
const BUILT = ['index', 'express', 'fastify', 'hono', 'node', 'testing', 'postgres'].flatMap((name) => [
  `dist/${name}.js`,
  `dist/${name}.d.ts`,
]);

/**
 * The environment of every child process. Variables that npm sets for the script running this
 * test (`npm test`) describe this repository, not the temporary project: drop them.
 */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_(package|lifecycle)_/i.test(key) || /^npm_config_local_prefix$/i.test(key) || key === 'INIT_CWD') continue;
    if (key === 'NODE_OPTIONS' || key === 'NODE_ENV' || key.startsWith('VITEST')) continue;
    env[key] = value;
  }
  return env;
}

const timings: string[] = [];

/** Run a command; on failure throw with everything needed to see why. */
function run(command: string, args: readonly string[], options: SpawnSyncOptions & { cwd: string }): string {
  const started = performance.now();
  const result = spawnSync(command, args, { encoding: 'utf8', env: childEnv(), maxBuffer: 64 * 1024 * 1024, ...options });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const shown = `${command} ${args.map((a) => (a.length > 80 ? `${a.replace(/\s+/g, ' ').slice(0, 77)}...` : a)).join(' ')}`;
  timings.push(`${seconds.padStart(5)} s  ${shown}`);
  if (result.error || result.status !== 0) {
    throw new Error(
      [
        `Command failed (${result.error ? String(result.error) : `exit ${result.status}${result.signal ? `, ${result.signal}` : ''}`}) after ${seconds} s:`,
        `  ${shown}`,
        `  in ${options.cwd}`,
        '--- stdout ---',
        String(result.stdout ?? '').trimEnd(),
        '--- stderr ---',
        String(result.stderr ?? '').trimEnd(),
      ].join('\n'),
    );
  }
  return String(result.stdout);
}

function write(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    const path = join(dir, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
  }
}

let workDir = '';
let project = '';
let packedFiles: string[] = [];
let tarballPath = '';
let stagedManifestBefore = '';
let stagedManifestAfter = '';
let leftAside = true;

beforeAll(() => {
  workDir = mkdtempSync(join(tmpdir(), 'authgate-pack-'));
  project = join(workDir, 'project');
  mkdirSync(project);

  // Build and pack a copy of the working tree: a clean dist/ every time, and a concurrent test run
  // (or a developer's `npm run build`) never sees dist/ half cleaned. Everything but build output
  // and dependencies is copied, so a too-wide "files" field would still show in the tarball.
  const stage = join(workDir, 'authgate');
  const skipped = new Set(['node_modules', '.git', 'dist', 'coverage', '.tmp', 'test-results']);
  cpSync(root, stage, {
    recursive: true,
    filter: (path) => {
      const top = relative(root, path).split(sep)[0]!;
      return !skipped.has(top) && !top.endsWith('.tgz');
    },
  });
  symlinkSync(join(root, 'node_modules'), join(stage, 'node_modules'), process.platform === 'win32' ? 'junction' : 'dir');

  // As a clean checkout has it: no dist/. `npm pack` must build it itself (the `prepack` script),
  // or the tarball would ship without the code, as it once did.
  expect(existsSync(join(stage, 'dist')), 'the staged copy has no dist/').toBe(false);

  // The build's own output (the prepack script) comes first on stdout; the JSON report is last.
  stagedManifestBefore = readFileSync(join(stage, 'package.json'), 'utf8');
  const packOutput = run(npm, ['pack', '--json', '--pack-destination', workDir], { cwd: stage });
  stagedManifestAfter = readFileSync(join(stage, 'package.json'), 'utf8');
  leftAside = existsSync(join(stage, '.package.json.packing'));
  const packed = JSON.parse(packOutput.slice(packOutput.search(/^\[/m))) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  const tarball = join(workDir, packed[0]!.filename);
  packedFiles = packed[0]!.files.map((file) => file.path).sort();
  tarballPath = tarball;

  write(project, {
    'package.json': JSON.stringify({ name: 'authgate-consumer', version: '0.0.0', private: true, type: 'module' }, null, 2),
  });
  run(
    npm,
    [
      'install',
      tarball,
      'express@5',
      '@types/express@5',
      'fastify@5',
      'hono@4',
      'typescript@5',
      '@types/node@20',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--no-package-lock',
      '--ignore-scripts',
      '--loglevel=error',
    ],
    { cwd: project },
  );
}, 240_000);

afterAll(() => {
  if (timings.length) console.log(`pack test timings:\n${timings.join('\n')}`);
  if (!workDir) return;
  if (process.env['AUTHGATE_KEEP_PACK_DIR']) console.log(`pack test: kept ${workDir}`);
  else rmSync(workDir, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('contains only dist/, package.json and the README, with every entry and its types', () => {
    const unexpected = packedFiles.filter((path) => !/^(dist\/.+|package\.json|README\.md|LICENSE(\.md)?)$/.test(path));
    expect(unexpected, `unexpected files in the tarball:\n${packedFiles.join('\n')}`).toEqual([]);
    expect(packedFiles).toEqual(expect.arrayContaining([...BUILT, 'package.json']));
    expect(
      packedFiles.filter((path) => /^(src|test|adapters|examples)\//.test(path) || (path.endsWith('.ts') && !path.endsWith('.d.ts'))),
    ).toEqual([]);
  });

  it('has no install-time script in its manifest, and the checkout it was packed from keeps its package.json', () => {
    // `prepare` builds dist/ for git and directory dependencies (.ci/build-hooks.mjs); a tarball
    // is built already, and npm 11 lists an install-time script of a tarball at every install.
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', 'authgate', 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(manifest.scripts?.[hook], hook).toBeUndefined();
    expect(JSON.parse(stagedManifestBefore).scripts.prepare).toBe('node .ci/build-hooks.mjs prepare');
    expect(stagedManifestAfter, 'postpack puts package.json back as it was').toBe(stagedManifestBefore);
    expect(leftAside, 'no .package.json.packing left behind').toBe(false);
  });

  it('passes arethetypeswrong (esm-only profile) and publint --strict, as the tarball is', () => {
    // esm-only: authgate ships ESM alone; CommonJS hosts load it with require() on Node >= 20.19
    // and type-check with moduleResolution node16, nodenext or bundler (README "Module format").
    const bin = (name: string) => join(root, 'node_modules', '.bin', name);
    run(bin('attw'), [tarballPath, '--profile', 'esm-only', '--no-color', '--no-emoji'], { cwd: workDir });
    const unpacked = join(workDir, 'unpacked');
    mkdirSync(unpacked);
    run('tar', ['-xzf', tarballPath, '-C', unpacked], { cwd: workDir });
    expect(run(bin('publint'), [join(unpacked, 'package'), '--pack', 'false', '--strict'], { cwd: workDir })).toContain('All good');
  });

  it('says where it comes from: repository, homepage and bugs, and a README without links into files it does not ship', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', 'authgate', 'package.json'), 'utf8')) as Record<string, unknown>;
    const repository = manifest['repository'] as { type?: string; url?: string } | undefined;
    expect(repository?.type).toBe('git');
    expect(repository?.url).toMatch(/^git\+https:\/\/github\.com\/[\w.-]+\/[\w.-]+\.git$/);
    expect(manifest['homepage']).toMatch(/^https:\/\//);
    expect((manifest['bugs'] as { url?: string } | undefined)?.url).toMatch(/^https:\/\/.+\/issues$/);
    const readme = readFileSync(join(project, 'node_modules', 'authgate', 'README.md'), 'utf8');
    const relative = [...readme.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1]!)
      .filter((target) => !/^([a-z][a-z0-9+.-]*:|#)/i.test(target));
    expect(relative, 'relative links in the packed README (they break on the registry)').toEqual([]);
  });

  it('has one copy of the core, so instanceof holds across entries', () => {
    const dist = join(project, 'node_modules', 'authgate', 'dist');
    const defining = readdirSync(dist)
      .filter((name) => name.endsWith('.js'))
      .filter((name) => /\bclass AuthorizationServer\b|\bAuthorizationServer = class\b/.test(readFileSync(join(dist, name), 'utf8')));
    expect(defining, 'files defining AuthorizationServer').toHaveLength(1);
  });

  it('loads no framework it does not need: the core none, authgate/fastify only types, authgate/hono no node: module, authgate/node none', () => {
    const dist = join(project, 'node_modules', 'authgate', 'dist');
    /** Every module specifier a built entry imports, following its own chunks. */
    const importsOf = (file: string, seen = new Set<string>()): string[] => {
      if (seen.has(file)) return [];
      seen.add(file);
      const specifiers = [...readFileSync(join(dist, file), 'utf8').matchAll(/\b(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map(
        (m) => m[1]!,
      );
      return specifiers.flatMap((s) => (s.startsWith('./') ? importsOf(s.slice(2), seen) : [s]));
    };
    expect(importsOf('index.js').filter((s) => /^(express|fastify|hono)(\/|$)/.test(s))).toEqual([]);
    expect(importsOf('fastify.js').filter((s) => /^fastify(\/|$)/.test(s))).toEqual([]);
    expect(importsOf('hono.js').filter((s) => s.startsWith('node:'))).toEqual([]);
    expect(importsOf('hono.js')).toContain('hono');
    expect(importsOf('node.js').filter((s) => /^(express|fastify|hono)(\/|$)/.test(s))).toEqual([]);
  });

  it('imports every entry as ESM', () => {
    const script = `
      const [core, expressEntry, fastify, hono, testing, node] = await Promise.all(${JSON.stringify(ENTRIES)}.map((name) => import(name)));
      const expect = (ok, what) => { if (!ok) throw new Error('missing or wrong: ' + what); };
      expect(typeof core.AuthorizationServer === 'function', 'authgate AuthorizationServer');
      expect(typeof core.MemoryStorage === 'function', 'authgate MemoryStorage');
      expect(typeof core.isOAuthError === 'function', 'authgate isOAuthError');
      expect(typeof core.OAuthError === 'function' && typeof core.ConfigError === 'function', 'authgate errors');
      expect(typeof expressEntry.createOAuthRouter === 'function', 'authgate/express createOAuthRouter');
      expect(typeof expressEntry.requireToken === 'function', 'authgate/express requireToken');
      expect(typeof testing.FakeClock === 'function', 'authgate/testing FakeClock');
      expect(typeof testing.FakeSessions === 'function', 'authgate/testing FakeSessions');
      expect(typeof fastify.oauthPlugin === 'function' && typeof fastify.requireToken === 'function', 'authgate/fastify');
      expect(typeof hono.createOAuthApp === 'function' && typeof hono.requireToken === 'function', 'authgate/hono');
      expect(typeof node.createOAuthHandler === 'function' && typeof node.requireToken === 'function', 'authgate/node');

      const clock = new testing.FakeClock();
      const server = new core.AuthorizationServer({ storage: new core.MemoryStorage(), sessions: new testing.FakeSessions(clock), clock });
      const client = await server.registerClient({ name: 'Pack test', redirectUri: 'https://app.example/callback' });
      expect(typeof client.clientId === 'string' && typeof client.clientSecret === 'string', 'registerClient result');
      expect(typeof expressEntry.createOAuthRouter(server) === 'function', 'a router');
      expect(typeof expressEntry.requireToken(server) === 'function', 'a middleware');
      const { default: Fastify } = await import('fastify');
      const fastifyApp = Fastify();
      await fastifyApp.register(fastify.oauthPlugin, { server });
      const revoked = await fastifyApp.inject({ method: 'POST', url: '/v1/oauth/revoke', payload: 'token=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(revoked.statusCode === 200 && revoked.body === '{}', 'authgate/fastify revocation');
      const honoApp = hono.createOAuthApp(server);
      const honoRevoked = await honoApp.request('/v1/oauth/revoke', { method: 'POST', body: 'token=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(honoRevoked.status === 200 && (await honoRevoked.text()) === '{}', 'authgate/hono revocation');
      const { createServer } = await import('node:http');
      const nodeServer = createServer(node.createOAuthHandler(server)).listen(0, '127.0.0.1');
      await new Promise((resolve) => nodeServer.once('listening', resolve));
      const nodeRevoked = await fetch('http://127.0.0.1:' + nodeServer.address().port + '/v1/oauth/revoke', { method: 'POST', body: 'token=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(nodeRevoked.status === 200 && (await nodeRevoked.text()) === '{}', 'authgate/node revocation');
      nodeServer.close();
      try { new core.AuthorizationServer({}); throw new Error('no ConfigError'); }
      catch (error) { expect(error instanceof core.ConfigError, 'ConfigError instanceof'); }
      try { await server.registerClient({ name: '', redirectUri: 'x' }); throw new Error('no OAuthError'); }
      catch (error) { expect(core.isOAuthError(error) && error instanceof core.OAuthError, 'OAuthError from registerClient'); }
      console.log('esm ok');
    `;
    expect(run(process.execPath, ['--input-type=module', '-e', script], { cwd: project })).toContain('esm ok');
  });

  it('loads every entry through require() from CommonJS', () => {
    write(project, {
      'check.cjs': `
        const assert = require('node:assert/strict');
        const entries = ${JSON.stringify(ENTRIES)}.map((name) => require(name));
        const [core, expressEntry, fastifyEntry, honoEntry, testing, nodeEntry] = entries;
        const { AuthorizationServer, MemoryStorage, ConfigError, isOAuthError } = core;
        const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions: { current: () => null } });
        assert.ok(server instanceof AuthorizationServer);
        assert.equal(typeof isOAuthError, 'function');
        assert.equal(typeof expressEntry.createOAuthRouter(server), 'function');
        assert.equal(typeof expressEntry.requireToken(server), 'function');
        assert.equal(typeof fastifyEntry.oauthPlugin, 'function');
        assert.equal(typeof fastifyEntry.requireToken(server), 'function');
        assert.equal(typeof honoEntry.createOAuthApp(server).fetch, 'function');
        assert.equal(typeof honoEntry.requireToken(server), 'function');
        assert.equal(typeof nodeEntry.createOAuthHandler(server), 'function');
        assert.equal(typeof nodeEntry.requireToken(server), 'function');
        assert.equal(new testing.FakeClock(0).now(), 0);
        assert.throws(() => new AuthorizationServer({ storage: {}, sessions: { current: () => null } }), ConfigError);
        // require() and import() see the same module instances: one copy of every class.
        import('authgate').then((esm) => {
          assert.equal(esm.AuthorizationServer, AuthorizationServer);
          assert.ok(server instanceof esm.AuthorizationServer);
          console.log('cjs ok');
        }).catch((error) => { console.error(error); process.exit(1); });
      `,
    });
    expect(run(process.execPath, ['check.cjs'], { cwd: project })).toContain('cjs ok');
  });

  it('authgate/postgres loads without pg installed (optional peer); authgate/testing runs its conformance kit under node:test, without vitest', () => {
    write(project, {
      'postgres-without-pg.mjs': `
        const { PostgresStorage, PostgresStorageError, openPostgresStorage } = await import('authgate/postgres');
        const storage = new PostgresStorage({ query: async () => ({ rows: [], rowCount: 0 }), connect: async () => { throw new Error('no'); } }, { schema: 'auth' });
        if (typeof storage.migrate !== 'function' || typeof PostgresStorageError !== 'function') throw new Error('authgate/postgres exports');
        const error = await openPostgresStorage('postgres://127.0.0.1:1/x').then(() => null, (e) => e);
        if (!error || !/pg/.test(String(error.message))) throw new Error('openPostgresStorage without pg should say pg is missing: ' + error);
        console.log('postgres esm ok');
      `,
      'postgres-without-pg.cjs': `
        const { PostgresStorage } = require('authgate/postgres');
        if (typeof PostgresStorage !== 'function') throw new Error('require(authgate/postgres)');
        console.log('postgres cjs ok');
      `,
      'conformance.test.mjs': `
        // node:test, no vitest in this project: authgate/testing must not need it.
        import { describe, it } from 'node:test';
        import { MemoryStorage } from 'authgate';
        import { describeStorageConformance } from 'authgate/testing';
        describeStorageConformance('MemoryStorage (packed)', () => new MemoryStorage(), { describe, it });
      `,
    });
    expect(run(process.execPath, ['postgres-without-pg.mjs'], { cwd: project })).toContain('postgres esm ok');
    expect(run(process.execPath, ['postgres-without-pg.cjs'], { cwd: project })).toContain('postgres cjs ok');
    expect(readdirSync(join(project, 'node_modules')).includes('vitest')).toBe(false);
    expect(run(process.execPath, ['--test', 'conformance.test.mjs'], { cwd: project })).toMatch(/# fail 0/);

    run(
      npm,
      [
        'install',
        'pg@8',
        '@types/pg@8',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        '--no-package-lock',
        '--ignore-scripts',
        '--loglevel=error',
      ],
      { cwd: project },
    );
  }, 120_000); // three node runs and an npm install: 5 s alone, more when the whole suite shares 2 cores

  it('compiles strict TypeScript consumers against the declarations: ESM and CommonJS hosts, and with pg, PostgresStorage on a pg.Pool', () => {
    // One program for both (the same compiler options): the libraries' declarations, checked
    // with skipLibCheck off, are checked once instead of once per consumer. pg is installed by now
    // (the case above, after it checked authgate/postgres without it).
    write(project, {
      'tsconfig.json': JSON.stringify(
        {
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            lib: ['ES2022'],
            types: ['node'],
            strict: true,
            exactOptionalPropertyTypes: true,
            noUncheckedIndexedAccess: true,
            // Check the published .d.ts files themselves, not only their use.
            skipLibCheck: false,
            noEmit: true,
          },
          include: ['ts', 'pg-ts'],
        },
        null,
        2,
      ),
      'ts/app.ts': `
        import express, { type Request, type Response } from 'express';
        import {
          AuthorizationServer, MemoryStorage, isOAuthError,
          type AuthorizationServerOptions, type AuthorizeDecision, type OAuthRequest, type OAuthResponse,
          type RegisteredClient, type UserSessions, type VerifiedToken,
        } from 'authgate';
        import { createOAuthRouter, requireToken, type OAuthRouterOptions } from 'authgate/express';
        import { FakeClock, FakeSessions } from 'authgate/testing';

        const clock = new FakeClock();
        const fake = new FakeSessions(clock);
        const sessions: UserSessions = fake;
        const options: AuthorizationServerOptions = { storage: new MemoryStorage(), sessions, clock, issuer: 'https://auth.example' };
        const server = new AuthorizationServer(options);

        const client: RegisteredClient = await server.registerClient({ name: 'Example App', redirectUri: 'https://app.example/callback' });
        const secret: string = client.clientSecret;
        clock.advance(60_000);
        const cookie: string = fake.signIn({ uuid: 'a1b2c3d4e5f6', name: 'Ada', email: 'ada@example.com' });

        const request: OAuthRequest = {
          method: 'GET',
          url: '/v1/oauth/authorize?response_type=code&client_id=' + client.clientId,
          headers: { cookie },
        };
        function describeDecision(decision: AuthorizeDecision): string {
          switch (decision.type) {
            case 'redirect': return decision.location;
            case 'login':
            case 'consent': return decision.interaction.id + decision.interaction.scope.join(' ');
            case 'error': return String(decision.status) + decision.description;
            case 'form_post': return decision.action + Object.keys(decision.fields).join(',');
            default: { const unhandled: never = decision; return unhandled; }
          }
        }
        describeDecision(await server.authorize(request));
        const response: OAuthResponse = await server.token({ method: 'POST', url: '/v1/oauth/token', headers: {}, body: 'grant_type=x' });
        const status: number = response.status;

        const app = express();
        const routerOptions: OAuthRouterOptions = { loginUrl: '/login', bodyLimit: 4096 };
        app.use(createOAuthRouter(server, routerOptions));
        app.get('/v2/me', requireToken(server), (_req: Request, res: Response) => {
          const uuid: string | undefined = res.locals.oauth?.account.uuid;
          const token: VerifiedToken | undefined = res.locals.oauth;
          // @ts-expect-error res.locals.oauth is optional: the augmentation survived and is not 'any'
          const unchecked: string = res.locals.oauth.account.uuid;
          res.json({ uuid, scope: token?.scope ?? [], unchecked });
        });

        try {
          await server.registerClient({ name: '', redirectUri: 'not a url' });
        } catch (error) {
          if (isOAuthError(error)) {
            const code: string = error.code;
            const description: string = error.description;
            console.log(code, description);
          }
        }

        // @ts-expect-error unknown options are refused by the types too
        new AuthorizationServer({ storage: new MemoryStorage(), sessions, notAnOption: true });
        // @ts-expect-error storage is required
        new AuthorizationServer({ sessions });

        export { secret, status };
      `,
      'ts/fastify.ts': `
        import Fastify from 'fastify';
        import { AuthorizationServer, MemoryStorage, type VerifiedToken } from 'authgate';
        import { oauthPlugin, requireToken, type OAuthPluginOptions } from 'authgate/fastify';

        const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions: { current: () => null } });
        const app = Fastify();
        const options: OAuthPluginOptions = { server, loginUrl: '/login', bodyLimit: 4096, onLogin: (_request, reply, interaction) => reply.redirect('/login?i=' + interaction.id) };
        await app.register(oauthPlugin, options);
        // @ts-expect-error the server option is required
        await app.register(oauthPlugin, { loginUrl: '/login' });
        app.get('/v2/me', { preHandler: requireToken(server) }, async (request) => {
          const token: VerifiedToken | undefined = request.oauth;
          // @ts-expect-error request.oauth is optional: the declaration merging survived and is not 'any'
          const unchecked: string = request.oauth.account.uuid;
          return { scope: token?.scope ?? [], unchecked };
        });
      `,
      'ts/hono.ts': `
        import { Hono } from 'hono';
        import { AuthorizationServer, MemoryStorage, type VerifiedToken } from 'authgate';
        import { createOAuthApp, requireToken, type OAuthAppOptions, type OAuthVariables } from 'authgate/hono';

        const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions: { current: () => null } });
        const app = new Hono<{ Variables: OAuthVariables }>();
        const options: OAuthAppOptions = { loginUrl: '/login', onConsent: (c, interaction) => c.text(interaction.client.name) };
        app.route('/', createOAuthApp(server, options));
        app.use('/v2/*', requireToken(server));
        app.get('/v2/me', (c) => {
          const token: VerifiedToken = c.get('oauth');
          // @ts-expect-error only the declared variables exist
          c.get('nothing');
          return c.json({ scope: token.scope });
        });
        export default app;
      `,
      'ts/node.ts': `
        import { createServer } from 'node:http';
        import { AuthorizationServer, MemoryStorage, type VerifiedToken } from 'authgate';
        import { createOAuthHandler, requireToken, type OAuthHandlerOptions } from 'authgate/node';

        const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions: { current: () => null } });
        const options: OAuthHandlerOptions = { loginUrl: '/login', bodyLimit: 4096, onConsent: (_req, res, interaction) => res.end(interaction.client.name) };
        const oauth = createOAuthHandler(server, options);
        const protect = requireToken(server);
        createServer((req, res) => oauth(req, res, () => protect(req, res, () => {
          const token: VerifiedToken | undefined = req.oauth;
          // @ts-expect-error req.oauth is optional: the declaration merging survived and is not 'any'
          const unchecked: string = req.oauth.account.uuid;
          res.end(JSON.stringify({ scope: token?.scope ?? [], unchecked }));
        })));
      `,
      'ts/legacy.cts': `
        // A CommonJS TypeScript host: compiled to require(), which loads the ESM build on Node >= 20.19.
        import { AuthorizationServer, MemoryStorage } from 'authgate';
        import { FakeClock } from 'authgate/testing';
        import { requireToken } from 'authgate/express';

        const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions: { current: () => null }, clock: new FakeClock() });
        export const middleware = requireToken(server);
      `,
      'pg-ts/app.ts': `
        import pg from 'pg';
        import { describe, it } from 'node:test';
        import { AuthorizationServer, MemoryStorage, type Storage } from 'authgate';
        import { openPostgresStorage, PostgresStorage, PostgresStorageError, type MigrateResult, type PostgresStorageOptions, type PruneResult } from 'authgate/postgres';
        import { describeStorageConformance, runStorageConformance, storageConformanceCases, type StorageConformanceCase } from 'authgate/testing';

        const pool = new pg.Pool({ connectionString: 'postgres://localhost/app' });
        const options: PostgresStorageOptions = { schema: 'auth', tablePrefix: 'oauth_' };
        const storage: Storage = new PostgresStorage(pool, options);
        const postgres = new PostgresStorage(pool);
        const migrated: Promise<MigrateResult> = postgres.migrate();
        const pruned: Promise<PruneResult> = postgres.prune(Date.now());
        new AuthorizationServer({ storage, sessions: { current: () => null } });
        // @ts-expect-error a pool is required
        new PostgresStorage();
        const opened = await openPostgresStorage('postgres://localhost/app', { schema: 'auth', max: 5 });
        const kind: 'duplicate' | 'serialization' | 'database' = new PostgresStorageError('database', 'x', undefined, 'm').kind;

        describeStorageConformance('MemoryStorage', () => new MemoryStorage(), { describe, it });
        const first: StorageConformanceCase | undefined = storageConformanceCases[0];
        const results = await runStorageConformance(() => new MemoryStorage(), { only: ['redeemCode'] });
        const failed: boolean = results.some((r) => !r.ok);
        export { migrated, pruned, opened, kind, first, failed };
      `,
    });
    run(process.execPath, [join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: project });
  }, 120_000); // a full tsc with skipLibCheck off: 13-17 s alone, 23-27 s while the whole suite shares 2 cores (default 20 s)
});
