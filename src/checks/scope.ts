/**
 * Scope (SPEC 2.5): absent means `read`; `read` or `read write` (either order); anything else
 * is invalid. Parsing is exact: `READ`, `read,write`, `read  write` and `write` are invalid.
 */

export type ScopeValue = 'read' | 'write';

/** Parse a `scope` parameter. `undefined` (absent or empty) is `read`; `null` means invalid. */
export function parseScope(value: string | undefined): ScopeValue[] | null {
  if (value === undefined) return ['read'];
  if (value === 'read') return ['read'];
  if (value === 'read write' || value === 'write read') return ['read', 'write'];
  return null;
}

/** The wire form, always in canonical order (`read write`). */
export function formatScope(scope: readonly string[]): string {
  return ['read', 'write'].filter((s) => scope.includes(s)).join(' ');
}

/** Whether every value of `requested` is in `granted`. */
export function covers(granted: readonly string[], requested: readonly string[]): boolean {
  return requested.every((s) => granted.includes(s));
}

const READ_METHODS = new Set(['GET', 'HEAD']);

/**
 * The scope a resource request needs (SPEC 2.5): GET and HEAD need `read`; DELETE, PUT, POST,
 * PATCH and any other method need `write` (unknown methods are denied by default).
 */
export function requiredScope(method: string): ScopeValue {
  return READ_METHODS.has(method.toUpperCase()) ? 'read' : 'write';
}
