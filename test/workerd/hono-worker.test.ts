/**
 * Runtime portability, proven: the core and the Hono adapter, bundled as a Cloudflare Worker, run
 * inside workerd (the Workers runtime, from the `workerd` npm package) without `nodejs_compat`. The
 * HTTP cases run there as the `workerd` target of the shared suite (test/adapters, through
 * test/adapters/targets/workerd.ts); this file checks the bundle itself, and that it is workerd
 * that answers.
 *
 * Never skipped: if workerd cannot start on a machine, this fails with workerd's own error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleWorker, startWorkerd, type Running, type WorkerBundle } from './runtimes.js';

let bundle: WorkerBundle | undefined;
const bundled = async () => (bundle ??= await bundleWorker());

describe('the worker bundle', () => {
  beforeAll(async () => {
    await bundled();
  });

  it('is one ES module with the core, the Hono adapter, jose, zod and @noble/hashes, and no Node built-in', () => {
    const { inputs, code, bytes } = bundle!;
    expect(inputs.filter((input) => input.startsWith('node:') || /^(crypto|buffer|fs|path|os|stream|util|events)$/.test(input))).toEqual(
      [],
    );
    expect(inputs.some((input) => input.startsWith('src/server.ts'))).toBe(true);
    expect(inputs.some((input) => input.startsWith('adapters/hono/index.ts'))).toBe(true);
    // `includes`, not `startsWith`: where node_modules is a link (a git worktree), esbuild names
    // the inputs by the path it points to.
    for (const dependency of ['node_modules/hono/', 'node_modules/jose/', 'node_modules/zod/', 'node_modules/@noble/hashes/']) {
      expect(
        inputs.some((input) => input.includes(dependency)),
        dependency,
      ).toBe(true);
    }
    expect(code).not.toMatch(/from\s*["']node:|require\(["']node:/);
    expect(bytes).toBeLessThan(2_000_000);
  });
});

describe('workerd', () => {
  let running: (Running & { compatibilityDate: string }) | undefined;
  beforeAll(async () => {
    running = await startWorkerd(await bundled());
  });
  afterAll(async () => {
    await running?.stop();
  });

  it('runs the worker as Cloudflare Workers, at the newest compatibility date it supports', async () => {
    const reply = await fetch(`${running!.base}/__test/runtime`);
    expect(reply.status, running!.logs()).toBe(200);
    expect(((await reply.json()) as { userAgent: string | null }).userAgent).toBe('Cloudflare-Workers');
    expect(running!.compatibilityDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('answers 409 until a test resets its world', async () => {
    expect((await fetch(`${running!.base}/v1/oauth/token`, { method: 'POST' })).status).toBe(409);
  });
});
