/**
 * Authorization codes: `redeemCode` marks a code used, follows the `now` argument, classifies
 * failures without changing anything, and is single use under concurrency.
 */
import { conformanceCase, type StorageConformanceCase } from './case.js';
import { check, canonical, same, outcome, expectFailure } from './check.js';
import { CONFORMANCE_RACERS, T0, hash, makeGrant, makePair, withCode, warmUp } from './fixtures.js';

/** The cases on redeeming codes. */
export const codeCases: readonly StorageConformanceCase[] = [
  conformanceCase('redeemCode: marks the code used at now, stores the tokens, returns the grant', async (make) => {
    const storage = await make();
    const { grant, code } = await withCode(storage);
    const now = T0 + 1234;
    const pair = makePair(grant, now);
    const result = await storage.redeemCode(code.hash, now, pair);
    check(result.ok, `redeemCode of a fresh code must succeed, got ${outcome(result)}`);
    same(result.grant, grant, "redeemCode returns the code's grant");
    same(
      await storage.findCode(code.hash),
      { ...code, usedAt: now },
      'the code is kept, marked used at now (kept so that a replay is recognised)',
    );
    for (const token of pair)
      same(await storage.findToken(token.hash), { token, grant }, `the ${token.kind} token passed to redeemCode is stored`);
  }),

  conformanceCase('redeemCode: expiry follows the now argument (boundary -1 ms / 0), never the wall clock', async (make) => {
    const storage = await make();
    const { code: early } = await withCode(storage, { expiresAt: T0 + 10 });
    const ok = await storage.redeemCode(early.hash, T0 + 9, []);
    check(ok.ok, `redeemCode at expiresAt - 1 ms must succeed, got ${outcome(ok)}`);
    const { code: onTime } = await withCode(storage, { expiresAt: T0 + 10 });
    expectFailure(await storage.redeemCode(onTime.hash, T0 + 10, []), 'expired', 'redeemCode at now = expiresAt');
    same((await storage.findCode(onTime.hash))?.usedAt, null, 'an expired code is not marked used');
    // Expiry is judged by the now argument (the server's clock), not by the database or machine clock.
    const future = 32_503_680_000_000; // year 3000
    const { code: far } = await withCode(storage, { expiresAt: future });
    expectFailure(
      await storage.redeemCode(far.hash, future, []),
      'expired',
      'redeemCode at now = expiresAt, both in the year 3000 (expiry must compare with the now argument, not the wall clock)',
    );
    const { code: old } = await withCode(storage, { expiresAt: 2_000 }, { createdAt: 1_000 });
    const oldOk = await storage.redeemCode(old.hash, 1_999, []);
    check(
      oldOk.ok,
      `redeemCode at now = 1999 of a code expiring at 2000 (both in 1970) must succeed, got ${outcome(oldOk)}: expiry must compare with the now argument, not the wall clock`,
    );
  }),

  conformanceCase(
    'redeemCode: classifies failures (missing, used with grantId and usedAt, expired, revoked) and changes nothing',
    async (make) => {
      const storage = await make();
      const tokens = () => makePair(makeGrant());
      expectFailure(await storage.redeemCode(hash(), T0, []), 'missing', 'redeemCode of an unknown code');

      const { grant, code } = await withCode(storage);
      check((await storage.redeemCode(code.hash, T0 + 5, [])).ok, 'first redemption succeeds');
      const replayTokens = makePair(grant, T0 + 6);
      expectFailure(await storage.redeemCode(code.hash, T0 + 6, replayTokens), 'used', 'redeemCode of a used code', {
        grantId: grant.id,
        usedAt: T0 + 5,
      });
      for (const t of replayTokens) same(await storage.findToken(t.hash), null, 'a failed redemption stores none of its tokens');
      same((await storage.findCode(code.hash))?.usedAt, T0 + 5, 'a replay does not change usedAt');
      expectFailure(
        await storage.redeemCode(code.hash, code.expiresAt + 1, []),
        'used',
        'redeemCode of a used code after it expired (a replay stays a replay, so the family can still be revoked)',
        { grantId: grant.id, usedAt: T0 + 5 },
      );

      const { code: expired } = await withCode(storage);
      const expiredTokens = tokens();
      expectFailure(await storage.redeemCode(expired.hash, expired.expiresAt, expiredTokens), 'expired', 'redeemCode of an expired code');
      for (const t of expiredTokens) same(await storage.findToken(t.hash), null, 'a failed redemption stores none of its tokens');

      const { grant: revokedGrant, code: revoked } = await withCode(storage);
      await storage.revokeGrant(revokedGrant.id, T0 + 1);
      const revokedTokens = makePair(revokedGrant, T0 + 2);
      expectFailure(
        await storage.redeemCode(revoked.hash, T0 + 2, revokedTokens),
        'revoked',
        'redeemCode of a code whose grant was revoked',
      );
      same((await storage.findCode(revoked.hash))?.usedAt, null, 'a code of a revoked grant is not marked used');
      for (const t of revokedTokens) same(await storage.findToken(t.hash), null, 'a failed redemption stores none of its tokens');
    },
  ),

  conformanceCase(
    `redeemCode: exactly one of ${CONFORMANCE_RACERS} concurrent redemptions wins; the others see 'used' with the grantId`,
    async (make) => {
      const storage = await make();
      const { grant, code } = await withCode(storage);
      const pairs = Array.from({ length: CONFORMANCE_RACERS }, (_, i) => makePair(grant, T0 + 10 + i));
      await warmUp(storage);
      const results = await Promise.all(pairs.map((pair, i) => storage.redeemCode(code.hash, T0 + 10 + i, pair)));
      const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
      const [winner] = winners;
      check(
        winner !== undefined && winners.length === 1,
        `redeemCode must be single use under concurrency: ${winners.length} of ${CONFORMANCE_RACERS} concurrent redemptions succeeded (expected exactly 1). The check (unused, unexpired, grant not revoked) and the write must be one atomic step: a conditional UPDATE ... WHERE used_at IS NULL ... RETURNING, a script, or no await in between.`,
      );
      const losers = results.filter((r) => !r.ok);
      for (const loser of losers) expectFailure(loser, 'used', 'a losing concurrent redemption', { grantId: grant.id });
      same(
        losers.every((l) => l.usedAt === T0 + 10 + winner),
        true,
        `every loser reports usedAt = the winner's time (${T0 + 10 + winner}); got ${canonical(losers.map((l) => l.usedAt))}`,
      );
      for (const [i, pair] of pairs.entries()) {
        for (const token of pair) {
          const found = await storage.findToken(token.hash);
          if (i === winner) check(found, "the winner's tokens are stored");
          else same(found, null, "no loser's tokens are stored");
        }
      }
    },
  ),
];
