/**
 * Grants: `createGrant` with a code or with tokens, and the lookups that find them (`findCode`,
 * `findToken`, and `readToken` when the storage has it).
 */
import { conformanceCase, type StorageConformanceCase } from './case.js';
import { check, same, outcome } from './check.js';
import { T0, hash, makeGrant, makeAccess, makePair, withCode, withPair } from './fixtures.js';

/** The cases on creating grants and finding codes and tokens. */
export const grantCases: readonly StorageConformanceCase[] = [
  conformanceCase('grants: createGrant stores the grant with its code or its tokens; findCode and findToken round trip', async (make) => {
    const storage = await make();
    const { grant, code } = await withCode(storage, { codeChallenge: hash(), codeChallengeMethod: 'S256' });
    same(await storage.findCode(code.hash), code, 'findCode returns the code saved with its grant (PKCE fields too)');
    const plain = makeGrant({ scope: ['read'] });
    const access = makeAccess(plain);
    await storage.createGrant(plain, { tokens: [access] });
    same(
      await storage.findToken(access.hash),
      { token: access, grant: plain },
      'findToken returns the token and its grant (an implicit-flow grant created with its access token)',
    );
    const { grant: g2, access: a2, refresh } = await withPair(storage, { expiresAt: T0 + 1_000_000 });
    same(
      await storage.findToken(refresh.hash),
      { token: refresh, grant: g2 },
      'findToken returns a refresh token with its pairHash and expiry',
    );
    same(await storage.findToken(a2.hash), { token: a2, grant: g2 }, 'findToken returns the access token of the pair');
    same(await storage.findCode(hash()), null, 'findCode of an unknown hash is null');
    same(await storage.findToken(hash()), null, 'findToken of an unknown hash is null');
    const redeemed = await storage.redeemCode(code.hash, T0, []);
    check(redeemed.ok, `the code stored by createGrant can be redeemed, got ${outcome(redeemed)}`);
    same((await storage.findCode(code.hash))?.grantId, grant.id, 'the code belongs to its grant');
  }),

  conformanceCase('readToken (optional): when a storage has it, it answers what findToken answers, in every state', async (make) => {
    const storage = await make();
    const readToken = storage.readToken;
    if (!readToken) return; // optional: the core falls back to findToken
    const read = (hash: string) => readToken.call(storage, hash);
    const { grant, access, refresh } = await withPair(storage, { expiresAt: T0 + 1_000_000 });
    same(await read(access.hash), await storage.findToken(access.hash), 'readToken of a live access token answers what findToken answers');
    same(await read(refresh.hash), { token: refresh, grant }, 'readToken of a refresh token gives it with its grant');
    same(await read(hash()), null, 'readToken of an unknown hash is null');
    const next = makePair(grant, T0 + 5);
    check((await storage.rotateRefreshToken(refresh.hash, T0 + 5, next)).ok, 'rotation succeeds');
    same(await read(refresh.hash), await storage.findToken(refresh.hash), 'readToken shows a rotated refresh token as findToken does');
    same((await read(access.hash))?.token.revokedAt, T0 + 5, 'readToken shows the paired access token revoked by the rotation');
    await storage.revokeGrant(grant.id, T0 + 7);
    same((await read(next[0].hash))?.grant.revokedAt, T0 + 7, 'readToken shows the grant revoked at now');
  }),
];
