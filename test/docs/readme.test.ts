/**
 * README.md is true, as a newcomer pastes it:
 * - the Quick start runs as printed: started on its own in a child process, it serves the
 *   discovery document, its sign-in page, the consent page, the code exchange and the protected
 *   API, in one authorization code flow;
 * - every other TypeScript block compiles (the TypeScript compiler, with the repository's
 *   options, the package's entry names mapped to their sources). A block that is a fragment of a
 *   larger program uses the names the text around it has set up (`server`, `storage`,
 *   `sessions`, ...): `PRELUDE` declares them, and nothing else;
 * - a block marked `<!-- region: path#name -->` is that region of the file, word for word, with
 *   the file's relative imports written as the package's entry names (`'authgate'`);
 * - the shell blocks name only npm scripts and repository files that exist.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The package's entries (package.json `exports`, tsup.config.ts) and the sources they are built from. */
const ENTRIES: Record<string, string> = {
  authgate: 'src/index.ts',
  'authgate/express': 'adapters/express/index.ts',
  'authgate/fastify': 'adapters/fastify/index.ts',
  'authgate/hono': 'adapters/hono/index.ts',
  'authgate/node': 'adapters/node/index.ts',
  'authgate/testing': 'src/testing/index.ts',
  'authgate/postgres': 'src/postgres/index.ts',
};

interface Block {
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  /** The HTML comment on the last non-empty line before the fence, if any (`region: ...`, `not compiled: ...`). */
  marker: string | undefined;
}

/** Every fenced block of `text`, with the comment that marks it. */
function blocks(text: string): Block[] {
  const lines = text.split('\n');
  const found: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const marker = /^<!-- (.*) -->$/.exec(lines[before] ?? '')?.[1];
    found.push({ line: i + 1, lang: open[1]!, code: lines.slice(i + 1, end).join('\n'), marker });
    i = end;
  }
  return found;
}

const ALL = blocks(README);
const TS = ALL.filter((b) => b.lang === 'ts');
const QUICK_START = TS.find((b) => b.line > README.split('\n').indexOf('## Quick start (Express)'))!;

/** `code` with the package's entry names replaced by the absolute paths of their sources. */
const toSources = (code: string): string =>
  code.replace(/(from |import\()'(authgate(?:\/\w+)?)'/g, (whole, lead: string, entry: string) =>
    ENTRIES[entry] ? `${lead}'${join(ROOT, ENTRIES[entry]).replace(/\.ts$/, '.js')}'` : whole,
  );

/** A file's relative imports of the package's sources, written as the entry names (`'../../src/index.js'` → `'authgate'`). */
function toEntries(code: string, file: string): string {
  const byPath = new Map(Object.entries(ENTRIES).map(([entry, path]) => [path, entry]));
  return code.replace(/from '(\.[^']+)'/g, (whole, path: string) => {
    const source = relative(ROOT, resolve(dirname(join(ROOT, file)), path)).replace(/\.js$/, '.ts');
    const entry = byPath.get(source);
    return entry ? `from '${entry}'` : whole;
  });
}

/** The `// #region name` ... `// #endregion name` parts of a file, dedented (as test/docs/guide.test.ts reads them). */
function regions(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of text.matchAll(/^[ \t]*\/\/ #region ([\w-]+)\n([\s\S]*?)^[ \t]*\/\/ #endregion \1$/gm)) {
    const lines = m[2]!.replace(/\n$/, '').split('\n');
    const indent = /^ */.exec(lines[0]!)![0];
    found.set(m[1]!, lines.map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l)).join('\n'));
  }
  return found;
}

/**
 * The names the README's fragments take from the text around them, and only those: a block
 * that declares one of them itself (the Quick start's `server`) shadows it.
 */
const PRELUDE = `
import type { Express, RequestHandler } from 'express';
import type { Account, AuthorizationServer, Storage, UserSessions } from '${join(ROOT, 'src/index.js')}';
declare global {
  /** "const server = new AuthorizationServer({ storage, sessions, ... })" */
  const server: AuthorizationServer;
  const storage: Storage;
  const sessions: UserSessions;
  /** Your public https URL: "issuer: 'https://platform.example'". */
  const issuer: string;
  /** The Express app of the Quick start. */
  const app: Express;
  /** The signed-in user, on your API tokens page. */
  const account: Account;
  /** The MCP SDK's Streamable HTTP transport, as an Express handler (examples/mcp/mcp-server.ts). */
  const mcpHandler: RequestHandler;
}
export {};
`;

/** What the "Testing your own storage" block imports from the reader's own project and from redis. */
const READERS_PROJECT: Record<string, string> = {
  'redis-storage.ts': `import { MemoryStorage } from '${join(ROOT, 'src/index.js')}';\nexport class RedisStorage extends MemoryStorage {\n  constructor(_redis: unknown) {\n    super();\n  }\n}\n`,
  'node_modules/redis/package.json': '{ "name": "redis", "type": "module", "types": "index.d.ts" }',
  'node_modules/redis/index.d.ts': 'export declare function createClient(options: { url?: string }): { connect(): Promise<unknown> };\n',
};

const work = join(ROOT, '.tmp');
mkdirSync(work, { recursive: true });
const dir = mkdtempSync(join(work, 'readme-'));
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) child.kill();
  rmSync(dir, { recursive: true, force: true });
});

describe('README.md: every TypeScript block compiles', () => {
  it('every block is TypeScript, shell, or the request-flow diagram (no language): nothing goes unchecked', () => {
    expect(new Set(ALL.map((b) => b.lang))).toEqual(new Set(['ts', 'sh', '']));
    expect(ALL.filter((b) => b.lang === '').map((b) => b.code.split('\n')[0])).toEqual([
      expect.stringMatching(/^browser ─► GET \/v1\/oauth\/authorize/),
    ]);
  });

  it('the blocks, fragments included, against the package sources (marks: only region)', { timeout: 120_000 }, () => {
    // No block is let off: the only mark a TypeScript block may carry is its region.
    for (const block of TS) if (block.marker !== undefined) expect(block.marker, `README.md:${block.line}`).toMatch(/^region: /);
    const files = TS.map((block) => {
      const file = join(dir, `block-${block.line}.ts`);
      writeFileSync(file, `${toSources(block.code)}\nexport {};\n`);
      return file;
    });
    writeFileSync(join(dir, 'prelude.ts'), PRELUDE);
    for (const [name, text] of Object.entries(READERS_PROJECT)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    const config = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, 'tsconfig.json'),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
    )!;
    const program = ts.createProgram([...files, join(dir, 'prelude.ts')], { ...config.options, noEmit: true });
    // The diagnostics of this directory's files only (the blocks, the prelude and the reader's
    // project): asked file by file, the checker checks what they use of src/, not all of it (the
    // whole program's diagnostics, filtered afterwards, took 14 s of this file's 15).
    const errors = program
      .getSourceFiles()
      .filter((file) => file.fileName.startsWith(dir))
      .flatMap((file) => ts.getPreEmitDiagnostics(program, file))
      .filter((d) => d.file?.fileName.startsWith(dir))
      .map((d) => {
        const where = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
        const line = Number(/block-(\d+)\.ts$/.exec(d.file!.fileName)?.[1] ?? 0) + where.line + 1;
        return `README.md:${line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      });
    expect(errors).toEqual([]);
  });

  it('a region block is its region, the imports written as the package names them', () => {
    const shown = TS.filter((b) => b.marker?.startsWith('region: '));
    expect(shown.length).toBeGreaterThan(0);
    for (const block of shown) {
      const [file, name] = block.marker!.slice('region: '.length).split('#') as [string, string];
      const region = regions(readFileSync(join(ROOT, file), 'utf8')).get(name);
      expect(region, `${file}#${name}`).toBeDefined();
      expect(block.code, `README.md:${block.line}: ${file}#${name}`).toBe(toEntries(region!, file));
    }
  });
});

describe('README.md: the shell blocks', () => {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const shell = ALL.filter((b) => b.lang === 'sh');

  it('name only npm scripts that exist, and repository files that exist', () => {
    const wrong: string[] = [];
    for (const block of shell) {
      for (const [, script] of block.code.matchAll(/npm run ([\w:-]+)/g)) if (!scripts[script!]) wrong.push(`npm run ${script}`);
      for (const [, path] of block.code.matchAll(/(?:^|\s)((?:test|examples|src|\.ci)\/[\w./-]*)/gm)) {
        try {
          readFileSync(join(ROOT, path!.replace(/\/$/, '')));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EISDIR') wrong.push(path!);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});

/** A free port on this machine. */
const freePort = () =>
  new Promise<number>((done, fail) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
    probe.once('error', fail);
  });

describe('README.md: the Quick start runs as printed', () => {
  it('discovery, sign-in, consent, code, token, the protected API', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const base = `http://localhost:${port}`;
    const file = join(dir, 'server.mts'); // as the README says to save it
    writeFileSync(file, toSources(QUICK_START.code));
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port) };
    delete env['NODE_OPTIONS'];
    const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk));
    const started = await new Promise<string>((done, fail) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk;
        if (/clientSecret: '[^']+'[\s\S]*\}/.test(out)) done(out);
      });
      void once(child, 'exit').then(() => fail(new Error(`the Quick start exited:\n${out}\n${err}`)));
    });
    expect(started).toContain(`${base}/.well-known/oauth-authorization-server`);
    const clientId = /clientId: '([0-9a-f]{64})'/.exec(started)![1]!;
    const clientSecret = /clientSecret: '([^']+)'/.exec(started)![1]!;
    const callback = 'http://localhost:8080/callback';

    const cookies = new Map<string, string>();
    const go = async (path: string, form?: Record<string, string>, headers: Record<string, string> = {}) => {
      const res = await fetch(new URL(path, base), {
        method: form ? 'POST' : 'GET',
        redirect: 'manual',
        headers: {
          cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
          ...(form && { 'content-type': 'application/x-www-form-urlencoded' }),
          ...headers,
        },
        ...(form && { body: new URLSearchParams(form).toString() }),
      });
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        cookies.set(pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1));
      }
      return { status: res.status, location: res.headers.get('location') ?? '', text: await res.text() };
    };

    const discovery = await go('/.well-known/oauth-authorization-server');
    expect(discovery.status).toBe(200);
    expect(JSON.parse(discovery.text)).toMatchObject({ issuer: base, token_endpoint: `${base}/v1/oauth/token` });

    const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: callback, scope: 'read', state: 'xyz' });
    const start = await go(`/v1/oauth/authorize?${query}`);
    expect(start.status).toBe(302);
    const login = new URL(start.location, base);
    expect(login.pathname).toBe('/login');
    const interaction = login.searchParams.get('interaction')!;
    const page = await go(login.pathname + login.search);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`name="interaction" value="${interaction}"`);

    expect((await go('/login', { interaction, email: 'ada@example.com', password: 'wrong' })).status).toBe(401);
    const signedIn = await go('/login', { interaction, email: 'ada@example.com', password: 'lovelace' });
    expect(signedIn.status).toBe(303);
    const consent = await go(signedIn.location);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Example App');
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(consent.text)![1]!;
    const decided = await go('/v1/oauth/authorize/decision', {
      interaction: field('interaction'),
      csrf: field('csrf'),
      decision: 'approve',
    });
    expect(decided.status).toBe(303);
    const back = new URL(decided.location);
    expect(`${back.origin}${back.pathname}`).toBe(callback);
    expect(back.searchParams.get('state')).toBe('xyz');

    const basic = `Basic ${btoa(`${clientId}:${clientSecret}`)}`;
    const token = await go(
      '/v1/oauth/token',
      { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: callback },
      { authorization: basic },
    );
    expect(token.status, token.text).toBe(200);
    const { access_token } = JSON.parse(token.text) as { access_token: string };
    const account = await go('/v2/account', undefined, { authorization: `Bearer ${access_token}` });
    expect(account.status).toBe(200);
    expect(JSON.parse(account.text)).toEqual({ uuid: 'a3f1c2e4b5d60718293a4b5c6d7e8f90', name: 'Ada Lovelace', email: 'ada@example.com' });
    expect((await go('/v2/account')).status).toBe(401);
    child.kill();
  });
});
