/**
 * The assertions of the kit, without a test framework: each throws a `StorageConformanceError`
 * whose message names the rule that was broken.
 */
import type { SingleUseOutcome } from '../../storage/types.js';

/**
 * A broken rule of the storage contract.
 * @group Testing
 */
export class StorageConformanceError extends Error {
  override readonly name = 'StorageConformanceError';
}

/** Throw `message` unless `condition` holds. */
export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new StorageConformanceError(message);
}

/** A stable JSON form: keys sorted, `undefined` properties dropped (as `toEqual` treats them). */
export function canonical(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) => {
      if (v && typeof v === 'object' && !Array.isArray(v)) {
        return Object.fromEntries(
          Object.entries(v as Record<string, unknown>)
            .filter(([, x]) => x !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : 1)),
        );
      }
      return v;
    }) ?? 'undefined'
  );
}

/** Throw unless `actual` and `expected` have the same canonical form; `what` says what was compared. */
export function same(actual: unknown, expected: unknown, what: string): void {
  const a = canonical(actual);
  const e = canonical(expected);
  if (a !== e) throw new StorageConformanceError(`${what}\n  expected: ${e}\n  received: ${a}`);
}

/** A sorted copy, to compare sets of values (scopes) whatever their order. */
export const sorted = (values: readonly string[]) => [...values].sort();

/** A single-use outcome, short, for messages. */
export function outcome(o: SingleUseOutcome): string {
  return o.ok ? 'ok' : `${o.reason}${o.grantId ? ` (grantId ${o.grantId})` : ''}`;
}

/**
 * Throw unless `o` failed for `reason`, carrying `extra.grantId` and `extra.usedAt` when given
 * (a caller needs them to revoke the family of a replayed code or refresh token).
 */
export function expectFailure(o: SingleUseOutcome, reason: string, what: string, extra: { grantId?: string; usedAt?: number } = {}): void {
  check(!o.ok, `${what}: expected { ok: false, reason: '${reason}' }, got ${canonical(o)}`);
  check(o.reason === reason, `${what}: expected reason '${reason}', got '${o.reason}'`);
  if (extra.grantId !== undefined)
    check(
      o.grantId === extra.grantId,
      `${what}: a '${reason}' outcome must carry the grantId (${extra.grantId}) so the caller can revoke the family; got ${canonical(o.grantId)}`,
    );
  if (extra.usedAt !== undefined)
    check(
      o.usedAt === extra.usedAt,
      `${what}: a '${reason}' outcome must carry usedAt = the time of the first use (${extra.usedAt}); got ${canonical(o.usedAt)}`,
    );
}
