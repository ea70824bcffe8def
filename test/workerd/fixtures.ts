/** What the worker (test/workerd/worker.ts) and its tests share. */
import type { Account } from '../../src/index.js';

/** The accounts the worker's fake sign-in knows, by `x-test-account` value. */
export const ACCOUNTS: Record<'ada' | 'bob', Account> = {
  ada: { uuid: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', name: 'Ada Lovelace', email: 'ada@example.com' },
  bob: { uuid: 'b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0', name: 'Bob Builder', email: 'bob@example.com' },
};
export const CALLBACK = 'https://client.example/cb';
export const LOGIN_URL = '/login';
