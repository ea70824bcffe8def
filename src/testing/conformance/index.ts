/**
 * The storage conformance kit: the contract of `Storage` (src/storage/types.ts) as executable
 * checks, for MemoryStorage, PostgresStorage, and any storage a user writes (Redis, DynamoDB...).
 *
 * It depends on no test framework. The checks throw `StorageConformanceError` with a message
 * naming the rule that was broken; `describeStorageConformance` registers them with the
 * `describe`/`it` of vitest, jest or node:test, and `runStorageConformance` runs them directly.
 *
 * The cases live in one file per topic (clients.ts, interactions.ts, consents.ts, grants.ts,
 * records.ts, codes.ts, refresh.ts, revocation.ts, personal.ts, management.ts, flow.ts,
 * devices.ts, dpop.ts), built from fixtures.ts and the assertions of check.ts. A case of `CoreStorage`
 * runs on every store; a case of a storage group (`groupCase`, case.ts) only on a store that
 * has the whole group, and fails on one that has part of it.
 */
import type { MakeStorage, StorageConformanceCase } from './case.js';
import { clientCases } from './clients.js';
import { approvalCases } from './approval.js';
import { combinedCases } from './combined.js';
import { codeCases } from './codes.js';
import { consentCases } from './consents.js';
import { deviceCases } from './devices.js';
import { dpopCases } from './dpop.js';
import { flowCases } from './flow.js';
import { grantCases } from './grants.js';
import { interactionCases } from './interactions.js';
import { managementCases } from './management.js';
import { personalCases } from './personal.js';
import { recordCases } from './records.js';
import { refreshCases } from './refresh.js';
import { refreshRetryCases } from './refresh-retry.js';
import { revocationCases } from './revocation.js';

export type { MakeStorage, StorageConformanceCase } from './case.js';
export { StorageConformanceError } from './check.js';
export { CONFORMANCE_RACERS } from './fixtures.js';

/**
 * The functions of a test framework the kit registers its cases with.
 * @group Testing
 */
export interface ConformanceTestApi {
  describe: (name: string, fn: () => void) => unknown;
  it: (name: string, fn: () => Promise<void>) => unknown;
  /** Accepted for symmetry with `{ describe, it, expect }`; not needed: the checks throw their own errors. */
  expect?: unknown;
}

/**
 * Options of `describeStorageConformance`.
 * @group Testing
 */
export interface ConformanceOptions {
  /** Per-case timeout in ms, passed as the third argument of `it` (vitest, jest). */
  timeout?: number;
}

/**
 * Every case of the kit, in order.
 * @group Testing
 */
export const storageConformanceCases: readonly StorageConformanceCase[] = Object.freeze([
  ...clientCases,
  ...interactionCases,
  ...consentCases,
  ...grantCases,
  ...recordCases,
  ...codeCases,
  ...refreshCases,
  ...revocationCases,
  ...managementCases,
  ...personalCases,
  ...flowCases,
  ...deviceCases,
  ...dpopCases,
  ...refreshRetryCases,
  ...combinedCases,
  ...approvalCases,
]);

/**
 * The outcome of one case run by `runStorageConformance`.
 * @group Testing
 */
export interface ConformanceResult {
  name: string;
  ok: boolean;
  error?: unknown;
}

/**
 * Run the cases (all, or those whose name includes one of `only`) one after the other, without
 * any test framework, and report each. Never throws for a failing case.
 * @group Testing
 */
export async function runStorageConformance(makeStorage: MakeStorage, options: { only?: string[] } = {}): Promise<ConformanceResult[]> {
  const results: ConformanceResult[] = [];
  for (const c of storageConformanceCases) {
    if (options.only && !options.only.some((part) => c.name.includes(part))) continue;
    try {
      await c.run(makeStorage);
      results.push({ name: c.name, ok: true });
    } catch (error) {
      results.push({ name: c.name, ok: false, error });
    }
  }
  return results;
}

/**
 * Register the storage conformance suite: one `describe` named after the storage, one `it` per
 * case. Pass your framework's functions (`{ describe, it }` from vitest, `@jest/globals` or
 * `node:test`); without them, the globals `describe` and `it` are used.
 *
 * @example
 * import { describe, it } from 'vitest';
 * import { describeStorageConformance } from 'authgate/testing';
 * describeStorageConformance('RedisStorage', () => new RedisStorage(redis), { describe, it });
 * @group Testing
 */
export function describeStorageConformance(
  name: string,
  makeStorage: MakeStorage,
  api?: ConformanceTestApi,
  options: ConformanceOptions = {},
): void {
  const globals = globalThis as unknown as Partial<ConformanceTestApi>;
  const describe = api?.describe ?? globals.describe;
  const it = api?.it ?? globals.it;
  if (typeof describe !== 'function' || typeof it !== 'function') {
    throw new TypeError(
      'describeStorageConformance needs describe and it: pass them as the third argument, e.g. ' +
        "import { describe, it } from 'vitest' (or '@jest/globals', or 'node:test') and call " +
        "describeStorageConformance(name, makeStorage, { describe, it }); or enable your test runner's globals.",
    );
  }
  describe(`storage conformance: ${name}`, () => {
    for (const c of storageConformanceCases) {
      const run = () => c.run(makeStorage);
      if (options.timeout !== undefined) (it as (n: string, f: () => Promise<void>, t: number) => unknown)(c.name, run, options.timeout);
      else it(c.name, run);
    }
  });
}
