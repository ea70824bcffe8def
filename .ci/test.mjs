#!/usr/bin/env node
/**
 * `npm test [-- vitest arguments]`: the type check (`tsc --noEmit`) and the whole suite
 * (`vitest run`) side by side, as `tsc --noEmit && vitest run` would, without leaving a core idle.
 * tsc runs on one core for most of a minute; run first, it kept the second core idle that long,
 * and the suite has idle moments of its own (a file waiting for PostgreSQL, a browser or npm) that
 * the type check fills. A type error still fails the run: tsc's report is printed as soon as it
 * ends, the suite is stopped, and the exit code is tsc's. Otherwise the exit code is vitest's.
 */
import { spawn } from 'node:child_process';

const shell = process.platform === 'win32';
// Both are on PATH in an npm script (node_modules/.bin).
const tsc = spawn('tsc', ['--noEmit'], { stdio: ['ignore', 'pipe', 'pipe'], shell });
const vitest = spawn('vitest', ['run', ...process.argv.slice(2)], { stdio: 'inherit', shell });

let report = '';
tsc.stdout.on('data', (chunk) => (report += chunk));
tsc.stderr.on('data', (chunk) => (report += chunk));

const ended = (child) => new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
const tscEnded = ended(tsc);
const vitestEnded = ended(vitest);

const tscCode = await tscEnded;
if (tscCode !== 0) {
  process.stdout.write(`\n${report}\ntsc --noEmit failed (exit ${tscCode}): the test run is stopped.\n`);
  vitest.kill('SIGTERM');
  await vitestEnded;
  process.exit(tscCode);
}
const vitestCode = await vitestEnded;
console.log('tsc --noEmit: no type errors.');
process.exit(vitestCode);
