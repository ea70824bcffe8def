/** What the worker (test/workerd/worker.ts) and its tests share. */
import type { Account } from '../../src/index.js';
import { ADA, BOB } from '../fixtures.js';

/** The accounts the worker's fake sign-in knows, by `x-test-account` value. */
export const ACCOUNTS: Record<'ada' | 'bob', Account> = { ada: ADA, bob: BOB };
export { CALLBACK, LOGIN_URL } from '../fixtures.js';
