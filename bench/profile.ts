/**
 * A CPU profile of authgate in each in-process workload (MemoryStorage), taken with the
 * inspector module in this process after the timed runs, written as `<out>/profiles/<W>.cpuprofile`
 * (open it in Chrome DevTools or speedscope), and summarised: the functions and the files or
 * packages with the most self time. Inputs (codes, tokens to revoke) are made before the
 * profiler starts, so the profile holds the measured operation only.
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { findSourceMap } from 'node:module';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { authgateContenders, type WorkloadId } from './authgate.js';
import { authgateFixture } from './lib/fixture.js';
import type { CoreModule } from './lib/load.js';
import type { BenchOptions } from './lib/options.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface Hotspot {
  name: string;
  where: string;
  percent: number;
}
export interface ProfileSummary {
  workload: WorkloadId;
  file: string;
  operations: number;
  ms: number;
  functions: Hotspot[];
  places: Hotspot[];
  idle: number;
}

const REPO = fileURLToPath(new URL('../', import.meta.url));

/** Where a frame comes from: a repository file, a package, a Node internal, or V8 itself. */
export function placeOf(url: string): string {
  if (!url) return '(native)';
  let path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const modules = path.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = path.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (path.startsWith(REPO)) path = path.slice(REPO.length);
  return path;
}

const sourceLines = new Map<string, string[]>();

/**
 * The original line (1-based) of a frame, through the module's source map when it has one (tsx
 * compiles every file to one line), and for an anonymous function the start of that line.
 */
export function originalPosition(frame: CallFrame): { line: number; text?: string } {
  let line = frame.lineNumber + 1;
  if (frame.url.startsWith('file://')) {
    try {
      const entry = findSourceMap(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber) as { originalLine?: number } | undefined;
      if (entry && typeof entry.originalLine === 'number') line = entry.originalLine + 1;
      if (!frame.functionName) {
        const path = fileURLToPath(frame.url);
        if (!sourceLines.has(path)) sourceLines.set(path, readFileSync(path, 'utf8').split('\n'));
        const text = sourceLines.get(path)![line - 1]?.trim();
        if (text) return { line, text: text.length > 60 ? `${text.slice(0, 57)}...` : text };
      }
    } catch {
      // No source map or file: the generated position will do.
    }
  }
  return { line };
}

const isIdle = (node: ProfileNode) => node.callFrame.functionName === '(idle)' && !node.callFrame.url;

/**
 * Self time by function and by place, in percent of the busy samples: `(idle)` (the thread
 * waiting for I/O, as an HTTP server does between requests) is left out and given apart, as a
 * percentage of all samples.
 */
export function summarize(profile: CpuProfile, top = 10): { functions: Hotspot[]; places: Hotspot[]; idle: number } {
  const all = profile.nodes.reduce((sum, n) => sum + (n.hitCount ?? 0), 0) || 1;
  const idleHits = profile.nodes.filter(isIdle).reduce((sum, n) => sum + (n.hitCount ?? 0), 0);
  const total = all - idleHits || 1;
  const functions = new Map<string, Hotspot>();
  const places = new Map<string, Hotspot>();
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (!hits || isIdle(node)) continue;
    const { functionName, url } = node.callFrame;
    const place = placeOf(url);
    const position = url ? originalPosition(node.callFrame) : { line: 0 };
    const name = functionName || (position.text ? `(anonymous: ${position.text})` : '(anonymous)');
    const where = url ? `${place}:${position.line}` : place;
    const key = `${name}\u0000${where}`;
    const f = functions.get(key) ?? { name, where, percent: 0 };
    f.percent += (100 * hits) / total;
    functions.set(key, f);
    const placeKey = name.startsWith('(') && !url ? name : place;
    const p = places.get(placeKey) ?? { name: placeKey, where: '', percent: 0 };
    p.percent += (100 * hits) / total;
    places.set(placeKey, p);
  }
  const sorted = (m: Map<string, Hotspot>) => [...m.values()].sort((a, b) => b.percent - a.percent).slice(0, top);
  return { functions: sorted(functions), places: sorted(places), idle: (100 * idleHits) / all };
}

export async function profileSection(core: CoreModule, options: BenchOptions): Promise<ProfileSummary[]> {
  const dir = join(options.out, 'profiles');
  await mkdir(dir, { recursive: true });
  const session = new Session();
  session.connect();
  const out: ProfileSummary[] = [];
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    for (const id of options.workloads) {
      const contender = authgateContenders(await authgateFixture(core, new core.MemoryStorage()))[id];
      // Warm up, then calibrate: how many operations fill the profiling time?
      let rate = 0;
      for (const probe of [64, 256]) {
        await contender.prepare?.(probe);
        const started = performance.now();
        for (let i = 0; i < probe; i++) await contender.op(i);
        rate = probe / Math.max(0.001, (performance.now() - started) / 1000);
      }
      let operations = Math.max(64, Math.min(300_000, Math.round((rate * options.profileMs) / 1000)));
      // A short profile (the smoke run's 50 ms) on a loaded machine can end before the sampler
      // took one sample of the workload: run it again, twice as long, a few times at most.
      let profiled: { profile: CpuProfile; ms: number; summary: ReturnType<typeof summarize> };
      for (let attempt = 1; ; attempt++, operations *= 2) {
        await contender.prepare?.(operations);
        (globalThis as { gc?: () => void }).gc?.();
        await session.post('Profiler.start');
        const t0 = performance.now();
        for (let i = 0; i < operations; i++) await contender.op(i);
        const ms = performance.now() - t0;
        const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
        await contender.verify?.();
        profiled = { profile, ms, summary: summarize(profile) };
        if (profiled.summary.functions.length > 0 || attempt === 5) break;
      }
      const { profile, ms, summary } = profiled;
      const file = join(dir, `${id}.cpuprofile`);
      await writeFile(file, JSON.stringify(profile));
      out.push({ workload: id, file, operations, ms, ...summary });
      options.log(`  ${id}: ${operations} operations profiled in ${ms.toFixed(0)} ms → ${file}`);
      options.log(
        `    ${summary.functions
          .slice(0, 5)
          .map((f) => `${f.percent.toFixed(1)}% ${f.name} (${f.where})`)
          .join('; ')}`,
      );
    }
  } finally {
    await session.post('Profiler.disable').catch(() => {});
    session.disconnect();
  }
  return out;
}
