/**
 * Interleaved measurement. Every contender of a workload (authgate, its floor, each peer) is run
 * once per round, in slices taken in turn in an order that rotates, so the drift and the bursts
 * of a shared machine (other processes, thermal state, GC) fall on every contender alike.
 * Each run is one tinybench task whose samples are batches of `batch` sequential operations
 * timed as a whole (per-call timer overhead is amortised); inputs a batch consumes (codes,
 * tokens to revoke) are made in tinybench's `beforeEach` hook, outside the timed window.
 */
import { Bench } from 'tinybench';

export type ContenderKind = 'authgate' | 'floor' | 'peer' | 'variant';

export interface Contender {
  /** Shown in the table: 'authgate', 'floor', '@node-oauth/oauth2-server', ... */
  name: string;
  kind: ContenderKind;
  /** Make the inputs of the next `count` operations (untimed). */
  prepare?(count: number): Promise<void> | void;
  /** One operation; `index` counts 0..count-1 within the batch `prepare` made. Throws on a wrong answer. */
  op(index: number): Promise<unknown>;
}

export interface Workload {
  id: string;
  title: string;
  contenders: Contender[];
}

export interface MeasureOptions {
  rounds: number;
  /** Time budget of one run (one contender in one round), ms. */
  timeMs: number;
  /** Minimum number of batches per run. */
  minBatches: number;
  /** Operations per timed batch. */
  batch: number;
  /** Warm every contender up before the first round (JIT, caches). */
  warmupMs: number;
  /** Turns per round: each contender's `timeMs` is cut in this many slices, taken in turn. Default 1. */
  slices?: number;
  log?: (line: string) => void;
}

export interface Series {
  workload: string;
  contender: string;
  kind: ContenderKind;
  /** ops/s of each run, in round order (wall clock). */
  runs: number[];
  median: number;
  min: number;
  max: number;
  /**
   * Operations per second of this process's CPU time (user + system, all threads) during the
   * timed batches of each run: what the work costs, much less disturbed than the wall clock by
   * other processes competing for the cores.
   */
  cpuRuns?: number[];
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function series(workload: string, contender: string, kind: ContenderKind, runs: number[], cpuRuns?: number[]): Series {
  return {
    workload,
    contender,
    kind,
    runs,
    median: median(runs),
    min: Math.min(...runs),
    max: Math.max(...runs),
    ...(cpuRuns && { cpuRuns }),
  };
}

/** The same series seen through CPU time (`cpuRuns` as `runs`), if it has one. */
export function cpuView(s: Series | undefined): Series | undefined {
  return s?.cpuRuns ? series(s.workload, s.contender, s.kind, s.cpuRuns) : undefined;
}

const gc = (globalThis as { gc?: () => void }).gc;

/** What one contender did in one round, summed over its slices. */
interface Tally {
  operations: number;
  ms: number;
  cpuMicros: number;
}

/** One slice: a tinybench run of one contender, adding its timed batches to `tally`. */
async function runSlice(
  contender: Contender,
  tally: Tally,
  options: { timeMs: number; minBatches: number; batch: number; warmup: boolean; warmupMs: number },
): Promise<void> {
  const { batch } = options;
  let phase = 'run';
  const bench = new Bench({
    time: options.timeMs,
    iterations: options.minBatches,
    warmup: options.warmup,
    warmupTime: options.warmupMs,
    warmupIterations: options.warmup ? 2 : 0,
    throws: true,
  });
  bench.add(
    contender.name,
    async () => {
      const cpu = process.cpuUsage();
      const start = performance.now();
      for (let i = 0; i < batch; i++) await contender.op(i);
      const elapsed = performance.now() - start;
      if (phase === 'run') {
        const used = process.cpuUsage(cpu);
        tally.cpuMicros += used.user + used.system;
        tally.operations += batch;
        tally.ms += elapsed;
      }
      return { overriddenDuration: elapsed / batch, overriddenIterationCost: elapsed };
    },
    {
      async: true,
      beforeEach: (mode) => {
        phase = mode ?? 'run';
        return contender.prepare?.(batch);
      },
    },
  );
  await bench.run();
  const result = bench.tasks[0]!.result;
  if (result.state !== 'completed') throw new Error(`${contender.name}: the benchmark run did not complete (${result.state})`);
}

/**
 * Run every contender of `workload` `rounds` times; ops/s per run. A round gives each contender
 * `timeMs` in `slices` slices, the contenders taking turns slice by slice in an order that
 * rotates, so a burst of load from another process falls on all of them alike.
 */
export async function measure(workload: Workload, options: MeasureOptions): Promise<Series[]> {
  const runs = new Map<Contender, number[]>(workload.contenders.map((c) => [c, []]));
  const cpuRuns = new Map<Contender, number[]>(workload.contenders.map((c) => [c, []]));
  const n = workload.contenders.length;
  const slices = Math.max(1, options.slices ?? 1);
  for (let round = 0; round < options.rounds; round++) {
    gc?.();
    const tallies = new Map<Contender, Tally>(workload.contenders.map((c) => [c, { operations: 0, ms: 0, cpuMicros: 0 }]));
    for (let slice = 0; slice < slices; slice++) {
      const shift = round * slices + slice;
      for (let k = 0; k < n; k++) {
        const contender = workload.contenders[(k + shift) % n]!;
        await runSlice(contender, tallies.get(contender)!, {
          timeMs: options.timeMs / slices,
          minBatches: Math.ceil(options.minBatches / slices),
          batch: options.batch,
          warmup: round === 0 && slice === 0 && options.warmupMs > 0,
          warmupMs: options.warmupMs,
        });
      }
    }
    for (const [contender, tally] of tallies) {
      runs.get(contender)!.push(tally.operations / (tally.ms / 1000));
      cpuRuns.get(contender)!.push(tally.cpuMicros > 0 ? tally.operations / (tally.cpuMicros / 1e6) : NaN);
    }
    options.log?.(
      `  ${workload.id} round ${round + 1}/${options.rounds}: ${workload.contenders.map((c) => `${c.name} ${fmtOps(runs.get(c)!.at(-1)!)}`).join(', ')}`,
    );
  }
  return workload.contenders.map((c) => series(workload.id, c.name, c.kind, runs.get(c)!, cpuRuns.get(c)!));
}

/** 12 345/s style, three significant digits at most. */
export function fmtOps(value: number): string {
  if (!Number.isFinite(value)) return '–';
  const rounded = value >= 1000 ? Number(value.toPrecision(3)) : Math.round(value);
  return rounded.toLocaleString('en-US').replace(/,/g, ' ');
}

export function fmtRatio(value: number): string {
  if (!Number.isFinite(value)) return '–';
  return value >= 10 ? value.toFixed(0) : value >= 1 ? value.toFixed(2) : value.toFixed(3);
}
