/**
 * The in-process section: W1–W6 (with W1o, W2d) for authgate on MemoryStorage, its floor, and the peers
 * that support each workload, interleaved round by round.
 */
import { authgateContenders, WORKLOADS, type CheckedContender, type WorkloadId } from './authgate.js';
import { coreCryptoPrimitives, floorContenders } from './floor.js';
import { authgateFixture } from './lib/fixture.js';
import type { CoreModule } from './lib/load.js';
import { measure, type Series } from './lib/measure.js';
import type { BenchOptions } from './lib/options.js';
import { jmondiContenders, JMONDI } from './peers/jmondi.js';
import { nodeOAuthContenders, NODE_OAUTH } from './peers/node-oauth.js';

export interface InprocResult {
  series: Series[];
  notes: string[];
}

export const PEER_GAPS: Record<string, string> = {
  [`${NODE_OAUTH} W4`]: `${NODE_OAUTH} has no revocation endpoint (RFC 7009)`,
  [`${JMONDI} W3`]: `${JMONDI} has no bearer check for a resource API (its access tokens are JWTs a resource server verifies itself)`,
  [`${NODE_OAUTH} W5`]: `${NODE_OAUTH} has no personal access tokens`,
  [`${JMONDI} W5`]: `${JMONDI} has no personal access tokens`,
  [`${NODE_OAUTH} W1o`]: `${NODE_OAUTH} has no OpenID Connect`,
  [`${JMONDI} W1o`]: `${JMONDI} has no OpenID Connect`,
  [`${NODE_OAUTH} W6`]: `${NODE_OAUTH} has no DPoP`,
  [`${JMONDI} W6`]: `${JMONDI} has no DPoP`,
  [`${NODE_OAUTH} W2d`]: `${NODE_OAUTH} has no DPoP`,
  [`${JMONDI} W2d`]: `${JMONDI} has no DPoP`,
};

export async function contendersFor(core: CoreModule, workload: WorkloadId, peers: boolean): Promise<CheckedContender[]> {
  const fixture = await authgateFixture(core, new core.MemoryStorage());
  const list: (CheckedContender | undefined)[] = [authgateContenders(fixture)[workload], floorContenders()[workload]];
  if (peers) list.push(nodeOAuthContenders()[workload], jmondiContenders()[workload]);
  return list.filter((c): c is CheckedContender => c !== undefined);
}

export async function inprocSection(core: CoreModule, options: BenchOptions): Promise<InprocResult> {
  const series: Series[] = [];
  const notes: string[] = [];
  for (const id of options.workloads) {
    const contenders = await contendersFor(core, id, options.peers);
    if (options.peers) {
      for (const peer of [NODE_OAUTH, JMONDI]) {
        const gap = PEER_GAPS[`${peer} ${id}`];
        if (gap && !contenders.some((c) => c.name === peer)) notes.push(`${id}: no ${peer} (${gap}).`);
      }
    }
    options.log(`${id} — ${WORKLOADS[id]}`);
    series.push(
      ...(await measure(
        { id, title: WORKLOADS[id], contenders },
        {
          rounds: options.rounds,
          timeMs: options.timeMs,
          minBatches: options.smoke ? 2 : 5,
          batch: options.batch,
          warmupMs: options.smoke ? 0 : 150,
          slices: options.smoke ? 1 : 6,
          log: options.log,
        },
      )),
    );
    for (const contender of contenders) await contender.verify?.();
  }
  return { series, notes };
}

/**
 * The per-call cost of the primitives every workload is made of, in the same run: what the
 * floors are built from, and the alternatives the core could call.
 */
export async function primitivesSection(authgate: CoreModule, options: BenchOptions): Promise<Series[]> {
  const { createHash, hash, randomFillSync } = await import('node:crypto');
  const core = coreCryptoPrimitives();
  const encoder = new TextEncoder();
  const value = 'dGhpcyBpcyBhIDQzLWNoYXJhY3Rlci1sb25nIHRva2Vu'.slice(0, 43);
  const record = {
    hash: value,
    kind: 'access',
    grantId: value.slice(0, 32),
    clientId: value.slice(0, 32),
    scope: ['read'],
    issuedAt: 1,
    expiresAt: 2,
    pairHash: null,
    rotatedAt: null,
    revokedAt: null,
  };
  const contenders: CheckedContender[] = [
    { name: 'crypto.getRandomValues (32 B)', kind: 'variant', op: async () => globalThis.crypto.getRandomValues(new Uint8Array(32)) },
    { name: 'core random (32 B token)', kind: 'variant', op: async () => core.random(32) },
    { name: 'node:crypto randomFillSync (32 B)', kind: 'variant', op: async () => randomFillSync(Buffer.allocUnsafe(32)) },
    {
      name: 'crypto.subtle.digest SHA-256 (awaited)',
      kind: 'variant',
      op: () => globalThis.crypto.subtle.digest('SHA-256', encoder.encode(value)),
    },
    { name: 'core SHA-256 (base64url)', kind: 'variant', op: async () => core.sha256(value) },
    { name: 'node:crypto createHash SHA-256', kind: 'variant', op: async () => createHash('sha256').update(value).digest('base64url') },
    { name: 'node:crypto hash() SHA-256 (one-shot)', kind: 'variant', op: async () => hash('sha256', value, 'base64url') },
    { name: 'structuredClone of a token record', kind: 'variant', op: async () => structuredClone(record) },
    {
      name: 'new OAuthError (not thrown)',
      kind: 'variant',
      op: async () => new authgate.OAuthError('invalid_client', 'Client authentication failed.', 401),
    },
  ];
  options.log(`primitives (core = ${core.describe})`);
  return measure(
    { id: 'primitives', title: 'primitives', contenders },
    {
      rounds: options.rounds,
      timeMs: options.timeMs / 2,
      minBatches: options.smoke ? 2 : 5,
      batch: options.batch * 8,
      warmupMs: options.smoke ? 0 : 50,
      slices: options.smoke ? 1 : 6,
      log: options.log,
    },
  );
}
