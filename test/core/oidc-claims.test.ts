/**
 * Claims by scope (src/oidc/claims.ts; OpenID Connect Core §5.1, §5.4): only what the granted
 * scope allows, in the types of Core §5.1, no `sub`, nothing undeclared; the host's extra
 * claims per scope; `claims_supported`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/index.js';
import { claimsPolicy, filterClaims, SCOPE_CLAIMS } from '../../src/oidc/claims.js';

/** Everything a host's claims function might return about Ada, and more. */
const ADA = {
  sub: 'not-from-the-host',
  name: 'Ada Lovelace',
  given_name: 'Ada',
  family_name: 'Lovelace',
  nickname: '',
  picture: 'https://img.example/ada.png',
  updated_at: 1_700_000_000,
  locale: 'en-GB',
  email: 'ada@example.com',
  email_verified: true,
  phone_number: '+44 20 7946 0000',
  phone_number_verified: false,
  address: { street_address: '12 St James Sq', locality: 'London', country: 'UK', planet: 'Earth', region: 7 },
  team: 'engines',
  groups: ['analysts', 'admins'],
  password_hash: '$2b$...',
  iss: 'https://evil.example',
};

describe('filterClaims', () => {
  const policy = claimsPolicy();

  it('keeps per scope exactly its Core §5.4 claims, and never sub', () => {
    expect(filterClaims(policy, ['openid'], ADA)).toEqual({});
    expect(filterClaims(policy, ['openid', 'email'], ADA)).toEqual({ email: 'ada@example.com', email_verified: true });
    expect(filterClaims(policy, ['openid', 'profile'], ADA)).toEqual({
      name: 'Ada Lovelace',
      given_name: 'Ada',
      family_name: 'Lovelace',
      picture: 'https://img.example/ada.png',
      updated_at: 1_700_000_000,
      locale: 'en-GB',
    });
    expect(filterClaims(policy, ['phone', 'address'], ADA)).toEqual({
      phone_number: '+44 20 7946 0000',
      phone_number_verified: false,
      address: { street_address: '12 St James Sq', locality: 'London', country: 'UK' },
    });
    expect(filterClaims(policy, ['openid', 'profile', 'email', 'address', 'phone', 'read'], ADA)).not.toHaveProperty('sub');
  });

  it('drops values of the wrong type, empty strings and empty addresses (Core §5.1, §5.3.2)', () => {
    const wrong = {
      name: 42,
      given_name: '',
      email: ['ada@example.com'],
      email_verified: 'true',
      phone_number_verified: 1,
      updated_at: '2024-01-01',
      address: { country: 3 },
      locale: null,
    };
    expect(filterClaims(policy, ['profile', 'email', 'phone', 'address'], wrong)).toEqual({});
    expect(filterClaims(policy, ['profile'], { updated_at: Number.NaN, zoneinfo: 'Europe/London' })).toEqual({ zoneinfo: 'Europe/London' });
    expect(filterClaims(policy, ['address'], { address: 'London' })).toEqual({});
  });

  it('answers nothing, and never throws, for claims that are not an object', () => {
    for (const value of [undefined, null, 'ada', 7, ['name'], true]) expect(filterClaims(policy, ['profile'], value)).toEqual({});
  });

  it('never returns a claim the scope does not name, whatever the host returns (property)', () => {
    const allowed = new Set([...SCOPE_CLAIMS.profile, ...SCOPE_CLAIMS.email]);
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(fc.constantFrom(...Object.keys(ADA)), fc.string()), fc.jsonValue()), (claims) => {
        const out = filterClaims(policy, ['openid', 'profile', 'email'], claims);
        for (const name of Object.keys(out)) expect(allowed.has(name)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe("the host's claims per scope", () => {
  it('adds declared claims to a standard or a new scope, any JSON value, copied', () => {
    const policy = claimsPolicy({ scopes: { profile: ['team'], groups: ['groups'] } });
    expect(filterClaims(policy, ['profile'], ADA)).toMatchObject({ name: 'Ada Lovelace', team: 'engines' });
    expect(filterClaims(policy, ['profile'], ADA)).not.toHaveProperty('groups');
    const groups = filterClaims(policy, ['groups'], ADA);
    expect(groups).toEqual({ groups: ['analysts', 'admins'] });
    expect(groups.groups).not.toBe(ADA.groups);
    expect(filterClaims(policy, ['groups'], { groups: [1, { a: true, b: undefined }] })).toEqual({ groups: [1, { a: true }] });
  });

  it('drops a declared claim that is not JSON: functions, NaN, class instances, too deep', () => {
    const policy = claimsPolicy({ scopes: { x: ['f', 'n', 'd', 'deep', 'ok', 'list', 'nested'] } });
    let deep: unknown = 'bottom';
    for (let i = 0; i < 10; i++) deep = { deep };
    const holes = { list: [1, () => 2], nested: { when: new Date(0) } };
    expect(filterClaims(policy, ['x'], { f: () => 1, n: Number.POSITIVE_INFINITY, d: new Date(0), deep, ok: null, ...holes })).toEqual({});
    expect(filterClaims(claimsPolicy({ scopes: { x: ['ok'] } }), ['x'], { ok: { a: null, b: [null] } })).toEqual({
      ok: { a: null, b: [null] },
    });
  });

  it('a standard claim keeps its type wherever it is declared', () => {
    const policy = claimsPolicy({ scopes: { profile: ['email_verified'] } });
    expect(filterClaims(policy, ['profile'], { email_verified: 'yes' })).toEqual({});
    expect(filterClaims(policy, ['profile'], { email_verified: true })).toEqual({ email_verified: true });
  });

  it('refuses protocol claims, odd names and odd scopes with a ConfigError naming the scope', () => {
    const refused = (scopes: Record<string, unknown>, option: string, message: RegExp) => {
      let error: unknown;
      try {
        claimsPolicy({ scopes: scopes as Record<string, string[]> }, 'openid.claims');
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).option).toBe(option);
      expect((error as ConfigError).message).toMatch(message);
    };
    for (const claim of ['sub', 'iss', 'aud', 'nonce', 'auth_time', 'at_hash', 'acr', 'amr', 'sid', 'azp'])
      refused({ profile: [claim] }, 'openid.claims.scopes.profile', /set by the protocol/);
    refused({ profile: ['__proto__'] }, 'openid.claims.scopes.profile', /claim names/);
    refused({ profile: ['has space'] }, 'openid.claims.scopes.profile', /claim names/);
    refused({ profile: 'team' }, 'openid.claims.scopes.profile', /array/);
    refused({ 'a"b': ['team'] }, 'openid.claims.scopes.a"b', /scope name/);
  });
});

describe('claims_supported', () => {
  it('is sub, then every claim of every scope, once', () => {
    expect(claimsPolicy().supported).toEqual(['sub', ...SCOPE_CLAIMS.profile, ...SCOPE_CLAIMS.email, 'address', ...SCOPE_CLAIMS.phone]);
    const policy = claimsPolicy({ scopes: { profile: ['team', 'name'], email: ['team'], groups: ['groups'] } });
    expect(policy.supported.filter((claim) => claim === 'team')).toEqual(['team']);
    expect(policy.supported.at(-1)).toBe('groups');
    expect(new Set(policy.supported).size).toBe(policy.supported.length);
    expect(policy.byScope.get('email')).toEqual(['email', 'email_verified', 'team']);
    expect(policy.scopes).toEqual(['profile', 'email', 'address', 'phone', 'groups']);
  });
});
