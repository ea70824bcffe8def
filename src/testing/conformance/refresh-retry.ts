/**
 * Refresh retries (the `refreshRetry` group, `RefreshRetryStorage`; a storage without it passes
 * these without running them): `retryRefreshToken` stores a sibling pair for a refresh token
 * rotated within the window while none of its children was rotated, and `rotateRefreshToken` of
 * a child ends the retries and revokes the siblings, under concurrency too.
 */
import type { OAuthGrantRecord, OAuthTokenRecord, Storage } from '../../storage/types.js';
import { groupCase, type StorageConformanceCase } from './case.js';
import { check, expectFailure, outcome, same } from './check.js';
import { CONFORMANCE_RACERS, T0, hash, isLive, makePair, warmUp, withPair } from './fixtures.js';

const WINDOW = 60_000;

/** A pair minted from the refresh token `parent` (its children carry `parentHash`). */
const child = (grant: OAuthGrantRecord, parent: string, at: number): [OAuthTokenRecord, OAuthTokenRecord] =>
  makePair(grant, at, { parentHash: parent });

/** A grant with a pair, its refresh token rotated at `T0 + 10` into a first child pair. */
async function rotated(storage: Storage, refresh: Partial<OAuthTokenRecord> = {}) {
  const { grant, access, refresh: parent } = await withPair(storage, refresh);
  const first = child(grant, parent.hash, T0 + 10);
  const result = await storage.rotateRefreshToken(parent.hash, T0 + 10, first);
  check(result.ok, `rotateRefreshToken of a fresh refresh token must succeed, got ${outcome(result)}`);
  return { grant, access, parent, first };
}

/** The cases on retrying rotated refresh tokens. */
export const refreshRetryCases: readonly StorageConformanceCase[] = [
  groupCase(
    'refreshRetry',
    'retryRefreshToken: stores a sibling pair for a token rotated within the window, and changes nothing else',
    async (storage) => {
      const { grant, parent, first } = await rotated(storage);
      same(
        (await storage.findToken(first[1].hash))?.token,
        first[1],
        'a refresh token is stored with its parentHash (findToken returns it as given)',
      );
      const sibling = child(grant, parent.hash, T0 + 20);
      const result = await storage.retryRefreshToken(parent.hash, T0 + 20, WINDOW, sibling);
      check(result.ok, `retryRefreshToken within the window must succeed, got ${outcome(result)}`);
      same(result.grant, grant, "retryRefreshToken returns the token's grant");
      for (const token of sibling) same(await storage.findToken(token.hash), { token, grant }, `the sibling ${token.kind} token is stored`);
      for (const token of first) same((await storage.findToken(token.hash))?.token, token, 'the first child pair is left as it was');
      same((await storage.findToken(parent.hash))?.token.rotatedAt, T0 + 10, 'the retried token keeps its rotatedAt');
      const boundary = await storage.retryRefreshToken(parent.hash, T0 + 10 + WINDOW, WINDOW, child(grant, parent.hash, T0 + 10 + WINDOW));
      check(boundary.ok, `a retry at exactly rotatedAt + windowMs is within the window, got ${outcome(boundary)}`);
    },
  ),

  groupCase(
    'refreshRetry',
    'retryRefreshToken: classifies failures (missing, never rotated, window over, child rotated, revoked, expired) and stores nothing',
    async (storage) => {
      const { grant, parent, first } = await rotated(storage, { expiresAt: T0 + 50_000 });
      const refused = async (hashToRetry: string, now: number, reason: string, what: string, extra = {}) => {
        const pair = child(grant, hashToRetry, now);
        expectFailure(await storage.retryRefreshToken(hashToRetry, now, WINDOW, pair), reason, what, extra);
        for (const token of pair) same(await storage.findToken(token.hash), null, `${what}: none of its tokens is stored`);
      };
      await refused(hash(), T0 + 20, 'missing', 'retryRefreshToken of an unknown token');
      await refused(first[0].hash, T0 + 20, 'missing', 'retryRefreshToken of an access token');
      await refused(first[1].hash, T0 + 20, 'missing', 'retryRefreshToken of a refresh token never rotated');
      await refused(parent.hash, T0 + 10 + WINDOW + 1, 'used', 'retryRefreshToken 1 ms after the window', {
        grantId: grant.id,
        usedAt: T0 + 10,
      });
      await refused(parent.hash, T0 + 50_000, 'expired', 'retryRefreshToken of a token expired at now');

      const again = await rotated(storage);
      check(
        (await storage.rotateRefreshToken(again.first[1].hash, T0 + 30, child(again.grant, again.first[1].hash, T0 + 30))).ok,
        'the child rotates',
      );
      same(
        (await storage.findToken(again.parent.hash))?.token.childRotatedAt,
        T0 + 30,
        'rotating a child sets its parent childRotatedAt to now',
      );
      const pair = child(again.grant, again.parent.hash, T0 + 31);
      expectFailure(
        await storage.retryRefreshToken(again.parent.hash, T0 + 31, WINDOW, pair),
        'used',
        'retryRefreshToken once a child was rotated',
        {
          grantId: again.grant.id,
          usedAt: T0 + 10,
        },
      );
      for (const token of pair) same(await storage.findToken(token.hash), null, 'a refused retry stores none of its tokens');

      const gone = await rotated(storage);
      await storage.revokeGrant(gone.grant.id, T0 + 20);
      expectFailure(
        await storage.retryRefreshToken(gone.parent.hash, T0 + 21, WINDOW, child(gone.grant, gone.parent.hash, T0 + 21)),
        'revoked',
        'retryRefreshToken of a token whose grant was revoked',
      );
    },
  ),

  groupCase(
    'refreshRetry',
    'rotateRefreshToken of a child: revokes its siblings and their access tokens, and only those',
    async (storage) => {
      const { grant, parent, first } = await rotated(storage);
      const siblings = [child(grant, parent.hash, T0 + 20), child(grant, parent.hash, T0 + 21)];
      for (const [i, pair] of siblings.entries()) {
        check((await storage.retryRefreshToken(parent.hash, T0 + 20 + i, WINDOW, pair)).ok, 'a retry within the window succeeds');
      }
      const other = await withPair(storage); // another family: untouched
      const next = child(grant, siblings[1]?.[1].hash ?? '', T0 + 40);
      check((await storage.rotateRefreshToken(siblings[1]?.[1].hash ?? '', T0 + 40, next)).ok, 'a sibling rotates');
      for (const token of [...first, ...(siblings[0] ?? [])]) {
        same(
          (await storage.findToken(token.hash))?.token.revokedAt,
          T0 + 40,
          `every other sibling's ${token.kind} token is revoked at now`,
        );
      }
      same(
        (await storage.findToken(siblings[1]?.[0].hash ?? ''))?.token.revokedAt,
        T0 + 40,
        "the rotated sibling's own access token is revoked",
      );
      for (const token of next) check(isLive(await storage.findToken(token.hash), T0 + 41), `the new ${token.kind} token is live`);
      check(isLive(await storage.findToken(other.refresh.hash), T0 + 41), "another family's refresh token is untouched");
      expectFailure(
        await storage.rotateRefreshToken(first[1].hash, T0 + 42, child(grant, first[1].hash, T0 + 42)),
        'revoked',
        'rotateRefreshToken of a revoked sibling',
      );
    },
  ),

  groupCase(
    'refreshRetry',
    `retryRefreshToken under concurrency: ${CONFORMANCE_RACERS} retries all succeed; then of ${CONFORMANCE_RACERS} siblings rotated at once exactly one wins`,
    async (storage) => {
      const { grant, parent, first } = await rotated(storage);
      await warmUp(storage);
      const pairs = Array.from({ length: CONFORMANCE_RACERS }, (_, i) => child(grant, parent.hash, T0 + 20 + i));
      const retries = await Promise.all(pairs.map((pair, i) => storage.retryRefreshToken(parent.hash, T0 + 20 + i, WINDOW, pair)));
      same(retries.filter((r) => r.ok).length, CONFORMANCE_RACERS, 'every concurrent retry within the window succeeds');
      const all = [first, ...pairs];
      const now = T0 + 100;
      const rotations = await Promise.all(
        all.map((pair, i) => storage.rotateRefreshToken(pair[1].hash, now + i, child(grant, pair[1].hash, now + i))),
      );
      const winners = rotations.flatMap((r, i) => (r.ok ? [i] : []));
      check(
        winners.length === 1,
        `of siblings rotated at once exactly one may win: ${winners.length} of ${all.length} did. Lock the parent first, then rotate and revoke the siblings in one transaction.`,
      );
      let live = 0;
      for (const pair of all) if (isLive(await storage.findToken(pair[1].hash), now + all.length)) live++;
      same(live, 0, 'no sibling refresh token is left live after one of them rotated');
    },
  ),

  groupCase(
    'refreshRetry',
    `retryRefreshToken racing the rotation of a child: every sibling stored is revoked, or the retry fails`,
    async (storage) => {
      const { grant, parent, first } = await rotated(storage);
      await warmUp(storage);
      const pairs = Array.from({ length: CONFORMANCE_RACERS }, (_, i) => child(grant, parent.hash, T0 + 20 + i));
      const next = child(grant, first[1].hash, T0 + 30);
      const [rotation, ...retries] = await Promise.all([
        storage.rotateRefreshToken(first[1].hash, T0 + 30, next),
        ...pairs.map((pair, i) => storage.retryRefreshToken(parent.hash, T0 + 20 + i, WINDOW, pair)),
      ]);
      check(rotation?.ok, `the rotation of the first child must succeed, got ${rotation ? outcome(rotation) : 'nothing'}`);
      for (const [i, retry] of retries.entries()) {
        const stored = await storage.findToken(pairs[i]?.[1].hash ?? '');
        if (retry.ok) check(stored && !isLive(stored, T0 + 60), 'a sibling stored by a retry that raced a rotation of a child is revoked');
        else {
          expectFailure(retry, 'used', 'a retry after the rotation of a child', { grantId: grant.id });
          same(stored, null, 'a refused retry stores nothing');
        }
      }
      for (const token of next)
        check(isLive(await storage.findToken(token.hash), T0 + 60), `the rotation's new ${token.kind} token is live`);
    },
  ),
];
