/** The command line of `npm run bench` (after `--`), and its environment equivalents. */
import { WORKLOAD_IDS, type WorkloadId } from '../authgate.js';

export const SECTIONS = ['inproc', 'growth', 'http', 'postgres', 'concurrency', 'profile'] as const;
export type Section = (typeof SECTIONS)[number];

export interface BenchOptions {
  smoke: boolean;
  sections: Section[];
  workloads: WorkloadId[];
  peers: boolean;
  rounds: number;
  /** ms per run of one contender in one round. */
  timeMs: number;
  /** Operations per timed batch. */
  batch: number;
  /** Live tokens of the large store in the growth section. */
  growthSize: number;
  /** Rotations of the long refresh chain (memory section). */
  chainLength: number;
  /** Requests per HTTP run of W1x; seconds per HTTP run of the others. */
  httpRequests: number;
  httpSeconds: number;
  httpConnections: number;
  /** HTTP servers in the benchmark's own process instead of a child process (smoke). */
  httpInProcess: boolean;
  /** Concurrency section: operations in flight, connections in the pool, operations per run. */
  concurrency: number;
  pool: number;
  concurrencyOps: number;
  /** CPU-profile each HTTP server process (node --cpu-prof) and summarise it. */
  httpProfile: boolean;
  /** ms of profiling per workload. */
  profileMs: number;
  dist: boolean;
  out: string;
  log: (line: string) => void;
}

export const USAGE = `npm run bench [-- options]

  --smoke              every workload a handful of times, no meaningful timing (also BENCH_SMOKE=1)
  --only W1,W2,...     only these workloads (W1 W1x W1o W2 W2d W3 W4 W5 W6), in every section
  --sections a,b       only these sections: ${SECTIONS.join(', ')} (default: all)
  --no-peers           authgate and its floors only
  --rounds N           interleaved rounds per workload (default 5)
  --time MS            ms per run of one contender (default 300)
  --batch N            operations per timed sample (default 32)
  --growth-size N      live tokens of the large store (default 1000000)
  --chain N            rotations of the long refresh chain (default 50000)
  --http-requests N    requests per HTTP W1x run (default 5000); --http-seconds S for the others (default 1)
  --connections N      HTTP connections (default 16)
  --concurrency N      concurrency section: operations in flight (default 32)
  --pool N             concurrency section: connections in the pool (default 10)
  --concurrency-ops N  concurrency section: operations per workload run (default 2000)
  --http-profile       CPU-profile each HTTP server process too (node --cpu-prof; slows it a little)
  --profile-ms MS      ms of CPU profile per workload (default 1500)
  --dist               measure the built package (npm run build first) instead of the sources
  --out DIR            where results.json, table.md and the .cpuprofile files go (default bench/results)

  Quick rerun of one workload, in-process only:  npm run bench -- --only W2 --sections inproc
  PostgreSQL and concurrency sections: set DATABASE_URL (eval "$(bash .ci/pg-start)" starts a throwaway server).`;

export function parseOptions(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = console.log,
): BenchOptions | 'help' {
  const smoke = argv.includes('--smoke') || env.BENCH_SMOKE === '1';
  const options: BenchOptions = {
    smoke,
    sections: [...SECTIONS],
    workloads: [...WORKLOAD_IDS],
    peers: true,
    rounds: smoke ? 1 : 5,
    timeMs: smoke ? 0 : 300,
    batch: smoke ? 3 : 32,
    growthSize: smoke ? 5_000 : 1_000_000,
    chainLength: smoke ? 200 : 50_000,
    httpRequests: smoke ? 20 : 5_000,
    httpSeconds: smoke ? 0 : 1,
    httpConnections: smoke ? 2 : 16,
    httpInProcess: smoke,
    concurrency: smoke ? 4 : 32,
    pool: smoke ? 2 : 10,
    concurrencyOps: smoke ? 8 : 2_000,
    httpProfile: false,
    profileMs: smoke ? 50 : 1_500,
    dist: env.BENCH_DIST === '1',
    out: new URL('../results/', import.meta.url).pathname,
    log,
  };
  const value = (i: number) => {
    const v = argv[i + 1];
    if (v === undefined) throw new Error(`${argv[i]} needs a value`);
    return v;
  };
  const int = (i: number) => {
    const n = Number(value(i));
    if (!Number.isInteger(n) || n < 0) throw new Error(`${argv[i]} needs a non-negative integer`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    switch (arg) {
      case '--help':
      case '-h':
        return 'help';
      case '--smoke':
        break;
      case '--no-peers':
        options.peers = false;
        break;
      case '--dist':
        options.dist = true;
        break;
      case '--http-profile':
        options.httpProfile = true;
        break;
      case '--only': {
        const wanted = value(i++)
          .split(',')
          .map((w) => w.trim());
        const unknown = wanted.filter((w) => !(WORKLOAD_IDS as string[]).includes(w));
        if (unknown.length) throw new Error(`unknown workload ${unknown.join(', ')} (known: ${WORKLOAD_IDS.join(', ')})`);
        options.workloads = wanted as WorkloadId[];
        break;
      }
      case '--sections': {
        const wanted = value(i++)
          .split(',')
          .map((s) => s.trim());
        const unknown = wanted.filter((s) => !(SECTIONS as readonly string[]).includes(s));
        if (unknown.length) throw new Error(`unknown section ${unknown.join(', ')} (known: ${SECTIONS.join(', ')})`);
        options.sections = wanted as Section[];
        break;
      }
      case '--rounds':
        options.rounds = Math.max(1, int(i++));
        break;
      case '--time':
        options.timeMs = int(i++);
        break;
      case '--batch':
        options.batch = Math.max(1, int(i++));
        break;
      case '--growth-size':
        options.growthSize = Math.max(2_000, int(i++));
        break;
      case '--chain':
        options.chainLength = Math.max(10, int(i++));
        break;
      case '--http-requests':
        options.httpRequests = Math.max(1, int(i++));
        break;
      case '--http-seconds':
        options.httpSeconds = int(i++);
        break;
      case '--connections':
        options.httpConnections = Math.max(1, int(i++));
        break;
      case '--concurrency':
        options.concurrency = Math.max(1, int(i++));
        break;
      case '--pool':
        options.pool = Math.max(1, int(i++));
        break;
      case '--concurrency-ops':
        options.concurrencyOps = Math.max(1, int(i++));
        break;
      case '--profile-ms':
        options.profileMs = int(i++);
        break;
      case '--out':
        options.out = value(i++);
        break;
      default:
        throw new Error(`unknown option ${arg} (see --help)`);
    }
  }
  return options;
}
