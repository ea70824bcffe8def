/**
 * Runs the model of `model.ts` against a real `AuthorizationServer` on a given store, with
 * fast-check's `asyncModelRun`.
 *
 * Environment (for long local runs and replays; CI sets none of them):
 * - `MODEL_RUNS`: number of runs (default: the variant's CI budget);
 * - `MODEL_SEED`: a number, or `random` (default: a fixed seed);
 * - `MODEL_PATH`: the `path` fast-check printed, to replay one counterexample (with its seed);
 * - `MODEL_COMMANDS`: most commands per run (default 100);
 * - `MODEL_KNOWN_FAILURES`: invariants whose violation ends a run without failing it (see invariants.ts).
 *
 * @example
 * MODEL_RUNS=2000 MODEL_SEED=random npx vitest run test/model
 */
import fc from 'fast-check';
import { AuthorizationServer, type Storage } from '../../src/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { check, KnownFailure } from './invariants.js';
import {
  commandArbitraries,
  count,
  initialModel,
  stats,
  sweepDeadTokens,
  CONF_CALLBACK,
  LIFETIMES,
  OTHER_CALLBACK,
  PUBLIC_CALLBACK,
  recordStorage,
  SERVER_OPTIONS,
  GRANT_TYPES,
  type Model,
  type Real,
  type RefreshLifetime,
  type StorageLog,
} from './model.js';

/** The fixed seed of CI runs. */
export const DEFAULT_SEED = 20_260_114;
/** 2026-01-01T00:00:00Z, as FakeClock starts. */
export const START = Date.UTC(2026, 0, 1);

export interface ModelSettings {
  runs: number;
  seed: number | undefined;
  path: string | undefined;
  maxCommands: number;
}

/** The settings of this run: the environment's, or the variant's CI defaults. */
export function settings(defaultRuns: number): ModelSettings {
  const env = process.env;
  const seed = env['MODEL_SEED'];
  return {
    runs: env['MODEL_RUNS'] ? Number(env['MODEL_RUNS']) : defaultRuns,
    seed: seed === 'random' ? undefined : seed ? Number(seed) : DEFAULT_SEED,
    path: env['MODEL_PATH'] || undefined,
    maxCommands: env['MODEL_COMMANDS'] ? Number(env['MODEL_COMMANDS']) : 100,
  };
}

/** A store for one run, with its own `prune(now)`. */
export interface RunStore {
  storage: Storage;
  prune(now: number): unknown;
  /** `Real.turn`: one turn of a `Race` step's lead (default: an event-loop turn). */
  turn?: () => Promise<void>;
}

type Cmd = fc.AsyncCommand<Model, Real>;

/** A command, then the checks that follow every step. */
class Checked implements Cmd {
  constructor(readonly inner: Cmd) {}
  check(m: Readonly<Model>): boolean {
    return this.inner.check(m);
  }
  async run(model: Model, real: Real): Promise<void> {
    count(`step ${this.inner.constructor.name}`);
    await this.inner.run(model, real);
    // onError is for host bugs only: a non-finite sign-in time may be reported
    // (docs/reference.md#prompt-and-sign-in-requirements).
    const faults = real.faults.splice(0);
    if (!model.hostBug)
      check(
        'noFaults',
        faults.length === 0,
        () => `onError was called: ${faults.map((f) => (f instanceof Error ? (f.stack ?? f.message) : String(f))).join('\n')}`,
      );
    model.hostBug = false;
    await sweepDeadTokens(real, model);
  }
  toString(): string {
    return this.inner.toString();
  }
}

/** A fresh server with the three clients, on `store`. */
export async function makeReal(store: RunStore, refreshLifetime: RefreshLifetime): Promise<Real> {
  const clock = new FakeClock(START);
  const sessions = new FakeSessions(clock);
  const faults: unknown[] = [];
  const storageLog: StorageLog = { events: 0, calls: [] };
  const server = new AuthorizationServer({
    storage: recordStorage(store.storage, storageLog),
    sessions,
    clock,
    onError: (error) => faults.push(error),
    lifetimes: { ...LIFETIMES, refreshToken: refreshLifetime },
    ...SERVER_OPTIONS,
  });
  const conf = await server.registerClient({ name: 'Confidential App', redirectUri: CONF_CALLBACK, grantTypes: GRANT_TYPES });
  const pub = await server.registerClient({ name: 'Public App', redirectUri: PUBLIC_CALLBACK, public: true, grantTypes: GRANT_TYPES });
  const other = await server.registerClient({ name: 'Other App', redirectUri: OTHER_CALLBACK });
  return {
    server,
    clock,
    sessions,
    clients: { conf, pub, other },
    prune: (now) => store.prune(now),
    faults,
    storageLog,
    ...(store.turn && { turn: store.turn }),
  };
}

/**
 * Run the model `settings.runs` times on stores from `newStore` (called once per run). Throws
 * fast-check's report (seed, path, shrunk command list) when an invariant breaks.
 * @returns how many runs ended on a known failure (MODEL_KNOWN_FAILURES), by message.
 */
export async function runModel(newStore: () => Promise<RunStore>, s: ModelSettings): Promise<string[]> {
  return runModelOn(async (refreshLifetime) => makeReal(await newStore(), refreshLifetime), s);
}

/** A system under test for one run, and how to let go of it afterwards. */
export type NewReal = (refreshLifetime: RefreshLifetime) => Promise<Real & { close?: () => Promise<void> }>;

/** `runModel` on any system under test (the HTTP variant builds its own). */
export async function runModelOn(newReal: NewReal, s: ModelSettings, onModel?: (model: Model) => void): Promise<string[]> {
  const knownFailures: string[] = [];
  const property = fc.asyncProperty(
    fc.constantFrom<RefreshLifetime>(86_400, null),
    fc.commands(
      commandArbitraries().map((arb) => arb.map((cmd) => new Checked(cmd))),
      { maxCommands: s.maxCommands, size: 'max' },
    ),
    async (refreshLifetime, cmds) => {
      const real = await newReal(refreshLifetime);
      const setup = () => {
        const model = initialModel(START, refreshLifetime);
        onModel?.(model);
        return { model, real };
      };
      try {
        await fc.asyncModelRun(setup, cmds);
      } catch (error) {
        if (error instanceof KnownFailure) {
          knownFailures.push(error.message.split('\n')[0]!);
          return;
        }
        throw error;
      } finally {
        await real.close?.();
      }
    },
  );
  await fc.assert(property, {
    numRuns: s.runs,
    ...(s.seed !== undefined && { seed: s.seed }),
    ...(s.path !== undefined && { path: s.path, endOnFailure: true }),
  });
  return knownFailures;
}

/**
 * After a model run: print what the runs exercised (`MODEL_STATS=1`) and the masked failures
 * (`MODEL_KNOWN_FAILURES`), and return the counts a test checks to know the runs got past the
 * sign-in side (a generator change that never reaches a code exchange must not pass quietly).
 */
export function reportRun(known: string[]): {
  exchanged: number;
  refreshed: number;
  retried: number;
  /** Code exchanges with a DPoP proof, and refreshes with the bound token's key (RFC 9449). */
  dpopBound: number;
  /** Live bound tokens a thief presented as Bearer and with another key, and bound refresh tokens sent without their key. */
  dpopThief: number;
} {
  if (process.env['MODEL_STATS'])
    console.log(
      [...stats]
        .sort()
        .map(([k, v]) => `${k}: ${v}`)
        .join('\n'),
    );
  if (known.length) console.warn(`${known.length} runs ended on known failures:\n${[...new Set(known)].join('\n')}`);
  const n = (event: string) => stats.get(event) ?? 0;
  return {
    exchanged: n('code exchanged') + n('code exchanged with DPoP'),
    refreshed: n('refreshed'),
    retried: n('retried'),
    dpopBound: n('code exchanged with DPoP') + n('bound refresh'),
    dpopThief: n('thief refused') + n('bound refresh refused'),
  };
}
