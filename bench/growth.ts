/**
 * Growth: does the cost of W3 and W2 depend on how many tokens are live (it should not: one hash
 * lookup), how many heap bytes does MemoryStorage spend per live token, and how does memory
 * behave over a long refresh chain?
 *
 * The large store is filled directly through `storage.createGrant` with pre-hashed records (one
 * grant with an access + refresh pair per two tokens, as a code exchange leaves them): a million
 * full flows would take minutes. The tokens the workloads use are then issued by the real flow.
 */
import { randomFillSync } from 'node:crypto';
import type { GrantRecord, MemoryStorage, TokenRecord } from '../src/index.js';
import { authgateContenders, type CheckedContender } from './authgate.js';
import { ACCOUNT, authgateFixture, type AuthgateFixture } from './lib/fixture.js';
import type { CoreModule } from './lib/load.js';
import { fmtOps, measure, type Series } from './lib/measure.js';
import type { BenchOptions } from './lib/options.js';

const gc = (globalThis as { gc?: () => void }).gc;

function heapUsed(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

/** `count` distinct 43-character base64url strings, like SHA-256 hashes. */
function fakeHashes(count: number): string[] {
  const out: string[] = new Array(count);
  const chunk = 4096;
  const buffer = Buffer.allocUnsafe(32 * chunk);
  for (let i = 0; i < count; i += chunk) {
    randomFillSync(buffer);
    for (let j = 0; j < chunk && i + j < count; j++) out[i + j] = buffer.toString('base64url', 32 * j, 32 * j + 32);
  }
  return out;
}

/** Fill `storage` with `tokens` live tokens (pairs of one grant each) of the fixture's client. */
async function fill(storage: MemoryStorage, fixture: AuthgateFixture, tokens: number): Promise<void> {
  const pairs = tokens >> 1;
  const now = Date.now();
  const hashes = fakeHashes(pairs * 2);
  const grantIds = fakeHashes(pairs);
  for (let i = 0; i < pairs; i++) {
    const grant: GrantRecord = {
      id: grantIds[i]!.slice(0, 32),
      kind: 'oauth',
      clientId: fixture.clientId,
      account: ACCOUNT,
      scope: ['read'],
      createdAt: now,
      revokedAt: null,
    };
    const common = { grantId: grant.id, clientId: fixture.clientId, scope: ['read'], issuedAt: now, rotatedAt: null, revokedAt: null };
    const access: TokenRecord = { ...common, hash: hashes[2 * i]!, kind: 'access', expiresAt: now + 2_592_000_000, pairHash: null };
    const refresh: TokenRecord = { ...common, hash: hashes[2 * i + 1]!, kind: 'refresh', expiresAt: null, pairHash: access.hash };
    await storage.createGrant(grant, { tokens: [access, refresh] });
  }
}

export interface GrowthResult {
  series: Series[];
  sizes: { small: number; large: number };
  heapBytesPerToken: number;
  fillSeconds: number;
  chain: {
    rotations: number;
    heapBytesPerRotation: number;
    samples: { rotations: number; heapBytes: number }[];
    pruned: boolean;
    seconds: number;
  };
}

export async function growthSection(core: CoreModule, options: BenchOptions): Promise<GrowthResult> {
  const small = 1_000;
  const large = options.growthSize;
  const wanted = options.workloads.filter((w): w is 'W2' | 'W3' => w === 'W2' || w === 'W3');

  // First, on a heap with nothing else of the section on it: a long refresh chain on a fresh
  // store, heap after a full GC at five points along it.
  const storage = new core.MemoryStorage();
  const fixture = await authgateFixture(core, storage);
  const prune = (storage as unknown as { prune?: (now: number) => Promise<unknown> }).prune;
  const chain = authgateContenders(fixture, 'chain', 'variant').W2;
  await chain.prepare!(1);
  const samples: { rotations: number; heapBytes: number }[] = [];
  const chainStarted = performance.now();
  const step = Math.max(1, Math.floor(options.chainLength / 4));
  for (let done = 0; ; ) {
    // Prune as it would run once the access tokens issued along the chain have expired (30 days
    // on): rotated refresh tokens are kept only while their access token lives, the live one stays.
    if (prune) await prune.call(storage, Date.now() + 31 * 24 * 3600 * 1000);
    samples.push({ rotations: done, heapBytes: heapUsed() });
    if (done >= options.chainLength) break;
    const next = Math.min(options.chainLength, done + step);
    for (; done < next; done++) await chain.op(done);
  }
  const first = samples[0]!;
  const last = samples.at(-1)!;
  const heapBytesPerRotation = (last.heapBytes - first.heapBytes) / (last.rotations - first.rotations);
  const seconds = (performance.now() - chainStarted) / 1000;
  options.log(
    `  refresh chain of ${options.chainLength}: ${heapBytesPerRotation.toFixed(0)} heap bytes per rotation${prune ? ' (pruned)' : ' (MemoryStorage has no prune)'}`,
  );

  const smallStorage = new core.MemoryStorage();
  const smallFixture = await authgateFixture(core, smallStorage);
  await fill(smallStorage, smallFixture, small);

  const largeStorage = new core.MemoryStorage();
  const largeFixture = await authgateFixture(core, largeStorage);
  const before = heapUsed();
  const started = performance.now();
  await fill(largeStorage, largeFixture, large);
  const fillSeconds = (performance.now() - started) / 1000;
  const heapBytesPerToken = (heapUsed() - before) / large;
  options.log(
    `  filled ${fmtOps(large)} live tokens in ${fillSeconds.toFixed(1)} s: ${heapBytesPerToken.toFixed(0)} heap bytes per live token`,
  );

  const series: Series[] = [];
  const smallName = `${fmtOps(small)} live tokens`;
  const largeName = `${fmtOps(large)} live tokens`;
  for (const id of wanted) {
    const a: CheckedContender = { ...authgateContenders(smallFixture, smallName, 'variant')[id] };
    const b: CheckedContender = { ...authgateContenders(largeFixture, largeName, 'variant')[id] };
    options.log(`${id} with ${smallName} and with ${largeName}`);
    series.push(
      ...(await measure(
        { id, title: id, contenders: [a, b] },
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
  }

  return {
    series,
    sizes: { small, large },
    heapBytesPerToken,
    fillSeconds,
    chain: { rotations: options.chainLength, heapBytesPerRotation, samples, pruned: Boolean(prune), seconds },
  };
}
