/**
 * The model-based test of the authorization state machine on MemoryStorage (SECURITY.md,
 * "Model-based tests"): see `model.ts` for the commands and `invariants.ts` for what is checked
 * after every step.
 *
 * CI runs a fixed seed and a bounded number of runs. A long local run:
 *   MODEL_RUNS=2000 MODEL_SEED=random npx vitest run test/model/core.test.ts
 * Replay a counterexample with the seed and path fast-check printed:
 *   MODEL_SEED=<seed> MODEL_PATH=<path> npx vitest run test/model/core.test.ts
 */
import { describe, expect, it } from 'vitest';
import { COMBINED_APPROVAL_METHODS, COMBINED_READ_METHODS, MemoryStorage } from '../../src/index.js';
import { reportRun, runModel, settings } from './run.js';

/**
 * MemoryStorage without the two speed-up groups (`combinedReads`, `combinedApproval`): the core's
 * path for a store that has neither (the client read apart from the code or token; an approval
 * as take, saveConsent, createGrant). Every other run uses it.
 */
class WithoutSpeedUps extends MemoryStorage {}
for (const name of [...COMBINED_READ_METHODS, ...COMBINED_APPROVAL_METHODS]) {
  Object.defineProperty(WithoutSpeedUps.prototype, name, { value: undefined });
}

// 1000 runs: with the fixed seed they are the first 1000 of the 3000 this file ran before, and they
// reach every one of the 90 kinds of step and outcome (MODEL_STATS) that the 3000 reached, the
// rarest (a replay of a superseded sibling) twice; the first 300 of them also run on PostgreSQL
// (postgres.test.ts). 3000 took 70 s of a 2-core CI run's 7 minutes: MODEL_RUNS for longer runs.
const s = settings(1000);

describe('model-based: the authorization state machine on MemoryStorage', () => {
  it(`keeps every invariant over ${s.runs} runs of up to ${s.maxCommands} steps (seed ${s.seed ?? 'random'})`, async () => {
    let run = 0;
    const known = await runModel(async () => {
      const storage = run++ % 2 === 0 ? new MemoryStorage() : new WithoutSpeedUps();
      return { storage, prune: (now: number) => storage.prune(now) };
    }, s);
    // Every invariant is checked inside the run (a violation throws); here: the runs got far.
    const reached = reportRun(known);
    expect(reached.exchanged).toBeGreaterThan(0);
    expect(reached.refreshed).toBeGreaterThan(0);
    expect(reached.retried).toBeGreaterThan(0); // refresh retries (refreshRetryWindowSeconds) were exercised
    expect(reached.dpopBound).toBeGreaterThan(0); // DPoP-bound tokens (RFC 9449) were issued and refreshed
    expect(reached.dpopThief).toBeGreaterThan(0); // and presented without their key
  }, 600_000);
});
