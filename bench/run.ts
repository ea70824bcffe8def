/**
 * `npm run bench [-- options]`: see bench/lib/options.ts (or `npm run bench -- --help`).
 */
import { runBench } from './harness.js';
import { parseOptions, USAGE } from './lib/options.js';

let options: ReturnType<typeof parseOptions>;
try {
  options = parseOptions(process.argv.slice(2));
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(2);
}
if (options === 'help') {
  console.log(USAGE);
} else {
  if (!(globalThis as { gc?: unknown }).gc)
    console.log('note: run with --expose-gc (npm run bench does) for heap figures and a GC between runs');
  const result = await runBench(options);
  console.log(`\n${result.markdown}`);
  console.log(`results: ${result.files.join(', ')}`);
}
