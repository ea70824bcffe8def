/**
 * The benchmark: every section in turn, then one markdown report (printed, and written with the
 * raw numbers to the output directory). `runBench` is what `npm run bench` and the smoke test call.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORKLOADS, type WorkloadId } from './authgate.js';
import { concurrencySection, type ConcurrencyResult } from './concurrency.js';
import { growthSection, type GrowthResult } from './growth.js';
import { httpSection, ROUTES, type HttpResult } from './http/run.js';
import { inprocSection, primitivesSection, type InprocResult } from './inproc.js';
import { loadCore } from './lib/load.js';
import { cpuView, fmtOps, type Series } from './lib/measure.js';
import type { BenchOptions, Section } from './lib/options.js';
import { cell, pairedRatio, ratioCell, table } from './lib/report.js';
import { JMONDI } from './peers/jmondi.js';
import { NODE_OAUTH } from './peers/node-oauth.js';
import { MEMORY_NAME, PG_NAME, postgresSection, type PostgresResult } from './postgres.js';
import { profileSection, type ProfileSummary } from './profile.js';

export interface BenchResult {
  machine: ReturnType<typeof machine>;
  inproc?: InprocResult;
  primitives?: Series[];
  growth?: GrowthResult;
  http?: HttpResult;
  postgres?: PostgresResult;
  concurrency?: ConcurrencyResult;
  profiles?: ProfileSummary[];
  skipped: string[];
  markdown: string;
  files: string[];
}

/** The commit measured, and whether src/ or adapters/ had uncommitted changes. */
function revision(): string {
  try {
    const git = (args: string[]) =>
      execFileSync('git', args, {
        cwd: fileURLToPath(new URL('../', import.meta.url)),
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    const dirty = git(['status', '--porcelain', '--', 'src', 'adapters']) !== '';
    return `${git(['rev-parse', '--short', 'HEAD'])}${dirty ? ' + uncommitted changes in src/ or adapters/' : ''}`;
  } catch {
    return 'unknown (no git)';
  }
}

export function machine() {
  return {
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    date: new Date().toISOString(),
    commit: revision(),
  };
}

const find = (list: Series[], workload: string, name: string): Series | undefined =>
  list.find((s) => s.workload === workload && s.contender === name);
const title = (w: string) => `${w} ${WORKLOADS[w as WorkloadId] ?? ''}`.trim();

function inprocMarkdown(result: InprocResult, rounds: number): string {
  const s = result.series;
  const workloads = [...new Set(s.map((x) => x.workload))];
  const rows = workloads.map((w) => {
    const authgate = find(s, w, 'authgate');
    return [
      title(w),
      cell(authgate),
      cell(find(s, w, 'floor')),
      ratioCell(pairedRatio(authgate, find(s, w, 'floor')), true),
      cell(find(s, w, NODE_OAUTH)),
      ratioCell(pairedRatio(authgate, find(s, w, NODE_OAUTH))),
      cell(find(s, w, JMONDI)),
      ratioCell(pairedRatio(authgate, find(s, w, JMONDI))),
    ];
  });
  const cpu = (w: string, name: string) => cpuView(find(s, w, name));
  const cpuRows = workloads.map((w) => {
    const authgate = cpu(w, 'authgate');
    return [
      title(w),
      cell(authgate),
      ratioCell(pairedRatio(authgate, cpu(w, 'floor')), true),
      ratioCell(pairedRatio(authgate, cpu(w, NODE_OAUTH))),
      ratioCell(pairedRatio(authgate, cpu(w, JMONDI))),
    ];
  });
  return [
    `### In-process, MemoryStorage: ops/s, median [min–max] of ${rounds} interleaved runs`,
    '',
    table(['workload', 'authgate', 'floor', 'authgate ÷ floor', NODE_OAUTH, 'authgate ÷ it', JMONDI, 'authgate ÷ it'], rows),
    '',
    'The same runs per CPU-second of this process (user + system time of all its threads during the timed batches): the cost of the work, far less disturbed than the wall clock when other processes compete for the cores.',
    '',
    table(['workload', 'authgate, ops per CPU-s', 'authgate ÷ floor', `authgate ÷ ${NODE_OAUTH}`, `authgate ÷ ${JMONDI}`], cpuRows),
    '',
    'Ratios: the median [min–max] of the per-round ratios. Within a round the contenders take turns in short slices (6 per run), in an order that rotates, so bursts of load from other processes fall on all of them alike.',
    '`floor`: the same crypto calls as src/crypto.ts (on Node: one-shot native SHA-256, pooled CSPRNG bytes with native base64url) plus the Map operations, nothing else.',
    ...result.notes.map((n) => `- ${n}`),
  ].join('\n');
}

function primitivesMarkdown(list: Series[]): string {
  return [
    '### Primitives: calls/s, median [min–max]',
    '',
    table(
      ['primitive', 'calls/s', 'µs per call', 'µs of CPU per call'],
      list.map((x) => [x.contender, cell(x), (1e6 / x.median).toFixed(2), x.cpuRuns ? (1e6 / cpuView(x)!.median).toFixed(2) : '–']),
    ),
  ].join('\n');
}

function growthMarkdown(g: GrowthResult): string {
  const small = `${fmtOps(g.sizes.small)} live tokens`;
  const large = `${fmtOps(g.sizes.large)} live tokens`;
  const workloads = [...new Set(g.series.map((x) => x.workload))];
  const rows = workloads.map((w) => {
    const a = find(g.series, w, small);
    const b = find(g.series, w, large);
    return [title(w), cell(a), cell(b), ratioCell(pairedRatio(b, a)), ratioCell(pairedRatio(cpuView(b), cpuView(a)))];
  });
  const samples = g.chain.samples.map((x) => `${fmtOps(x.rotations)}: ${(x.heapBytes / 1048576).toFixed(1)} MiB`).join(', ');
  return [
    '### Growth (authgate, MemoryStorage)',
    '',
    table(['workload', small, large, 'large ÷ small', 'large ÷ small, CPU time'], rows),
    '',
    `- Heap per live token: **${g.heapBytesPerToken.toFixed(0)} bytes** (${fmtOps(g.sizes.large)} tokens as access + refresh pairs of one grant each, records and Map entries; filled in ${g.fillSeconds.toFixed(1)} s).`,
    `- Long refresh chain: ${fmtOps(g.chain.rotations)} rotations in ${g.chain.seconds.toFixed(1)} s, heap after a full GC grows **${g.chain.heapBytesPerRotation.toFixed(0)} bytes per rotation** (${samples})${g.chain.pruned ? ', pruning at each sample' : '; MemoryStorage has no prune, and rotated refresh tokens (no lifetime by default) and revoked access tokens are kept for reuse detection'}.`,
  ].join('\n');
}

function httpMarkdown(h: HttpResult, options: BenchOptions): string {
  const rows = h.frameworks.map((framework) => {
    const w = `HTTP ${framework}`;
    const trivial = find(h.series, w, ROUTES.trivial);
    const w3 = find(h.series, w, ROUTES.W3);
    const w1x = find(h.series, w, ROUTES.W1x);
    return [
      framework,
      cell(trivial),
      cell(w3),
      ratioCell(pairedRatio(w3, trivial), true),
      ratioCell(pairedRatio(cpuView(w3), cpuView(trivial)), true),
      cell(w1x),
      ratioCell(pairedRatio(w1x, trivial), true),
      ratioCell(pairedRatio(cpuView(w1x), cpuView(trivial)), true),
    ];
  });
  return [
    `### Over HTTP: requests/s, median [min–max] of ${options.rounds} interleaved runs`,
    '',
    `autocannon, ${options.httpConnections} connections, no pipelining, server ${options.httpInProcess ? 'in the same process (smoke)' : 'in a child process'}; W3 and the trivial route for ${options.httpSeconds || '–'} s per run, W1x ${fmtOps(options.httpRequests)} exchanges per run (codes issued beforehand).`,
    '',
    table(
      [
        'framework',
        ROUTES.trivial,
        ROUTES.W3,
        'W3 ÷ trivial',
        'W3 ÷ trivial, server CPU',
        ROUTES.W1x,
        'W1x ÷ trivial',
        'W1x ÷ trivial, server CPU',
      ],
      rows,
    ),
    '',
    "`server CPU`: the same runs as requests per second of the server process's CPU time (user + system): what a request costs the server, less disturbed by other processes than the wall clock.",
    ...baselineMarkdown(
      h,
      'W3',
      'noop',
      'the check',
      `W3 next to \`${ROUTES.noop}\`: the same JSON behind a middleware of the framework that does nothing. What is left between the two is the bearer check, as it costs inside the server.`,
    ),
    ...baselineMarkdown(
      h,
      'W1x',
      'echo',
      'the exchange',
      `W1x next to \`${ROUTES.echo}\`: the same framework reading the same forms (sent the same way, one fresh body per request) and answering a small JSON, with no OAuth work. What is left between the two is the exchange, as it costs inside the server.`,
    ),
    ...(h.profiles?.length
      ? ['', 'Server CPU profiles (--http-profile), self time in % of the busy time of all runs of the route:', '']
      : []),
    ...(h.profiles ?? []).flatMap((p) => [
      `- **${p.framework}, ${p.route}** (idle ${p.idle.toFixed(0)}% of the run): ${p.functions
        .slice(0, 6)
        .map((f) => `${f.percent.toFixed(1)}% ${f.name} (${f.where})`)
        .join('; ')}`,
      `  - by place: ${p.places
        .slice(0, 7)
        .map((f) => `${f.percent.toFixed(1)}% ${f.name}`)
        .join('; ')}`,
    ]),
  ].join('\n');
}

/**
 * A workload next to the framework route that does everything but the OAuth work (W3 next to
 * `GET /noop`, W1x next to `POST /echo`): what is left between the two is authgate's own cost
 * inside a busy server.
 */
function baselineMarkdown(h: HttpResult, route: 'W3' | 'W1x', base: 'noop' | 'echo', what: string, intro: string): string[] {
  const rows = h.frameworks.flatMap((framework) => {
    const w = `HTTP ${framework}`;
    const baseline = h.series.find((x) => x.workload === w && x.contender === ROUTES[base]);
    const measured = h.series.find((x) => x.workload === w && x.contender === ROUTES[route]);
    if (!baseline || !measured) return [];
    const trivial = find(h.series, w, ROUTES.trivial);
    const [measuredCpu, baselineCpu] = [cpuView(measured), cpuView(baseline)];
    return [
      [
        framework,
        cell(baseline),
        ratioCell(pairedRatio(baseline, trivial), true),
        ratioCell(pairedRatio(measured, baseline), true),
        ratioCell(pairedRatio(measuredCpu, baselineCpu), true),
        measuredCpu && baselineCpu ? `${(1e6 / measuredCpu.median - 1e6 / baselineCpu.median).toFixed(1)} µs` : '–',
      ],
    ];
  });
  if (!rows.length) return [];
  return [
    '',
    intro,
    '',
    table(
      [
        'framework',
        ROUTES[base],
        `${base} ÷ trivial`,
        `${route} ÷ ${base}`,
        `${route} ÷ ${base}, server CPU`,
        `${what}, server CPU per request`,
      ],
      rows,
    ),
  ];
}

function postgresMarkdown(p: Extract<PostgresResult, { series: Series[] }>, rounds: number): string {
  const workloads = [...new Set(p.series.map((x) => x.workload))];
  const rows = workloads.map((w) => {
    const memory = find(p.series, w, MEMORY_NAME);
    const pg = find(p.series, w, PG_NAME);
    const trips = p.roundTrips[w as WorkloadId];
    return [
      title(w),
      cell(pg),
      cell(memory),
      ratioCell(pairedRatio(pg, memory), true),
      trips ? `${trips.queries}` : '–',
      trips ? `${trips.transactions}` : '–',
    ];
  });
  return [
    `### PostgreSQL ${p.serverVersion} (local): ops/s, median [min–max] of ${rounds} interleaved runs`,
    '',
    table(['workload', PG_NAME, MEMORY_NAME, 'PostgreSQL ÷ memory', 'queries per op', 'transactions per op'], rows),
    '',
    'Queries per op: every round trip (pool.query, and each query of a connection checked out for a transaction, BEGIN and COMMIT included).',
  ].join('\n');
}

function concurrencyMarkdown(c: Exclude<ConcurrencyResult, { skipped: string }>): string {
  const ms = (v: number) => v.toFixed(1);
  const floorRuns = [c.floor.select1, c.floor.lookup, c.floor.transaction, ...(c.floor.join ? [c.floor.join] : [])];
  const floorRows = floorRuns.map((r) => [r.name, fmtOps(r.opsPerSecond), ms(r.p50), ms(r.p99)]);
  const rows = c.workloads.map((w) => [
    title(w.id),
    fmtOps(w.opsPerSecond),
    ms(w.p50),
    ms(w.p99),
    `${w.roundTrips}`,
    fmtOps(w.lookupFloor),
    fmtOps(w.lookupFloor / w.roundTrips),
    `${(w.share * 100).toFixed(0)}%`,
  ]);
  const out = [
    `### Concurrency on PostgreSQL: ${c.concurrency} operations in flight, a pool of ${c.pool} (one run each)`,
    '',
    table(['database floor', 'ops/s', 'p50 ms', 'p99 ms'], floorRows),
    '',
    table(
      [
        'workload',
        'ops/s',
        'p50 ms',
        'p99 ms',
        'round trips per op',
        'lookup floor right before, ops/s',
        'bound: floor ÷ round trips',
        'share of the bound',
      ],
      rows,
    ),
  ];
  if (c.scaleOut.length) {
    out.push(
      '',
      table(
        ['workload', 'one process, ops/s', 'two processes together, ops/s', 'two ÷ one'],
        c.scaleOut.map((s) => [
          title(s.id),
          fmtOps(s.oneProcess),
          fmtOps(s.twoProcesses),
          `${(s.twoProcesses / s.oneProcess).toFixed(2)}×`,
        ]),
      ),
      '',
      'Two processes: each with its own pool of the same size and the same operations in flight, on one database, started together.',
    );
  }
  return out.join('\n');
}

function profileMarkdown(list: ProfileSummary[]): string {
  const out = ['### CPU profiles (authgate, MemoryStorage): top self time', ''];
  for (const p of list) {
    out.push(
      `- **${p.workload}** (${fmtOps(p.operations)} ops in ${p.ms.toFixed(0)} ms, \`${p.file.split('/').slice(-2).join('/')}\`): ` +
        p.functions
          .slice(0, 6)
          .map((f) => `${f.percent.toFixed(1)}% ${f.name} (${f.where})`)
          .join('; '),
    );
    out.push(
      `  - by place: ${p.places
        .slice(0, 6)
        .map((f) => `${f.percent.toFixed(1)}% ${f.name}`)
        .join('; ')}`,
    );
  }
  return out.join('\n');
}

export async function runBench(options: BenchOptions): Promise<BenchResult> {
  const core = await loadCore(options.dist);
  const info = machine();
  const result: BenchResult = { machine: info, skipped: [], markdown: '', files: [] };
  const parts: string[] = [
    `## authgate benchmark${options.smoke ? ' (smoke: the numbers mean nothing)' : ''}`,
    '',
    `Machine: nproc ${info.nproc}, ${info.cpu}, Node ${info.node}; ${info.date}. Measured: commit ${info.commit}, ${options.dist ? 'the built package (dist/)' : 'src/ and adapters/ through tsx'}.`,
  ];
  const has = (s: Section) => options.sections.includes(s);
  const started = performance.now();
  let mark = started;
  const lap = (name: string) => {
    const now = performance.now();
    options.log(`   (${name}: ${((now - mark) / 1000).toFixed(1)} s)`);
    mark = now;
  };

  if (has('inproc')) {
    options.log('== in-process workloads');
    result.inproc = await inprocSection(core, options);
    parts.push('', inprocMarkdown(result.inproc, options.rounds));
    result.primitives = await primitivesSection(core, options);
    parts.push('', primitivesMarkdown(result.primitives));
    lap('in-process');
  }
  if (has('growth') && options.workloads.some((w) => w === 'W2' || w === 'W3')) {
    options.log('== growth');
    result.growth = await growthSection(core, options);
    parts.push('', growthMarkdown(result.growth));
    lap('growth');
  }
  if (has('http') && options.workloads.some((w) => w === 'W1x' || w === 'W3')) {
    options.log('== HTTP');
    result.http = await httpSection(options);
    result.skipped.push(...result.http.skipped);
    if (result.http.frameworks.length) parts.push('', httpMarkdown(result.http, options));
    lap('HTTP');
  }
  if (has('postgres')) {
    options.log('== PostgreSQL');
    result.postgres = await postgresSection(core, options);
    if ('skipped' in result.postgres) result.skipped.push(result.postgres.skipped);
    else parts.push('', postgresMarkdown(result.postgres, options.rounds));
    lap('PostgreSQL');
  }
  if (has('concurrency')) {
    options.log('== concurrency on PostgreSQL');
    result.concurrency = await concurrencySection(core, options);
    if ('skipped' in result.concurrency) result.skipped.push(result.concurrency.skipped);
    else parts.push('', concurrencyMarkdown(result.concurrency));
    lap('concurrency');
  }
  if (has('profile')) {
    options.log('== CPU profiles');
    result.profiles = await profileSection(core, options);
    parts.push('', profileMarkdown(result.profiles));
    lap('profiles');
  }

  if (result.skipped.length) parts.push('', '### Skipped', '', ...result.skipped.map((s) => `- ${s}`));
  parts.push('', `Total time: ${((performance.now() - started) / 1000).toFixed(0)} s.`);
  result.markdown = parts.join('\n');
  await mkdir(options.out, { recursive: true });
  const json = join(options.out, 'results.json');
  const md = join(options.out, 'table.md');
  await writeFile(json, JSON.stringify({ ...result, markdown: undefined, files: undefined }, null, 2));
  await writeFile(md, `${result.markdown}\n`);
  result.files.push(json, md);
  return result;
}
