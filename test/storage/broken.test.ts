/**
 * The conformance kit is itself tested: run against deliberately broken storages, each with one
 * classic bug, it must fail the cases that guard against that bug, with a message that says what
 * is wrong. Against the reference MemoryStorage it must pass everything (no false alarms).
 */
import { describe, expect, it } from 'vitest';
import {
  MemoryStorage,
  type ClientRecord,
  type CodeRecord,
  type DeviceAuthorizationRecord,
  type ConsentRecord,
  type GrantRecord,
  type InteractionRecord,
  type OAuthGrantRecord,
  type OAuthTokenRecord,
  type SingleUseOutcome,
  type Storage,
  type TokenRecord,
} from '../../src/index.js';
import { runStorageConformance, storageConformanceCases, StorageConformanceError, type MakeStorage } from '../../src/testing/index.js';

/** MemoryStorage's maps, for broken variants that reach past its atomic methods. */
interface Internals {
  clients: Map<string, ClientRecord>;
  interactions: Map<string, InteractionRecord>;
  consents: Map<string, ConsentRecord>;
  grants: Map<string, GrantRecord>;
  codes: Map<string, CodeRecord>;
  tokens: Map<string, TokenRecord>;
}
const internals = (storage: MemoryStorage) => storage as unknown as Internals;
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `const r = await get(); if (!r.used) await set(...)`: check and write with an await in between. */
class AwaitBetweenCheckAndWriteInRedeem extends MemoryStorage {
  override async redeemCode(hash: string, now: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome> {
    const code = await this.findCode(hash);
    if (!code) return { ok: false, reason: 'missing' };
    if (code.usedAt !== null) return { ok: false, reason: 'used', grantId: code.grantId, usedAt: code.usedAt };
    if (now >= code.expiresAt) return { ok: false, reason: 'expired' };
    await tick();
    const { codes, grants, tokens: stored } = internals(this);
    const grant = grants.get(code.grantId);
    if (grant?.kind !== 'oauth' || grant.revokedAt !== null) return { ok: false, reason: 'revoked' };
    codes.get(hash)!.usedAt = now;
    for (const token of tokens) stored.set(token.hash, structuredClone(token));
    return { ok: true, grant: structuredClone(grant) };
  }
}

/** A combined read whose row mapping forgot columns: the client without its optional fields, the code without its use. */
class CombinedReadDropsFields extends MemoryStorage {
  override async findClientAndCode(clientId: string, codeHash: string): Promise<{ client: ClientRecord | null; code: CodeRecord | null }> {
    const read = await super.findClientAndCode(clientId, codeHash);
    if (read.client)
      read.client = {
        id: read.client.id,
        name: read.client.name,
        redirectUri: read.client.redirectUri,
        secretHash: read.client.secretHash,
        createdAt: read.client.createdAt,
      };
    if (read.code) read.code.usedAt = null;
    return read;
  }
  override async findClientAndToken(clientId: string, tokenHash: string) {
    const read = await super.findClientAndToken(clientId, tokenHash);
    if (read.token) read.token.token.rotatedAt = null;
    return read;
  }
}

/**
 * An approval that reads the interaction, yields, then deletes it and writes: concurrent approvals
 * all see it; and one that writes its consent even when the interaction was gone.
 */
class AwaitInApproveInteraction extends MemoryStorage {
  override async approveInteraction(...args: Parameters<MemoryStorage['approveInteraction']>): Promise<boolean> {
    const [idHash, now, consent, grant, issued] = args;
    const found = internals(this).interactions.get(idHash);
    await tick();
    await this.saveConsent(consent);
    if (!found || now >= found.expiresAt) return false;
    internals(this).interactions.delete(idHash);
    await this.createGrant(grant, issued);
    return true;
  }
}

/** Reads the device record, yields, then marks it and stores the grant: concurrent redeems all see it approved. */
class AwaitBetweenCheckAndWriteInDeviceRedeem extends MemoryStorage {
  override async redeemDeviceAuthorization(
    hash: string,
    now: number,
    grant: OAuthGrantRecord,
    tokens: OAuthTokenRecord[],
  ): Promise<boolean> {
    const { devices } = internals(this) as unknown as { devices: Map<string, DeviceAuthorizationRecord> };
    const record = devices.get(hash);
    if (record?.status !== 'approved' || now >= record.expiresAt) return false;
    await tick();
    record.status = 'redeemed';
    await this.createGrant(grant, { tokens });
    return true;
  }
}

class AwaitBetweenCheckAndWriteInRotate extends MemoryStorage {
  override async rotateRefreshToken(hash: string, now: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome> {
    const found = await this.findToken(hash);
    if (found?.token.kind !== 'refresh') return { ok: false, reason: 'missing' };
    if (found.token.rotatedAt !== null) return { ok: false, reason: 'used', grantId: found.token.grantId, usedAt: found.token.rotatedAt };
    if (found.token.revokedAt !== null || found.grant.revokedAt !== null || found.grant.kind !== 'oauth')
      return { ok: false, reason: 'revoked' };
    if (found.token.expiresAt !== null && now >= found.token.expiresAt) return { ok: false, reason: 'expired' };
    await tick();
    const { tokens: stored } = internals(this);
    stored.get(hash)!.rotatedAt = now;
    const pair = found.token.pairHash === null ? undefined : stored.get(found.token.pairHash);
    if (pair && pair.revokedAt === null) pair.revokedAt = now;
    for (const token of tokens) stored.set(token.hash, structuredClone(token));
    return { ok: true, grant: found.grant };
  }
}

class AwaitInTakeInteraction extends MemoryStorage {
  override async takeInteraction(idHash: string, now: number): Promise<InteractionRecord | null> {
    const found = await this.findInteraction(idHash);
    await tick();
    internals(this).interactions.delete(idHash);
    return found && now < found.expiresAt ? found : null;
  }
}

/** Expired only after expiresAt (`now > expiresAt`), everywhere. */
class OffByOneExpiry extends MemoryStorage {
  override async takeInteraction(idHash: string, now: number) {
    return super.takeInteraction(idHash, now - 1);
  }
  override async redeemCode(hash: string, now: number, tokens: OAuthTokenRecord[]) {
    const code = internals(this).codes.get(hash);
    if (code && code.usedAt === null && now === code.expiresAt) return super.redeemCode(hash, now - 1, tokens);
    return super.redeemCode(hash, now, tokens);
  }
  override async rotateRefreshToken(hash: string, now: number, tokens: OAuthTokenRecord[]) {
    const token = internals(this).tokens.get(hash);
    if (token && token.expiresAt === now) return super.rotateRefreshToken(hash, now - 1, tokens);
    return super.rotateRefreshToken(hash, now, tokens);
  }
}

/** Judges expiry by the machine's clock instead of the `now` argument (as SQL's now() would). */
class WallClockExpiry extends MemoryStorage {
  override async redeemCode(hash: string, _now: number, tokens: OAuthTokenRecord[]) {
    return super.redeemCode(hash, Date.now(), tokens);
  }
}

/** Hands out its stored objects instead of copies. */
class NoCopies extends MemoryStorage {
  override async findClient(clientId: string) {
    return internals(this).clients.get(clientId) ?? null;
  }
  override async findConsent(accountUuid: string, clientId: string) {
    for (const consent of internals(this).consents.values())
      if (consent.accountUuid === accountUuid && consent.clientId === clientId) return consent;
    return null;
  }
}

/** Replaces the consent instead of merging its scope. */
class ConsentOverwrite extends MemoryStorage {
  override async saveConsent(consent: ConsentRecord) {
    internals(this).consents.delete(`${consent.accountUuid}\u0000${consent.clientId}`);
    return super.saveConsent(consent);
  }
}

/** Merges the scope but keeps only the latest approval's approvals (the consent narrows). */
class ConsentMergesScopeOnly extends MemoryStorage {
  override async saveConsent(consent: ConsentRecord) {
    await super.saveConsent(consent);
    const merged = internals(this).consents.get(`${consent.accountUuid}\u0000${consent.clientId}`)!;
    merged.approvals = consent.approvals.map((a) => ({ resource: a.resource, scope: [...a.scope] }));
  }
}

/**
 * Unites the scope and the resources each on its own, as authgate did before approvals: every
 * resource ends up with every scope value approved for any (read for A, read write for B: write for A).
 */
class ConsentCrossProduct extends MemoryStorage {
  override async saveConsent(consent: ConsentRecord) {
    await super.saveConsent(consent);
    const merged = internals(this).consents.get(`${consent.accountUuid}\u0000${consent.clientId}`)!;
    merged.approvals = merged.approvals.map((a) => ({ resource: a.resource, scope: [...merged.scope] }));
  }
}

/** Keeps every resource ever approved: the consent grows without bound. */
class ConsentUnbounded extends MemoryStorage {
  override async saveConsent(consent: ConsentRecord) {
    const key = `${consent.accountUuid}\u0000${consent.clientId}`;
    const before = internals(this).consents.get(key)?.approvals ?? [];
    await super.saveConsent(consent);
    const merged = internals(this).consents.get(key)!;
    merged.approvals = [...merged.approvals, ...before.filter((a) => !merged.approvals.some((m) => m.resource === a.resource))];
  }
}

/** Keeps no approvals at all, as a table without the column would. */
class ConsentWithoutApprovals extends MemoryStorage {
  override async findConsent(accountUuid: string, clientId: string) {
    const found = await super.findConsent(accountUuid, clientId);
    if (!found) return null;
    const { approvals: _approvals, ...rest } = found;
    return rest as ConsentRecord;
  }
}

/** Rotation that forgets to revoke the access token issued with the old refresh token. */
class RotationKeepsPairedAccessToken extends MemoryStorage {
  override async rotateRefreshToken(hash: string, now: number, tokens: OAuthTokenRecord[]) {
    const token = internals(this).tokens.get(hash);
    const pair = token?.pairHash ? internals(this).tokens.get(token.pairHash) : undefined;
    const before = pair?.revokedAt ?? null;
    const result = await super.rotateRefreshToken(hash, now, tokens);
    if (pair) pair.revokedAt = before;
    return result;
  }
}

/** revokeGrant that overwrites an earlier revokedAt. */
class RevokeOverwrites extends MemoryStorage {
  override async revokeGrant(grantId: string, now: number) {
    const grant = internals(this).grants.get(grantId);
    if (grant) grant.revokedAt = now;
  }
}

/** revokeAccess that revokes the grants but keeps the consent (prompt=none would still succeed). */
class RevokeAccessKeepsConsent extends MemoryStorage {
  override async revokeAccess(accountUuid: string, clientId: string, now: number) {
    const consent = await this.findConsent(accountUuid, clientId);
    await super.revokeAccess(accountUuid, clientId, now);
    if (consent) await this.saveConsent(consent);
  }
}

/** Keys compared case-insensitively (a case-insensitive SQL collation, a lower-casing KV wrapper). */
class CaseInsensitiveKeys extends MemoryStorage {
  private real(map: Map<string, unknown>, key: string): string {
    for (const k of map.keys()) if (k.toLowerCase() === key.toLowerCase()) return k;
    return key;
  }
  override async findClient(clientId: string) {
    return super.findClient(this.real(internals(this).clients, clientId));
  }
  override async findCode(hash: string) {
    return super.findCode(this.real(internals(this).codes, hash));
  }
  override async redeemCode(hash: string, now: number, tokens: OAuthTokenRecord[]) {
    return super.redeemCode(this.real(internals(this).codes, hash), now, tokens);
  }
  override async findToken(hash: string) {
    return super.findToken(this.real(internals(this).tokens, hash));
  }
}

/** A failed redemption that still stores the tokens it was given. */
class FailedRedeemStoresTokens extends MemoryStorage {
  override async redeemCode(hash: string, now: number, tokens: OAuthTokenRecord[]) {
    const result = await super.redeemCode(hash, now, tokens);
    if (!result.ok) for (const token of tokens) internals(this).tokens.set(token.hash, structuredClone(token));
    return result;
  }
}

/** Deletes a code on use: a replay then looks "missing" and the family is never revoked. */
class DeleteCodeOnUse extends MemoryStorage {
  override async redeemCode(hash: string, now: number, tokens: OAuthTokenRecord[]) {
    const result = await super.redeemCode(hash, now, tokens);
    if (result.ok) internals(this).codes.delete(hash);
    return result;
  }
}

/** Times come back as strings (a SQL bigint read without parsing). */
class TimesAsStrings extends MemoryStorage {
  override async findCode(hash: string) {
    const code = await super.findCode(hash);
    return code && { ...code, expiresAt: String(code.expiresAt) as unknown as number };
  }
}

/**
 * Revocation written onto the tokens it can see, instead of one flag on the grant that every lookup
 * joins: a token inserted while the revocation is in flight escapes it.
 */
class RevocationMissesConcurrentInserts extends MemoryStorage {
  private readonly revokedTokens = new Map<string, number>();
  override async findToken(hash: string) {
    const found = await super.findToken(hash);
    return found && { token: found.token, grant: { ...found.grant, revokedAt: this.revokedTokens.get(hash) ?? null } };
  }
  override async revokeGrant(grantId: string, now: number) {
    for (const token of internals(this).tokens.values()) if (token.grantId === grantId) this.revokedTokens.set(token.hash, now);
    await tick();
    await super.revokeGrant(grantId, now);
  }
}

type Broken = { name: string; make: MakeStorage; catches: string[] };

const BROKEN: Broken[] = [
  {
    name: 'redeemCode with an await between check and write',
    make: () => new AwaitBetweenCheckAndWriteInRedeem(),
    catches: ['redeemCode: exactly one of 20 concurrent redemptions'],
  },
  {
    name: 'rotateRefreshToken with an await between check and write',
    make: () => new AwaitBetweenCheckAndWriteInRotate(),
    catches: ['rotateRefreshToken: exactly one of 20 concurrent rotations'],
  },
  {
    name: 'takeInteraction with an await between read and delete',
    make: () => new AwaitInTakeInteraction(),
    catches: ['takeInteraction: exactly one of 20'],
  },
  {
    name: 'expired only when now > expiresAt',
    make: () => new OffByOneExpiry(),
    catches: ['takeInteraction: single use; expired when', 'redeemCode: expiry follows', 'rotateRefreshToken: expiry follows'],
  },
  { name: 'expiry judged by the wall clock', make: () => new WallClockExpiry(), catches: ['redeemCode: expiry follows'] },
  { name: 'returns stored objects, not copies', make: () => new NoCopies(), catches: ['records are copies'] },
  {
    name: 'saveConsent replaces instead of merging',
    make: () => new ConsentOverwrite(),
    catches: ['consents: round trip, scope merged', 'consents: concurrent saveConsent'],
  },
  {
    name: 'saveConsent merges the scope but not the approvals',
    make: () => new ConsentMergesScopeOnly(),
    catches: [
      'consents: round trip, scope merged',
      'consents: the scope approved for each resource',
      'consents: concurrent approvals of different resources',
    ],
  },
  {
    name: 'saveConsent unites scope and resources each on its own (the cross product)',
    make: () => new ConsentCrossProduct(),
    catches: ['consents: the scope approved for each resource', 'consents: concurrent approvals of different resources'],
  },
  {
    name: 'saveConsent keeps every resource ever approved',
    make: () => new ConsentUnbounded(),
    catches: ['consents: at most'],
  },
  {
    name: 'consents keep no approvals',
    make: () => new ConsentWithoutApprovals(),
    catches: ['consents: round trip, scope merged', 'consents: the scope approved for each resource'],
  },
  {
    name: 'rotation keeps the paired access token',
    make: () => new RotationKeepsPairedAccessToken(),
    catches: ['rotateRefreshToken: marks the token rotated', 'hashing: a full flow'],
  },
  { name: 'revokeGrant overwrites revokedAt', make: () => new RevokeOverwrites(), catches: ['revokeGrant: revokes the whole family'] },
  {
    name: 'revokeAccess keeps the consent',
    make: () => new RevokeAccessKeepsConsent(),
    catches: ['revokeAccess: deletes the consent', 'hashing: a full flow'],
  },
  { name: 'case-insensitive keys', make: () => new CaseInsensitiveKeys(), catches: ['lookups are exact'] },
  {
    name: 'a failed redemption stores its tokens',
    make: () => new FailedRedeemStoresTokens(),
    catches: ['redeemCode: classifies failures', 'redeemCode: exactly one of 20'],
  },
  {
    name: 'codes deleted on use (replay looks missing)',
    make: () => new DeleteCodeOnUse(),
    catches: ['redeemCode: classifies failures', 'hashing: a full flow'],
  },
  { name: 'times returned as strings', make: () => new TimesAsStrings(), catches: ['timestamps: millisecond values'] },
  {
    name: 'device redeem awaits between its check and its write',
    make: () => new AwaitBetweenCheckAndWriteInDeviceRedeem(),
    catches: ['device authorizations (optional): exactly one of 20 concurrent redeems'],
  },
  {
    name: 'combined reads drop fields (the client’s optional ones, a code’s use, a token’s rotation)',
    make: () => new CombinedReadDropsFields(),
    catches: ['combined reads (optional): findClientAndCode answers', 'combined reads (optional): findClientAndToken answers'],
  },
  {
    name: 'approveInteraction with an await between read and take, saving the consent whatever it finds',
    make: () => new AwaitInApproveInteraction(),
    catches: ['combined approval (optional): approveInteraction takes', 'combined approval (optional): exactly one of 20'],
  },
  {
    name: 'revocation that misses tokens inserted concurrently',
    make: () => new RevocationMissesConcurrentInserts(),
    catches: ['revokeGrant racing rotations and redemptions'],
  },
];

describe('the storage conformance kit', () => {
  it('passes every case on the reference MemoryStorage', async () => {
    const results = await runStorageConformance(() => new MemoryStorage());
    expect(results.filter((r) => !r.ok).map((r) => `${r.name}: ${String(r.error)}`)).toEqual([]);
    expect(results).toHaveLength(storageConformanceCases.length);
  });

  for (const broken of BROKEN) {
    it(`catches a storage whose ${broken.name}`, async () => {
      const results = await runStorageConformance(broken.make);
      const failed = results.filter((r) => !r.ok);
      for (const expected of broken.catches) {
        const hit = failed.find((r) => r.name.startsWith(expected));
        expect(hit, `case "${expected}" should fail; failed: ${failed.map((r) => r.name).join(' | ') || 'none'}`).toBeDefined();
        expect(hit!.error).toBeInstanceOf(StorageConformanceError);
        expect(String((hit!.error as Error).message).length).toBeGreaterThan(20);
      }
    });
  }

  it('says what is wrong: the race case names the count and the fix', async () => {
    const [result] = await runStorageConformance(() => new AwaitBetweenCheckAndWriteInRedeem(), { only: ['redeemCode: exactly one of'] });
    expect(result?.ok).toBe(false);
    expect((result!.error as Error).message).toMatch(/20 of 20 concurrent redemptions succeeded \(expected exactly 1\).*atomic/s);
  });

  it('registers one test per case with the describe/it it is given, and refuses to run without them', async () => {
    const { describeStorageConformance } = await import('../../src/testing/index.js');
    const names: string[] = [];
    let suite = '';
    describeStorageConformance('Fake', () => new MemoryStorage(), {
      describe: (name, fn) => {
        suite = name;
        fn();
      },
      it: (name) => {
        names.push(name);
      },
    });
    expect(suite).toBe('storage conformance: Fake');
    expect(names).toEqual(storageConformanceCases.map((c) => c.name));
    expect(() => describeStorageConformance('Nothing', () => new MemoryStorage())).toThrow(/pass them as the third argument/);
  });
});

// The broken storages above are all `Storage`s: the kit can only judge behaviour, not types.
const typecheck: Storage[] = [new NoCopies(), new TimesAsStrings()];
void typecheck;
