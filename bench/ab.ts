/**
 * `npm run bench:ab [-- --base REF] [--only W3,W4] [--rounds N]`: is the working tree's `src/`
 * faster than `src/` at REF (default HEAD)? Both are loaded into this one process and their
 * operations alternate in short runs, so the machine's drift falls on both alike; the answer is
 * the ratio of the lower quartiles of the per-operation times (the quietest runs of each).
 *
 * Two separate processes running the same code can differ by 15% (JIT decisions, memory
 * layout), so comparing two `npm run bench` runs cannot show a 5% change; this can, about.
 * REF's sources are extracted with `git archive` into bench/.ab/ (ignored by git).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { authgateContenders, unsupported, WORKLOAD_IDS, type WorkloadId } from './authgate.js';
import { authgateFixture } from './lib/fixture.js';
import type { CoreModule } from './lib/load.js';

const REPO = fileURLToPath(new URL('../', import.meta.url));

export interface AbOptions {
  base: string;
  workloads: WorkloadId[];
  rounds: number;
  /** Operations per run of one side, per workload; scaled down for the slow workloads. */
  operations: number;
}

export interface AbResult {
  workload: WorkloadId;
  /** µs per operation: the lower quartile over the rounds. */
  base: number;
  tree: number;
  /** base ÷ tree: above 1 when the working tree is faster. */
  speedup: number;
}

const quantile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.floor(p * (values.length - 1))]!;

/** The sources of `ref` as a module, extracted next to the repository's node_modules. */
async function loadRef(ref: string): Promise<CoreModule> {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: REPO, encoding: 'utf8' }).trim();
  const dir = join(REPO, 'bench', '.ab', commit);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const archive = execFileSync('git', ['archive', commit, 'src'], { cwd: REPO, maxBuffer: 1 << 28 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  return (await import(pathToFileURL(join(dir, 'src', 'index.ts')).href)) as CoreModule;
}

export async function runAb(options: AbOptions, log: (line: string) => void = console.log): Promise<AbResult[]> {
  const base = await loadRef(options.base);
  const tree = (await import(pathToFileURL(join(REPO, 'src', 'index.ts')).href)) as CoreModule;
  const results: AbResult[] = [];
  for (const id of options.workloads) {
    const baseFixture = await authgateFixture(base, new base.MemoryStorage());
    // A workload of a feature the base does not have (personal tokens, OpenID Connect, DPoP): skipped, said why.
    const missing = unsupported(id, base);
    if (missing) {
      log(`${id}: skipped, ${options.base}: ${missing}`);
      continue;
    }
    const sides = [
      authgateContenders(baseFixture, 'base')[id],
      authgateContenders(await authgateFixture(tree, new tree.MemoryStorage()), 'tree')[id],
    ];
    // W3 and W5 are about 1 µs, the code flow about 25: keep each run near the same length.
    const n = Math.max(1, Math.round(options.operations / (id === 'W3' || id === 'W5' ? 1 : id === 'W1' || id === 'W1o' ? 20 : 5)));
    const times: [number[], number[]] = [[], []];
    const warmup = 2;
    for (let round = 0; round < options.rounds + warmup; round++) {
      for (const side of round % 2 ? [1, 0] : [0, 1]) {
        const contender = sides[side]!;
        await contender.prepare?.(n);
        const started = performance.now();
        for (let i = 0; i < n; i++) await contender.op(i);
        if (round >= warmup) times[side]!.push(((performance.now() - started) * 1000) / n);
      }
    }
    const result = { workload: id, base: quantile(times[0], 0.25), tree: quantile(times[1], 0.25), speedup: 0 };
    result.speedup = result.base / result.tree;
    results.push(result);
    log(
      `${id}: ${options.base} ${result.base.toFixed(3)} µs, working tree ${result.tree.toFixed(3)} µs per operation → ${result.speedup.toFixed(3)}× (${options.rounds} rounds, lower quartile)`,
    );
  }
  return results;
}

function parse(argv: string[]): AbOptions {
  const options: AbOptions = { base: 'HEAD', workloads: [...WORKLOAD_IDS], rounds: 40, operations: 20_000 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--base') options.base = value();
    else if (arg === '--only') {
      const ids = value().split(',');
      const unknown = ids.filter((id) => !(WORKLOAD_IDS as string[]).includes(id));
      if (unknown.length) throw new Error(`unknown workload ${unknown.join(', ')} (known: ${WORKLOAD_IDS.join(' ')})`);
      options.workloads = ids as WorkloadId[];
    } else if (arg === '--rounds') options.rounds = Math.max(1, Number.parseInt(value(), 10) || 0);
    else if (arg === '--operations') options.operations = Math.max(1, Number.parseInt(value(), 10) || 0);
    else throw new Error(`unknown option ${arg} (options: --base REF, --only W1,W3, --rounds N, --operations N)`);
  }
  return options;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  let options: AbOptions;
  try {
    options = parse(process.argv.slice(2));
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  }
  await runAb(options);
}
