/** The storage conformance kit against the reference implementation, MemoryStorage. */
import { describe, it } from 'vitest';
import { MemoryStorage } from '../../src/index.js';
import { describeStorageConformance } from '../../src/testing/index.js';

describeStorageConformance('MemoryStorage', () => new MemoryStorage(), { describe, it });
