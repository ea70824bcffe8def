import type { ResolvedOptions } from './options.js';
import type { Storage } from './storage/types.js';
import type { Clock, UserSessions } from './types.js';

/** What every endpoint needs: the resolved options and the three seams. */
export interface Context {
  options: ResolvedOptions;
  storage: Storage;
  sessions: UserSessions;
  clock: Clock;
}
