/**
 * Scope. By default the vocabulary of docs/reference.md#scope: absent means `read`; `read` or
 * `read write` (either order); anything else is invalid, and parsing is exact (`READ`,
 * `read,write`, `read  write` and `write` are invalid). `read` allows GET and HEAD; `write` adds
 * every other method. A host can declare its own vocabulary and rule instead (`scopes` option).
 */

export type ScopeValue = 'read' | 'write';

/**
 * A host's own scope vocabulary (the `scopes` option).
 * @group Resource
 */
export interface ScopeOptions {
  /** Every scope value the server knows, e.g. `['account:read', 'droplet:create']`. */
  values: string[];
  /** The scope of a request that names none. */
  default: string[];
  /** Whether a token with `scope` may make this resource request. */
  allows: (scope: readonly string[], request: { method: string; url: string }) => boolean;
  /** Plain words for the consent page, by scope value. */
  descriptions?: Record<string, string>;
}

/**
 * Parse a `scope` parameter with the default vocabulary. `undefined` is `read`; `null` means invalid.
 * @group Resource
 */
export function parseScope(value: string | undefined): ScopeValue[] | null {
  if (value === undefined) return ['read'];
  if (value === 'read') return ['read'];
  if (value === 'read write' || value === 'write read') return ['read', 'write'];
  return null;
}

/**
 * The wire form of a scope of the default vocabulary, always in canonical order (`read write`).
 * @group Resource
 */
export function formatScope(scope: readonly string[]): string {
  return ['read', 'write'].filter((s) => scope.includes(s)).join(' ');
}

/** Whether every value of `requested` is in `granted`. */
export function covers(granted: readonly string[], requested: readonly string[]): boolean {
  return requested.every((s) => granted.includes(s));
}

const READ_METHODS = new Set(['GET', 'HEAD']);

/**
 * The scope a resource request needs (docs/reference.md#scope): GET and HEAD need `read`;
 * DELETE, PUT, POST, PATCH and any other method need `write` (unknown methods are denied by
 * default).
 * @group Resource
 */
export function requiredScope(method: string): ScopeValue {
  if (method === 'GET') return 'read'; // the common case, without upper-casing
  return READ_METHODS.has(method.toUpperCase()) ? 'read' : 'write';
}

/** What each value of the default vocabulary means to a user. */
const DEFAULT_WORDS: Record<string, string> = {
  read: 'See your account and resources (read-only).',
  write: 'Create, change and delete resources in your account.',
};

/**
 * Parsing, formatting and checking of scope, for the default vocabulary or a host's own.
 * @group Resource
 */
export class ScopePolicy {
  constructor(private readonly custom?: ScopeOptions) {}

  /** Every known value (for metadata). */
  get values(): string[] {
    return this.custom ? [...this.custom.values] : ['read', 'write'];
  }

  /** `undefined` (absent or empty) is the default; `null` means invalid, unknown or malformed. */
  parse(value: string | undefined): string[] | null {
    const custom = this.custom;
    if (!custom) return parseScope(value);
    if (value === undefined) return [...custom.default];
    const parts = value.split(' ');
    if (parts.some((p) => !custom.values.includes(p)) || new Set(parts).size !== parts.length) return null;
    return custom.values.filter((v) => parts.includes(v));
  }

  /** The wire form, in vocabulary order. */
  format(scope: readonly string[]): string {
    return this.custom ? this.custom.values.filter((v) => scope.includes(v)).join(' ') : formatScope(scope);
  }

  /** Whether a token's scope allows a resource request; `needed` names the scope it lacks (default vocabulary only). */
  check(scope: readonly string[], request: { method: string; url: string }): { ok: true } | { ok: false; needed?: string } {
    // A copy for the host's rule: `scope` may be a store's own array (Storage.readToken).
    if (this.custom) return this.custom.allows([...scope], request) ? { ok: true } : { ok: false };
    const needed = requiredScope(request.method);
    return scope.includes(needed) ? { ok: true } : { ok: false, needed: needed === 'write' ? 'read write' : 'read' };
  }

  /** Plain words for a scope value on the consent page. */
  describe(value: string): string {
    // Own entries only: a host's scope value may be named `constructor` or `toString`.
    const words = this.custom ? this.custom.descriptions : DEFAULT_WORDS;
    return (words && Object.hasOwn(words, value) ? words[value] : undefined) ?? value;
  }
}
