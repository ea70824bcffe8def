/**
 * Records and states the cases start from. Times are far from the wall clock (2001), with odd
 * milliseconds, so a storage that consults its own clock, or rounds to seconds, fails.
 */
import { randomId, randomToken } from '../../crypto.js';
import type {
  AuthorizationRequestRecord,
  CodeRecord,
  ConsentInteractionRecord,
  GrantRecord,
  InteractionRecord,
  LoginInteractionRecord,
  OAuthGrantRecord,
  OAuthTokenRecord,
  Storage,
  TokenRecord,
} from '../../storage/types.js';
import type { Account } from '../../types.js';

/**
 * How many concurrent callers race for one single-use step.
 * @group Testing
 */
export const CONFORMANCE_RACERS = 20;

/** The time every fixture starts from: 2001-09-09T01:46:40.123Z. */
export const T0 = 1_000_000_000_123;
/** A code's lifetime in fixtures: ten minutes. */
const CODE_LIFETIME = 600_000;
/** An access token's lifetime in fixtures: thirty days. */
const ACCESS_LIFETIME = 2_592_000_000;
/** The redirection URI of fixture clients, codes and interactions. */
export const CALLBACK = 'https://client.example/cb';

/** A fresh random id (client, grant, account). */
export const id = () => randomId();
/** A fresh random value standing for a hash (code, token, interaction id). */
export const hash = () => randomToken();

/** An account with a field beyond the interface: storages keep extra account fields. */
export function makeAccount(): Account {
  return { uuid: id(), name: 'Ada Lovelace', email: 'ada@example.com', locale: 'en-GB' } as Account;
}

/** A live OAuth grant of a new account and client, created at T0. */
export function makeGrant(over: Partial<Omit<OAuthGrantRecord, 'kind'>> = {}): OAuthGrantRecord {
  return {
    id: id(),
    kind: 'oauth',
    clientId: id(),
    account: makeAccount(),
    scope: ['read', 'write'],
    createdAt: T0,
    revokedAt: null,
    ...over,
  };
}

/** A fresh code of `grant`, expiring one code lifetime after T0. */
function makeCode(grant: OAuthGrantRecord, over: Partial<CodeRecord> = {}): CodeRecord {
  return {
    hash: hash(),
    grantId: grant.id,
    clientId: grant.clientId,
    redirectUri: CALLBACK,
    scope: [...grant.scope],
    codeChallenge: null,
    codeChallengeMethod: null,
    expiresAt: T0 + CODE_LIFETIME,
    usedAt: null,
    ...over,
  };
}

/** A fresh access token of `grant`, issued at `issuedAt`. */
export function makeAccess(grant: OAuthGrantRecord, issuedAt = T0, over: Partial<OAuthTokenRecord> = {}): OAuthTokenRecord {
  return {
    hash: hash(),
    kind: 'access',
    grantId: grant.id,
    clientId: grant.clientId,
    scope: [...grant.scope],
    issuedAt,
    expiresAt: issuedAt + ACCESS_LIFETIME,
    pairHash: null,
    rotatedAt: null,
    revokedAt: null,
    ...over,
  };
}

/** A new access + refresh pair of a grant, as the core mints it. */
export function makePair(
  grant: OAuthGrantRecord,
  issuedAt = T0,
  refresh: Partial<OAuthTokenRecord> = {},
): [OAuthTokenRecord, OAuthTokenRecord] {
  const access = makeAccess(grant, issuedAt);
  return [access, { ...makeAccess(grant, issuedAt), kind: 'refresh', expiresAt: null, pairHash: access.hash, ...refresh }];
}

/** A grant stored with a fresh code (`createGrant`). */
export async function withCode(storage: Storage, code: Partial<CodeRecord> = {}, grant: Partial<Omit<OAuthGrantRecord, 'kind'>> = {}) {
  const g = makeGrant(grant);
  const c = makeCode(g, code);
  await storage.createGrant(g, { code: c });
  return { grant: g, code: c };
}

/** A grant stored with a fresh access + refresh pair (`createGrant`). */
export async function withPair(
  storage: Storage,
  refresh: Partial<OAuthTokenRecord> = {},
  grant: Partial<Omit<OAuthGrantRecord, 'kind'>> = {},
) {
  const g = makeGrant(grant);
  const [access, refreshToken] = makePair(g, T0, refresh);
  await storage.createGrant(g, { tokens: [access, refreshToken] });
  return { grant: g, access, refresh: refreshToken };
}

/** A consent interaction of an authorization request with every optional field set. */
export function makeInteraction(over: Partial<Omit<ConsentInteractionRecord, 'kind' | 'purpose'>> = {}): ConsentInteractionRecord {
  return {
    idHash: hash(),
    kind: 'consent',
    purpose: 'authorization',
    request: {
      clientId: id(),
      redirectUri: CALLBACK,
      responseType: 'code',
      scope: ['read', 'write'],
      state: 'xyz',
      prompt: ['select_account'],
      maxAuthAge: 3600,
      accountHint: 'a1b2c3',
      codeChallenge: hash(),
      codeChallengeMethod: 'S256',
    },
    requestedAt: T0,
    expiresAt: T0 + 600_000,
    loginAfter: null,
    account: makeAccount(),
    ...over,
  };
}

/** The request of an authorization request's step, or `undefined` for any other (or none). */
export const requestOf = (record: InteractionRecord | null | undefined): AuthorizationRequestRecord | undefined =>
  record?.purpose === 'authorization' ? record.request : undefined;

/** A login interaction (no account), otherwise as `makeInteraction`. */
export function makeLoginInteraction(over: Partial<Omit<LoginInteractionRecord, 'kind' | 'purpose'>> = {}): LoginInteractionRecord {
  const { account: _account, ...fields } = makeInteraction();
  return { ...fields, kind: 'login', ...over };
}

/**
 * Open the storage's connections before a race: `CONFORMANCE_RACERS` concurrent lookups. On a
 * cold pool the first racer would finish alone while the others wait for new connections, and a
 * non-atomic storage would pass by luck.
 */
export async function warmUp(storage: Storage): Promise<void> {
  await Promise.all(Array.from({ length: CONFORMANCE_RACERS }, () => storage.findCode(hash())));
}

/** Usable as a credential at `now`: not revoked, its grant not revoked, not rotated, not expired. */
export function isLive(found: { token: TokenRecord; grant: GrantRecord } | null, now: number): boolean {
  return (
    !!found &&
    found.token.revokedAt === null &&
    found.grant.revokedAt === null &&
    found.token.rotatedAt === null &&
    (found.token.expiresAt === null || now < found.token.expiresAt)
  );
}
