/**
 * What a conformance case is, and how the case files declare theirs: a case of the core
 * (`conformanceCase`), which every store must pass, or a case of one storage group
 * (`groupCase`), run only on a store that has the group.
 */
import { hasGroup, missingMethods, STORAGE_GROUPS } from '../../storage/groups.js';
import type { Storage, StorageGroup, StorageGroups } from '../../storage/types.js';
import { check } from './check.js';

/**
 * Returns the storage under test. Called once per case; may return the same database each time (every case uses fresh random ids).
 * @group Testing
 */
export type MakeStorage = () => Storage | Promise<Storage>;

/**
 * One check of the contract. `run` throws (a `StorageConformanceError`) when the storage breaks it.
 * @group Testing
 */
export interface StorageConformanceCase {
  readonly name: string;
  /**
   * The storage group the case checks (`StorageGroups`), absent for a case of `CoreStorage`. A
   * group's case passes without checking anything on a store that has none of the group, and
   * fails on one that has part of it.
   */
  readonly group?: StorageGroup;
  run(makeStorage: MakeStorage): Promise<void>;
}

/** A case of `CoreStorage`, named after the rule it checks; `run` gets the storage from `make()`. */
export const conformanceCase = (name: string, run: (makeStorage: MakeStorage) => Promise<void>): StorageConformanceCase => ({ name, run });

/**
 * A case of the storage group `group`: `run` gets the store (from one `make()`) when it has the
 * whole group; a store with none of it passes without running, and one with part of it fails,
 * the message naming the group and the methods it lacks.
 */
export function groupCase<G extends StorageGroup>(
  group: G,
  name: string,
  run: (storage: Storage & StorageGroups[G]) => Promise<void>,
): StorageConformanceCase {
  return {
    name,
    group,
    async run(make) {
      const storage = await make();
      const methods: readonly string[] = STORAGE_GROUPS[group];
      const missing = missingMethods(storage, methods);
      if (missing.length === methods.length) return; // the store does without this group
      check(
        hasGroup(storage, group),
        `a storage with part of the ${group} group must have all of it (${methods.join(', ')}): it lacks ${missing.join(', ')}`,
      );
      await run(storage);
    },
  };
}
