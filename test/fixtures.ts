/**
 * The fixed world every test suite shares: the two accounts, the registered clients' callback
 * URLs, the issuer and the host's sign-in page. One definition, so that the core tests
 * (test/helpers.ts), the adapters' HTTP suite (test/adapters/app.ts), the worker
 * (test/workerd/worker.ts) and the model tests (test/model/model.ts) talk about the same people
 * and clients.
 *
 * This file is bundled into the Cloudflare worker of test/workerd: it must import nothing from
 * `node:` and nothing from vitest (types from src/ are fine, they vanish at build time).
 */
import type { Account } from '../src/index.js';

/** The account signed in by default in most tests. */
export const ADA: Account = { uuid: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', name: 'Ada Lovelace', email: 'ada@example.com' };
/** A second account: another user at the same or another browser. */
export const BOB: Account = { uuid: 'b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0', name: 'Bob Builder', email: 'bob@example.com' };

/** The callback URL of the confidential client the test setups register first ("Example App"). */
export const CALLBACK = 'https://client.example/cb';
/** The callback URL of the second client ("Other App"): the wrong client's callback in many tests. */
export const OTHER_CALLBACK = 'https://other.example/cb';

/** The issuer of servers that need one (metadata, JWT access tokens, the `iss` parameter). */
export const ISSUER = 'https://auth.example';
/** The host's sign-in page, where the adapters send a browser that has no session. */
export const LOGIN_URL = '/login';

/** Where the server publishes its metadata document (RFC 8414 §3). */
export const METADATA = '/.well-known/oauth-authorization-server';
/** Where the server publishes its signing keys for JWT access tokens. */
export const JWKS = '/.well-known/jwks.json';
