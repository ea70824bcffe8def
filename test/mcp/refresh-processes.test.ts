/**
 * An agent whose processes refresh at once (docs/reference.md#refresh-token-rotation-and-families):
 * the unmodified MCP SDK client in two Node processes (fixtures/agent.ts) sharing one token file,
 * as a desktop agent's processes share its token store. The SDK authorizes once in this process
 * (dynamic registration: a public client), the access token expires, and both processes start at
 * the same moment: each gets a 401, reads the refresh token from the file and refreshes. The
 * store holds each rotation's answer back until the other process's refresh with the same token
 * has arrived, so the second refresh comes before the first answer is out (a real race, always).
 *
 * With the default options (a public client: refresh retries, 60 s): both processes call their
 * tool, nobody is sent to sign in again, no reuse is detected, and a second round of both at once
 * works as well. With `refreshRetryWindowSeconds: 0` (strict single use, the behaviour before
 * retries): the family is revoked and a process must send the user to sign in again.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { type AuditEvent, MemoryStorage, type OAuthTokenRecord, type SingleUseOutcome } from '../../src/index.js';
import { ADA } from '../fixtures.js';
import { type McpHost, startMcpHost } from './hosts.js';
import { InMemoryOAuthProvider } from './sdk-client.js';

const AGENT = fileURLToPath(new URL('./fixtures/agent.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A MemoryStorage whose rotations answer only once the same refresh token was looked up a second
 * time (the other process's refresh has arrived), or after 15 s: the race happens every time,
 * however slowly the two processes start on a loaded machine (a fixed delay did not guarantee it).
 */
class SlowAnswers extends MemoryStorage {
  private readonly lookups = new Map<string, number>();
  private readonly waiting = new Map<string, () => void>();
  /** Rotations released by the 15 s fallback, not by the other refresh: 0 when the store sees every lookup. */
  fallbacks = 0;
  private looked(hash: string): void {
    const count = (this.lookups.get(hash) ?? 0) + 1;
    this.lookups.set(hash, count);
    if (count >= 2) this.waiting.get(hash)?.();
  }
  override async findToken(hash: string) {
    this.looked(hash);
    return super.findToken(hash);
  }
  // The token endpoint reads the client and the refresh token in one call (combinedReads): that
  // read counts too, or every rotation would wait for the 15 s fallback.
  override async findClientAndToken(clientId: string, hash: string) {
    this.looked(hash);
    return super.findClientAndToken(clientId, hash);
  }
  override async rotateRefreshToken(hash: string, now: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome> {
    const outcome = await super.rotateRefreshToken(hash, now, tokens);
    if ((this.lookups.get(hash) ?? 0) < 2) {
      await new Promise<void>((resolve) => {
        this.waiting.set(hash, resolve);
        setTimeout(() => {
          this.fallbacks += 1;
          resolve();
        }, 15_000);
      });
    }
    return outcome;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'authgate-agent-'));
const hosts: McpHost[] = [];
afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  rmSync(dir, { recursive: true, force: true });
});

type Outcome = { ok: boolean; reauthorized: boolean; attempts: number; whoami?: unknown; error?: string };

/**
 * Run the agent's processes at once on the state file; their answers. Each says `ready` once tsx
 * has loaded it; when all have, each is told to go (a line on its stdin), so they start together
 * without a fixed wait.
 */
async function agents(host: McpHost, file: string, count: number): Promise<Outcome[]> {
  const env = { ...process.env };
  delete env['NODE_OPTIONS'];
  const children = Array.from({ length: count }, () =>
    spawn(process.execPath, ['--import', 'tsx', AGENT, file, host.mcpUrl.href], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  const ready: Promise<void>[] = [];
  const outcomes = children.map(async (child) => {
    let out = '';
    let err = '';
    let said: () => void = () => {};
    ready.push(new Promise<void>((resolve) => (said = resolve)));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.startsWith('ready\n')) said();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    await once(child, 'exit');
    said(); // a process that died before it was ready must not hold the others back
    const line = out.trim().split('\n').at(-1) ?? '';
    if (!line.startsWith('{')) throw new Error(`the agent printed nothing:\n${err}`);
    if (process.env['AGENT_DEBUG']) console.log(err);
    return JSON.parse(line) as Outcome;
  });
  await Promise.all(ready);
  for (const child of children) child.stdin.end('go\n');
  return Promise.all(outcomes);
}

/** Authorize once in this process with the SDK, and write what the agent keeps to a file. */
async function authorized(host: McpHost, name: string): Promise<string> {
  const provider = new InMemoryOAuthProvider(host.base, host.sessions.signIn(ADA));
  const first = new StreamableHTTPClientTransport(host.mcpUrl, { authProvider: provider });
  const client = new Client({ name: 'agent', version: '1.0.0' });
  await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  await first.finishAuth(provider.code ?? '');
  await client.close();
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ metadata: provider.clientMetadata, client: provider.client, tokens: provider.saved }));
  return file;
}

describe('the MCP SDK in two processes of one agent, refreshing with one refresh token at once', { timeout: 60_000 }, () => {
  it('default options (a public client): both processes get working tokens, nobody signs in again, no reuse detected', async () => {
    const events: AuditEvent[] = [];
    const storage = new SlowAnswers();
    const host = await startMcpHost('express', { storage, server: { onAudit: (e) => events.push(e) } });
    hosts.push(host);
    const file = await authorized(host, 'default');
    const attempts: number[] = [];
    for (const round of [1, 2]) {
      host.clock.advance(3601_000); // the access token has expired: the next call gets a 401
      const outcomes = await agents(host, file, 2);
      for (const outcome of outcomes) {
        expect(outcome, `round ${round}`).toMatchObject({
          ok: true,
          reauthorized: false,
          whoami: { name: ADA.name, email: ADA.email, scope: 'read' },
        });
      }
      attempts.push(...outcomes.map((o) => o.attempts));
    }
    console.log(
      `refresh-processes: attempts per process ${JSON.stringify(attempts)}, retries granted ${events.filter((e) => e.type === 'refresh_token.retried').length}`,
    );
    expect(events.filter((e) => e.type === 'refresh_token.reused')).toEqual([]);
    // The race happened: a process refreshed with a token the other had just rotated.
    expect(events.filter((e) => e.type === 'refresh_token.retried').length).toBeGreaterThanOrEqual(1);
    expect(host.seen.filter((s) => s.path === '/v1/oauth/token' && s.status !== 200)).toEqual([]);
    expect(storage.fallbacks).toBe(0);
  });

  it('refreshRetryWindowSeconds: 0 (strict single use): the race revokes the family and the user must sign in again', async () => {
    const events: AuditEvent[] = [];
    const storage = new SlowAnswers();
    const host = await startMcpHost('express', {
      storage,
      server: { onAudit: (e) => events.push(e), refreshRetryWindowSeconds: 0 },
    });
    hosts.push(host);
    const file = await authorized(host, 'strict');
    host.clock.advance(3601_000);
    const outcomes = await agents(host, file, 2);
    expect(outcomes.some((o) => o.reauthorized || !o.ok)).toBe(true);
    expect(events).toContainEqual(expect.objectContaining({ type: 'refresh_token.reused', familyRevoked: true }));
    expect(storage.fallbacks).toBe(0);
  });
});
