import { describe, expect, it, vi } from 'vitest';
import * as crypto from '../../src/crypto.js';
import { setup } from '../helpers.js';

vi.mock('../../src/crypto.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/crypto.js')>();
  return { ...original, sha256Base64url: vi.fn(original.sha256Base64url), timingSafeEqual: vi.fn(original.timingSafeEqual) };
});

/**
 * SECURITY.md CA-09: an unknown client costs the same work as a wrong secret, so timing tells
 * nothing.
 */
describe('client authentication timing', () => {
  it('unknown client and wrong secret each run one hash and one constant-time comparison', async () => {
    const t = await setup();
    const hash = vi.mocked(crypto.sha256Base64url);
    const compare = vi.mocked(crypto.timingSafeEqual);
    hash.mockClear();
    compare.mockClear();
    await t.exchange('c', { client_id: 'unknown-client', client_secret: 'guess' });
    const unknown = [hash.mock.calls.length, compare.mock.calls.length];
    hash.mockClear();
    compare.mockClear();
    await t.exchange('c', { client_secret: 'guess' });
    expect([hash.mock.calls.length, compare.mock.calls.length]).toEqual(unknown);
    // One hash of the presented secret and one constant-time comparison; and the code's hash,
    // taken before the client is checked so that the store can read both at once (combinedReads).
    expect(unknown).toEqual([2, 1]);
  });
});
