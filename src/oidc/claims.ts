/**
 * Which of the host's claims a client gets, by the scope it was granted (OpenID Connect Core
 * §5.4), with the types of Core §5.1. The host's claims function returns what it knows about an
 * account; this keeps only what the scope allows, in the right types, and nothing else: no
 * `sub` (the provider sets it, Core §5.3.2), no claim nobody declared.
 */
import { ConfigError } from '../errors.js';
import { PROTOCOL_CLAIMS } from './id-token.js';

/** Core §5.4: the standard claims each scope asks for. */
export const SCOPE_CLAIMS: Readonly<Record<'profile' | 'email' | 'address' | 'phone', readonly string[]>> = {
  profile: [
    'name',
    'family_name',
    'given_name',
    'middle_name',
    'nickname',
    'preferred_username',
    'profile',
    'picture',
    'website',
    'gender',
    'birthdate',
    'zoneinfo',
    'locale',
    'updated_at',
  ],
  email: ['email', 'email_verified'],
  address: ['address'],
  phone: ['phone_number', 'phone_number_verified'],
};

/** Core §5.1.1: the members of `address`, all strings. */
const ADDRESS_MEMBERS = ['formatted', 'street_address', 'locality', 'region', 'postal_code', 'country'] as const;
const BOOLEANS = new Set(['email_verified', 'phone_number_verified']);

/**
 * The claims option: more claims per scope besides Core §5.4's, e.g.
 * `{ scopes: { profile: ['team'], groups: ['groups'] } }` (a scope named here that the server
 * does not offer is never granted, so its claims are never sent). A host's claim may hold any
 * JSON value; a standard claim keeps its Core §5.1 type wherever it is declared.
 */
export interface ClaimsOptions {
  scopes?: Readonly<Record<string, readonly string[]>>;
}

/** The claims per scope, resolved once (`claimsPolicy`). */
export interface ClaimsPolicy {
  readonly byScope: ReadonlyMap<string, readonly string[]>;
  /** Scopes that carry claims, for `scopes_supported` (Discovery 1.0 §3). */
  readonly scopes: readonly string[];
  /** Every claim a client can get, `sub` first, for `claims_supported` (Discovery 1.0 §3). */
  readonly supported: readonly string[];
}

/** RFC 6749 §3.3 scope-token. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const CLAIM_NAME = /^[A-Za-z0-9_.:$-]{1,100}$/;
const FORBIDDEN_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Resolve the claims option (`option`: the path a `ConfigError` names).
 * @throws ConfigError for a bad scope name, a bad claim name, or a claim the protocol sets.
 */
export function claimsPolicy(options: ClaimsOptions = {}, option = 'claims'): ClaimsPolicy {
  const byScope = new Map<string, string[]>(Object.entries(SCOPE_CLAIMS).map(([scope, claims]) => [scope, [...claims]]));
  for (const [scope, claims] of Object.entries(options.scopes ?? {})) {
    const where = `${option}.scopes.${scope}`;
    if (!SCOPE_TOKEN.test(scope)) throw new ConfigError(where, 'expected a scope name (RFC 6749 section 3.3)');
    if (!Array.isArray(claims)) throw new ConfigError(where, 'expected an array of claim names');
    for (const claim of claims) {
      if (typeof claim !== 'string' || !CLAIM_NAME.test(claim) || FORBIDDEN_NAMES.has(claim))
        throw new ConfigError(where, 'expected claim names of letters, digits and _ . : $ -, at most 100 characters');
      if (PROTOCOL_CLAIMS.has(claim)) throw new ConfigError(where, `"${claim}" is set by the protocol, never by the host's claims`);
      const list = byScope.get(scope) ?? [];
      if (!list.includes(claim)) list.push(claim);
      byScope.set(scope, list);
    }
  }
  const supported = new Set(['sub']);
  for (const claims of byScope.values()) for (const claim of claims) supported.add(claim);
  return { byScope, scopes: [...byScope.keys()], supported: [...supported] };
}

/** A standard claim in its Core §5.1 type, or `undefined` (dropped). */
function standardValue(name: string, value: unknown): unknown {
  if (BOOLEANS.has(name)) return typeof value === 'boolean' ? value : undefined;
  if (name === 'updated_at') return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
  if (name === 'address') {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    const address: Record<string, string> = {};
    for (const member of ADDRESS_MEMBERS) {
      const part = (value as Record<string, unknown>)[member];
      if (typeof part === 'string' && part.length > 0) address[member] = part;
    }
    return Object.keys(address).length > 0 ? address : undefined;
  }
  // Core §5.3.2: a claim without a value is omitted, never an empty string.
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

const STANDARD = new Set(Object.values(SCOPE_CLAIMS).flat());

/**
 * A copy of a JSON value (RFC 8259), or `undefined` when it holds anything else (a function, a
 * non-finite number, a class instance, more than 8 levels): such a claim is dropped whole,
 * never sent cut down. An `undefined` member is left out, as `JSON.stringify` does.
 */
function jsonValue(value: unknown, depth = 0): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'object' || depth >= 8) return undefined;
  if (Array.isArray(value)) {
    const items = value.map((item) => jsonValue(item, depth + 1));
    return items.includes(undefined) ? undefined : items;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return undefined;
  // A null prototype: a member named `__proto__` stays a member.
  const out: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined) continue;
    const item = jsonValue(member, depth + 1);
    if (item === undefined) return undefined;
    out[key] = item;
  }
  return out;
}

/**
 * The claims a client granted `scope` gets from `claims` (what the host's claims function
 * returned): for each granted scope its claims (`policy.byScope`), each in its type; anything
 * else dropped, `sub` included. Never throws: a host's odd value is left out, not sent.
 */
export function filterClaims(policy: ClaimsPolicy, scope: readonly string[], claims: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return out;
  const source = claims as Record<string, unknown>;
  for (const granted of scope) {
    for (const name of policy.byScope.get(granted) ?? []) {
      if (!Object.hasOwn(source, name) || Object.hasOwn(out, name)) continue;
      const value = STANDARD.has(name) ? standardValue(name, source[name]) : jsonValue(source[name]);
      // Core §5.3.2: a claim without a value is omitted, never null.
      if (value !== undefined && value !== null) out[name] = value;
    }
  }
  return out;
}
