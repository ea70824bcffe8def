/**
 * Set-up file of the vitest projects whose files share one process and its modules
 * (`isolate: false` in vitest.config.ts); vitest runs it before each of their files. What a file
 * would get from a process of its own is given back here:
 *
 * - a module loads once per worker there, so an `afterAll` it registers when it loads runs after
 *   the first file only: the workerd target's clean-up is registered here, for every file;
 * - libraries replace Web platform globals, and a replacement outlives the file that caused it:
 *   @hono/node-server puts its own `Request` and `Response` on globalThis when its first server
 *   starts, after which `answer instanceof Response` is false for the answers of Node's `fetch`
 *   (the MCP SDK reads an OAuth error response only when it is true). Each file starts with the
 *   globals the worker started with.
 */
import { afterAll, beforeAll } from 'vitest';
import { stopWorkerdTarget } from './adapters/targets/workerd.js';

const PLATFORM_GLOBALS = [
  'Request',
  'Response',
  'Headers',
  'fetch',
  'FormData',
  'Blob',
  'File',
  'crypto',
  'URL',
  'URLSearchParams',
  'AbortController',
  'AbortSignal',
  'ReadableStream',
  'WritableStream',
  'TransformStream',
  'TextEncoder',
  'TextDecoder',
  'EventTarget',
  'Event',
  'WebSocket',
];

/** The worker's own globals, taken by the first run of this file in the worker, before any test file loaded. */
const KEY = Symbol.for('authgate.test.platformGlobals');
const holder = globalThis as { [KEY]?: Map<string, PropertyDescriptor | undefined> };
function workerGlobals(): Map<string, PropertyDescriptor | undefined> {
  const taken = holder[KEY] ?? new Map(PLATFORM_GLOBALS.map((name) => [name, Object.getOwnPropertyDescriptor(globalThis, name)]));
  holder[KEY] = taken;
  return taken;
}
const originals = workerGlobals();

beforeAll(() => {
  for (const [name, original] of originals) {
    const now = Object.getOwnPropertyDescriptor(globalThis, name);
    if (!original || (now?.value === original.value && now?.get === original.get)) continue;
    Object.defineProperty(globalThis, name, original);
  }
});

afterAll(stopWorkerdTarget);
