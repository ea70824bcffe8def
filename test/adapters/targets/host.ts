/**
 * What a target of the shared HTTP suite hands `startApp()` (test/adapters/app.ts), which builds
 * the test helpers (requests, sign-in, the code flow, the after-test check) on top: where the host
 * app listens, and the state behind it. For the in-process frameworks that state is the objects
 * the server runs on; for workerd (./workerd.ts) it is stand-ins that forward to the worker.
 */
import type { AuthorizationServer, MemoryStorage, RegisteredClient } from '../../../src/index.js';
import type { FakeClock, FakeSessions } from '../../../src/testing/index.js';

/** A response the host app finished, seen from the server side. */
export interface ServedResponse {
  method: string;
  url: string;
  status: number;
}

/** One started host app, for one test (or one `describe` of same-answers.test.ts). */
export interface Host {
  /** `http://127.0.0.1:<port>` */
  base: string;
  clock: FakeClock;
  sessions: FakeSessions;
  storage: MemoryStorage;
  server: AuthorizationServer;
  /** "Example App", redirecting to `CALLBACK`. */
  client: RegisteredClient;
  /** "Other App", redirecting to `https://other.example/cb`. */
  other: RegisteredClient;
  /** Status of every response the app finished (in-process: filled as they finish). */
  served: ServedResponse[];
  /** What the core reported to `onError` (in-process: filled as it happens). */
  coreErrors: unknown[];
  /**
   * Run before every request: hand what the test changed here (the clock, the sessions) to where
   * the server runs. None in-process, where they are the same objects.
   */
  sync?: () => Promise<void>;
  /** Stop serving this app. */
  close(): Promise<void>;
}
