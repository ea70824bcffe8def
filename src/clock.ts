import type { Clock } from './types.js';

/**
 * The system clock. The only place in the core that reads the wall-clock time.
 * @group Authorization
 */
export const systemClock: Clock = { now: () => Date.now() };
