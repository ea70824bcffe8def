/**
 * The storage conformance kit: the contract of `Storage` (src/storage/types.ts) as executable
 * checks, for MemoryStorage, PostgresStorage, and any storage a user writes (Redis, DynamoDB...).
 *
 * It depends on no test framework. The checks throw `StorageConformanceError` with a message
 * naming the rule that was broken; `describeStorageConformance` registers them with the
 * `describe`/`it` of vitest, jest or node:test, and `runStorageConformance` runs them directly.
 */
import { AuthorizationServer } from '../server.js';
import { base64url, randomId, randomToken } from '../crypto.js';
import type {
  ClientRecord,
  CodeRecord,
  ConsentRecord,
  GrantRecord,
  InteractionRecord,
  SingleUseOutcome,
  Storage,
  TokenRecord,
} from '../storage/types.js';
import type { Account, OAuthRequest, OAuthResponse, UserSession } from '../types.js';

/** Returns the storage under test. Called once per case; may return the same database each time (every case uses fresh random ids). */
export type MakeStorage = () => Storage | Promise<Storage>;

/** One check of the contract. `run` throws (a `StorageConformanceError`) when the storage breaks it. */
export interface StorageConformanceCase {
  readonly name: string;
  run(makeStorage: MakeStorage): Promise<void>;
}

/** The functions of a test framework the kit registers its cases with. */
export interface ConformanceTestApi {
  describe: (name: string, fn: () => void) => unknown;
  it: (name: string, fn: () => Promise<void>) => unknown;
  /** Accepted for symmetry with `{ describe, it, expect }`; not needed: the checks throw their own errors. */
  expect?: unknown;
}

export interface ConformanceOptions {
  /** Per-case timeout in ms, passed as the third argument of `it` (vitest, jest). */
  timeout?: number;
}

/** A broken rule of the storage contract. */
export class StorageConformanceError extends Error {
  override readonly name = 'StorageConformanceError';
}

/** How many concurrent callers race for one single-use step. */
export const CONFORMANCE_RACERS = 20;

// ---------------------------------------------------------------------------------------------
// Assertions (no test framework).

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new StorageConformanceError(message);
}

/** A stable JSON form: keys sorted, `undefined` properties dropped (as `toEqual` treats them). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : 1)));
    }
    return v;
  }) ?? 'undefined';
}

function same(actual: unknown, expected: unknown, what: string): void {
  const a = canonical(actual);
  const e = canonical(expected);
  if (a !== e) throw new StorageConformanceError(`${what}\n  expected: ${e}\n  received: ${a}`);
}

const sorted = (values: readonly string[]) => [...values].sort();

function outcome(o: SingleUseOutcome): string {
  return o.ok ? 'ok' : `${o.reason}${o.grantId ? ` (grantId ${o.grantId})` : ''}`;
}

function expectFailure(o: SingleUseOutcome, reason: string, what: string, extra: { grantId?: string; usedAt?: number } = {}): void {
  check(!o.ok, `${what}: expected { ok: false, reason: '${reason}' }, got ${canonical(o)}`);
  check(o.reason === reason, `${what}: expected reason '${reason}', got '${o.reason}'`);
  if (extra.grantId !== undefined) check(o.grantId === extra.grantId, `${what}: a '${reason}' outcome must carry the grantId (${extra.grantId}) so the caller can revoke the family; got ${canonical(o.grantId)}`);
  if (extra.usedAt !== undefined) check(o.usedAt === extra.usedAt, `${what}: a '${reason}' outcome must carry usedAt = the time of the first use (${extra.usedAt}); got ${canonical(o.usedAt)}`);
}

// ---------------------------------------------------------------------------------------------
// Fixtures. Times are far from the wall clock (2001), with odd milliseconds, so a storage that
// consults its own clock, or rounds to seconds, fails.

const T0 = 1_000_000_000_123;
const CODE_LIFETIME = 600_000;
const ACCESS_LIFETIME = 2_592_000_000;
const CALLBACK = 'https://client.example/cb';

const id = () => randomId();
const hash = () => randomToken();

/** An account with a field beyond the interface: storages keep extra account fields. */
function makeAccount(): Account {
  return { uuid: id(), name: 'Ada Lovelace', email: 'ada@example.com', locale: 'en-GB' } as Account;
}

function makeGrant(over: Partial<GrantRecord> = {}): GrantRecord {
  return { id: id(), clientId: id(), account: makeAccount(), scope: ['read', 'write'], createdAt: T0, revokedAt: null, ...over };
}

function makeCode(grant: GrantRecord, over: Partial<CodeRecord> = {}): CodeRecord {
  return {
    hash: hash(), grantId: grant.id, clientId: grant.clientId, redirectUri: CALLBACK, scope: [...grant.scope],
    codeChallenge: null, codeChallengeMethod: null, expiresAt: T0 + CODE_LIFETIME, usedAt: null, ...over,
  };
}

function makeAccess(grant: GrantRecord, issuedAt = T0, over: Partial<TokenRecord> = {}): TokenRecord {
  return {
    hash: hash(), kind: 'access', grantId: grant.id, clientId: grant.clientId, scope: [...grant.scope], issuedAt,
    expiresAt: issuedAt + ACCESS_LIFETIME, pairHash: null, rotatedAt: null, revokedAt: null, ...over,
  };
}

/** A new access + refresh pair of a grant, as the core mints it. */
function makePair(grant: GrantRecord, issuedAt = T0, refresh: Partial<TokenRecord> = {}): [TokenRecord, TokenRecord] {
  const access = makeAccess(grant, issuedAt);
  return [access, { ...makeAccess(grant, issuedAt), kind: 'refresh', expiresAt: null, pairHash: access.hash, ...refresh }];
}

async function withCode(storage: Storage, code: Partial<CodeRecord> = {}, grant: Partial<GrantRecord> = {}) {
  const g = makeGrant(grant);
  const c = makeCode(g, code);
  await storage.createGrant(g, { code: c });
  return { grant: g, code: c };
}

async function withPair(storage: Storage, refresh: Partial<TokenRecord> = {}, grant: Partial<GrantRecord> = {}) {
  const g = makeGrant(grant);
  const [access, refreshToken] = makePair(g, T0, refresh);
  await storage.createGrant(g, { tokens: [access, refreshToken] });
  return { grant: g, access, refresh: refreshToken };
}

function makeInteraction(over: Partial<InteractionRecord> = {}): InteractionRecord {
  return {
    idHash: hash(),
    kind: 'consent',
    request: {
      clientId: id(), redirectUri: CALLBACK, responseType: 'code', scope: ['read', 'write'], state: 'xyz', prompt: ['select_account'],
      maxAuthAge: 3600, accountHint: 'a1b2c3', codeChallenge: hash(), codeChallengeMethod: 'S256',
    },
    requestedAt: T0,
    expiresAt: T0 + 600_000,
    loginAfter: null,
    account: makeAccount(),
    ...over,
  };
}

/**
 * Open the storage's connections before a race: `CONFORMANCE_RACERS` concurrent lookups. On a
 * cold pool the first racer would finish alone while the others wait for new connections, and a
 * non-atomic storage would pass by luck.
 */
async function warmUp(storage: Storage): Promise<void> {
  await Promise.all(Array.from({ length: CONFORMANCE_RACERS }, () => storage.findCode(hash())));
}

/** Usable as a credential at `now`: not revoked, its grant not revoked, not rotated, not expired. */
function isLive(found: { token: TokenRecord; grant: GrantRecord } | null, now: number): boolean {
  return !!found && found.token.revokedAt === null && found.grant.revokedAt === null && found.token.rotatedAt === null &&
    (found.token.expiresAt === null || now < found.token.expiresAt);
}

// ---------------------------------------------------------------------------------------------
// The cases.

const cases: StorageConformanceCase[] = [];
const define = (name: string, run: (makeStorage: MakeStorage) => Promise<void>) => cases.push({ name, run });

define('clients: saveClient/findClient round trip, a second save replaces, null when unknown', async (make) => {
  const storage = await make();
  const client: ClientRecord = { id: id(), name: 'Example App', redirectUri: CALLBACK, secretHash: hash(), createdAt: T0 };
  await storage.saveClient(client);
  same(await storage.findClient(client.id), client, 'findClient returns the saved client');
  const replaced = { ...client, name: 'Renamed', secretHash: hash(), redirectUri: 'https://client.example/other' };
  await storage.saveClient(replaced);
  same(await storage.findClient(client.id), replaced, 'saveClient with an existing id replaces the record');
  const publicClient: ClientRecord = { id: id(), name: 'CLI', redirectUri: 'http://127.0.0.1/cb', secretHash: null, createdAt: T0 + 1 };
  await storage.saveClient(publicClient);
  same(await storage.findClient(publicClient.id), publicClient, 'a public client (secretHash null) round trips');
  same(await storage.findClient(id()), null, 'findClient of an unknown id is null');
});

define('clients: the response and grant types a client may use round trip; absent stays absent; copies are copies', async (make) => {
  const storage = await make();
  const codeOnly: ClientRecord = {
    id: id(), name: 'Registered CLI', redirectUri: 'http://127.0.0.1/cb', secretHash: null, createdAt: T0,
    responseTypes: ['code'], grantTypes: ['authorization_code'],
  };
  await storage.saveClient(codeOnly);
  same(await storage.findClient(codeOnly.id), codeOnly, 'findClient returns responseTypes and grantTypes as saved');
  const both: ClientRecord = { ...codeOnly, id: id(), responseTypes: ['code', 'token'], grantTypes: ['authorization_code', 'refresh_token'] };
  await storage.saveClient(both);
  same(await storage.findClient(both.id), both, 'several response and grant types round trip in order');
  const widened: ClientRecord = { ...codeOnly, grantTypes: ['authorization_code', 'refresh_token'] };
  await storage.saveClient(widened);
  same(await storage.findClient(codeOnly.id), widened, 'saveClient with an existing id replaces the types too');
  const plain: ClientRecord = { id: codeOnly.id, name: 'Registered CLI', redirectUri: 'http://127.0.0.1/cb', secretHash: null, createdAt: T0 };
  await storage.saveClient(plain);
  same(await storage.findClient(codeOnly.id), plain, 'a client saved without types has none (absent: the server defaults), even after a save with them');
  const found = await storage.findClient(both.id);
  check(found?.responseTypes && found.grantTypes, 'client with types saved');
  found.responseTypes.pop();
  found.grantTypes.pop();
  both.responseTypes!.pop();
  same((await storage.findClient(both.id))?.responseTypes, ['code', 'token'], 'mutating a saved or returned client\'s responseTypes must not change the stored one');
  same((await storage.findClient(both.id))?.grantTypes, ['authorization_code', 'refresh_token'], 'mutating a returned client\'s grantTypes must not change the stored one');
});

define('interactions: login and consent records round trip with every field', async (make) => {
  const storage = await make();
  const consent = makeInteraction();
  const login = makeInteraction({ kind: 'login', loginAfter: T0 - 1, account: undefined });
  delete login.account;
  const minimal = makeInteraction({ kind: 'login', request: { clientId: id(), redirectUri: CALLBACK, responseType: 'token', scope: ['read'], prompt: [] } });
  delete minimal.account;
  for (const record of [consent, login, minimal]) await storage.saveInteraction(record);
  same(await storage.findInteraction(consent.idHash), consent, 'findInteraction returns the consent interaction, its request and account (extra account fields too)');
  same(await storage.findInteraction(login.idHash), login, 'findInteraction returns the login interaction');
  same(await storage.findInteraction(minimal.idHash), minimal, 'findInteraction returns an interaction without optional request fields');
  same(await storage.findInteraction(hash()), null, 'findInteraction of an unknown id is null');
});

define('interactions: the browser binding (request.browserHash) round trips through save, find and take', async (make) => {
  const storage = await make();
  // Without it, every browser could continue the interaction (DESIGN: an interaction belongs to the browser that started it).
  const bound = makeInteraction();
  bound.request.browserHash = hash();
  await storage.saveInteraction(bound);
  same((await storage.findInteraction(bound.idHash))?.request.browserHash, bound.request.browserHash, 'findInteraction returns request.browserHash as saved');
  same(await storage.takeInteraction(bound.idHash, T0 + 1), bound, 'takeInteraction returns the bound interaction whole, request.browserHash included');
});

define('takeInteraction: single use; expired when now >= expiresAt (boundary -1 ms / 0)', async (make) => {
  const storage = await make();
  const record = makeInteraction();
  await storage.saveInteraction(record);
  same(await storage.takeInteraction(record.idHash, record.expiresAt - 1), record, 'takeInteraction at expiresAt - 1 ms returns the interaction');
  same(await storage.takeInteraction(record.idHash, record.expiresAt - 1), null, 'a second takeInteraction returns null (single use)');
  same(await storage.findInteraction(record.idHash), null, 'a taken interaction is gone');
  const expired = makeInteraction();
  await storage.saveInteraction(expired);
  same(await storage.takeInteraction(expired.idHash, expired.expiresAt), null, 'takeInteraction at now = expiresAt returns null (expired)');
  same(await storage.takeInteraction(expired.idHash, expired.expiresAt - 1), null, 'an expired interaction that was taken stays unusable');
  same(await storage.takeInteraction(hash(), T0), null, 'takeInteraction of an unknown id is null');
});

define(`takeInteraction: exactly one of ${CONFORMANCE_RACERS} concurrent takes gets the interaction`, async (make) => {
  const storage = await make();
  const record = makeInteraction();
  await storage.saveInteraction(record);
  await warmUp(storage);
  const taken = await Promise.all(Array.from({ length: CONFORMANCE_RACERS }, () => storage.takeInteraction(record.idHash, T0 + 1)));
  const winners = taken.filter((r) => r !== null);
  check(winners.length === 1, `takeInteraction must be single use under concurrency: ${winners.length} of ${CONFORMANCE_RACERS} concurrent calls got the interaction (expected exactly 1). Check and delete must be one atomic step (DELETE ... RETURNING, GETDEL, no await in between).`);
  same(winners[0], record, 'the winner gets the whole record');
});

define('consents: round trip, scope merged on save, grantedAt updated, listConsents per account', async (make) => {
  const storage = await make();
  const accountUuid = id();
  const clientA = id();
  const clientB = id();
  await storage.saveConsent({ accountUuid, clientId: clientA, scope: ['read'], grantedAt: T0 });
  same(await storage.findConsent(accountUuid, clientA), { accountUuid, clientId: clientA, scope: ['read'], grantedAt: T0 }, 'findConsent returns the saved consent');
  await storage.saveConsent({ accountUuid, clientId: clientA, scope: ['write'], grantedAt: T0 + 5 });
  const merged = await storage.findConsent(accountUuid, clientA);
  check(merged, 'findConsent after a second save returns the consent');
  same(sorted(merged.scope), ['read', 'write'], 'saveConsent merges the new scope into the existing consent (read, then write: both)');
  same(merged.grantedAt, T0 + 5, 'saveConsent records the time of the latest approval');
  await storage.saveConsent({ accountUuid, clientId: clientA, scope: ['read'], grantedAt: T0 + 9 });
  same(sorted((await storage.findConsent(accountUuid, clientA))?.scope ?? []), ['read', 'write'], 'saving a scope already granted neither duplicates nor drops a value');
  await storage.saveConsent({ accountUuid, clientId: clientB, scope: ['read'], grantedAt: T0 + 1 });
  const other = id();
  await storage.saveConsent({ accountUuid: other, clientId: clientA, scope: ['read'], grantedAt: T0 });
  const listed = (await storage.listConsents(accountUuid)).map((c) => ({ ...c, scope: sorted(c.scope) })).sort((a, b) => (a.clientId < b.clientId ? -1 : 1));
  const expected = [
    { accountUuid, clientId: clientA, scope: ['read', 'write'], grantedAt: T0 + 9 },
    { accountUuid, clientId: clientB, scope: ['read'], grantedAt: T0 + 1 },
  ].sort((a, b) => (a.clientId < b.clientId ? -1 : 1));
  same(listed, expected, 'listConsents returns every consent of the account, and only of that account');
  same(await storage.listConsents(id()), [], 'listConsents of an account without consents is empty');
  same(await storage.findConsent(accountUuid, id()), null, 'findConsent of an unknown pair is null');
});

define('consents: concurrent saveConsent calls for one account and client lose no scope', async (make) => {
  const storage = await make();
  const accountUuid = id();
  const clientId = id();
  await warmUp(storage);
  await Promise.all(Array.from({ length: CONFORMANCE_RACERS }, (_, i) =>
    storage.saveConsent({ accountUuid, clientId, scope: [i % 2 ? 'write' : 'read'], grantedAt: T0 + i })));
  const consent = await storage.findConsent(accountUuid, clientId);
  check(consent, 'a consent exists after concurrent saves');
  same(sorted(consent.scope), ['read', 'write'], 'concurrent approvals of read and of write must merge into one consent with both (an insert-or-merge in one step, e.g. INSERT ... ON CONFLICT DO UPDATE)');
  same((await storage.listConsents(accountUuid)).length, 1, 'concurrent saves leave exactly one consent for the pair');
});

define('grants: createGrant stores the grant with its code or its tokens; findCode and findToken round trip', async (make) => {
  const storage = await make();
  const { grant, code } = await withCode(storage, { codeChallenge: hash(), codeChallengeMethod: 'S256' });
  same(await storage.findCode(code.hash), code, 'findCode returns the code saved with its grant (PKCE fields too)');
  const plain = makeGrant({ scope: ['read'] });
  const access = makeAccess(plain);
  await storage.createGrant(plain, { tokens: [access] });
  same(await storage.findToken(access.hash), { token: access, grant: plain }, 'findToken returns the token and its grant (an implicit-flow grant created with its access token)');
  const { grant: g2, access: a2, refresh } = await withPair(storage, { expiresAt: T0 + 1_000_000 });
  same(await storage.findToken(refresh.hash), { token: refresh, grant: g2 }, 'findToken returns a refresh token with its pairHash and expiry');
  same(await storage.findToken(a2.hash), { token: a2, grant: g2 }, 'findToken returns the access token of the pair');
  same(await storage.findCode(hash()), null, 'findCode of an unknown hash is null');
  same(await storage.findToken(hash()), null, 'findToken of an unknown hash is null');
  const redeemed = await storage.redeemCode(code.hash, T0, []);
  check(redeemed.ok, `the code stored by createGrant can be redeemed, got ${outcome(redeemed)}`);
  same((await storage.findCode(code.hash))?.grantId, grant.id, 'the code belongs to its grant');
});

define('readToken (optional): when a storage has it, it answers what findToken answers, in every state', async (make) => {
  const storage = await make();
  if (!storage.readToken) return; // optional: the core falls back to findToken
  const read = (hash: string) => storage.readToken!(hash);
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
});

define('records are copies: mutating what was saved, or what was returned, changes nothing stored', async (make) => {
  const storage = await make();
  const client: ClientRecord = { id: id(), name: 'Example App', redirectUri: CALLBACK, secretHash: hash(), createdAt: T0 };
  await storage.saveClient(client);
  client.name = 'changed after save';
  const foundClient = await storage.findClient(client.id);
  check(foundClient, 'client saved');
  foundClient.redirectUri = 'https://evil.example/';
  same((await storage.findClient(client.id))?.redirectUri, CALLBACK, 'mutating a returned client must not change the stored one');
  same((await storage.findClient(client.id))?.name, 'Example App', 'mutating a client after saveClient must not change the stored one');

  const interaction = makeInteraction();
  const snapshot = structuredClone(interaction);
  await storage.saveInteraction(interaction);
  interaction.request.scope.push('admin');
  const foundInteraction = await storage.findInteraction(interaction.idHash);
  check(foundInteraction, 'interaction saved');
  foundInteraction.request.redirectUri = 'https://evil.example/';
  foundInteraction.account!.uuid = 'someone-else';
  same(await storage.findInteraction(interaction.idHash), snapshot, 'mutating an interaction (its nested request and account) after saving or finding it must not change the stored one');

  const accountUuid = id();
  const clientId = id();
  const consent: ConsentRecord = { accountUuid, clientId, scope: ['read'], grantedAt: T0 };
  await storage.saveConsent(consent);
  consent.scope.push('write');
  const foundConsent = await storage.findConsent(accountUuid, clientId);
  foundConsent?.scope.push('write');
  (await storage.listConsents(accountUuid))[0]?.scope.push('write');
  same((await storage.findConsent(accountUuid, clientId))?.scope, ['read'], 'mutating a consent (its scope array) after saving, finding or listing it must not change the stored one');

  const { grant, code } = await withCode(storage);
  const expectedCode = structuredClone(code);
  code.redirectUri = 'https://evil.example/';
  const foundCode = await storage.findCode(code.hash);
  check(foundCode, 'code saved');
  foundCode.usedAt = T0;
  foundCode.scope.push('admin');
  same(await storage.findCode(code.hash), expectedCode, 'mutating a code after createGrant or findCode must not change the stored one');

  const { grant: g2, access } = await withPair(storage);
  const expected = structuredClone({ token: access, grant: g2 });
  access.scope.push('admin');
  g2.account.name = 'changed after save';
  const found = await storage.findToken(access.hash);
  check(found, 'token saved');
  found.token.revokedAt = T0;
  found.grant.revokedAt = T0;
  found.grant.account.uuid = 'someone-else';
  same(await storage.findToken(access.hash), expected, 'mutating a token or its grant after saving or finding it must not change the stored ones');

  const pair = makePair(grant, T0 + 1);
  const expectedGrant = structuredClone(grant);
  const redeemed = await storage.redeemCode(code.hash, T0 + 1, pair);
  check(redeemed.ok, `redeemCode of a fresh code succeeds (got ${outcome(redeemed)})`);
  redeemed.grant.revokedAt = T0;
  redeemed.grant.scope.push('admin');
  pair[0].scope.push('admin');
  same(await storage.findToken(pair[0].hash), { token: { ...pair[0], scope: [...grant.scope] }, grant: expectedGrant }, 'mutating the grant returned by redeemCode, or the tokens passed to it, must not change the stored ones');
});

define('timestamps: millisecond values (odd ms, far past and far future) come back exactly, as numbers', async (make) => {
  const storage = await make();
  const times = [1, T0, 4_102_444_800_999 /* 2100-01-01T00:00:00.999Z */, 8_640_000_000_000_000 /* the largest Date */];
  for (const t of times) {
    const { grant, code } = await withCode(storage, { expiresAt: t + 1 }, { createdAt: t });
    const found = await storage.findCode(code.hash);
    check(found, 'code saved');
    check(typeof found.expiresAt === 'number', `findCode().expiresAt must be a number, got ${typeof found.expiresAt} (${canonical(found.expiresAt)}); a SQL bigint arrives as a string and must be parsed`);
    same(found.expiresAt, t + 1, `expiresAt ${t + 1} round trips exactly`);
    const redeemed = await storage.redeemCode(code.hash, t, []);
    check(redeemed.ok, `redeemCode at ${t} of a code expiring at ${t + 1} must succeed, got ${outcome(redeemed)}`);
    check(typeof redeemed.grant.createdAt === 'number' && redeemed.grant.createdAt === t, `the grant's createdAt (${t}) must come back as the same number, got ${canonical(redeemed.grant.createdAt)}`);
    const replay = await storage.redeemCode(code.hash, t, []);
    check(!replay.ok && typeof replay.usedAt === 'number' && replay.usedAt === t, `usedAt must come back as the number ${t}, got ${canonical(replay)}`);
    check(grant.id === code.grantId, 'fixture');
  }
  const { access } = await withPair(storage);
  const found = await storage.findToken(access.hash);
  check(found && typeof found.token.issuedAt === 'number' && typeof found.token.expiresAt === 'number' && typeof found.grant.createdAt === 'number',
    `token times must be numbers, got ${canonical(found && { issuedAt: found.token.issuedAt, expiresAt: found.token.expiresAt, createdAt: found.grant.createdAt })}`);
  const interaction = makeInteraction({ loginAfter: T0 - 7 });
  await storage.saveInteraction(interaction);
  const foundInteraction = await storage.findInteraction(interaction.idHash);
  check(foundInteraction && typeof foundInteraction.expiresAt === 'number' && foundInteraction.loginAfter === T0 - 7 && typeof foundInteraction.requestedAt === 'number',
    `interaction times must be numbers, got ${canonical(foundInteraction)}`);
});

define('lookups are exact: keys that differ only in letter case or whitespace find nothing', async (make) => {
  const storage = await make();
  // Hashes are base64url: "abc" and "ABC" are different secrets (beware case-insensitive collations).
  const flip = (s: string) => {
    const i = s.search(/[A-Za-z]/);
    const c = s[i]!;
    return s.slice(0, i) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + s.slice(i + 1);
  };
  const client: ClientRecord = { id: `App-${id()}`, name: 'Example App', redirectUri: CALLBACK, secretHash: hash(), createdAt: T0 };
  await storage.saveClient(client);
  same(await storage.findClient(client.id.toLowerCase()), null, 'findClient with a differently cased id finds nothing');
  same(await storage.findClient(`${client.id} `), null, 'findClient with a trailing space finds nothing');
  const { code } = await withCode(storage);
  same(await storage.findCode(flip(code.hash)), null, 'findCode with one letter of the hash in another case finds nothing');
  const flipped = await storage.redeemCode(flip(code.hash), T0, []);
  expectFailure(flipped, 'missing', 'redeemCode with one letter of the hash in another case');
  same(await storage.findCode(`${code.hash} `), null, 'findCode with a trailing space finds nothing');
  const { access, refresh } = await withPair(storage);
  same(await storage.findToken(flip(access.hash)), null, 'findToken with one letter of the hash in another case finds nothing');
  expectFailure(await storage.rotateRefreshToken(flip(refresh.hash), T0, []), 'missing', 'rotateRefreshToken with one letter of the hash in another case');
  const interaction = makeInteraction();
  await storage.saveInteraction(interaction);
  same(await storage.takeInteraction(flip(interaction.idHash), T0), null, 'takeInteraction with one letter of the id hash in another case finds nothing');
  same(await storage.findInteraction(interaction.idHash), interaction, 'and leaves the interaction in place');
});

define('redeemCode: marks the code used at now, stores the tokens, returns the grant', async (make) => {
  const storage = await make();
  const { grant, code } = await withCode(storage);
  const now = T0 + 1234;
  const pair = makePair(grant, now);
  const result = await storage.redeemCode(code.hash, now, pair);
  check(result.ok, `redeemCode of a fresh code must succeed, got ${outcome(result)}`);
  same(result.grant, grant, 'redeemCode returns the code\'s grant');
  same(await storage.findCode(code.hash), { ...code, usedAt: now }, 'the code is kept, marked used at now (kept so that a replay is recognised)');
  for (const token of pair) same(await storage.findToken(token.hash), { token, grant }, `the ${token.kind} token passed to redeemCode is stored`);
});

define('redeemCode: expiry follows the now argument (boundary -1 ms / 0), never the wall clock', async (make) => {
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
  expectFailure(await storage.redeemCode(far.hash, future, []), 'expired', 'redeemCode at now = expiresAt, both in the year 3000 (expiry must compare with the now argument, not the wall clock)');
  const { code: old } = await withCode(storage, { expiresAt: 2_000 }, { createdAt: 1_000 });
  const oldOk = await storage.redeemCode(old.hash, 1_999, []);
  check(oldOk.ok, `redeemCode at now = 1999 of a code expiring at 2000 (both in 1970) must succeed, got ${outcome(oldOk)}: expiry must compare with the now argument, not the wall clock`);
});

define('redeemCode: classifies failures (missing, used with grantId and usedAt, expired, revoked) and changes nothing', async (make) => {
  const storage = await make();
  const tokens = () => makePair(makeGrant());
  expectFailure(await storage.redeemCode(hash(), T0, []), 'missing', 'redeemCode of an unknown code');

  const { grant, code } = await withCode(storage);
  check((await storage.redeemCode(code.hash, T0 + 5, [])).ok, 'first redemption succeeds');
  const replayTokens = makePair(grant, T0 + 6);
  expectFailure(await storage.redeemCode(code.hash, T0 + 6, replayTokens), 'used', 'redeemCode of a used code', { grantId: grant.id, usedAt: T0 + 5 });
  for (const t of replayTokens) same(await storage.findToken(t.hash), null, 'a failed redemption stores none of its tokens');
  same((await storage.findCode(code.hash))?.usedAt, T0 + 5, 'a replay does not change usedAt');
  expectFailure(await storage.redeemCode(code.hash, code.expiresAt + 1, []), 'used', 'redeemCode of a used code after it expired (a replay stays a replay, so the family can still be revoked)', { grantId: grant.id, usedAt: T0 + 5 });

  const { code: expired } = await withCode(storage);
  const expiredTokens = tokens();
  expectFailure(await storage.redeemCode(expired.hash, expired.expiresAt, expiredTokens), 'expired', 'redeemCode of an expired code');
  for (const t of expiredTokens) same(await storage.findToken(t.hash), null, 'a failed redemption stores none of its tokens');

  const { grant: revokedGrant, code: revoked } = await withCode(storage);
  await storage.revokeGrant(revokedGrant.id, T0 + 1);
  const revokedTokens = makePair(revokedGrant, T0 + 2);
  expectFailure(await storage.redeemCode(revoked.hash, T0 + 2, revokedTokens), 'revoked', 'redeemCode of a code whose grant was revoked');
  same((await storage.findCode(revoked.hash))?.usedAt, null, 'a code of a revoked grant is not marked used');
  for (const t of revokedTokens) same(await storage.findToken(t.hash), null, 'a failed redemption stores none of its tokens');
});

define(`redeemCode: exactly one of ${CONFORMANCE_RACERS} concurrent redemptions wins; the others see 'used' with the grantId`, async (make) => {
  const storage = await make();
  const { grant, code } = await withCode(storage);
  const pairs = Array.from({ length: CONFORMANCE_RACERS }, (_, i) => makePair(grant, T0 + 10 + i));
  await warmUp(storage);
  const results = await Promise.all(pairs.map((pair, i) => storage.redeemCode(code.hash, T0 + 10 + i, pair)));
  const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
  check(winners.length === 1, `redeemCode must be single use under concurrency: ${winners.length} of ${CONFORMANCE_RACERS} concurrent redemptions succeeded (expected exactly 1). The check (unused, unexpired, grant not revoked) and the write must be one atomic step: a conditional UPDATE ... WHERE used_at IS NULL ... RETURNING, a script, or no await in between.`);
  const losers = results.filter((r) => !r.ok);
  for (const loser of losers) expectFailure(loser, 'used', 'a losing concurrent redemption', { grantId: grant.id });
  const winner = winners[0]!;
  same(losers.every((l) => l.usedAt === T0 + 10 + winner), true, `every loser reports usedAt = the winner's time (${T0 + 10 + winner}); got ${canonical(losers.map((l) => l.usedAt))}`);
  for (const [i, pair] of pairs.entries()) {
    for (const token of pair) {
      const found = await storage.findToken(token.hash);
      if (i === winner) check(found, 'the winner\'s tokens are stored');
      else same(found, null, 'no loser\'s tokens are stored');
    }
  }
});

define('rotateRefreshToken: marks the token rotated, revokes its paired access token, stores the new pair', async (make) => {
  const storage = await make();
  const { grant, access, refresh } = await withPair(storage);
  const now = T0 + 5000;
  const next = makePair(grant, now);
  const result = await storage.rotateRefreshToken(refresh.hash, now, next);
  check(result.ok, `rotateRefreshToken of a fresh refresh token must succeed, got ${outcome(result)}`);
  same(result.grant, grant, 'rotateRefreshToken returns the token\'s grant');
  same(await storage.findToken(refresh.hash), { token: { ...refresh, rotatedAt: now }, grant }, 'the old refresh token is kept, marked rotated at now (kept so that reuse is recognised)');
  same(await storage.findToken(access.hash), { token: { ...access, revokedAt: now }, grant }, 'the access token issued with the old refresh token is revoked at now (SPEC 4.2)');
  for (const token of next) same(await storage.findToken(token.hash), { token, grant }, `the new ${token.kind} token is stored`);
  // A rotated pair can be rotated again: the chain goes on.
  const third = makePair(grant, now + 1);
  const again = await storage.rotateRefreshToken(next[1].hash, now + 1, third);
  check(again.ok, `the new refresh token can be rotated in turn, got ${outcome(again)}`);
  same((await storage.findToken(next[0].hash))?.token.revokedAt, now + 1, 'and its paired access token is revoked in turn');
});

define('findRefreshFamily: finds the grant of a family by any of its stored refresh tokens, through redeemCode, createGrant and rotations', async (make) => {
  const storage = await make();
  const family = hash();
  const { grant, code } = await withCode(storage);
  same(await storage.findRefreshFamily(family), null, 'findRefreshFamily of a family no token has yet is null');
  const first = makePair(grant, T0, { familyHash: family });
  check((await storage.redeemCode(code.hash, T0 + 1, first)).ok, 'redeemCode succeeds');
  same(await storage.findRefreshFamily(family), { grantId: grant.id, clientId: grant.clientId }, 'findRefreshFamily finds the family of a refresh token stored by redeemCode');
  same((await storage.findToken(first[1].hash))?.token, first[1], 'findToken returns the refresh token with its familyHash');
  same((await storage.findToken(first[0].hash))?.token, first[0], 'an access token has no familyHash');
  const second = makePair(grant, T0 + 2, { familyHash: family });
  check((await storage.rotateRefreshToken(first[1].hash, T0 + 2, second)).ok, 'rotation succeeds');
  same(await storage.findRefreshFamily(family), { grantId: grant.id, clientId: grant.clientId }, 'findRefreshFamily still finds the family after a rotation');
  const other = makeGrant();
  const otherFamily = hash();
  await storage.createGrant(other, { tokens: makePair(other, T0, { familyHash: otherFamily }) });
  same(await storage.findRefreshFamily(otherFamily), { grantId: other.id, clientId: other.clientId }, 'findRefreshFamily finds a family stored by createGrant');
  same(await storage.findRefreshFamily(hash()), null, 'findRefreshFamily of an unknown family is null');
  const i = family.search(/[A-Za-z]/);
  const flipped = family.slice(0, i) + (family[i] === family[i]!.toLowerCase() ? family[i]!.toUpperCase() : family[i]!.toLowerCase()) + family.slice(i + 1);
  same(await storage.findRefreshFamily(flipped), null, 'findRefreshFamily with one letter of the hash in another case finds nothing');
});

define('rotateRefreshToken: expiry follows the now argument (boundary -1 ms / 0); no expiresAt never expires', async (make) => {
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
  expectFailure(await storage.rotateRefreshToken(far.hash, future, []), 'expired', 'rotateRefreshToken at now = expiresAt in the year 3000 (expiry must compare with the now argument, not the wall clock)');
});

define('rotateRefreshToken: classifies failures (missing, access token, used, revoked token, revoked grant, expired) and changes nothing', async (make) => {
  const storage = await make();
  expectFailure(await storage.rotateRefreshToken(hash(), T0, []), 'missing', 'rotateRefreshToken of an unknown token');
  const { grant, access, refresh } = await withPair(storage);
  expectFailure(await storage.rotateRefreshToken(access.hash, T0, []), 'missing', 'rotateRefreshToken of an access token');
  same((await storage.findToken(access.hash))?.token, access, 'an access token passed to rotateRefreshToken is left unchanged');

  check((await storage.rotateRefreshToken(refresh.hash, T0 + 5, makePair(grant, T0 + 5))).ok, 'first rotation succeeds');
  const replay = makePair(grant, T0 + 6);
  expectFailure(await storage.rotateRefreshToken(refresh.hash, T0 + 6, replay), 'used', 'rotateRefreshToken of a rotated token', { grantId: grant.id, usedAt: T0 + 5 });
  for (const t of replay) same(await storage.findToken(t.hash), null, 'a failed rotation stores none of its tokens');
  same((await storage.findToken(refresh.hash))?.token.rotatedAt, T0 + 5, 'a replay does not change rotatedAt');

  const { grant: g2, access: a2, refresh: revokedToken } = await withPair(storage, { revokedAt: T0 - 1 });
  const tokens2 = makePair(g2, T0);
  expectFailure(await storage.rotateRefreshToken(revokedToken.hash, T0, tokens2), 'revoked', 'rotateRefreshToken of a revoked refresh token');
  same((await storage.findToken(a2.hash))?.token.revokedAt, null, 'a failed rotation does not revoke the paired access token');
  for (const t of tokens2) same(await storage.findToken(t.hash), null, 'a failed rotation stores none of its tokens');

  const { grant: g3, access: a3, refresh: r3 } = await withPair(storage);
  await storage.revokeGrant(g3.id, T0 + 1);
  expectFailure(await storage.rotateRefreshToken(r3.hash, T0 + 2, makePair(g3, T0 + 2)), 'revoked', 'rotateRefreshToken of a token whose grant was revoked');
  same((await storage.findToken(r3.hash))?.token.rotatedAt, null, 'a refresh token of a revoked grant is not marked rotated');
  same((await storage.findToken(a3.hash))?.token.revokedAt, null, 'and its access token is not changed (the grant flag already kills it)');
});

define(`rotateRefreshToken: exactly one of ${CONFORMANCE_RACERS} concurrent rotations wins; one live refresh token remains`, async (make) => {
  const storage = await make();
  const { grant, access, refresh } = await withPair(storage);
  const pairs = Array.from({ length: CONFORMANCE_RACERS }, (_, i) => makePair(grant, T0 + 10 + i));
  await warmUp(storage);
  const results = await Promise.all(pairs.map((pair, i) => storage.rotateRefreshToken(refresh.hash, T0 + 10 + i, pair)));
  const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
  check(winners.length === 1, `rotateRefreshToken must be single use under concurrency: ${winners.length} of ${CONFORMANCE_RACERS} concurrent rotations succeeded (expected exactly 1). Check, mark rotated, revoke the pair and insert the new pair in one atomic step.`);
  for (const loser of results.filter((r) => !r.ok)) expectFailure(loser, 'used', 'a losing concurrent rotation', { grantId: grant.id });
  const winner = winners[0]!;
  const now = T0 + 10 + CONFORMANCE_RACERS;
  let live = 0;
  for (const [i, pair] of pairs.entries()) {
    const found = await storage.findToken(pair[1].hash);
    if (isLive(found, now)) live++;
    if (i !== winner) same(found, null, 'no loser\'s refresh token is stored');
    else check(found, 'the winner\'s new refresh token is stored');
  }
  same(live, 1, 'exactly one live refresh token remains in the family (the winner\'s)');
  check(!isLive(await storage.findToken(refresh.hash), now), 'the old refresh token is no longer live');
  same((await storage.findToken(access.hash))?.token.revokedAt, T0 + 10 + winner, 'the old access token was revoked by the winning rotation');
});

define('revokeGrant: revokes the whole family at once, is idempotent (the first revokedAt stays), touches no other grant', async (make) => {
  const storage = await make();
  const { grant, access, refresh } = await withPair(storage);
  const other = await withPair(storage, {}, { clientId: grant.clientId, account: grant.account });
  await storage.revokeGrant(grant.id, T0 + 7);
  const found = await storage.findToken(access.hash);
  same(found?.grant.revokedAt, T0 + 7, 'findToken shows the grant revoked at now');
  same((await storage.findToken(refresh.hash))?.grant.revokedAt, T0 + 7, 'every token of the family shows the grant revoked');
  expectFailure(await storage.rotateRefreshToken(refresh.hash, T0 + 8, makePair(grant, T0 + 8)), 'revoked', 'rotateRefreshToken after revokeGrant');
  await storage.revokeGrant(grant.id, T0 + 99);
  same((await storage.findToken(access.hash))?.grant.revokedAt, T0 + 7, 'a second revokeGrant keeps the first revokedAt');
  same((await storage.findToken(other.access.hash))?.grant.revokedAt, null, 'another grant of the same account and client is untouched');
  await storage.revokeGrant(id(), T0); // unknown grant: no error
  const { grant: g2, code: c2 } = await withCode(storage);
  await storage.revokeGrant(g2.id, T0 + 1);
  expectFailure(await storage.redeemCode(c2.hash, T0 + 2, []), 'revoked', 'redeemCode after revokeGrant');
});

define('revokeGrant racing rotations and redemptions leaves no live token in the family', async (make) => {
  const storage = await make();
  const half = CONFORMANCE_RACERS / 2;
  // Two rounds: the revocation issued before the racers, and in the middle of them.
  for (const revokeFirst of [true, false]) {
    const { grant, refresh } = await withPair(storage);
    const { grant: g2, code } = await withCode(storage);
    const rotatePairs = Array.from({ length: CONFORMANCE_RACERS }, () => makePair(grant, T0 + 20));
    const redeemPairs = Array.from({ length: CONFORMANCE_RACERS }, () => makePair(g2, T0 + 20));
    const rotate = (pairs: TokenRecord[][]) => pairs.map((p) => storage.rotateRefreshToken(refresh.hash, T0 + 20, p));
    const redeem = (pairs: TokenRecord[][]) => pairs.map((p) => storage.redeemCode(code.hash, T0 + 20, p));
    const revoke = () => [storage.revokeGrant(grant.id, T0 + 20), storage.revokeGrant(g2.id, T0 + 20)];
    await warmUp(storage);
    await Promise.all(revokeFirst
      ? [...revoke(), ...rotate(rotatePairs), ...redeem(redeemPairs)]
      : [...rotate(rotatePairs.slice(0, half)), ...redeem(redeemPairs.slice(0, half)), ...revoke(), ...rotate(rotatePairs.slice(half)), ...redeem(redeemPairs.slice(half))]);
    for (const token of [refresh, ...rotatePairs.flat(), ...redeemPairs.flat()]) {
      const found = await storage.findToken(token.hash);
      check(!isLive(found, T0 + 21), `a token issued while its grant was being revoked is still live afterwards: ${canonical(found)}. Revocation must reach every token of the family, also those inserted concurrently (e.g. every lookup joins the grant's revoked flag).`);
    }
  }
});

define('revokeAccess: deletes the consent and revokes every grant of that account and client, and only those', async (make) => {
  const storage = await make();
  const account = makeAccount();
  const clientId = id();
  const otherClient = id();
  await storage.saveConsent({ accountUuid: account.uuid, clientId, scope: ['read'], grantedAt: T0 });
  await storage.saveConsent({ accountUuid: account.uuid, clientId: otherClient, scope: ['read'], grantedAt: T0 });
  const first = await withPair(storage, {}, { account, clientId });
  const second = await withCode(storage, {}, { account, clientId });
  const earlier = await withPair(storage, {}, { account, clientId });
  await storage.revokeGrant(earlier.grant.id, T0 + 1);
  const keepClient = await withPair(storage, {}, { account, clientId: otherClient });
  const keepAccount = await withPair(storage, {}, { account: makeAccount(), clientId });
  await storage.saveConsent({ accountUuid: keepAccount.grant.account.uuid, clientId, scope: ['read'], grantedAt: T0 });

  await storage.revokeAccess(account.uuid, clientId, T0 + 50);
  same(await storage.findConsent(account.uuid, clientId), null, 'the consent of the account and client is deleted');
  same((await storage.findToken(first.access.hash))?.grant.revokedAt, T0 + 50, 'a grant of the pair is revoked at now');
  expectFailure(await storage.redeemCode(second.code.hash, T0 + 51, []), 'revoked', 'redeemCode of a pending code of the pair after revokeAccess');
  same((await storage.findToken(earlier.access.hash))?.grant.revokedAt, T0 + 1, 'a grant revoked earlier keeps its revokedAt');
  same((await storage.findToken(keepClient.access.hash))?.grant.revokedAt, null, 'the same account\'s grant of another client is untouched');
  same((await storage.findToken(keepAccount.access.hash))?.grant.revokedAt, null, 'another account\'s grant of the same client is untouched');
  check(await storage.findConsent(account.uuid, otherClient), 'the account\'s consent for another client stays');
  check(await storage.findConsent(keepAccount.grant.account.uuid, clientId), 'another account\'s consent for the client stays');
  await storage.revokeAccess(id(), id(), T0); // nothing to revoke: no error
});

define('revokeClientGrants: revokes every grant of the client for every account; consents stay', async (make) => {
  const storage = await make();
  const clientId = id();
  const a = await withPair(storage, {}, { clientId });
  const b = await withCode(storage, {}, { clientId });
  const other = await withPair(storage);
  await storage.saveConsent({ accountUuid: a.grant.account.uuid, clientId, scope: ['read'], grantedAt: T0 });
  await storage.revokeClientGrants(clientId, T0 + 3);
  same((await storage.findToken(a.refresh.hash))?.grant.revokedAt, T0 + 3, 'a grant of the client is revoked at now');
  expectFailure(await storage.redeemCode(b.code.hash, T0 + 4, []), 'revoked', 'redeemCode of another account\'s pending code of the client');
  same((await storage.findToken(other.access.hash))?.grant.revokedAt, null, 'another client\'s grant is untouched');
  check(await storage.findConsent(a.grant.account.uuid, clientId), 'the users\' consents stay');
});

define('hashing: a full flow through AuthorizationServer works on the storage, and no clear secret ever reaches a storage method', async (make) => {
  const inner = await make();
  const calls: string[] = [];
  const storage = new Proxy(inner, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(`${String(name)}(${JSON.stringify(args)})`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  let now = T0;
  const clock = { now: () => now };
  const sessions = new Map<string, UserSession>();
  const server = new AuthorizationServer({
    storage,
    clock,
    sessions: { current: (request) => sessions.get(/(?:^|;\s*)sid=([^;]+)/.exec(String(request.headers['cookie'] ?? ''))?.[1] ?? '') ?? null },
  });
  const secrets: Array<[string, string]> = [];
  const keep = (what: string, value: string | undefined | null) => {
    check(typeof value === 'string' && value.length > 0, `the flow did not produce ${what}`);
    secrets.push([what, value]);
    return value;
  };
  const ada = makeAccount();
  sessions.set('ada', { account: ada, authenticatedAt: T0 });
  const cookie = 'sid=ada';
  const get = (url: string, withCookie = true): OAuthRequest => ({ method: 'GET', url, headers: withCookie ? { cookie } : {} });
  const post = (url: string, form: Record<string, string>): OAuthRequest => ({
    method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString(),
  });
  const body = (res: OAuthResponse) => JSON.parse(res.body) as Record<string, string>;
  const api = async (token: string) => (await server.authenticate({ method: 'GET', url: '/v2/me', headers: { authorization: `Bearer ${token}` } })).ok;

  const client = await server.registerClient({ name: 'Conformance App', redirectUri: CALLBACK });
  keep('a client secret', client.clientSecret);
  const authorizeUrl = (params: Record<string, string> = {}) =>
    `/v1/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'read write', state: 's', ...params })}`;
  const exchange = (code: string, extra: Record<string, string> = {}) => server.token(post('/v1/oauth/token', {
    grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: client.clientId, client_secret: client.clientSecret, ...extra,
  }));
  const codeFrom = (decision: { type: string; location?: string }) => {
    check(decision.type === 'redirect' && decision.location, `expected a redirect with a code, got ${canonical(decision)}`);
    return keep('a code', new URL(decision.location).searchParams.get('code'));
  };

  // Sign-in interaction, then consent interaction, then the code.
  const login = await server.authorize(get(authorizeUrl(), false));
  check(login.type === 'login', `authorize without a session gives a login decision, got ${canonical(login)}`);
  keep('a login interaction id', login.interaction.id);
  const consent = await server.resume(login.interaction.id, get('/'));
  check(consent.type === 'consent', `resume after sign-in gives a consent decision, got ${canonical(consent)}`);
  keep('a consent interaction id', consent.interaction.id);
  const code = codeFrom(await server.approve(consent.interaction.id, get('/')));

  now += 1000;
  const first = await exchange(code);
  check(first.status === 200, `the code exchange on this storage must succeed, got ${first.status} ${first.body}`);
  const t1 = body(first);
  keep('an access token', t1['access_token']);
  keep('a refresh token', t1['refresh_token']);
  check(await api(t1['access_token']!), 'the issued access token is accepted by the resource check');

  now += 1000;
  const refreshed = await server.token(post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: t1['refresh_token']! }));
  check(refreshed.status === 200, `refresh on this storage must succeed, got ${refreshed.status} ${refreshed.body}`);
  const t2 = body(refreshed);
  keep('a refreshed access token', t2['access_token']);
  keep('a refreshed refresh token', t2['refresh_token']);
  check(!(await api(t1['access_token']!)), 'the access token issued with the rotated refresh token no longer works');
  check(await api(t2['access_token']!), 'the new access token works');
  const reuse = await server.token(post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: t1['refresh_token']! }));
  check(reuse.status === 400 && body(reuse)['error'] === 'invalid_grant', `reusing a rotated refresh token gives invalid_grant, got ${reuse.status} ${reuse.body}`);
  check(!(await api(t2['access_token']!)), 'reusing a rotated refresh token revokes the family: the newest access token stops working (the storage must report "used" with the grantId)');

  // prompt=none reuses the stored consent; a replayed code revokes what it issued.
  const code2 = codeFrom(await server.authorize(get(authorizeUrl({ prompt: 'none' }))));
  const second = await exchange(code2);
  check(second.status === 200, `the second code exchange succeeds, got ${second.status} ${second.body}`);
  const t3 = body(second);
  keep('an access token', t3['access_token']);
  keep('a refresh token', t3['refresh_token']);
  const replay = await exchange(code2);
  check(replay.status === 400 && body(replay)['error'] === 'invalid_grant', `a replayed code gives invalid_grant, got ${replay.status} ${replay.body}`);
  check(!(await api(t3['access_token']!)), 'a replayed code revokes the tokens it issued (the storage must keep used codes and report "used" with the grantId)');

  // PKCE: the verifier is a secret too; only its challenge may be stored.
  const verifier = keep('a PKCE code verifier', randomToken() + randomToken());
  const challenge = base64url(new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  const code3 = codeFrom(await server.authorize(get(authorizeUrl({ prompt: 'none', code_challenge: challenge, code_challenge_method: 'S256' }))));
  const pkce = await exchange(code3, { code_verifier: verifier });
  check(pkce.status === 200, `a PKCE code exchange succeeds, got ${pkce.status} ${pkce.body}`);
  keep('an access token', body(pkce)['access_token']);
  keep('a refresh token', body(pkce)['refresh_token']);

  // Implicit flow, then revocation.
  const implicit = await server.authorize(get(authorizeUrl({ prompt: 'none', response_type: 'token' })));
  check(implicit.type === 'redirect', `the implicit flow redirects, got ${canonical(implicit)}`);
  const implicitToken = keep('an implicit access token', new URLSearchParams(new URL(implicit.location).hash.slice(1)).get('access_token'));
  check(await api(implicitToken), 'the implicit access token works');
  const revoked = await server.revoke(post('/v1/oauth/revoke', { token: implicitToken }));
  check(revoked.status === 200, `revocation succeeds, got ${revoked.status} ${revoked.body}`);
  check(!(await api(implicitToken)), 'a revoked token no longer works');

  const reset = await server.resetClientSecret(client.clientId);
  keep('a reset client secret', reset.clientSecret);
  check((await server.listAuthorizations(ada.uuid)).length === 1, 'listAuthorizations shows the authorized application');
  await server.revokeAccess({ accountUuid: ada.uuid, clientId: client.clientId });
  const after = await server.authorize(get(authorizeUrl({ prompt: 'none' })));
  check(after.type === 'redirect' && new URL(after.location).searchParams.get('error') === 'consent_required', `after revokeAccess, prompt=none answers consent_required, got ${canonical(after)}`);
  check(!(await api(body(pkce)['access_token']!)), 'after revokeAccess, the application\'s tokens no longer work');

  check(calls.length > 30, `the flow went through the storage (${calls.length} calls)`);
  for (const [what, secret] of secrets) {
    const leak = calls.find((call) => call.includes(secret));
    check(!leak, `${what} reached the storage in clear: ${leak?.slice(0, 200)}`);
  }
});

/** Every case of the kit, in order. */
export const storageConformanceCases: readonly StorageConformanceCase[] = Object.freeze(cases);

/** The outcome of one case run by `runStorageConformance`. */
export interface ConformanceResult {
  name: string;
  ok: boolean;
  error?: unknown;
}

/**
 * Run the cases (all, or those whose name includes one of `only`) one after the other, without
 * any test framework, and report each. Never throws for a failing case.
 */
export async function runStorageConformance(makeStorage: MakeStorage, options: { only?: string[] } = {}): Promise<ConformanceResult[]> {
  const results: ConformanceResult[] = [];
  for (const c of storageConformanceCases) {
    if (options.only && !options.only.some((part) => c.name.includes(part))) continue;
    try {
      await c.run(makeStorage);
      results.push({ name: c.name, ok: true });
    } catch (error) {
      results.push({ name: c.name, ok: false, error });
    }
  }
  return results;
}

/**
 * Register the storage conformance suite: one `describe` named after the storage, one `it` per
 * case. Pass your framework's functions (`{ describe, it }` from vitest, `@jest/globals` or
 * `node:test`); without them, the globals `describe` and `it` are used.
 *
 * @example
 * import { describe, it } from 'vitest';
 * import { describeStorageConformance } from 'authgate/testing';
 * describeStorageConformance('RedisStorage', () => new RedisStorage(redis), { describe, it });
 */
export function describeStorageConformance(
  name: string,
  makeStorage: MakeStorage,
  api?: ConformanceTestApi,
  options: ConformanceOptions = {},
): void {
  const globals = globalThis as unknown as Partial<ConformanceTestApi>;
  const describe = api?.describe ?? globals.describe;
  const it = api?.it ?? globals.it;
  if (typeof describe !== 'function' || typeof it !== 'function') {
    throw new TypeError(
      'describeStorageConformance needs describe and it: pass them as the third argument, e.g. ' +
      "import { describe, it } from 'vitest' (or '@jest/globals', or 'node:test') and call " +
      "describeStorageConformance(name, makeStorage, { describe, it }); or enable your test runner's globals.",
    );
  }
  describe(`storage conformance: ${name}`, () => {
    for (const c of storageConformanceCases) {
      const run = () => c.run(makeStorage);
      if (options.timeout !== undefined) (it as (n: string, f: () => Promise<void>, t: number) => unknown)(c.name, run, options.timeout);
      else it(c.name, run);
    }
  });
}
