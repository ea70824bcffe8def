/**
 * DPoP proofs seen (the `dpopProofs` group, `DpopProofStorage`; a storage without it passes these
 * cases, one with part of it fails them): `rememberDpopProof` is an atomic insert-if-absent whose
 * entries lapse at their `expiresAt`, so a proof is accepted once, by exactly one of any number
 * of concurrent callers (RFC 9449 §11.1).
 */
import { groupCase, type StorageConformanceCase } from './case.js';
import { check, same } from './check.js';
import { CONFORMANCE_RACERS, T0, hash, warmUp } from './fixtures.js';

/** The cases on DPoP proofs seen. */
export const dpopCases: readonly StorageConformanceCase[] = [
  groupCase(
    'dpopProofs',
    'DPoP proofs (optional): rememberDpopProof answers true for a new key, false for it again until its expiresAt, and true once it has passed (the new expiry then holds); other keys are independent',
    async (storage) => {
      const key = hash();
      const other = hash();
      const until = T0 + 60_000;
      same(await storage.rememberDpopProof(key, until, T0), true, 'a key never seen is remembered');
      same(await storage.rememberDpopProof(key, until, T0), false, 'the same key again is refused');
      same(
        await storage.rememberDpopProof(key, until + 60_000, until - 1),
        false,
        'refused up to the last millisecond before its expiresAt',
      );
      same(await storage.rememberDpopProof(other, until, T0 + 1), true, 'another key is independent');
      same(await storage.rememberDpopProof(key, until + 60_000, until), true, 'at its expiresAt the key counts as absent and is replaced');
      same(await storage.rememberDpopProof(key, until + 60_000, until + 1), false, 'the replaced key holds until its new expiresAt');
      same(await storage.rememberDpopProof(key, until + 120_000, until + 60_000), true, 'and lapses at the new expiresAt');
    },
  ),
  groupCase(
    'dpopProofs',
    `DPoP proofs (optional): of ${CONFORMANCE_RACERS} concurrent rememberDpopProof calls with one key exactly one answers true`,
    async (storage) => {
      await warmUp(storage);
      for (const expired of [false, true]) {
        const key = hash();
        // The second round races over a key whose earlier entry has expired: still one winner.
        if (expired) same(await storage.rememberDpopProof(key, T0 + 10, T0), true, 'a key never seen is remembered');
        const now = expired ? T0 + 10 : T0;
        const answers = await Promise.all(
          Array.from({ length: CONFORMANCE_RACERS }, () => storage.rememberDpopProof(key, now + 60_000, now)),
        );
        const won = answers.filter((answer) => answer === true).length;
        check(
          won === 1,
          `${won} of ${CONFORMANCE_RACERS} concurrent callers were told the proof is new (${expired ? 'over an expired entry' : 'a new key'}): exactly one must be`,
        );
      }
    },
  ),
];
