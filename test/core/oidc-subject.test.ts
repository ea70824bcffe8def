/**
 * Subject identifiers (src/oidc/subject.ts; OpenID Connect Core §2, §8): public by default
 * (the account's uuid or the host's mapping), pairwise per sector on request (Core §8.1).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/index.js';
import { pairwiseSubject, sectorIdentifier, Subjects } from '../../src/oidc/subject.js';
import { ADA, BOB } from '../fixtures.js';

const SALT = 'a-secret-salt-of-at-least-32-characters';
const client = (redirectUri: string, subjectType?: 'public' | 'pairwise') => ({ redirectUri, subjectType });

describe('public subjects', () => {
  it("are the account's uuid, the same for every client", () => {
    const subjects = new Subjects();
    expect(subjects.types).toEqual(['public']);
    expect(subjects.for(ADA, client('https://client.example/cb'))).toBe(ADA.uuid);
    expect(subjects.for(ADA, client('https://other.example/cb'))).toBe(ADA.uuid);
    expect(subjects.for(BOB, client('https://client.example/cb'))).toBe(BOB.uuid);
  });

  it("or what the host's function maps the account to, checked (Core §2: at most 255 ASCII characters)", () => {
    expect(new Subjects({ subject: (a) => `user-${a.uuid}` }).for(ADA, client('https://client.example/cb'))).toBe(`user-${ADA.uuid}`);
    for (const bad of ['', 'x'.repeat(256), 'héllo', 'with space', 42 as unknown as string])
      expect(() => new Subjects({ subject: () => bad }).local(ADA)).toThrow(TypeError);
    expect(new Subjects({ subject: () => 'x'.repeat(255) }).local(ADA)).toHaveLength(255);
  });
});

describe('pairwise subjects (Core §8.1)', () => {
  const subjects = new Subjects({ pairwise: { salt: SALT } });

  it('are SHA-256 of sector, local sub and salt, base64url: computed here independently', () => {
    const expected = createHash('sha256').update(`client.example ${ADA.uuid}${SALT}`).digest('base64url');
    expect(subjects.for(ADA, client('https://client.example/cb', 'pairwise'))).toBe(expected);
    expect(pairwiseSubject('client.example', ADA.uuid, SALT)).toBe(expected);
    expect(subjects.types).toEqual(['public', 'pairwise']);
  });

  it('are stable per sector, differ across sectors and accounts; public clients still get the public sub', () => {
    const sub = (redirectUri: string, account = ADA) => subjects.for(account, client(redirectUri, 'pairwise'));
    // One sector: the host of the redirect URI, whatever its path, port or letter case.
    expect(sub('https://client.example/cb')).toBe(sub('https://CLIENT.example:8443/other/path?x=1'));
    expect(sub('https://client.example/cb')).not.toBe(sub('https://other.example/cb'));
    expect(sub('https://client.example/cb')).not.toBe(sub('https://client.example/cb', BOB));
    expect(sub('https://client.example/cb')).not.toContain(ADA.uuid);
    expect(subjects.for(ADA, client('https://client.example/cb', 'public'))).toBe(ADA.uuid);
    // Another salt, another subject: the salt must never change.
    expect(new Subjects({ pairwise: { salt: `${SALT}!` } }).for(ADA, client('https://client.example/cb', 'pairwise'))).not.toBe(
      sub('https://client.example/cb'),
    );
  });

  it('the sector of a private-use scheme is the scheme; loopback clients share theirs', () => {
    expect(sectorIdentifier('com.example.app:/callback')).toBe('com.example.app');
    expect(sectorIdentifier('http://127.0.0.1:51234/cb')).toBe('127.0.0.1');
    expect(sectorIdentifier('https://Client.Example/cb')).toBe('client.example');
  });

  it('sector and local sub cannot run into each other', () => {
    expect(pairwiseSubject('a.co', 'm1', SALT)).not.toBe(pairwiseSubject('a.com', '1', SALT));
  });

  it('a pairwise client without the option is an error; a short salt is a ConfigError', () => {
    expect(() => new Subjects().for(ADA, client('https://client.example/cb', 'pairwise'))).toThrow(/pairwise subjects are off/);
    expect(() => new Subjects({ pairwise: { salt: 'short' } }, 'openid')).toThrow(ConfigError);
    expect(() => new Subjects({ pairwise: { salt: 'short' } }, 'openid')).toThrow(/openid.pairwise.salt/);
    expect(() => new Subjects({ subject: 'uuid' as unknown as () => string })).toThrow(/openid.subject/);
  });
});
