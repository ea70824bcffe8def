/**
 * The benchmark harness in smoke mode (`npm run bench -- --smoke`): every workload of every
 * section a handful of times, so CI notices when a change breaks the harness (or makes a workload
 * answer wrongly: every benchmarked operation checks its answer). No timing is asserted: the
 * numbers of a smoke run mean nothing. The HTTP servers run in this process; the PostgreSQL
 * section runs when DATABASE_URL is set (as in CI) and is skipped otherwise.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unsupported, WORKLOAD_IDS } from '../../bench/authgate.js';
import { runBench, type BenchResult } from '../../bench/harness.js';
import { FRAMEWORKS } from '../../bench/http/server.js';
import { ROUTES } from '../../bench/http/run.js';
import { loadOptional } from '../../bench/lib/load.js';
import { runAb } from '../../bench/ab.js';
import { codeFrom, wire } from '../../bench/lib/fixture.js';
import { parseOptions } from '../../bench/lib/options.js';
import { JMONDI } from '../../bench/peers/jmondi.js';
import { NODE_OAUTH } from '../../bench/peers/node-oauth.js';

const out = mkdtempSync(join(tmpdir(), 'authgate-bench-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const positive = (values: number[]) => values.every((v) => Number.isFinite(v) && v > 0);

describe('benchmark harness, smoke mode', () => {
  let result: BenchResult;

  it('runs every section and writes its report', async () => {
    const lines: string[] = [];
    const options = parseOptions(['--smoke', '--out', out], { DATABASE_URL: process.env.DATABASE_URL }, (line) => lines.push(line));
    if (options === 'help') throw new Error('unexpected help');
    expect(options.smoke).toBe(true);
    result = await runBench(options);
    expect(readFileSync(join(out, 'table.md'), 'utf8')).toContain('### In-process');
    expect(JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')).machine.nproc).toBeGreaterThan(0);
    // The concurrency section starts two more node processes (tsx) on a loaded machine.
  }, 180_000);

  it('measured authgate, both floors and the peers on every in-process workload they support', () => {
    const series = result.inproc!.series;
    for (const id of WORKLOAD_IDS) {
      const names = series.filter((s) => s.workload === id).map((s) => s.contender);
      expect(names, id).toEqual(expect.arrayContaining(['authgate', 'floor']));
      // No peer has personal access tokens (W5), OpenID Connect (W1o) or DPoP (W6, W2d).
      const peerless = ['W5', 'W1o', 'W6', 'W2d'].includes(id);
      if (id !== 'W4' && !peerless) expect(names, id).toContain(NODE_OAUTH);
      if (id !== 'W3' && !peerless) expect(names, id).toContain(JMONDI);
    }
    expect(series.every((s) => positive(s.runs))).toBe(true);
    expect(result.primitives!.every((s) => positive(s.runs))).toBe(true);
  });

  it('measured growth and memory', () => {
    const growth = result.growth!;
    expect(growth.series.map((s) => s.workload).sort()).toEqual(['W2', 'W2', 'W3', 'W3']);
    expect(Number.isFinite(growth.heapBytesPerToken)).toBe(true);
    // Without --expose-gc (vitest runs without it) the heap is read without a collection first, so
    // a collection during the fill can make the difference negative: only a forced GC makes the
    // sign meaningful (npm run bench passes --expose-gc).
    if (typeof (globalThis as { gc?: unknown }).gc === 'function') expect(growth.heapBytesPerToken).toBeGreaterThan(0);
    expect(growth.chain.samples.length).toBeGreaterThan(1);
  });

  it('ran the HTTP workloads on every adapter, or says why an adapter was skipped', () => {
    const http = result.http!;
    for (const framework of FRAMEWORKS) {
      if (http.frameworks.includes(framework)) {
        const runs = http.series.filter((s) => s.workload === `HTTP ${framework}`);
        expect(runs.map((s) => s.contender).sort()).toEqual(Object.values(ROUTES).sort());
        expect(runs.every((s) => positive(s.runs))).toBe(true);
      } else {
        expect(http.skipped.join('\n')).toContain(`HTTP ${framework}: skipped`);
      }
    }
  });

  it('names the workloads a version of authgate cannot run (bench:ab skips them, the contenders refuse them)', async () => {
    const core = await import('../../src/index.js');
    for (const id of WORKLOAD_IDS) expect(unsupported(id, core), id).toBeUndefined();
    // A version whose constructor knows neither option (as f40ff00, which had their building blocks).
    class OlderServer extends core.AuthorizationServer {
      constructor(options: ConstructorParameters<typeof core.AuthorizationServer>[0]) {
        if ('openid' in options || 'dpop' in options) throw new core.ConfigError('openid', 'unknown option');
        super(options);
      }
    }
    const older = { ...core, AuthorizationServer: OlderServer } as unknown as typeof core;
    expect(unsupported('W1o', older)).toMatch(/no OpenID Connect/);
    expect(unsupported('W6', older)).toMatch(/no DPoP/);
    expect(unsupported('W2d', older)).toMatch(/no DPoP/);
    expect(unsupported('W1', older)).toBeUndefined();
  });

  it('names what is missing when an adapter module lacks an export the bench needs', async () => {
    const missing = await loadOptional('express', ['createOAuthRouter', 'notThereYet'], false);
    expect(missing.ok).toBe(false);
    expect(!missing.ok && missing.reason).toMatch(/does not export notThereYet yet/);
  });

  it('ran the PostgreSQL section when DATABASE_URL is set, and counted round trips', () => {
    const pg = result.postgres!;
    if (!process.env.DATABASE_URL) {
      expect('skipped' in pg && pg.skipped).toMatch(/DATABASE_URL/);
      return;
    }
    if ('skipped' in pg) throw new Error(pg.skipped);
    for (const id of WORKLOAD_IDS) expect(pg.roundTrips[id]!.queries, id).toBeGreaterThan(0);
    expect(pg.series.every((s) => positive(s.runs))).toBe(true);
  });

  it('ran the concurrency section when DATABASE_URL is set: the floor, every workload with its share, and two processes', () => {
    const c = result.concurrency!;
    if (!process.env.DATABASE_URL) {
      expect('skipped' in c && c.skipped).toMatch(/DATABASE_URL/);
      return;
    }
    if ('skipped' in c) throw new Error(c.skipped);
    const perWorker = Math.ceil(8 / c.concurrency);
    for (const run of [c.floor.select1, c.floor.lookup, c.floor.transaction, ...c.workloads]) {
      expect(run.ops, run.name).toBe(c.concurrency * perWorker * (run === c.floor.lookup ? 4 : 1));
      expect(positive([run.opsPerSecond, run.p50, run.p99]), run.name).toBe(true);
      expect(run.p99).toBeGreaterThanOrEqual(run.p50);
    }
    expect(c.workloads.map((w) => w.id)).toEqual(WORKLOAD_IDS);
    for (const w of c.workloads) expect(w.roundTrips * w.share, w.id).toBeGreaterThan(0);
    expect(c.scaleOut.map((s) => s.id)).toEqual(['W3', 'W2']);
    expect(c.scaleOut.every((s) => positive([s.oneProcess, s.twoProcesses]))).toBe(true);
    expect(readFileSync(join(out, 'table.md'), 'utf8')).toContain('### Concurrency on PostgreSQL');
  });

  it('took a CPU profile of each in-process workload and found where the time goes', () => {
    expect(result.profiles!.map((p) => p.workload)).toEqual(WORKLOAD_IDS);
    for (const profile of result.profiles!) {
      expect(profile.functions.length).toBeGreaterThan(0);
      expect(JSON.parse(readFileSync(profile.file, 'utf8')).nodes.length).toBeGreaterThan(0);
    }
  });
});

describe('benchmark fixture helpers', () => {
  it('codeFrom reads the code parameter the way URLSearchParams does', () => {
    const locations = [
      'https://client.example/cb?code=abc_DEF-123&state=xyz&iss=https%3A%2F%2Fas.example',
      'https://client.example/cb?state=s&code=a%2Bb%20c+d',
      'https://client.example/cb?xcode=no&code=yes',
      'https://client.example/cb?state=code%3Dno&code=yes&iss=i',
      'http://127.0.0.1:8080/cb?code=last',
      'https://client.example/cb?next=/x?code=evil&code=real&state=s', // a registered query may hold '?'
      'https://client.example/cb?next=a&code=c%zz&iss=i', // a bad escape is kept as written
      'https://client.example/cb?code=a#code=b',
    ];
    for (const location of locations) expect(codeFrom(location), location).toBe(new URL(location).searchParams.get('code'));
    expect(() => codeFrom('https://client.example/cb?error=access_denied&state=s')).toThrow(/no code/);
    expect(() => codeFrom('https://client.example/cb?xcode=1')).toThrow(/no code/);
    expect(() => codeFrom('https://client.example/cb?next=/x?code=evil&error=access_denied')).toThrow(/no code/);
  });

  it('wire gives the same text back', () => {
    const form = `grant_type=authorization_code&code=${'x'.repeat(43)}&redirect_uri=${encodeURIComponent('https://a.example/cb?é')}`;
    expect(wire(form)).toBe(form);
  });
});

describe('npm run bench:ab (two versions of src/ in one process)', () => {
  it('measures the working tree against a commit on each workload it is given', async () => {
    const lines: string[] = [];
    const results = await runAb({ base: 'HEAD', workloads: ['W2', 'W3'], rounds: 1, operations: 40 }, (line) => lines.push(line));
    expect(results.map((r) => r.workload)).toEqual(['W2', 'W3']);
    for (const r of results) {
      expect(positive([r.base, r.tree, r.speedup])).toBe(true);
      expect(r.speedup).toBeCloseTo(r.base / r.tree, 10);
    }
    expect(lines.join('\n')).toMatch(/^W2: HEAD .* µs, working tree .* µs per operation → [\d.]+×/);
  }, 60_000);
});
