/**
 * Refresh retries under real concurrency (docs/reference.md#refresh-token-rotation-and-families):
 * two authgate processes (test/storage/fixtures/server.ts, Express on PostgresStorage, default
 * options) on one database, and a public client whose refresh token is sent N times at once
 * (N = 2, 5, 10; one warmed-up connection per request, alternating between the processes), as
 * the processes of one agent refreshing together. Asserted: every request gets a working pair,
 * the family is not revoked (the database has N live sibling refresh tokens); then one sibling is
 * used: the others are revoked with their access tokens, and exactly one live refresh token is
 * left. Then the siblings of a second round are all used at once: exactly one wins, and the
 * family ends (a superseded sibling presented again is an invalidated token, RFC 9700 §4.14.2).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomToken, sha256Base64url } from '../../src/crypto.js';
import { AuthorizationServer } from '../../src/index.js';
import { PostgresStorage } from '../../src/postgres/index.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from './pg.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/server.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const REDIRECT = 'http://127.0.0.1/callback';

const children = new Set<ChildProcess>();
const schema = schemaName('retry_procs');
const pool = makePool(3);

/** Start one server process; resolves with its origin. */
async function start(name: string): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL, AUTHGATE_SCHEMA: schema, AUTHGATE_INSTANCE: name };
  delete env['NODE_OPTIONS'];
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const log: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  const exited = once(child, 'exit');
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${log.join('')}`)), 30_000);
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const message = JSON.parse(line) as { ready?: boolean; port?: number };
      if (message.ready && message.port) {
        clearTimeout(timer);
        resolve(message.port);
      }
    });
    void exited.then(() => reject(new Error(`${name} exited:\n${log.join('')}`)));
  });
  return `http://127.0.0.1:${port}`;
}

async function http(origin: string, path: string, init: { headers?: Record<string, string>; form?: Record<string, string> } = {}) {
  const res = await fetch(`${origin}${path}`, {
    method: init.form ? 'POST' : 'GET',
    headers: { ...(init.form ? FORM : {}), ...init.headers },
    ...(init.form && { body: new URLSearchParams(init.form).toString() }),
    redirect: 'manual',
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* a page */
  }
  return { status: res.status, body, text, location: res.headers.get('location'), setCookie: res.headers.getSetCookie() };
}

const hidden = (html: string, field: string) => new RegExp(`name="${field}" value="([^"]*)"`).exec(html)?.[1] ?? '';
type Pair = { access: string; refresh: string };

describe.skipIf(!DATABASE_URL)(
  'refresh retries: two processes on one PostgreSQL database, N refreshes at once',
  { timeout: 90_000 },
  () => {
    let origins: string[];
    let app: { clientId: string };

    beforeAll(async () => {
      origins = await Promise.all([start('A'), start('B')]);
      const admin = new AuthorizationServer({ storage: new PostgresStorage(pool, { schema }), sessions: { current: () => null } });
      app = await admin.registerClient({ name: 'Agent', redirectUri: REDIRECT, public: true });
    }, 60_000);

    afterAll(async () => {
      for (const child of children) child.kill('SIGKILL');
      await dropSchema(pool, schema);
      await pool.end();
    });

    /** A public client's first pair, by the code flow with PKCE at process A. */
    async function signIn(): Promise<Pair> {
      const origin = origins[0] ?? '';
      const account = randomToken()
        .replace(/[^a-f0-9]/g, '')
        .padEnd(32, 'a')
        .slice(0, 32);
      const verifier = randomToken();
      const query = new URLSearchParams({
        client_id: app.clientId,
        redirect_uri: REDIRECT,
        response_type: 'code',
        code_challenge: sha256Base64url(verifier),
        code_challenge_method: 'S256',
      });
      const page = await http(origin, `/v1/oauth/authorize?${query}`, { headers: { 'x-test-account': account } });
      expect(page.status, page.text).toBe(200);
      const csrf = hidden(page.text, 'csrf');
      const binding = page.setCookie.find((line) => line.startsWith('authgate_browser='))?.split(';')[0] ?? '';
      const decided = await http(origin, '/v1/oauth/authorize/decision', {
        headers: { 'x-test-account': account, cookie: `authgate_csrf=${csrf}; ${binding}` },
        form: { interaction: hidden(page.text, 'interaction'), csrf, decision: 'approve' },
      });
      const code = new URL(decided.location ?? '').searchParams.get('code') ?? '';
      const res = await http(origin, '/v1/oauth/token', {
        form: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: app.clientId, code_verifier: verifier },
      });
      expect(res.status, res.text).toBe(200);
      return { access: res.body['access_token'] as string, refresh: res.body['refresh_token'] as string };
    }

    /** The same refresh request (one per refresh token) from warmed-up connections, alternating processes, at once. */
    async function together(refreshTokens: string[]): Promise<Array<{ status: number; body: Record<string, unknown> }>> {
      const clients = refreshTokens.map((_, i) => new Client(origins[i % origins.length] ?? '', { pipelining: 1 }));
      try {
        await Promise.all(clients.map(async (c) => (await c.request({ method: 'GET', path: '/health' })).body.dump()));
        return await Promise.all(
          clients.map(async (c, i) => {
            const body = new URLSearchParams({
              grant_type: 'refresh_token',
              refresh_token: refreshTokens[i] ?? '',
              client_id: app.clientId,
            });
            const res = await c.request({ method: 'POST', path: '/v1/oauth/token', headers: FORM, body: body.toString() });
            return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
          }),
        );
      } finally {
        await Promise.all(clients.map((c) => c.close()));
      }
    }

    const me = async (i: number, access: string) =>
      (await http(origins[i % origins.length] ?? '', '/v2/me', { headers: { authorization: `Bearer ${access}` } })).status;

    /** The family's state in the database: the grant revoked or not, and its live refresh tokens. */
    async function family(anyToken: string): Promise<{ revoked: boolean; live: number }> {
      const { rows } = await pool.query(
        `SELECT g.revoked_at, count(t.hash) FILTER (WHERE t.kind = 'refresh' AND t.rotated_at IS NULL AND t.revoked_at IS NULL) AS live
         FROM "${schema}".authgate_tokens AS mine
         JOIN "${schema}".authgate_grants AS g ON g.id = mine.grant_id
         JOIN "${schema}".authgate_tokens AS t ON t.grant_id = g.id
        WHERE mine.hash = $1 GROUP BY g.revoked_at`,
        [sha256Base64url(anyToken)],
      );
      return { revoked: rows[0]?.revoked_at !== null, live: Number(rows[0]?.live) };
    }

    for (const n of [2, 5, 10]) {
      it(`${n} refreshes with one token at once, across both processes: all get working pairs, none revokes the family; the first used revokes the others`, async () => {
        const first = await signIn();
        const answers = await together(Array(n).fill(first.refresh));
        expect(answers.map((a) => `${a.status} ${String(a.body['error'] ?? '')}`)).toEqual(Array(n).fill('200 '));
        const pairs = answers.map((a) => ({ access: a.body['access_token'] as string, refresh: a.body['refresh_token'] as string }));
        expect(new Set(pairs.map((p) => p.refresh)).size).toBe(n);
        expect(await family(first.refresh)).toEqual({ revoked: false, live: n });
        for (const [i, pair] of pairs.entries()) expect(await me(i, pair.access)).toBe(200);
        // One process goes on with its pair: the others are revoked, the family lives.
        const [next] = await together([pairs[n - 1]?.refresh ?? '']);
        expect(next?.status).toBe(200);
        expect(await family(first.refresh)).toEqual({ revoked: false, live: 1 });
        expect(await me(0, next?.body['access_token'] as string)).toBe(200);
        for (const [i, pair] of pairs.slice(0, -1).entries()) expect(await me(i, pair.access)).toBe(401);
      });
    }

    it('siblings all used at once: exactly one wins, and the superseded ones presented end the family (RFC 9700 §4.14.2)', async () => {
      const first = await signIn();
      const pairs = (await together(Array(4).fill(first.refresh))).map((a) => a.body['refresh_token'] as string);
      const answers = await together(pairs);
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      for (const a of answers.filter((x) => x.status !== 200)) expect(a).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      expect((await family(first.refresh)).revoked).toBe(true);
    });
  },
);
