/**
 * Refresh tokens: `rotateRefreshToken` and the families `findRefreshFamily` finds, expiry at the
 * `now` argument, failures that change nothing, and single use under concurrency.
 */
import { conformanceCase, type StorageConformanceCase } from './case.js';
import { check, same, outcome, expectFailure } from './check.js';
import { CONFORMANCE_RACERS, T0, hash, makeGrant, makePair, withCode, withPair, warmUp, isLive } from './fixtures.js';

/** The cases on rotating refresh tokens and their families. */
export const refreshCases: readonly StorageConformanceCase[] = [
  conformanceCase('rotateRefreshToken: marks the token rotated, revokes its paired access token, stores the new pair', async (make) => {
    const storage = await make();
    const { grant, access, refresh } = await withPair(storage);
    const now = T0 + 5000;
    const next = makePair(grant, now);
    const result = await storage.rotateRefreshToken(refresh.hash, now, next);
    check(result.ok, `rotateRefreshToken of a fresh refresh token must succeed, got ${outcome(result)}`);
    same(result.grant, grant, "rotateRefreshToken returns the token's grant");
    same(
      await storage.findToken(refresh.hash),
      { token: { ...refresh, rotatedAt: now }, grant },
      'the old refresh token is kept, marked rotated at now (kept so that reuse is recognised)',
    );
    same(
      await storage.findToken(access.hash),
      { token: { ...access, revokedAt: now }, grant },
      'the access token issued with the old refresh token is revoked at now (a refresh invalidates it)',
    );
    for (const token of next) same(await storage.findToken(token.hash), { token, grant }, `the new ${token.kind} token is stored`);
    // A rotated pair can be rotated again: the chain goes on.
    const third = makePair(grant, now + 1);
    const again = await storage.rotateRefreshToken(next[1].hash, now + 1, third);
    check(again.ok, `the new refresh token can be rotated in turn, got ${outcome(again)}`);
    same((await storage.findToken(next[0].hash))?.token.revokedAt, now + 1, 'and its paired access token is revoked in turn');
  }),

  conformanceCase(
    'findRefreshFamily: finds the grant of a family by any of its stored refresh tokens, through redeemCode, createGrant and rotations',
    async (make) => {
      const storage = await make();
      const family = hash();
      const { grant, code } = await withCode(storage);
      same(await storage.findRefreshFamily(family), null, 'findRefreshFamily of a family no token has yet is null');
      const first = makePair(grant, T0, { familyHash: family });
      check((await storage.redeemCode(code.hash, T0 + 1, first)).ok, 'redeemCode succeeds');
      same(
        await storage.findRefreshFamily(family),
        { grantId: grant.id, clientId: grant.clientId },
        'findRefreshFamily finds the family of a refresh token stored by redeemCode',
      );
      same((await storage.findToken(first[1].hash))?.token, first[1], 'findToken returns the refresh token with its familyHash');
      same((await storage.findToken(first[0].hash))?.token, first[0], 'an access token has no familyHash');
      const second = makePair(grant, T0 + 2, { familyHash: family });
      check((await storage.rotateRefreshToken(first[1].hash, T0 + 2, second)).ok, 'rotation succeeds');
      same(
        await storage.findRefreshFamily(family),
        { grantId: grant.id, clientId: grant.clientId },
        'findRefreshFamily still finds the family after a rotation',
      );
      const other = makeGrant();
      const otherFamily = hash();
      await storage.createGrant(other, { tokens: makePair(other, T0, { familyHash: otherFamily }) });
      same(
        await storage.findRefreshFamily(otherFamily),
        { grantId: other.id, clientId: other.clientId },
        'findRefreshFamily finds a family stored by createGrant',
      );
      same(await storage.findRefreshFamily(hash()), null, 'findRefreshFamily of an unknown family is null');
      const i = family.search(/[A-Za-z]/);
      check(i >= 0, 'a refresh family hash has a letter to change the case of');
      const letter = family.charAt(i);
      const flipped =
        family.slice(0, i) + (letter === letter.toLowerCase() ? letter.toUpperCase() : letter.toLowerCase()) + family.slice(i + 1);
      same(await storage.findRefreshFamily(flipped), null, 'findRefreshFamily with one letter of the hash in another case finds nothing');
    },
  ),

  conformanceCase('rotateRefreshToken: expiry follows the now argument (boundary -1 ms / 0); no expiresAt never expires', async (make) => {
    const storage = await make();
    const { refresh: ok } = await withPair(storage, { expiresAt: T0 + 100 });
    const r1 = await storage.rotateRefreshToken(ok.hash, T0 + 99, []);
    check(r1.ok, `rotateRefreshToken at expiresAt - 1 ms must succeed, got ${outcome(r1)}`);
    const { access, refresh: late } = await withPair(storage, { expiresAt: T0 + 100 });
    expectFailure(await storage.rotateRefreshToken(late.hash, T0 + 100, []), 'expired', 'rotateRefreshToken at now = expiresAt');
    same((await storage.findToken(late.hash))?.token.rotatedAt, null, 'an expired refresh token is not marked rotated');
    same((await storage.findToken(access.hash))?.token.revokedAt, null, 'and its paired access token is not revoked');
    const { refresh: forever } = await withPair(storage, { expiresAt: null });
    const r2 = await storage.rotateRefreshToken(forever.hash, 8_000_000_000_000_000, []);
    check(r2.ok, `a refresh token without expiresAt never expires, got ${outcome(r2)}`);
    const future = 32_503_680_000_000;
    const { refresh: far } = await withPair(storage, { expiresAt: future });
    expectFailure(
      await storage.rotateRefreshToken(far.hash, future, []),
      'expired',
      'rotateRefreshToken at now = expiresAt in the year 3000 (expiry must compare with the now argument, not the wall clock)',
    );
  }),

  conformanceCase(
    'rotateRefreshToken: classifies failures (missing, access token, used, revoked token, revoked grant, expired) and changes nothing',
    async (make) => {
      const storage = await make();
      expectFailure(await storage.rotateRefreshToken(hash(), T0, []), 'missing', 'rotateRefreshToken of an unknown token');
      const { grant, access, refresh } = await withPair(storage);
      expectFailure(await storage.rotateRefreshToken(access.hash, T0, []), 'missing', 'rotateRefreshToken of an access token');
      same((await storage.findToken(access.hash))?.token, access, 'an access token passed to rotateRefreshToken is left unchanged');

      check((await storage.rotateRefreshToken(refresh.hash, T0 + 5, makePair(grant, T0 + 5))).ok, 'first rotation succeeds');
      const replay = makePair(grant, T0 + 6);
      expectFailure(await storage.rotateRefreshToken(refresh.hash, T0 + 6, replay), 'used', 'rotateRefreshToken of a rotated token', {
        grantId: grant.id,
        usedAt: T0 + 5,
      });
      for (const t of replay) same(await storage.findToken(t.hash), null, 'a failed rotation stores none of its tokens');
      same((await storage.findToken(refresh.hash))?.token.rotatedAt, T0 + 5, 'a replay does not change rotatedAt');

      const { grant: g2, access: a2, refresh: revokedToken } = await withPair(storage, { revokedAt: T0 - 1 });
      const tokens2 = makePair(g2, T0);
      expectFailure(
        await storage.rotateRefreshToken(revokedToken.hash, T0, tokens2),
        'revoked',
        'rotateRefreshToken of a revoked refresh token',
      );
      same((await storage.findToken(a2.hash))?.token.revokedAt, null, 'a failed rotation does not revoke the paired access token');
      for (const t of tokens2) same(await storage.findToken(t.hash), null, 'a failed rotation stores none of its tokens');

      const { grant: g3, access: a3, refresh: r3 } = await withPair(storage);
      await storage.revokeGrant(g3.id, T0 + 1);
      expectFailure(
        await storage.rotateRefreshToken(r3.hash, T0 + 2, makePair(g3, T0 + 2)),
        'revoked',
        'rotateRefreshToken of a token whose grant was revoked',
      );
      same((await storage.findToken(r3.hash))?.token.rotatedAt, null, 'a refresh token of a revoked grant is not marked rotated');
      same(
        (await storage.findToken(a3.hash))?.token.revokedAt,
        null,
        'and its access token is not changed (the grant flag already kills it)',
      );
    },
  ),

  conformanceCase(
    `rotateRefreshToken: exactly one of ${CONFORMANCE_RACERS} concurrent rotations wins; one live refresh token remains`,
    async (make) => {
      const storage = await make();
      const { grant, access, refresh } = await withPair(storage);
      const pairs = Array.from({ length: CONFORMANCE_RACERS }, (_, i) => makePair(grant, T0 + 10 + i));
      await warmUp(storage);
      const results = await Promise.all(pairs.map((pair, i) => storage.rotateRefreshToken(refresh.hash, T0 + 10 + i, pair)));
      const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
      const [winner] = winners;
      check(
        winner !== undefined && winners.length === 1,
        `rotateRefreshToken must be single use under concurrency: ${winners.length} of ${CONFORMANCE_RACERS} concurrent rotations succeeded (expected exactly 1). Check, mark rotated, revoke the pair and insert the new pair in one atomic step.`,
      );
      for (const loser of results.filter((r) => !r.ok)) expectFailure(loser, 'used', 'a losing concurrent rotation', { grantId: grant.id });
      const now = T0 + 10 + CONFORMANCE_RACERS;
      let live = 0;
      for (const [i, pair] of pairs.entries()) {
        const found = await storage.findToken(pair[1].hash);
        if (isLive(found, now)) live++;
        if (i !== winner) same(found, null, "no loser's refresh token is stored");
        else check(found, "the winner's new refresh token is stored");
      }
      same(live, 1, "exactly one live refresh token remains in the family (the winner's)");
      check(!isLive(await storage.findToken(refresh.hash), now), 'the old refresh token is no longer live');
      same(
        (await storage.findToken(access.hash))?.token.revokedAt,
        T0 + 10 + winner,
        'the old access token was revoked by the winning rotation',
      );
    },
  ),
];
