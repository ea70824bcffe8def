/**
 * Runtime portability (issue 7), proven: the core and the Hono adapter, bundled as a Cloudflare
 * Worker, run inside workerd (the Workers runtime, from the `workerd` npm package) without
 * `nodejs_compat`, and pass the Hono adapter's HTTP cases there (test/workerd/cases.ts). The same
 * worker module runs the same cases on Node too, so a difference between the runtimes fails one
 * of the two runs.
 *
 * Never skipped: if workerd cannot start on a machine, this fails with workerd's own error.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { describeWorkerCases } from './cases.js';
import { bundleWorker, startNode, startWorkerd, type WorkerBundle } from './runtimes.js';

let bundle: WorkerBundle | undefined;
const bundled = async () => (bundle ??= await bundleWorker());

describe('the worker bundle', () => {
  beforeAll(async () => {
    await bundled();
  });

  it('is one ES module with the core, the Hono adapter, jose, zod and @noble/hashes, and no Node built-in', () => {
    const { inputs, code, bytes } = bundle!;
    expect(inputs.filter((input) => input.startsWith('node:') || /^(crypto|buffer|fs|path|os|stream|util|events)$/.test(input))).toEqual([]);
    expect(inputs.some((input) => input.startsWith('src/server.ts'))).toBe(true);
    expect(inputs.some((input) => input.startsWith('adapters/hono/index.ts'))).toBe(true);
    for (const dependency of ['node_modules/hono/', 'node_modules/jose/', 'node_modules/zod/', 'node_modules/@noble/hashes/']) {
      expect(inputs.some((input) => input.startsWith(dependency)), dependency).toBe(true);
    }
    expect(code).not.toMatch(/from\s*["']node:|require\(["']node:/);
    expect(bytes).toBeLessThan(2_000_000);
  });
});

describeWorkerCases('workerd', async () => startWorkerd(await bundled()), (userAgent) => expect(userAgent).toBe('Cloudflare-Workers'));
describeWorkerCases('node', startNode, (userAgent) => expect(userAgent ?? '').not.toBe('Cloudflare-Workers'));
