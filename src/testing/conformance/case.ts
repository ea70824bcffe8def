/**
 * What a conformance case is, and how the case files declare theirs.
 */
import type { Storage } from '../../storage/types.js';

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
  run(makeStorage: MakeStorage): Promise<void>;
}

/** A case named after the rule it checks; `run` gets the storage from `make()`. */
export const conformanceCase = (name: string, run: (makeStorage: MakeStorage) => Promise<void>): StorageConformanceCase => ({ name, run });
