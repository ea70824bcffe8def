/**
 * A model of the authorization state machine of the core `AuthorizationServer`, and the
 * fast-check commands that drive the real server and the model side by side.
 *
 * The model is deliberately small: who is signed in where and since when, the pending
 * interactions, the codes, and per grant ("family") its access tokens, its current refresh
 * token and whether it is revoked. Where the correct answer depends on what `prune()` already
 * deleted (a token past its lifetime revoked or replayed), the model says "maybe" instead of
 * guessing, and learns the truth from the next observation.
 *
 * Each command checks its step's invariants (`invariants.ts`) first, then whether the answer is
 * one the model allows (`modelAgreement`); `run.ts` adds the checks that follow every step (no
 * fault reported, every token the model knows to be dead refused). The same commands run on the
 * core directly and, with `Real.browserSteps`, through an HTTP adapter (`http.test.ts`).
 *
 * DPoP (RFC 9449) is on: a code exchange or a refresh may prove one of two keys, and the model
 * keeps the key each token is bound to. Its holder uses a bound token with proofs of that key;
 * every check of a token that may be live also plays the thief (as Bearer, with the other key).
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import fc from 'fast-check';
import {
  type Account,
  type AuthorizationServer,
  type AuthorizeDecision,
  type ClientGrantType,
  DEVICE_CODE_GRANT,
  type OAuthRequest,
  type OAuthResponse,
} from '../../src/index.js';
import type { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA, BOB, CALLBACK, OTHER_CALLBACK } from '../fixtures.js';
import { check, fail, type InvariantName } from './invariants.js';
import { sha256Base64url } from '../../src/crypto.js';

// ---------------------------------------------------------------------------------------------
// Fixed world: two accounts, three browsers, a confidential and a public client (and a third,
// confidential client that only ever appears as the wrong one).

export { ADA, BOB, OTHER_CALLBACK };
export const ACCOUNTS = [ADA, BOB] as const;
export const BROWSERS = 3;

export const CONF_CALLBACK = CALLBACK;
export const PUBLIC_CALLBACK = 'http://127.0.0.1/cb';
/** What the public client sends: its loopback callback on a port of its choosing (RFC 8252 §7.3). */
export const PUBLIC_REDIRECT = 'http://127.0.0.1:8765/cb';

/** The server's protected resources (RFC 8707 / RFC 9728): requests name none, one or both. */
export const RES_A = 'https://api.example/a';
export const RES_B = 'https://api.example/b';
export const RESOURCES = [RES_A, RES_B] as const;
/** A well-formed resource the server does not issue for: `invalid_target`. */
export const FOREIGN_RESOURCE = 'https://elsewhere.example/api';
/** The resources a request names: none, one, both, or one the server does not issue for. */
export type ResourceChoice = 'none' | 'a' | 'b' | 'ab' | 'foreign';
export const resourcesOf = (choice: ResourceChoice): string[] =>
  ({ none: [], a: [RES_A], b: [RES_B], ab: [RES_A, RES_B], foreign: [FOREIGN_RESOURCE] })[choice];

/** The device grant's settings (RFC 8628): a lock after few wrong codes, so that runs reach it. */
export const DEVICE = { interval: 5, lifetime: 600, userCodeLength: 8, maxUserCodeAttempts: 3, lockSeconds: 900 } as const;
/** The grant types of the confidential and the public client: both may use the device grant. */
export const GRANT_TYPES: ClientGrantType[] = ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT];
/** Where the verification page is (the core is told; the adapters mount it there). */
export const VERIFY_PATH = '/v1/oauth/device/verify';

/** The issuer: DPoP proofs (RFC 9449) name the token endpoint and the resources on its origin. */
export const ISSUER = 'https://as.example';

/** What every variant's server is built with, besides its store, clock and sessions. */
export const SERVER_OPTIONS = {
  issuer: ISSUER,
  dpop: {},
  protectedResources: RESOURCES.map((resource) => ({ resource })),
  deviceAuthorization: DEVICE,
} as const;

/** Lifetimes in seconds, short enough that clock advances cross every one of them. */
export const LIFETIMES = { code: 600, interaction: 600, accessToken: 3600 } as const;
/** Refresh-token lifetime of a run: one day, or none (the default). */
export type RefreshLifetime = 86_400 | null;

export type ClientKey = 'conf' | 'pub';
export type Scope = 'read' | 'read write';
export type Prompt = 'none' | 'login' | 'select_account' | undefined;
export type Hint = 'match' | 'matchUpper' | 'other' | undefined;
export type Tri = 'no' | 'yes' | 'maybe';
/** One of the two DPoP keys of the model's clients (RFC 9449): the holder's, or a thief's. */
export type KeyIndex = 0 | 1;
/**
 * The DPoP proof a token request sends: `holder` a proof of the token's key when it is bound
 * (none when it is not), `none` no proof, `other` a proof of the other key (which binds an
 * unbound token to it).
 */
export type ProofChoice = 'holder' | 'none' | 'other';

/** A DPoP key: its private half and its public JWK. */
interface DpopKey {
  privateKey: KeyObject;
  jwk: JsonWebKey;
}
/**
 * The two keys, made once: Ed25519, the cheapest of the default algorithms to sign and verify.
 * Runs make tens of thousands of proofs, so they are signed with node:crypto's synchronous
 * `sign`: through Web Crypto each one waited for the thread pool, which doubled the file's time.
 */
const dpopKeys: DpopKey[] = [0, 1].map(() => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, jwk: publicKey.export({ format: 'jwk' }) };
});
const b64 = (text: string) => Buffer.from(text).toString('base64url');
let proofs = 0;
/** A proof of `htm` at `url` (the token endpoint's, or a resource's; `ath` of `accessToken`), signed at the server's clock. */
async function dpopProof(real: Real, key: KeyIndex, htm: string, url: string, accessToken?: string): Promise<string> {
  const { privateKey, jwk } = dpopKeys[key]!;
  count('dpop proof');
  const claims: Record<string, unknown> = {
    htm,
    htu: url,
    iat: Math.floor(real.clock.now() / 1000),
    jti: `model-${++proofs}-${randomBytes(8).toString('hex')}`,
  };
  if (accessToken !== undefined) claims['ath'] = sha256Base64url(accessToken);
  const input = `${b64(JSON.stringify({ typ: 'dpop+jwt', alg: 'EdDSA', jwk }))}.${b64(JSON.stringify(claims))}`;
  return `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`;
}
const TOKEN_URL = `${ISSUER}/v1/oauth/token`;
/** The key `choice` proves for a token bound to `bound` (undefined: unbound), or none. */
const proofKeyFor = (bound: KeyIndex | undefined, choice: ProofChoice): KeyIndex | undefined =>
  choice === 'none' ? undefined : choice === 'holder' ? bound : bound === 1 ? 0 : 1;

export interface RegisteredClients {
  conf: { clientId: string; clientSecret: string };
  pub: { clientId: string };
  other: { clientId: string; clientSecret: string };
}

/** The system under test. */
export interface Real {
  server: AuthorizationServer;
  clock: FakeClock;
  sessions: FakeSessions;
  clients: RegisteredClients;
  /** The store's own `prune(now)`. */
  prune(now: number): Promise<unknown> | unknown;
  /** Every error handed to `onError`. */
  faults: unknown[];
  /** HTTP variant: the browser-facing steps go through an adapter, with a cookie jar per browser. */
  browserSteps?: BrowserSteps;
  /** When the store's grant-creating and revoking calls started and ended (`recordStorage`), if recorded. */
  storageLog?: StorageLog;
  /**
   * One turn of `Race`'s lead: by default an event-loop turn (enough to put a step of an
   * in-memory store wholly first); a store that answers over a network waits a millisecond, the
   * order of a round trip.
   */
  turn?: () => Promise<void>;
  /**
   * The URL a resource check reaches, which a DPoP proof names (`htu`): by default the core's
   * `/v2/things` on the named resource's origin, or the issuer's without one; over HTTP the
   * adapter's route for `method` and `resource`.
   */
  resourceUrl?: (method: 'GET' | 'POST', resource: string | undefined) => string;
}

/** The storage calls `Race` orders an issuance and a revocation by. */
export const LOGGED_STORAGE_CALLS = ['createGrant', 'revokeAccess', 'revokeAccountGrants', 'revokeClientGrants'] as const;

/** Each logged storage call, with the numbers of its start and its end in the order of events. */
export interface StorageLog {
  events: number;
  calls: { method: (typeof LOGGED_STORAGE_CALLS)[number]; start: number; end: number }[];
}

/**
 * `storage` with the calls of `LOGGED_STORAGE_CALLS` logged: a call started when it was made and
 * ended when its promise settled, so one that ended before another started happened before it
 * on any store. Every other method is the store's own, bound (a synchronous `readToken` stays so).
 */
export function recordStorage<S extends object>(storage: S, log: StorageLog): S {
  const wrapper: Record<string, unknown> = {};
  for (let o: object | null = storage; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      const value = (storage as Record<string, unknown>)[name];
      if (name !== 'constructor' && !(name in wrapper) && typeof value === 'function') wrapper[name] = value.bind(storage);
    }
  }
  for (const method of LOGGED_STORAGE_CALLS) {
    const inner = wrapper[method] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (!inner) continue;
    wrapper[method] = (...args: unknown[]) => {
      const call = { method, start: ++log.events, end: Number.POSITIVE_INFINITY };
      log.calls.push(call);
      const done = inner(...args);
      const end = () => {
        call.end = ++log.events;
      };
      done.then(end, end);
      return done;
    };
  }
  return wrapper as S;
}

/**
 * The browser-facing steps over HTTP: each answer read back into a decision. A recorded
 * interaction then belongs to the browser that was shown it (and a consent carries its CSRF value).
 */
export interface BrowserSteps {
  authorize(browser: number, url: string): Promise<AuthorizeDecision>;
  resume(browser: number, interactionId: string): Promise<AuthorizeDecision>;
  decide(browser: number, interactionId: string, csrf: string | undefined, decision: 'approve' | 'deny'): Promise<AuthorizeDecision>;
}

/** The CSRF value of a consent page read over HTTP. */
const csrfOf = (decision: AuthorizeDecision): string | undefined =>
  decision.type === 'consent' ? (decision.interaction as { csrf?: string }).csrf : undefined;

/** After a step in `browser`: the interaction it recorded (if any) is that browser's. */
function own(model: Model, before: number, browser: number, decision: AuthorizeDecision): void {
  const recorded = model.interactions[before];
  if (!recorded) return;
  recorded.owner = browser;
  const csrf = csrfOf(decision);
  if (csrf !== undefined) recorded.csrf = csrf;
}

/**
 * HTTP variant: an interaction resumed or decided in another browser than the one it was shown in
 * yields neither a consent page nor a code, and answers the client nothing
 * (docs/reference.md#browser-binding).
 * @returns whether the step came from another browser.
 */
function checkBinding(real: Real, step: string, target: PendingInteraction, browser: number, decision: AuthorizeDecision): boolean {
  if (!real.browserSteps || target.owner === undefined || target.owner === browser) return false;
  check(
    'browserBinding',
    decision.type !== 'consent' && decision.type !== 'redirect',
    () => `${step} of an interaction of browser ${target.owner} from browser ${browser}: ${describeDecision(decision)}`,
  );
  return true;
}

// ---------------------------------------------------------------------------------------------
// The model.

export interface Session {
  account: Account;
  /** NaN for a host bug (a sign-in time that is not a finite number). */
  authenticatedAt: number;
  cookie: string;
  broken: boolean;
}

/** A validated authorization request, as the model remembers it. */
export interface Req {
  client: ClientKey;
  responseType: 'code' | 'token';
  scope: Scope;
  prompt: Prompt;
  maxAuthAge: number | undefined;
  hint: string | undefined;
  verifier: string | undefined;
  redirectUri: string;
  state: string;
  /** The `resource` values (RFC 8707), in the order sent; empty for none. */
  resources: string[];
}

/**
 * When a request arrived, and the time a sign-in must follow at every later step of it, if any:
 * a request with `prompt=login` or `max_auth_age` that sent the user to sign in needs that
 * sign-in to follow the request from then on, up to the decision
 * (docs/reference.md#prompt-and-sign-in-requirements, `loginAfter`).
 */
export interface Timing {
  requestedAt: number;
  loginAfter: number | null;
}

/** The `loginAfter` of a sign-in step of a request: the one it carries, else the request's time when it asks for a fresh or recent sign-in. */
export function signInAfter(req: Req, timing: Timing): number | null {
  if (timing.loginAfter !== null) return timing.loginAfter;
  return req.prompt === 'login' || req.maxAuthAge !== undefined ? timing.requestedAt : null;
}

export interface PendingInteraction extends Timing {
  id: string;
  kind: 'login' | 'consent';
  req: Req;
  /** When the original authorization request arrived. */
  requestedAt: number;
  expiresAt: number;
  /** For consent: the account the consent was shown to. */
  account?: Account;
  /** `unknown` after a refused step that may or may not have used the interaction up. */
  status: 'live' | 'gone' | 'unknown';
  /** HTTP variant: the browser that was shown it, and the consent form's CSRF value. */
  owner?: number;
  csrf?: string;
}

export interface Family {
  id: number;
  client: ClientKey;
  account: Account;
  scope: Scope;
  /** The resources of the grant (its code's, its refresh tokens'); empty for none. */
  resources: string[];
  revoked: Tri;
  access: AccessToken[];
  current: RefreshToken | null;
}

export interface Code {
  value: string;
  family: Family;
  req: Req;
  expiresAt: number;
  used: boolean;
}

export interface AccessToken {
  value: string;
  family: Family;
  scope: Scope;
  /** The resources it is good for; empty: every resource (no audience). */
  audience: string[];
  expiresAt: number;
  /** Revoked when the refresh token issued with it was rotated. */
  rotatedOut: boolean;
  /** The DPoP key it is bound to (RFC 9449 §5); absent: a bearer token. */
  key?: KeyIndex;
}

export interface RefreshToken {
  value: string;
  family: Family;
  scope: Scope;
  expiresAt: number | null;
  rotated: boolean;
  access: AccessToken;
  /** When it was rotated (model time); absent before. */
  rotatedAt?: number;
  /** The refresh token presented for it (a refresh or a retry); absent from a code or device exchange. */
  parent?: RefreshToken;
  /** The refresh tokens minted from it: its first child and the siblings retries added. */
  children?: RefreshToken[];
  /** One of its children was rotated: no more retries of it. */
  childRotated?: boolean;
  /** Revoked (with its access token) when a sibling was rotated. */
  superseded?: boolean;
  /** The DPoP key it is bound to (a public client's, or one refreshed without credentials; RFC 9449 §5). */
  key?: KeyIndex;
}

/** The default retry window of a public client's refresh token (refreshRetryWindowSeconds). */
export const RETRY_WINDOW_MS = 60_000;

/**
 * Whether a rotated refresh token presented at `now` is a retry: a public client's, rotated at
 * most `RETRY_WINDOW_MS` ago, unexpired, no child of it rotated.
 */
export function retryable(token: RefreshToken, now: number): boolean {
  return (
    token.rotated &&
    token.family.client === 'pub' &&
    token.rotatedAt !== undefined &&
    now - token.rotatedAt <= RETRY_WINDOW_MS &&
    !token.childRotated &&
    (token.expiresAt === null || now < token.expiresAt)
  );
}

/**
 * The refresh tokens of a family that may yield tokens (before expiry and revocation): its newest
 * one and the siblings of it, minus those rotated or superseded.
 */
export function liveRefresh(family: Family): RefreshToken[] {
  const current = family.current;
  if (!current) return [];
  const generation = current.parent?.children ?? [current];
  return generation.filter((t) => !t.rotated && !t.superseded);
}

/** A personal access token (docs/reference.md#personal-access-tokens). */
export interface PersonalToken {
  id: string;
  value: string;
  account: Account;
  scope: Scope;
  /** `null`: never expires. */
  expiresAt: number | null;
  /** `maybe` after a revocation-endpoint call on an expired token (dead either way). */
  revoked: Tri;
  /** Gone from the store: `prune` ran once it was dead. */
  pruned: boolean;
}

/** A device authorization (RFC 8628) as the model knows it. */
export interface DeviceRequest {
  deviceCode: string;
  /** As shown (`WDJB-MJHT`). */
  userCode: string;
  client: ClientKey;
  scope: Scope;
  resources: string[];
  expiresAt: number;
  /** Seconds between polls: grows by 5 at each `slow_down`. */
  interval: number;
  lastPolledAt: number | null;
  status: 'pending' | 'approved' | 'denied' | 'redeemed';
  /** Denied by a revocation after its approval (so a poll that gets tokens breaks `revocationCoversIssued`). */
  revokedApproval: boolean;
  account: Account | null;
  /** Gone from the store: `prune` ran after it expired. */
  pruned: boolean;
}

/** A device confirmation step (a `consent` interaction of purpose `device`), for one account. */
export interface DeviceStep {
  id: string;
  device: DeviceRequest;
  account: Account;
  browser: number;
  expiresAt: number;
  status: 'live' | 'gone';
}

/** The model's copy of `GuessLimiter`: wrong user codes per key (an account, a browser). */
export interface GuessCount {
  failures: number;
  since: number;
  lockedUntil: number;
}

export interface Model {
  now: number;
  refreshLifetime: RefreshLifetime;
  browsers: (Session | null)[];
  interactions: PendingInteraction[];
  codes: Code[];
  families: Family[];
  access: AccessToken[];
  refresh: RefreshToken[];
  personal: PersonalToken[];
  devices: DeviceRequest[];
  deviceSteps: DeviceStep[];
  guesses: Map<string, GuessCount>;
  /** What each (account, client) approved, per resource; `prompt=none` reuses it. */
  consents: Map<string, Approvals>;
  nextState: number;
  /** Set by a step that used a broken session: `onError` may report that host bug. */
  hostBug: boolean;
}

export function initialModel(now: number, refreshLifetime: RefreshLifetime): Model {
  return {
    now,
    refreshLifetime,
    browsers: Array.from({ length: BROWSERS }, () => null),
    interactions: [],
    codes: [],
    families: [],
    access: [],
    refresh: [],
    personal: [],
    devices: [],
    deviceSteps: [],
    guesses: new Map(),
    consents: new Map(),
    nextState: 1,
    hostBug: false,
  };
}

const scopeValues = (scope: Scope | string): string[] => scope.split(' ');

/**
 * A stored consent as the model keeps it: the scope values approved per resource, `null` for an
 * approval without `resource` (docs/reference.md#stored-consents).
 */
export type Approvals = Map<string | null, Set<string>>;

/** Merge an approval of `scope` for `resources` (none: `null`) into the consent of `key`. */
function approve(model: Model, key: string, scope: Scope, resources: readonly string[]): void {
  const approvals = model.consents.get(key) ?? new Map<string | null, Set<string>>();
  for (const resource of resources.length ? resources : [null]) {
    const values = approvals.get(resource) ?? new Set<string>();
    for (const v of scopeValues(scope)) values.add(v);
    approvals.set(resource, values);
  }
  model.consents.set(key, approvals);
}

/**
 * Whether a consent covers a silent request: for each requested resource, the scope approved for
 * it or the scope approved without `resource` holds the whole scope; for a request without
 * `resource`, the scope approved without `resource` does (docs/reference.md#stored-consents).
 */
export function consentCovers(approvals: Approvals | undefined, scope: Scope, resources: readonly string[]): boolean {
  if (!approvals) return false;
  const holds = (resource: string | null) => scopeValues(scope).every((v) => approvals.get(resource)?.has(v));
  return resources.length === 0 ? holds(null) : resources.every((r) => holds(r) || holds(null));
}

const describeApprovals = (approvals: Approvals | undefined): string =>
  approvals ? [...approvals].map(([r, v]) => `${r ?? '(no resource)'}: ${[...v].join(' ')}`).join('; ') : 'none';

/** Whether a token with `audience` is accepted at `resource` (undefined: a check naming no resource). */
export const audienceAllows = (audience: readonly string[], resource: string | undefined): boolean =>
  audience.length === 0 || (resource !== undefined && audience.includes(resource));
const consentKey = (account: Account, client: ClientKey) => `${account.uuid}|${client}`;
const otherAccount = (account: Account) => (account.uuid === ADA.uuid ? BOB : ADA);

/** Why a session does not meet a request's requirements at `now`, or null when it does. */
export function unmetRequirement(req: Req, session: Session | null, timing: Timing, now: number): string | null {
  const { requestedAt, loginAfter } = timing;
  if (!session) return 'not signed in';
  if (!Number.isFinite(session.authenticatedAt)) return 'sign-in time is not a finite number (host bug: counts as not signed in)';
  if (req.hint !== undefined && !session.account.uuid.toLowerCase().startsWith(req.hint.toLowerCase()))
    return `i=${req.hint} does not match ${session.account.uuid}`;
  if (loginAfter !== null && !(session.authenticatedAt > loginAfter))
    return 'the sign-in this request sent the user to must follow the request';
  if (req.prompt === 'login' && !(session.authenticatedAt > requestedAt)) return 'prompt=login needs a sign-in after the request';
  // A session older than max_auth_age needs a sign-in after the request; one made after the request
  // meets it however long the user then takes to decide, max_auth_age=0 included
  // (docs/reference.md#prompt-and-sign-in-requirements).
  if (req.maxAuthAge !== undefined && session.authenticatedAt <= requestedAt && now - session.authenticatedAt > req.maxAuthAge * 1000) {
    return `session is ${(now - session.authenticatedAt) / 1000} s old, max_auth_age=${req.maxAuthAge}`;
  }
  return null;
}

/** Whether any token of the family can still be used at `now` (so a replay must revoke it). */
export function familyLive(family: Family, now: number): boolean {
  if (family.revoked === 'yes') return false;
  const refreshLive = liveRefresh(family).some((t) => t.expiresAt === null || now < t.expiresAt);
  return refreshLive || family.access.some((t) => !t.rotatedOut && now < t.expiresAt);
}

/** Whether an access token must, may, or must not authenticate at `now`. */
export function accessStatus(token: AccessToken, now: number): 'alive' | 'dead' | 'maybe' {
  if (now >= token.expiresAt || token.rotatedOut || token.family.revoked === 'yes') return 'dead';
  return token.family.revoked === 'maybe' ? 'maybe' : 'alive';
}

/** Revoke a family for sure, or (when the store may have forgotten the token) perhaps. */
function revokeFamily(family: Family, certain: boolean): void {
  if (certain) family.revoked = 'yes';
  else if (family.revoked === 'no') family.revoked = 'maybe';
}

/** What the runs exercised, by event (printed with MODEL_STATS=1): proof that the flows get far. */
export const stats = new Map<string, number>();
export const count = (event: string) => stats.set(event, (stats.get(event) ?? 0) + 1);

// ---------------------------------------------------------------------------------------------
// Talking to the real server.

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function post(url: string, form: Record<string, string | undefined>): OAuthRequest {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) if (v !== undefined) body.set(k, v);
  return { method: 'POST', url, headers: { ...FORM }, body: body.toString() };
}

const browserRequest = (url: string, session: Session | null): OAuthRequest => ({
  method: 'GET',
  url,
  headers: session ? { cookie: session.cookie } : {},
});

/** Call the real server: a throw is a failed invariant, never an answer. */
async function call<T>(what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    return fail('noFaults', `${what} threw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
}

function noServerError(what: string, status: number, body: string): void {
  check('noFaults', status < 500, () => `${what} answered ${status}: ${body.slice(0, 300)}`);
}

function decisionStatus(what: string, decision: AuthorizeDecision): void {
  if (decision.type === 'error') noServerError(what, decision.status, `${decision.error}: ${decision.description}`);
}

/** Client credentials as a form: the right ones, another client's, a wrong secret, or none. */
export type ClientChoice = 'right' | 'other' | 'badSecret' | 'none';

function credentials(real: Real, client: ClientKey, choice: ClientChoice): Record<string, string | undefined> {
  switch (choice) {
    case 'none':
      return {};
    case 'other':
      return { client_id: real.clients.other.clientId, client_secret: real.clients.other.clientSecret };
    case 'badSecret':
      return { client_id: real.clients[client].clientId, client_secret: 'not-the-secret' };
    case 'right':
      return client === 'conf'
        ? { client_id: real.clients.conf.clientId, client_secret: real.clients.conf.clientSecret }
        : { client_id: real.clients.pub.clientId };
  }
}

const json = (res: OAuthResponse) => {
  try {
    return JSON.parse(res.body) as Record<string, unknown>;
  } catch {
    return fail('noFaults', `not JSON (${res.status}): ${res.body.slice(0, 200)}`);
  }
};

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** `authenticate` with a bearer token, as a check naming `resource` or (undefined) none. */
export function bearerCall(real: Real, value: string, method: 'GET' | 'POST', resource?: string) {
  const request: OAuthRequest = { method, url: '/v2/things', headers: { authorization: `Bearer ${value}` } };
  return call('authenticate', () =>
    resource === undefined ? real.server.authenticate(request) : real.server.authenticate(request, { resource }),
  );
}

/**
 * The URL the core's resource check takes the model's `/v2/things` for, which a proof names: on
 * the named resource's origin (RFC 9449 §4.3 point 9: the configured origin, not a Host header),
 * or on the issuer's without one.
 */
const coreResourceUrl = (resource: string | undefined): string => `${resource === undefined ? ISSUER : new URL(resource).origin}/v2/things`;

/** `authenticate` with `Authorization: DPoP` and a proof of `key` for the request (`ath` of the token). */
export async function dpopCall(real: Real, value: string, key: KeyIndex, method: 'GET' | 'POST', resource?: string) {
  const dpop = await dpopProof(real, key, method, real.resourceUrl?.(method, resource) ?? coreResourceUrl(resource), value);
  const request: OAuthRequest = { method, url: '/v2/things', headers: { authorization: `DPoP ${value}`, dpop } };
  return call('authenticate', () =>
    resource === undefined ? real.server.authenticate(request) : real.server.authenticate(request, { resource }),
  );
}

/** The call the holder of `token` makes: with a proof of its key when it is bound, as Bearer otherwise. */
export function holderCall(real: Real, token: AccessToken, method: 'GET' | 'POST', resource?: string) {
  return token.key === undefined
    ? bearerCall(real, token.value, method, resource)
    : dpopCall(real, token.value, token.key, method, resource);
}

/**
 * What a thief holding a copy of a live `token` gets (RFC 9449 §7.1, §7.2): a bound token as
 * Bearer or with a proof of the other key is refused; a bearer token sent with the DPoP scheme is
 * refused too.
 */
async function checkThief(real: Real, token: AccessToken, method: 'GET' | 'POST', resource: string | undefined, why: string) {
  if (token.key === undefined) {
    const asDpop = await dpopCall(real, token.value, 0, method, resource);
    if (!asDpop.ok) noServerError('authenticate', asDpop.response.status, asDpop.response.body);
    check('modelAgreement', !asDpop.ok, () => `${why}: a bearer token of family #${token.family.id} authenticated with the DPoP scheme`);
    return;
  }
  const asBearer = await bearerCall(real, token.value, method, resource);
  if (!asBearer.ok) noServerError('authenticate', asBearer.response.status, asBearer.response.body);
  check('boundTokenNeedsItsKey', !asBearer.ok, () => `${why}: a DPoP-bound token of family #${token.family.id} authenticated as Bearer`);
  const other = await dpopCall(real, token.value, token.key === 0 ? 1 : 0, method, resource);
  if (!other.ok) noServerError('authenticate', other.response.status, other.response.body);
  check(
    'boundTokenNeedsItsKey',
    !other.ok,
    () => `${why}: a DPoP-bound token of family #${token.family.id} authenticated with a proof of another key`,
  );
  count('thief refused');
}

/** The access tokens a thief has tried already (`checkThief`), once each. */
const thiefTried = new WeakSet<AccessToken>();

/** A check a live access token passes (one of its resources, if it has any): a probe of a dead one then proves its revocation. */
const probeResource = (token: AccessToken): string | undefined => token.audience[0];

/**
 * Check the answer to an access token that the model says is dead, alive or maybe, at a check
 * naming `resource` (undefined: none), and learn from it.
 */
async function checkBearer(
  real: Real,
  model: Model,
  token: AccessToken,
  method: 'GET' | 'POST',
  why: string,
  resource: string | undefined = probeResource(token),
): Promise<void> {
  const result = await holderCall(real, token, method, resource);
  if (!result.ok) noServerError('authenticate', result.response.status, result.response.body);
  const status = accessStatus(token, model.now);
  // Whoever copied a token that may be live gets nothing from it without its key. A token's binding
  // never changes, so the thief tries each token once (the first check while it may be live): every
  // check would make each run four times slower in proofs alone, for nothing more to find.
  if (status !== 'dead' && !thiefTried.has(token)) {
    thiefTried.add(token);
    await checkThief(real, token, method, resource, why);
  }
  if (!audienceAllows(token.audience, resource)) {
    // A token for named resources is good only at those (docs/reference.md#resource-indicators-rfc-8707).
    check(
      'audienceRespected',
      !result.ok,
      () =>
        `${why}: a token of family #${token.family.id} for ${token.audience.join(' ')} authenticated at ${resource ?? 'a check naming no resource'}`,
    );
    check(
      'modelAgreement',
      result.ok || result.response.status === 401,
      () => `wrong audience: expected 401, got ${result.ok ? 'ok' : result.response.status}`,
    );
    return;
  }
  if (status === 'dead') {
    const invariant: InvariantName = model.now >= token.expiresAt ? 'nothingExpiredAuthenticates' : 'nothingRevokedAuthenticates';
    check(
      invariant,
      !result.ok,
      () =>
        `${why}: access token of family #${token.family.id} authenticated (expired ${model.now >= token.expiresAt}, rotated out ${token.rotatedOut}, family revoked ${token.family.revoked})`,
    );
    check(
      'modelAgreement',
      result.ok || result.response.status === 401,
      () => `dead token: expected 401, got ${result.ok ? 'ok' : result.response.status}`,
    );
    return;
  }
  if (result.ok) {
    check(
      'scopeNeverWidens',
      result.token.scope.join(' ') === token.scope,
      () => `bearer scope ${result.token.scope.join(' ')} for a token of scope ${token.scope}`,
    );
    check('modelAgreement', result.token.account.uuid === token.family.account.uuid, () => 'bearer check names another account');
    check('modelAgreement', result.token.kind === 'oauth', () => `an OAuth access token verified as ${result.token.kind}`);
    check('scopeNeverWidens', method === 'GET' || token.scope === 'read write', () => `a ${token.scope} token was allowed ${method}`);
    count('bearer ok');
    token.family.revoked = 'no';
    return;
  }
  if (method === 'POST' && token.scope === 'read' && result.response.status === 403) return;
  if (status === 'maybe' && result.response.status === 401) {
    token.family.revoked = 'yes';
    return;
  }
  fail(
    'modelAgreement',
    `${why}: a live access token of family #${token.family.id} was refused: ${result.response.status} ${result.response.body}`,
  );
}

/** Every access token the model knows to be dead must be refused, after every step. */
export async function sweepDeadTokens(real: Real, model: Model): Promise<void> {
  for (const token of model.access) {
    if (accessStatus(token, model.now) === 'dead') await checkBearer(real, model, token, 'GET', 'sweep');
  }
  for (const token of model.personal) {
    if (personalStatus(token, model.now) === 'dead') await checkPersonal(real, model, token, 'GET', undefined, 'sweep');
  }
}

/** Whether a personal token must, may, or must not authenticate at `now`. */
export function personalStatus(token: PersonalToken, now: number): 'alive' | 'dead' | 'maybe' {
  if (token.revoked === 'yes' || (token.expiresAt !== null && now >= token.expiresAt)) return 'dead';
  return token.revoked === 'maybe' ? 'maybe' : 'alive';
}

/** Check the answer to a personal token at a check naming `resource` (undefined: none), and learn from it. */
async function checkPersonal(
  real: Real,
  model: Model,
  token: PersonalToken,
  method: 'GET' | 'POST',
  resource: string | undefined,
  why: string,
): Promise<void> {
  const result = await bearerCall(real, token.value, method, resource);
  if (!result.ok) noServerError('authenticate', result.response.status, result.response.body);
  const status = personalStatus(token, model.now);
  const expired = token.expiresAt !== null && model.now >= token.expiresAt;
  if (status === 'dead') {
    check(
      expired ? 'nothingExpiredAuthenticates' : 'nothingRevokedAuthenticates',
      !result.ok,
      () => `${why}: personal token ${token.id} authenticated (expired ${expired}, revoked ${token.revoked})`,
    );
    check(
      'modelAgreement',
      result.ok || result.response.status === 401,
      () => `dead personal token: expected 401, got ${result.ok ? 'ok' : result.response.status}`,
    );
    return;
  }
  if (result.ok) {
    const t = result.token;
    check(
      'modelAgreement',
      t.kind === 'personal' && t.personalToken?.id === token.id && t.account.uuid === token.account.uuid,
      () =>
        `${why}: personal token ${token.id} of ${token.account.uuid} verified as ${JSON.stringify({ kind: t.kind, id: t.personalToken?.id, account: t.account.uuid })}`,
    );
    check(
      'scopeNeverWidens',
      t.scope.join(' ') === token.scope && (method === 'GET' || token.scope === 'read write'),
      () => `${why}: a ${token.scope} personal token passed ${method} with scope ${t.scope.join(' ')}`,
    );
    check(
      'modelAgreement',
      t.expiresAt === (token.expiresAt ?? Number.MAX_SAFE_INTEGER),
      () => `${why}: personal token expiresAt ${t.expiresAt}`,
    );
    count('personal token ok');
    token.revoked = 'no';
    return;
  }
  if (method === 'POST' && token.scope === 'read' && result.response.status === 403) return;
  if (status === 'maybe' && result.response.status === 401) {
    token.revoked = 'yes';
    return;
  }
  fail('modelAgreement', `${why}: live personal token ${token.id} was refused: ${result.response.status} ${result.response.body}`);
}

/** A callback redirect, read. */
interface Callback {
  params: URLSearchParams;
  mode: 'query' | 'fragment';
}

function readCallback(req: Req, location: string): Callback {
  check('modelAgreement', location.startsWith(req.redirectUri), () => `redirect to ${location}, not to ${req.redirectUri}`);
  const url = new URL(location);
  const mode = url.hash ? 'fragment' : 'query';
  const params = mode === 'fragment' ? new URLSearchParams(url.hash.slice(1)) : url.searchParams;
  return { params, mode };
}

/**
 * A decision that issued something (a code, or an implicit access token): check the invariants,
 * then record it in the model.
 */
function recordIssue(
  model: Model,
  step: string,
  cb: Callback,
  req: Req,
  session: Session | null,
  timing: Timing,
  consentAccount?: Account,
): void {
  const unmet = unmetRequirement(req, session, timing, model.now);
  check(
    'issuedOnlyToQualifiedSession',
    unmet === null,
    () => `${step} issued ${cb.params.has('code') ? 'a code' : 'a token'} although ${unmet} (request ${describeReq(req)})`,
  );
  if (consentAccount)
    check(
      'issuedOnlyToQualifiedSession',
      session!.account.uuid === consentAccount.uuid,
      () => `${step} issued to ${session!.account.uuid}, consent was shown to ${consentAccount.uuid}`,
    );
  check('modelAgreement', cb.params.get('state') === req.state, () => `${step}: state ${cb.params.get('state')} instead of ${req.state}`);
  const family: Family = {
    id: model.families.length + 1,
    client: req.client,
    account: session!.account,
    scope: req.scope,
    resources: req.resources,
    revoked: 'no',
    access: [],
    current: null,
  };
  model.families.push(family);
  if (req.responseType === 'code') {
    const code = cb.params.get('code');
    check('modelAgreement', cb.mode === 'query' && !!code, () => `${step}: a code response without a code in the query`);
    model.codes.push({ value: code!, family, req, expiresAt: model.now + LIFETIMES.code * 1000, used: false });
  } else {
    const value = cb.params.get('access_token');
    check(
      'modelAgreement',
      cb.mode === 'fragment' && !!value && !cb.params.has('refresh_token'),
      () => `${step}: an implicit response without an access token in the fragment`,
    );
    check(
      'scopeNeverWidens',
      cb.params.get('scope') === req.scope,
      () => `${step}: implicit token scope ${cb.params.get('scope')} for a request of ${req.scope}`,
    );
    const token: AccessToken = {
      value: value!,
      family,
      scope: req.scope,
      audience: req.resources,
      expiresAt: model.now + LIFETIMES.accessToken * 1000,
      rotatedOut: false,
    };
    family.access.push(token);
    model.access.push(token);
  }
}

export const describeReq = (req: Req) =>
  `${req.client} ${req.responseType} scope=${req.scope} resource=${req.resources.join(',') || '-'} prompt=${req.prompt ?? '-'} max_auth_age=${req.maxAuthAge ?? '-'} i=${req.hint ?? '-'} pkce=${req.verifier ? 'S256' : 'none'}`;

function recordInteraction(model: Model, decision: AuthorizeDecision & { type: 'login' | 'consent' }, req: Req, timing: Timing): void {
  model.interactions.push({
    id: decision.interaction.id,
    kind: decision.type,
    req,
    requestedAt: timing.requestedAt,
    // A sign-in step carries the time its sign-in must follow; a consent keeps the one before it.
    loginAfter: decision.type === 'login' ? signInAfter(req, timing) : timing.loginAfter,
    expiresAt: model.now + LIFETIMES.interaction * 1000,
    ...(decision.interaction.account && { account: decision.interaction.account }),
    status: 'live',
  });
}

/** The outcomes the model allows for an authorization step. */
type Expected = { redirectError?: string; issue?: boolean; login?: boolean; consent?: boolean; errorPage?: boolean };

function describeDecision(d: AuthorizeDecision): string {
  if (d.type === 'redirect') return `redirect ${d.location.replace(/(code|access_token)=[^&]+/, '$1=…')}`;
  if (d.type === 'error') return `error page ${d.error}: ${d.description}`;
  return `${d.type} interaction`;
}

/**
 * Check a decision against what the model allows, and record what it created. `session` is the
 * session the step saw; `timing` when the original request arrived and what sign-in it needs since.
 */
function applyDecision(
  model: Model,
  step: string,
  decision: AuthorizeDecision,
  expected: Expected,
  req: Req,
  session: Session | null,
  timing: Timing,
  consentAccount?: Account,
): void {
  decisionStatus(step, decision);
  if (session?.broken) {
    // A sign-in time that is not a finite number is "not signed in", never a pass
    // (docs/reference.md#prompt-and-sign-in-requirements).
    const signedOut =
      decision.type === 'login' ||
      decision.type === 'error' ||
      (decision.type === 'redirect' && /[?#&]error=(login_required|invalid_request|invalid_target)/.test(decision.location));
    check(
      'nonFiniteSignInIsSignedOut',
      signedOut,
      () => `${step} with a sign-in time that is not a finite number answered ${describeDecision(decision)} (${describeReq(req)})`,
    );
  }
  const got = describeDecision(decision);
  count(
    `${step} -> ${decision.type === 'redirect' ? (/[?#&](code|access_token)=/.test(decision.location) ? 'issued' : 'error redirect') : decision.type}`,
  );
  const disagree = () =>
    `${step} (${describeReq(req)}; session ${describeSession(session)}): model allows ${JSON.stringify(expected)}, got ${got}`;
  switch (decision.type) {
    case 'redirect': {
      const cb = readCallback(req, decision.location);
      const error = cb.params.get('error');
      if (error === null) {
        recordIssue(model, step, cb, req, session, timing, consentAccount);
        check('modelAgreement', !!expected.issue, disagree);
      } else {
        check('modelAgreement', expected.redirectError === error, disagree);
        check(
          'modelAgreement',
          cb.mode === (req.responseType === 'token' ? 'fragment' : 'query'),
          () => `${step}: error in the ${cb.mode}`,
        );
      }
      return;
    }
    case 'login':
    case 'consent':
      if (decision.type === 'consent') {
        const unmet = unmetRequirement(req, session, timing, model.now);
        check('consentOnlyToQualifiedSession', unmet === null, () => `${step} showed the consent although ${unmet} (${describeReq(req)})`);
        check(
          'consentOnlyToQualifiedSession',
          decision.interaction.account?.uuid === session!.account.uuid,
          () => `${step}: consent shown for ${decision.interaction.account?.uuid} to ${describeSession(session)}`,
        );
      }
      check('modelAgreement', decision.type === 'login' ? !!expected.login : !!expected.consent, disagree);
      recordInteraction(model, decision, req, timing);
      return;
    case 'error':
      check('modelAgreement', !!expected.errorPage, disagree);
  }
}

const describeSession = (session: Session | null) =>
  session
    ? `${session.account.name.split(' ')[0]} signed in at ${Number.isFinite(session.authenticatedAt) ? new Date(session.authenticatedAt).toISOString() : String(session.authenticatedAt)}`
    : 'none';

// ---------------------------------------------------------------------------------------------
// Commands. Each picks what it acts on by index into the model's lists (so shrinking keeps
// working), and checks first the invariants, then the model's prediction.

type Cmd = fc.AsyncCommand<Model, Real>;
const pick = <T>(list: readonly T[], index: number): T => list[index % list.length]!;

/** Sign an account in, in a browser, `ageSeconds` ago (replacing whoever was signed in there). */
export class SignIn implements Cmd {
  constructor(
    readonly browser: number,
    readonly account: Account,
    readonly ageSeconds: number,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const old = model.browsers[this.browser];
    if (old) real.sessions.signOut(old.cookie);
    const authenticatedAt = model.now - this.ageSeconds * 1000;
    const cookie = real.sessions.signIn(this.account, authenticatedAt);
    model.browsers[this.browser] = { account: this.account, authenticatedAt, cookie, broken: false };
  }
  toString = () => `SignIn(browser ${this.browser}, ${this.account.name.split(' ')[0]}, ${this.ageSeconds} s ago)`;
}

/** A host bug: the session's sign-in time is not a finite number. It counts as not signed in. */
export class SignInBroken implements Cmd {
  constructor(
    readonly browser: number,
    readonly account: Account,
    readonly value: 'NaN' | 'undefined' | 'string',
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const old = model.browsers[this.browser];
    if (old) real.sessions.signOut(old.cookie);
    const bad = { NaN: Number.NaN, undefined, string: String(model.now) }[this.value];
    // setSession, not signIn: signIn's default parameter would turn `undefined` into now.
    const cookie = real.sessions.setSession({ account: this.account, authenticatedAt: bad });
    model.browsers[this.browser] = { account: this.account, authenticatedAt: Number.NaN, cookie, broken: true };
  }
  toString = () => `SignInBroken(browser ${this.browser}, ${this.account.name.split(' ')[0]}, authenticatedAt=${this.value})`;
}

export class SignOut implements Cmd {
  constructor(readonly browser: number) {}
  check = (m: Readonly<Model>) => m.browsers[this.browser] !== null;
  async run(model: Model, real: Real): Promise<void> {
    real.sessions.signOut(model.browsers[this.browser]!.cookie);
    model.browsers[this.browser] = null;
  }
  toString = () => `SignOut(browser ${this.browser})`;
}

export class Advance implements Cmd {
  constructor(readonly seconds: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    real.clock.advance(this.seconds * 1000);
    model.now += this.seconds * 1000;
  }
  toString = () => `Advance(${this.seconds} s)`;
}

export class Prune implements Cmd {
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    await call('prune', async () => real.prune(model.now));
    // A personal token is removed once revoked or expired (docs/reference.md#personal-access-tokens).
    for (const token of model.personal) if (personalStatus(token, model.now) === 'dead') token.pruned = true;
    // Expired device requests, whatever their status.
    for (const device of model.devices) if (model.now >= device.expiresAt) device.pruned = true;
  }
  toString = () => 'Prune()';
}

export interface AuthorizeParams {
  client: ClientKey;
  responseType: 'code' | 'token';
  scope: Scope;
  prompt: Prompt;
  maxAuthAge: number | undefined;
  hint: Hint;
  pkce: boolean;
  resources: ResourceChoice;
}

/** GET /authorize from a browser, with any combination of the parameters. */
export class Authorize implements Cmd {
  constructor(
    readonly browser: number | null,
    readonly p: AuthorizeParams,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    // null: the first browser where someone is signed in.
    const browserIndex =
      this.browser ??
      Math.max(
        0,
        model.browsers.findIndex((b) => b !== null),
      );
    const session = model.browsers[browserIndex]!;
    model.hostBug = !!session?.broken;
    const { p } = this;
    // The public client never uses the implicit flow here (a per-client matter:
    // docs/reference.md#clients).
    const responseType = p.client === 'pub' ? 'code' : p.responseType;
    const hintAccount = session?.account ?? ADA;
    const hint =
      p.hint === 'match'
        ? hintAccount.uuid.slice(0, 8)
        : p.hint === 'matchUpper'
          ? hintAccount.uuid.slice(0, 8).toUpperCase()
          : p.hint === 'other'
            ? otherAccount(hintAccount).uuid.slice(0, 8)
            : undefined;
    const verifier = p.pkce && responseType === 'code' ? randomBytes(32).toString('base64url') : undefined;
    const req: Req = {
      client: p.client,
      responseType,
      scope: p.scope,
      prompt: p.prompt,
      maxAuthAge: p.maxAuthAge,
      hint,
      verifier,
      redirectUri: p.client === 'conf' ? CONF_CALLBACK : PUBLIC_REDIRECT,
      state: `st${model.nextState++}`,
      resources: resourcesOf(p.resources),
    };
    const query = new URLSearchParams({
      client_id: real.clients[p.client].clientId,
      redirect_uri: req.redirectUri,
      response_type: responseType,
      scope: p.scope,
      state: req.state,
    });
    if (p.prompt) query.set('prompt', p.prompt);
    if (p.maxAuthAge !== undefined) query.set('max_auth_age', String(p.maxAuthAge));
    for (const r of req.resources) query.append('resource', r);
    if (hint) query.set('i', hint);
    if (verifier) {
      query.set('code_challenge', s256(verifier));
      query.set('code_challenge_method', 'S256');
    }
    const url = `/v1/oauth/authorize?${query}`;
    const steps = real.browserSteps;
    const decision = await call('authorize', () =>
      steps ? steps.authorize(browserIndex, url) : real.server.authorize(browserRequest(url, session)),
    );
    const before = model.interactions.length;
    if (req.prompt === 'none' && decision.type === 'redirect' && /[?#&](code|access_token)=/.test(decision.location)) {
      count(`prompt=none issued for ${req.resources.length} resources`);
      const approvals = session && model.consents.get(consentKey(session.account, req.client));
      check(
        'silentOnlyWithinConsent',
        consentCovers(approvals ?? undefined, req.scope, req.resources),
        () => `prompt=none issued for ${describeReq(req)} though the stored approvals are ${describeApprovals(approvals ?? undefined)}`,
      );
    }
    applyDecision(model, 'authorize', decision, this.expected(model, req, session), req, session, {
      requestedAt: model.now,
      loginAfter: null,
    });
    own(model, before, browserIndex, decision);
  }

  expected(model: Model, req: Req, session: Session | null): Expected {
    if (req.client === 'pub' && !req.verifier) return { redirectError: 'invalid_request' };
    // Checked last of the request (docs/reference.md#resource-indicators-rfc-8707), redirected.
    if (req.resources.includes(FOREIGN_RESOURCE)) return { redirectError: 'invalid_target' };
    const unmet = unmetRequirement(req, session, { requestedAt: model.now, loginAfter: null }, model.now);
    if (req.prompt === 'none') {
      if (unmet !== null) return { redirectError: 'login_required' };
      if (req.client === 'pub') return { redirectError: 'consent_required' };
      const approvals = model.consents.get(consentKey(session!.account, req.client));
      return consentCovers(approvals, req.scope, req.resources) ? { issue: true } : { redirectError: 'consent_required' };
    }
    return unmet === null && req.prompt !== 'login' ? { consent: true } : { login: true };
  }
  toString = () => `Authorize(browser ${this.browser ?? 'first signed in'}, ${JSON.stringify(this.p)})`;
}

/**
 * An interaction the model knows, or (index null) a made-up id. Mostly one that fits the step
 * (a live one of `kind`), so that flows get far; sometimes any, used up or expired ones too.
 */
function pickInteraction(model: Readonly<Model>, index: number | null, kind: 'login' | 'consent'): PendingInteraction | null {
  if (index === null || model.interactions.length === 0) return null;
  const fitting = model.interactions.filter((i) => i.kind === kind && i.status === 'live' && model.now < i.expiresAt);
  return fitting.length > 0 && index % 4 !== 3 ? pick(fitting, index >> 2) : pick(model.interactions, index >> 2);
}

/** The browser a step runs in: the given one, or (null) one signed in as `account` if any. */
function pickBrowser(model: Readonly<Model>, browser: number | null, account: Account | undefined): number {
  if (browser !== null) return browser;
  const found = model.browsers.findIndex((s) => s !== null && account !== undefined && s.account.uuid === account.uuid);
  return Math.max(found, 0);
}

/** `resume` after sign-in: from the browser that started it or any other (the core does not bind). */
export class Resume implements Cmd {
  constructor(
    readonly interaction: number | null,
    readonly browserChoice: number | null,
  ) {}
  /** Set by `run`: the given browser, or (null) the one that started the interaction. */
  private browser = 0;
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const target = pickInteraction(model, this.interaction, 'login');
    this.browser = this.browserChoice ?? target?.owner ?? 0;
    const session = model.browsers[this.browser]!;
    model.hostBug = !!session?.broken;
    const id = target?.id ?? randomBytes(32).toString('base64url');
    const steps = real.browserSteps;
    const decision = await call('resume', () =>
      steps ? steps.resume(this.browser, id) : real.server.resume(id, browserRequest('/', session)),
    );
    if (!target) {
      decisionStatus('resume', decision);
      check('modelAgreement', decision.type === 'error', () => `resume of an unknown interaction: ${describeDecision(decision)}`);
      return;
    }
    if (checkBinding(real, 'resume', target, this.browser, decision)) {
      decisionStatus('resume', decision);
      if (target.status === 'live') target.status = 'unknown';
      return;
    }
    const expected = this.expected(model, target, session);
    const before = target.status;
    if (target.status === 'live' || decision.type !== 'error') target.status = 'gone';
    if (before === 'unknown' && decision.type === 'error') target.status = 'gone';
    const count = model.interactions.length;
    applyDecision(model, 'resume', decision, expected, target.req, session, target);
    own(model, count, this.browser, decision);
  }

  expected(model: Model, target: PendingInteraction, session: Session | null): Expected {
    if (target.status === 'gone' || model.now >= target.expiresAt) return { errorPage: true };
    const unknown = target.status === 'unknown';
    const unmet = unmetRequirement(target.req, session, target, model.now);
    return { login: unmet !== null, consent: unmet === null, errorPage: unknown };
  }
  toString = () => `Resume(interaction ${this.interaction ?? 'unknown id'}, browser ${this.browserChoice ?? 'that started it'})`;
}

/** `approve` or `deny` of a consent interaction, from any browser. */
export class Decide implements Cmd {
  /** Set by an approval that issued: whose consent it saved, for what request. */
  approved: { account: Account; client: ClientKey; req: Req } | null = null;
  constructor(
    readonly interaction: number | null,
    readonly browser: number | null,
    readonly decision: 'approve' | 'deny',
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const target = pickInteraction(model, this.interaction, 'consent');
    await this.on(model, real, target, this.browser ?? target?.owner ?? pickBrowser(model, null, target?.account));
  }

  /** Decide on `target` (null: a made-up id) in browser `browser`. */
  async on(model: Model, real: Real, target: PendingInteraction | null, browser: number): Promise<void> {
    const session = model.browsers[browser]!;
    model.hostBug = !!session?.broken;
    const id = target?.id ?? randomBytes(32).toString('base64url');
    const request = browserRequest('/', session);
    const steps = real.browserSteps;
    const decision = await call(this.decision, () =>
      steps
        ? steps.decide(browser, id, target?.owner === browser ? target.csrf : undefined, this.decision)
        : this.decision === 'approve'
          ? real.server.approve(id, request)
          : real.server.deny(id, request),
    );
    if (!target) {
      decisionStatus(this.decision, decision);
      check('modelAgreement', decision.type === 'error', () => `${this.decision} of an unknown interaction: ${describeDecision(decision)}`);
      return;
    }
    if (checkBinding(real, this.decision, target, browser, decision)) {
      decisionStatus(this.decision, decision);
      if (target.status === 'live') target.status = 'unknown';
      return;
    }
    const dead = target.status === 'gone' || model.now >= target.expiresAt;
    const rightAccount = target.kind === 'consent' && session !== null && target.account?.uuid === session.account.uuid;
    const unmet = unmetRequirement(target.req, session, target, model.now);
    const allowed = !dead && rightAccount && unmet === null;
    count(`${this.decision} model: ${dead ? 'dead' : !rightAccount ? 'wrong account' : unmet !== null ? 'unmet' : 'allowed'}`);
    const certain = target.status === 'live';
    // Every step re-checks the whole request against the session it sees
    // (docs/reference.md#prompt-and-sign-in-requirements).
    const recheck = () => {
      if (decision.type !== 'redirect') return;
      check(
        'interactionStepRechecksRequest',
        allowed,
        () =>
          `${this.decision} answered the client although ${dead ? 'the interaction is gone' : !rightAccount ? `the session is ${describeSession(session)} and the consent was shown to ${target.account?.uuid ?? '(a login interaction)'}` : unmet} (${describeReq(target.req)})`,
      );
    };
    if (this.decision === 'approve') {
      const expected: Expected = allowed
        ? certain
          ? { issue: true }
          : { issue: true, errorPage: true }
        : { errorPage: true, login: true };
      // A code is reported as issuedOnlyToQualifiedSession (checked inside), the rest here.
      applyDecision(model, 'approve', decision, expected, target.req, session, target, target.account);
      recheck();
      if (decision.type === 'redirect' && !new URL(decision.location).href.includes('error=')) {
        approve(model, consentKey(session!.account, target.req.client), target.req.scope, target.req.resources);
        this.approved = { account: session!.account, client: target.req.client, req: target.req };
      }
    } else {
      const expected: Expected = allowed
        ? certain
          ? { redirectError: 'access_denied' }
          : { redirectError: 'access_denied', errorPage: true }
        : { errorPage: true, login: true };
      recheck();
      applyDecision(model, 'deny', decision, expected, target.req, session, target, target.account);
    }
    if (decision.type === 'redirect' || dead) target.status = 'gone';
    else if (target.status === 'live') target.status = 'unknown';
  }
  toString = () =>
    `${this.decision === 'approve' ? 'Approve' : 'Deny'}(interaction ${this.interaction ?? 'unknown id'}, browser ${this.browser ?? 'that was shown it'})`;
}

export type VerifierChoice = 'right' | 'wrong' | 'none';

/** POST /token with `grant_type=authorization_code`. */
export class ExchangeCode implements Cmd {
  constructor(
    readonly code: number,
    readonly client: ClientChoice,
    readonly verifier: VerifierChoice,
    readonly redirectRight: boolean,
    /** `resource` values narrowing the access token (RFC 8707 §2.2); 'none' sends none. */
    readonly resource: ResourceChoice = 'none',
    /** The DPoP key the exchange proves (RFC 9449 §5); absent: no proof. */
    readonly key?: KeyIndex,
  ) {}
  check = (m: Readonly<Model>) => m.codes.length > 0;
  async run(model: Model, real: Real): Promise<void> {
    await this.on(model, real, pick(model.codes, this.code));
  }

  async on(model: Model, real: Real, code: Code): Promise<void> {
    const { req, family } = code;
    const verifier =
      this.verifier === 'wrong' ? randomBytes(32).toString('base64url') : this.verifier === 'right' ? req.verifier : undefined;
    const redirectUri = this.redirectRight ? req.redirectUri : `${req.redirectUri}/elsewhere`;
    const asked = resourcesOf(this.resource);
    // Narrowing only: a code with resources lets the exchange name some of them; one without, any
    // resource the server issues for.
    const targetOk = asked.every((r) => (family.resources.length ? family.resources.includes(r) : r !== FOREIGN_RESOURCE));
    const request = post('/v1/oauth/token', {
      grant_type: 'authorization_code',
      code: code.value,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      ...credentials(real, req.client, this.client),
    });
    for (const r of asked) request.body = `${request.body}&resource=${encodeURIComponent(r)}`;
    if (this.key !== undefined) request.headers['dpop'] = await dpopProof(real, this.key, 'POST', TOKEN_URL);
    const res = await call('token (code)', () => real.server.token(request));
    noServerError('token (code)', res.status, res.body);
    const body = json(res);
    const paramsRight =
      this.client === 'right' && this.redirectRight && (req.verifier ? this.verifier === 'right' : this.verifier !== 'wrong');
    const expired = model.now >= code.expiresAt;
    if (res.status === 200) {
      check('codeSingleUse', !code.used, () => `a used code yielded tokens again (family #${family.id})`);
      check(
        'audienceRespected',
        targetOk,
        () => `code exchange of family #${family.id} (resources ${family.resources.join(' ') || '-'}) widened to ${asked.join(' ')}`,
      );
      check(
        'modelAgreement',
        paramsRight && !expired && family.revoked !== 'yes',
        () =>
          `code exchange succeeded with client=${this.client} verifier=${this.verifier} redirect ${this.redirectRight ? 'right' : 'wrong'}, expired ${expired}, family revoked ${family.revoked}`,
      );
      check('scopeNeverWidens', body['scope'] === family.scope, () => `code of scope ${family.scope} gave scope ${String(body['scope'])}`);
      check(
        'modelAgreement',
        (body['info'] as { uuid?: string } | undefined)?.uuid === family.account.uuid,
        () => 'the token response names another account',
      );
      check(
        'modelAgreement',
        body['token_type'] === (this.key === undefined ? 'bearer' : 'DPoP'),
        () => `code exchange ${this.key === undefined ? 'without' : 'with'} a DPoP proof: token_type ${String(body['token_type'])}`,
      );
      count(this.key === undefined ? 'code exchanged' : 'code exchanged with DPoP');
      code.used = true;
      family.revoked = 'no';
      const access: AccessToken = {
        value: String(body['access_token']),
        family,
        scope: family.scope,
        audience: asked.length ? asked : family.resources,
        expiresAt: model.now + LIFETIMES.accessToken * 1000,
        rotatedOut: false,
        ...(this.key !== undefined && { key: this.key }),
      };
      const refresh: RefreshToken = {
        value: String(body['refresh_token']),
        family,
        scope: family.scope,
        expiresAt: model.refreshLifetime === null ? null : model.now + model.refreshLifetime * 1000,
        rotated: false,
        access,
        // A public client's refresh token is bound with its access token; a confidential one's is not (RFC 9449 §5).
        ...(this.key !== undefined && family.client === 'pub' && { key: this.key }),
      };
      family.access.push(access);
      family.current = refresh;
      model.access.push(access);
      model.refresh.push(refresh);
      return;
    }
    check(
      'modelAgreement',
      res.status >= 400 && res.status < 500 && typeof body['error'] === 'string',
      () => `code exchange: ${res.status} ${res.body}`,
    );
    if (this.client === 'badSecret' || this.client === 'none') {
      check(
        'modelAgreement',
        res.status === 401 && body['error'] === 'invalid_client',
        () => `code exchange with client=${this.client}: ${res.status} ${res.body}`,
      );
      return;
    }
    // A resource outside the code's: refused, and the code is not used up
    // (docs/reference.md#resource-indicators-rfc-8707); a replay may be told first.
    if (!targetOk && body['error'] === 'invalid_target') {
      count('code exchange: invalid_target');
      return;
    }
    if (paramsRight && code.used) {
      // A replay (RFC 6749 §4.1.2): the family is revoked. The used code is remembered until it
      // expires; after that the store may have forgotten it (docs/reference.md#lifetimes).
      count('code replay');
      revokeFamily(family, !expired);
      return;
    }
    if (paramsRight && targetOk && !expired && family.revoked === 'no')
      fail('modelAgreement', `a good code exchange was refused: ${res.status} ${res.body}`);
    if (paramsRight && targetOk && !expired && family.revoked === 'maybe') family.revoked = 'yes';
  }
  toString = () =>
    `ExchangeCode(code ${this.code}, client ${this.client}, verifier ${this.verifier}, redirect ${this.redirectRight ? 'right' : 'wrong'}, resource ${this.resource}, dpop ${this.key ?? '-'})`;
}

/**
 * A whole code flow in one step, so that runs reach the token side often: sign in afresh in a
 * browser, authorize (default prompt), approve, and exchange the code, each step checked exactly
 * as the single commands check it.
 */
export class CodeFlow implements Cmd {
  constructor(
    readonly browser: number,
    readonly account: Account,
    readonly client: ClientKey,
    readonly scope: Scope,
    readonly resources: ResourceChoice = 'none',
    /** The DPoP key the code exchange proves; absent: no proof. */
    readonly key?: KeyIndex,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    await new SignIn(this.browser, this.account, 0).run(model, real);
    const params: AuthorizeParams = {
      client: this.client,
      responseType: 'code',
      scope: this.scope,
      prompt: undefined,
      maxAuthAge: undefined,
      hint: undefined,
      pkce: true,
      resources: this.resources,
    };
    await new Authorize(this.browser, params).run(model, real);
    const consent = model.interactions.at(-1);
    if (consent?.kind !== 'consent' || consent.status !== 'live') return;
    const codes = model.codes.length;
    await new Decide(null, this.browser, 'approve').on(model, real, consent, this.browser);
    const code = model.codes[codes];
    if (code) await new ExchangeCode(codes, 'right', 'right', true, 'none', this.key).on(model, real, code);
  }
  toString = () =>
    `CodeFlow(browser ${this.browser}, ${this.account.name.split(' ')[0]}, ${this.client}, ${this.scope}, resource ${this.resources}, dpop ${this.key ?? '-'})`;
}

/** POST /token with `grant_type=refresh_token`: any refresh token ever issued, current or rotated. */
export class Refresh implements Cmd {
  constructor(
    readonly token: number,
    readonly client: ClientChoice,
    readonly scope: Scope | undefined,
    /** `resource` values to narrow the new access token to (RFC 8707 §2.2); 'none' sends none. */
    readonly resource: ResourceChoice = 'none',
    /** The DPoP proof sent (RFC 9449 §5): by default the holder's. */
    readonly proof: ProofChoice = 'holder',
  ) {}
  check = (m: Readonly<Model>) => m.refresh.length > 0;
  async run(model: Model, real: Real): Promise<void> {
    await this.on(model, real, pick(model.refresh, this.token));
  }

  async on(model: Model, real: Real, token: RefreshToken): Promise<void> {
    const { family } = token;
    const liveBefore = familyLive(family, model.now);
    const asked = resourcesOf(this.resource);
    // Narrowing only: a grant with resources lets a refresh name some of them; one without, any
    // resource the server issues for.
    const targetOk = asked.every((r) => (family.resources.length ? family.resources.includes(r) : r !== FOREIGN_RESOURCE));
    // A retry (a lost response, parallel refreshes): a sibling pair, nothing revoked.
    const retry = retryable(token, model.now);
    const key = proofKeyFor(token.key, this.proof);
    const res = await refreshRequest(real, token, this.client, this.scope, asked, key ?? null);
    const body = json(res);
    if (token.key !== undefined && key !== token.key) {
      // A bound refresh token without a proof of its key (RFC 9449 §5): refused whatever else
      // the request says, and neither rotated nor revoked. Only a token whose record prune
      // deleted is known by its family alone, which does not record the binding: presented
      // again after its rotation, it may revoke the family as an unbound one does (SECURITY.md).
      check(
        'boundTokenNeedsItsKey',
        res.status !== 200,
        () =>
          `a refresh token of family #${family.id} bound to key ${token.key} yielded tokens with ${key === undefined ? 'no proof' : `key ${key}`}`,
      );
      noServerError('token (refresh)', res.status, res.body);
      count('bound refresh refused');
      if (this.client === 'badSecret') {
        check('modelAgreement', body['error'] === 'invalid_client', () => `refresh with a wrong secret: ${res.status} ${res.body}`);
        return;
      }
      if (this.client === 'other') return; // another client's credentials: refused, nothing rotated or revoked
      const allowed = key === undefined ? ['invalid_dpop_proof', 'invalid_grant'] : ['invalid_grant'];
      check('modelAgreement', allowed.includes(String(body['error'])), () => `bound refresh without its key: ${res.status} ${res.body}`);
      if (body['error'] === 'invalid_grant' && ((token.rotated && !retry) || token.superseded)) revokeFamily(family, false);
      return;
    }
    if (res.status === 200) {
      check(
        'audienceRespected',
        targetOk,
        () => `refresh of family #${family.id} (resources ${family.resources.join(' ') || '-'}) widened to ${asked.join(' ')}`,
      );
      check(
        'rotatedRefreshNeverYieldsTokens',
        !token.rotated || retry,
        () => `a rotated refresh token of family #${family.id} yielded tokens outside a retry`,
      );
      check(
        'liveRefreshTokensAreSiblings',
        retry || liveRefresh(family).includes(token),
        () => `a refresh token that is neither the family's newest nor a live sibling of it yielded tokens (family #${family.id})`,
      );
      const expired = token.expiresAt !== null && model.now >= token.expiresAt;
      check('nothingExpiredAuthenticates', !expired, () => `an expired refresh token of family #${family.id} yielded tokens`);
      check(
        'nothingRevokedAuthenticates',
        family.revoked !== 'yes',
        () => `a refresh token of revoked family #${family.id} yielded tokens`,
      );
      const wanted = this.scope ?? token.scope;
      check(
        'scopeNeverWidens',
        body['scope'] === wanted && scopeValues(wanted).every((s) => scopeValues(token.scope).includes(s)),
        () => `refresh of a ${token.scope} token asking ${this.scope ?? '(nothing)'} gave ${String(body['scope'])}`,
      );
      check('modelAgreement', this.client === 'right' || this.client === 'none', () => `refresh succeeded with client=${this.client}`);
      check(
        'modelAgreement',
        body['token_type'] === (key === undefined ? 'bearer' : 'DPoP'),
        () => `refresh ${key === undefined ? 'without' : 'with'} a DPoP proof: token_type ${String(body['token_type'])}`,
      );
      if (key !== undefined) count(token.key === undefined ? 'refresh bound a token' : 'bound refresh');
      family.revoked = 'no';
      if (retry) count('retried');
      else {
        count('refreshed');
        token.rotated = true;
        token.rotatedAt = model.now;
        token.access.rotatedOut = true;
        if (token.parent) {
          // The first child of its parent rotated: no more retries of the parent, the siblings die.
          token.parent.childRotated = true;
          for (const sibling of token.parent.children ?? []) {
            if (sibling === token || sibling.rotated || sibling.superseded) continue;
            sibling.superseded = true;
            sibling.access.rotatedOut = true;
          }
        }
      }
      const scope = wanted as Scope;
      const access: AccessToken = {
        value: String(body['access_token']),
        family,
        scope,
        audience: asked.length ? asked : family.resources,
        expiresAt: model.now + LIFETIMES.accessToken * 1000,
        rotatedOut: false,
        ...(key !== undefined && { key }),
      };
      // A bound refresh token stays bound; an unbound one is bound by a proof unless a
      // confidential client sent it with its credentials (RFC 9449 §5).
      const bindsRefresh = key !== undefined && (token.key !== undefined || family.client === 'pub' || this.client === 'none');
      const next: RefreshToken = {
        value: String(body['refresh_token']),
        family,
        scope,
        expiresAt: model.refreshLifetime === null ? null : model.now + model.refreshLifetime * 1000,
        rotated: false,
        access,
        parent: token,
        ...(bindsRefresh && { key }),
      };
      if (token.children) token.children.push(next);
      else token.children = [next];
      family.access.push(access);
      family.current = next;
      model.access.push(access);
      model.refresh.push(next);
      return;
    }
    check(
      'modelAgreement',
      res.status >= 400 && res.status < 500 && typeof body['error'] === 'string',
      () => `refresh: ${res.status} ${res.body}`,
    );
    if (this.client === 'badSecret') {
      check(
        'modelAgreement',
        res.status === 401 && body['error'] === 'invalid_client',
        () => `refresh with a wrong secret: ${res.status} ${res.body}`,
      );
      return;
    }
    // Credentials of another client: refused, and nothing rotated or revoked
    // (docs/reference.md#refresh-token-grant, step 4).
    if (this.client === 'other') return;
    if ((token.rotated && !retry) || token.superseded) {
      // A replay (of a rotated token, or of a sibling revoked when another was rotated): the
      // family is revoked whenever it could still be used, whatever prune ran.
      if (liveBefore && family.revoked === 'no') {
        count('replay of a live family');
        if (token.superseded) count('replay of a superseded sibling');
        family.revoked = 'yes';
        await probeRevokedFamily(real, model, family, `replay of a rotated refresh token of family #${family.id}`);
      } else revokeFamily(family, false);
      return;
    }
    const widens = this.scope !== undefined && !scopeValues(this.scope).every((s) => scopeValues(token.scope).includes(s));
    const expired = token.expiresAt !== null && model.now >= token.expiresAt;
    if (widens) {
      check(
        'modelAgreement',
        body['error'] === 'invalid_scope' || family.revoked !== 'no' || expired,
        () => `refresh widening the scope: ${res.body}`,
      );
      return;
    }
    if (!targetOk) {
      // Refused before anything rotates: the token stays the family's current one.
      check(
        'modelAgreement',
        body['error'] === 'invalid_target' || family.revoked !== 'no' || expired,
        () => `refresh naming resources outside the grant: ${res.body}`,
      );
      return;
    }
    if (!expired && family.revoked === 'no')
      fail('modelAgreement', `the current refresh token of live family #${family.id} was refused: ${res.status} ${res.body}`);
    if (!expired && family.revoked === 'maybe') family.revoked = 'yes';
  }
  toString = () =>
    `Refresh(token ${this.token}, client ${this.client}, scope ${this.scope ?? '-'}, resource ${this.resource}, proof ${this.proof})`;
}

function refreshRequest(
  real: Real,
  token: RefreshToken,
  client: ClientChoice,
  scope: Scope | undefined,
  resources: readonly string[] = [],
  /** The DPoP key proved (RFC 9449 §5), `null` for no proof; by default the token's (the holder's). */
  key: KeyIndex | null = token.key ?? null,
): Promise<OAuthResponse> {
  return call('token (refresh)', async () => {
    const request = post('/v1/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: token.value,
      scope,
      ...credentials(real, token.family.client, client),
    });
    for (const r of resources) request.body = `${request.body}&resource=${encodeURIComponent(r)}`;
    if (key !== null) request.headers['dpop'] = await dpopProof(real, key, 'POST', TOKEN_URL);
    const res = await real.server.token(request);
    noServerError('token (refresh)', res.status, res.body);
    return res;
  });
}

/** After a replay revoked a family: its current refresh token and every access token are dead. */
async function probeRevokedFamily(real: Real, _model: Model, family: Family, why: string): Promise<void> {
  if (family.current) {
    const res = await refreshRequest(real, family.current, 'none', undefined);
    check('replayRevokesLiveFamily', res.status !== 200, () => `${why}: the family's current refresh token still works`);
  }
  for (const token of family.access) {
    const result = await holderCall(real, token, 'GET', probeResource(token));
    check('replayRevokesLiveFamily', !result.ok, () => `${why}: an access token of the family still authenticates`);
  }
}

/** POST /revoke of any access or refresh token, with the right client, another, or none. */
export class RevokeToken implements Cmd {
  constructor(
    readonly token: number,
    readonly refresh: boolean,
    readonly client: 'right' | 'other' | 'none',
  ) {}
  check = (m: Readonly<Model>) => (this.refresh ? m.refresh.length : m.access.length) > 0;
  async run(model: Model, real: Real): Promise<void> {
    const token: AccessToken | RefreshToken = this.refresh ? pick(model.refresh, this.token) : pick(model.access, this.token);
    const { family } = token;
    const res = await call('revoke', () =>
      real.server.revoke(post('/v1/oauth/revoke', { token: token.value, ...credentials(real, family.client, this.client) })),
    );
    noServerError('revoke', res.status, res.body);
    if (this.client === 'other') {
      check(
        'modelAgreement',
        res.status === 200 || (res.status === 400 && json(res)['error'] === 'unauthorized_client'),
        () => `revoke with another client: ${res.status} ${res.body}`,
      );
      return;
    }
    check('modelAgreement', res.status === 200, () => `revoke: ${res.status} ${res.body}`);
    // Certain only for a token the store must still hold: a live one.
    const live =
      'rotatedOut' in token
        ? accessStatus(token, model.now) !== 'dead'
        : !token.rotated && !token.superseded && (token.expiresAt === null || model.now < token.expiresAt) && family.revoked !== 'yes';
    revokeFamily(family, live && family.revoked === 'no');
  }
  toString = () => `RevokeToken(${this.refresh ? 'refresh' : 'access'} ${this.token}, client ${this.client})`;
}

/**
 * The revocations of an account's or a client's grants: `access` (the user revokes an
 * application: `revokeAccess`), `account` (`revokeAllForAccount`) and `client`
 * (`revokeClientTokens`).
 */
export type RevocationKind = 'access' | 'account' | 'client';

/** Whether a revocation of `kind` for `account` and `client` reaches `family`. */
const covers = (kind: RevocationKind, account: Account, client: ClientKey, family: Family): boolean =>
  (kind === 'client' || family.account.uuid === account.uuid) && (kind === 'account' || family.client === client);

function revocationCall(real: Real, kind: RevocationKind, account: Account, client: ClientKey): Promise<void> {
  const clientId = real.clients[client].clientId;
  if (kind === 'access') return real.server.revokeAccess({ accountUuid: account.uuid, clientId });
  return kind === 'account' ? real.server.revokeAllForAccount(account.uuid) : real.server.revokeClientTokens(clientId);
}

/** What a revocation that returned did: every family it reaches is dead, and the consents it names are gone. */
function applyRevocation(model: Model, kind: RevocationKind, account: Account, client: ClientKey): void {
  for (const family of model.families) if (covers(kind, account, client, family)) family.revoked = 'yes';
  if (kind === 'access') model.consents.delete(consentKey(account, client));
  if (kind === 'account') for (const c of ['conf', 'pub'] as const) model.consents.delete(consentKey(account, c));
  // An approved device request not yet collected is denied (docs/reference.md#revocation-semantics).
  for (const device of model.devices) {
    const reached =
      device.status === 'approved' &&
      (kind === 'client' || device.account?.uuid === account.uuid) &&
      (kind === 'account' || device.client === client);
    if (reached) {
      device.status = 'denied';
      device.revokedApproval = true;
    }
  }
  // Personal tokens belong to no client: only the account's revocation reaches them.
  if (kind === 'account') for (const token of model.personal) if (token.account.uuid === account.uuid) token.revoked = 'yes';
}

/**
 * A revocation on its own: the user revokes an application (`access`: every family of the pair,
 * and the consent), everything of an account (`account`: its families, consents and personal
 * tokens), or of a client (`client`).
 */
export class Revoke implements Cmd {
  constructor(
    readonly kind: RevocationKind,
    readonly account: Account,
    readonly client: ClientKey,
  ) {}
  check = (m: Readonly<Model>) => m.families.length > 0 || m.personal.length > 0;
  async run(model: Model, real: Real): Promise<void> {
    await call(this.kind, () => revocationCall(real, this.kind, this.account, this.client));
    applyRevocation(model, this.kind, this.account, this.client);
  }
  toString = () =>
    this.kind === 'client'
      ? `Revoke(client ${this.client})`
      : `Revoke(${this.kind} ${this.account.name.split(' ')[0]}${this.kind === 'access' ? ` ${this.client}` : ''})`;
}

/** What a `Race` runs next to the revocation: an approval (a code or an implicit token), a code exchange, a refresh. */
export type RacingStep = 'approve' | 'exchange' | 'refresh';

/**
 * A revocation (`RevocationKind`) and an issuance step run side by side, the one `lead` turns
 * (`Real.turn`) after the other (0: together, their awaits interleaving). Once the revocation
 * returned (SECURITY.md, "Model-based tests"):
 * - a family it reaches that existed before the step is dead, tokens the racing exchange or
 *   refresh added to it included (they joined a grant the revocation revokes, whichever came
 *   first);
 * - a family the racing approval created is dead if its grant was stored before the revocation's
 *   storage call started (`revocationCoversIssued`, checked at once on the code or the token),
 *   live if it was stored after the revocation's storage call ended, and either when the two
 *   storage calls overlapped (only the forced schedules of test/storage/revocation-races.test.ts
 *   can order those): the model says `maybe` and learns from the next observation.
 * After an approval racing a revocation that deletes consents, the consents are read back (the
 * approval saves one, the revocation may delete it, in either order).
 */
export class Race implements Cmd {
  constructor(
    readonly revocation: RevocationKind,
    readonly account: Account,
    readonly client: ClientKey,
    readonly step: RacingStep,
    readonly target: number,
    readonly lead: number,
    readonly revocationFirst: boolean,
  ) {}
  /** The racing approval, if the step is one. */
  private approval: Decide | null = null;
  check = (m: Readonly<Model>) =>
    this.step === 'approve'
      ? m.interactions.some((i) => i.kind === 'consent' && i.status === 'live')
      : (this.step === 'exchange' ? m.codes.length : m.refresh.length) > 0;

  async run(model: Model, real: Real): Promise<void> {
    const { revocation, account, client } = this;
    const reached = model.families.filter((f) => covers(revocation, account, client, f));
    // The step's own checks allow either order: a family the revocation reaches may be revoked before the step.
    for (const family of reached) if (family.revoked === 'no') family.revoked = 'maybe';
    const familiesBefore = model.families.length;
    const accessBefore = model.access.length;
    const refreshBefore = model.refresh.length;
    const log = real.storageLog;
    const logged = log?.calls.length ?? 0;
    const turn = real.turn ?? (() => new Promise<void>((resolve) => setImmediate(resolve)));
    const turns = async (n: number) => {
      for (let i = 0; i < n; i++) await turn();
    };
    const revoke = async () => {
      if (!this.revocationFirst) await turns(this.lead);
      await call(`race: ${revocation}`, () => revocationCall(real, revocation, account, client));
    };
    const issue = async () => {
      if (this.revocationFirst) await turns(this.lead);
      await this.issue(model, real);
    };
    await Promise.all([revoke(), issue()]);
    count(`race ${revocation} / ${this.step}`);
    applyRevocation(model, revocation, account, client);

    // Tokens the exchange or refresh added to a family the revocation reaches: dead, whichever came first.
    for (const token of model.access.slice(accessBefore)) {
      if (reached.includes(token.family)) await this.probeDead(real, token.family, [token], null);
    }
    for (const token of model.refresh.slice(refreshBefore)) {
      if (reached.includes(token.family)) await this.probeDead(real, token.family, [], token);
    }
    // A family the approval created: ordered by the storage calls, when they did not overlap.
    const calls = log?.calls.slice(logged) ?? [];
    const created = calls.find((c) => c.method === 'createGrant');
    const revoking = calls.find((c) => c.method !== 'createGrant');
    for (const family of model.families.slice(familiesBefore)) {
      if (!covers(revocation, account, client, family)) continue;
      if (created && revoking && created.end < revoking.start) {
        count('race: issued before the revocation');
        family.revoked = 'yes';
        const code = model.codes.find((c) => c.family === family);
        await this.probeDead(real, family, family.access, null, code);
      } else if (created && revoking && revoking.end < created.start) {
        count('race: issued after the revocation');
        family.revoked = 'no';
      } else {
        count('race: issued while the revocation ran');
        family.revoked = 'maybe';
      }
    }
    // An approval saves a consent that the revocation may delete, or not, in either order.
    const approved = this.approval?.approved;
    if (approved && revocation !== 'client') await readConsent(model, real, revocation, account, client, approved);
  }

  private async issue(model: Model, real: Real): Promise<void> {
    if (this.step === 'exchange') return new ExchangeCode(0, 'right', 'right', true).on(model, real, pick(model.codes, this.target));
    if (this.step === 'refresh') return new Refresh(0, 'right', undefined).on(model, real, pick(model.refresh, this.target));
    const live = model.interactions.filter((i) => i.kind === 'consent' && i.status === 'live');
    const target = pick(live, this.target);
    const decide = new Decide(null, null, 'approve');
    this.approval = decide;
    await decide.on(model, real, target, target.owner ?? pickBrowser(model, null, target.account));
  }

  /** What of `family` was issued before the revocation returned: none of it works now. */
  private async probeDead(real: Real, family: Family, access: AccessToken[], refresh: RefreshToken | null, code?: Code): Promise<void> {
    const what = (thing: string) => () => `${thing} of family #${family.id} issued before ${this.revocation} returned still works`;
    if (code) {
      const res = await call('token (code)', () =>
        real.server.token(
          post('/v1/oauth/token', {
            grant_type: 'authorization_code',
            code: code.value,
            redirect_uri: code.req.redirectUri,
            code_verifier: code.req.verifier,
            ...credentials(real, code.req.client, 'right'),
          }),
        ),
      );
      noServerError('token (code)', res.status, res.body);
      check('revocationCoversIssued', res.status !== 200, what('a code'));
    }
    for (const token of access) {
      const result = await holderCall(real, token, 'GET', probeResource(token));
      check('revocationCoversIssued', !result.ok, what('an access token'));
    }
    if (refresh) {
      const res = await refreshRequest(real, refresh, 'right', undefined);
      check('revocationCoversIssued', res.status !== 200, what('a refresh token'));
    }
  }

  toString = () =>
    `Race(${this.revocation} ${this.account.name.split(' ')[0]} ${this.client}, ${this.step} ${this.target}, ${this.revocationFirst ? 'revocation' : this.step} first by ${this.lead} turns)`;
}

/**
 * After an approval raced a revocation that deletes consents: whether the consent it saved is
 * still there, as the server lists it. When the revocation reaches it, the consent is then either
 * gone, or (saved after the revocation deleted it) exactly that approval, nothing from before.
 */
async function readConsent(
  model: Model,
  real: Real,
  kind: RevocationKind,
  account: Account,
  client: ClientKey,
  approved: { account: Account; client: ClientKey; req: Req },
): Promise<void> {
  const key = consentKey(approved.account, approved.client);
  const reached = approved.account.uuid === account.uuid && (kind === 'account' || approved.client === client);
  if (!reached) return;
  const listed = await call('listAuthorizations', () => real.server.listAuthorizations(approved.account.uuid));
  const found = listed.find((a) => a.client.id === real.clients[approved.client].clientId);
  model.consents.delete(key);
  if (found) {
    count('race: consent saved after the revocation');
    approve(model, key, approved.req.scope, approved.req.resources);
  }
}

/** A resource API call with any access token ever issued. */
export class Bearer implements Cmd {
  constructor(
    readonly token: number,
    readonly method: 'GET' | 'POST',
    /** The check names resource A or B (`authenticate(request, { resource })`), or none. */
    readonly resource: 'none' | 'a' | 'b' = 'none',
  ) {}
  check = (m: Readonly<Model>) => m.access.length > 0;
  async run(model: Model, real: Real): Promise<void> {
    const resource = this.resource === 'none' ? undefined : this.resource === 'a' ? RES_A : RES_B;
    await checkBearer(real, model, pick(model.access, this.token), this.method, 'bearer', resource);
  }
  toString = () => `Bearer(access ${this.token}, ${this.method}, resource ${this.resource})`;
}

/** `createPersonalToken` for an account, with or without an expiry. */
export class CreatePersonal implements Cmd {
  constructor(
    readonly account: Account,
    readonly scope: Scope,
    readonly expiresIn: number | null,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const created = await call('createPersonalToken', () =>
      real.server.createPersonalToken({ account: this.account, name: 'model', scope: this.scope, expiresIn: this.expiresIn }),
    );
    check(
      'modelAgreement',
      created.scope.join(' ') === this.scope,
      () => `personal token of scope ${created.scope.join(' ')}, asked ${this.scope}`,
    );
    const expiresAt = this.expiresIn === null ? null : model.now + this.expiresIn * 1000;
    check('modelAgreement', created.expiresAt === expiresAt, () => `personal token expiresAt ${created.expiresAt}, expected ${expiresAt}`);
    count('personal token created');
    model.personal.push({
      id: created.id,
      value: created.token,
      account: this.account,
      scope: this.scope,
      expiresAt,
      revoked: 'no',
      pruned: false,
    });
  }
  toString = () => `CreatePersonal(${this.account.name.split(' ')[0]}, ${this.scope}, expires in ${this.expiresIn ?? 'never'})`;
}

/** A resource call with a personal token, at a check naming resource A, B or none (it has no audience: every one accepts it). */
export class UsePersonal implements Cmd {
  constructor(
    readonly token: number,
    readonly method: 'GET' | 'POST',
    readonly resource: 'none' | 'a' | 'b',
  ) {}
  check = (m: Readonly<Model>) => m.personal.length > 0;
  async run(model: Model, real: Real): Promise<void> {
    const resource = this.resource === 'none' ? undefined : this.resource === 'a' ? RES_A : RES_B;
    await checkPersonal(real, model, pick(model.personal, this.token), this.method, resource, 'personal');
  }
  toString = () => `UsePersonal(${this.token}, ${this.method}, resource ${this.resource})`;
}

/** `listPersonalTokens`: an account's live tokens, never another's nor a revoked or pruned one. */
export class ListPersonal implements Cmd {
  constructor(readonly account: Account) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const listed = await call('listPersonalTokens', () => real.server.listPersonalTokens(this.account.uuid));
    const ids = new Set(listed.map((t) => t.id));
    check('modelAgreement', ids.size === listed.length, () => 'a personal token listed twice');
    for (const token of model.personal) {
      const mine = token.account.uuid === this.account.uuid;
      const expired = token.expiresAt !== null && model.now >= token.expiresAt;
      const must = mine && token.revoked === 'no' && !expired;
      // Listed until prune removes it: an expired one, and one whose revocation the model is unsure of.
      const may = must || (mine && token.revoked !== 'yes' && !token.pruned);
      if (ids.has(token.id)) {
        check(
          'personalTokensOfTheirAccount',
          may,
          () =>
            `listPersonalTokens(${this.account.name}) lists ${token.id} of ${token.account.name} (revoked ${token.revoked}, expired ${expired}, pruned ${token.pruned})`,
        );
        const info = listed.find((t) => t.id === token.id)!;
        check(
          'modelAgreement',
          info.scope.join(' ') === token.scope && info.expiresAt === token.expiresAt,
          () => `listed ${JSON.stringify(info)} for ${token.id}`,
        );
      } else check('modelAgreement', !must, () => `listPersonalTokens(${this.account.name}) leaves out live token ${token.id}`);
    }
    const known = new Set(model.personal.map((t) => t.id));
    check(
      'personalTokensOfTheirAccount',
      listed.every((t) => known.has(t.id)),
      () => 'a personal token nobody created is listed',
    );
  }
  toString = () => `ListPersonal(${this.account.name.split(' ')[0]})`;
}

/**
 * Revoke a personal token: `revokePersonalToken` by its account (true exactly for a live one) or
 * by the other account (false, nothing changes), or at the revocation endpoint with the token
 * alone (200).
 */
export class RevokePersonal implements Cmd {
  constructor(
    readonly token: number,
    readonly by: 'own' | 'other' | 'endpoint',
  ) {}
  check = (m: Readonly<Model>) => m.personal.length > 0;
  async run(model: Model, real: Real): Promise<void> {
    const token = pick(model.personal, this.token);
    const status = personalStatus(token, model.now);
    if (this.by === 'endpoint') {
      const res = await call('revoke', () => real.server.revoke(post('/v1/oauth/revoke', { token: token.value })));
      noServerError('revoke', res.status, res.body);
      check('modelAgreement', res.status === 200, () => `revocation endpoint with a personal token: ${res.status} ${res.body}`);
      if (status === 'alive') token.revoked = 'yes';
      else if (token.revoked === 'no') token.revoked = 'maybe';
      return;
    }
    const as = this.by === 'own' ? token.account : otherAccount(token.account);
    const revoked = await call('revokePersonalToken', () => real.server.revokePersonalToken(as.uuid, token.id));
    if (this.by === 'other') {
      check(
        'personalTokensOfTheirAccount',
        revoked === false,
        () => `${as.name} revoked personal token ${token.id} of ${token.account.name}`,
      );
      return;
    }
    // True exactly for a live token of the account (docs/reference.md#personal-access-tokens).
    check(
      'personalTokensOfTheirAccount',
      status === 'maybe' || revoked === (status === 'alive'),
      () => `revokePersonalToken of a ${status} personal token answered ${revoked}`,
    );
    if (revoked) count('personal token revoked');
    if (revoked || status === 'maybe') token.revoked = revoked ? 'yes' : token.revoked;
  }
  toString = () => `RevokePersonal(${this.token}, by ${this.by})`;
}

/** POST /device (RFC 8628 §3.1): a device asks for a device code and a user code. */
export class DeviceStart implements Cmd {
  constructor(
    readonly client: ClientKey,
    readonly scope: Scope,
    readonly resources: ResourceChoice,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const request = post('/v1/oauth/device', { scope: this.scope, ...credentials(real, this.client, 'right') });
    const resources = resourcesOf(this.resources);
    for (const r of resources) request.body = `${request.body}&resource=${encodeURIComponent(r)}`;
    const res = await call('device', () => real.server.deviceAuthorization(request, `https://as.example${VERIFY_PATH}`));
    noServerError('device', res.status, res.body);
    const body = json(res);
    if (this.resources === 'foreign') {
      check(
        'modelAgreement',
        res.status === 400 && body['error'] === 'invalid_target',
        () => `device request for a foreign resource: ${res.status} ${res.body}`,
      );
      return;
    }
    check(
      'modelAgreement',
      res.status === 200 && typeof body['device_code'] === 'string' && typeof body['user_code'] === 'string',
      () => `device request: ${res.status} ${res.body}`,
    );
    check(
      'modelAgreement',
      body['interval'] === DEVICE.interval && body['expires_in'] === DEVICE.lifetime,
      () => `device request: interval ${String(body['interval'])}, expires_in ${String(body['expires_in'])}`,
    );
    count('device started');
    model.devices.push({
      deviceCode: String(body['device_code']),
      userCode: String(body['user_code']),
      client: this.client,
      scope: this.scope,
      resources,
      expiresAt: model.now + DEVICE.lifetime * 1000,
      interval: DEVICE.interval,
      lastPolledAt: null,
      status: 'pending',
      revokedApproval: false,
      account: null,
      pruned: false,
    });
  }
  toString = () => `DeviceStart(${this.client}, ${this.scope}, resource ${this.resources})`;
}

/** The browser's secret cookie on the device pages (it keys the browser's count of wrong codes). */
const browserSecret = (browser: number) => `device-pages-secret-of-browser-${browser}`;

/** `GuessLimiter.lockedUntil`. */
function lockedUntil(model: Model, key: string): number {
  const entry = model.guesses.get(key);
  return entry && model.now < entry.lockedUntil ? entry.lockedUntil : 0;
}

/** `GuessLimiter.fail`. */
function failGuess(model: Model, key: string): GuessCount {
  let entry = model.guesses.get(key);
  const lockMs = DEVICE.lockSeconds * 1000;
  if (entry && (model.now - entry.since >= lockMs || (entry.lockedUntil !== 0 && model.now >= entry.lockedUntil))) entry = undefined;
  entry ??= { failures: 0, since: model.now, lockedUntil: 0 };
  entry.failures++;
  if (entry.failures >= DEVICE.maxUserCodeAttempts) entry.lockedUntil = model.now + lockMs;
  model.guesses.set(key, entry);
  return entry;
}

/** `GuessLimiter.forgive`. */
function forgiveGuess(model: Model, key: string): void {
  const entry = model.guesses.get(key);
  if (!entry || entry.failures === 0) return;
  entry.failures--;
  if (entry.failures < DEVICE.maxUserCodeAttempts) entry.lockedUntil = 0;
}

/**
 * The verification page after the user typed a user code (`enterUserCode`): the code of a
 * device request the model knows (as shown, in lower case, or without the dash) or a wrong one.
 */
export class EnterUserCode implements Cmd {
  constructor(
    readonly browser: number,
    /** null: a code nobody was given. */
    readonly device: number | null,
    readonly typing: 'shown' | 'lower' | 'bare',
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const session = model.browsers[this.browser] ?? null;
    const device = this.device === null || model.devices.length === 0 ? null : pick(model.devices, this.device);
    const shown = device?.userCode ?? wrongUserCode();
    const typed = this.typing === 'lower' ? shown.toLowerCase() : this.typing === 'bare' ? shown.replace('-', '') : shown;
    const outcome = await call('enterUserCode', () =>
      real.server.enterUserCode(typed, browserRequest('/', session), VERIFY_PATH, browserSecret(this.browser)),
    );
    if (outcome.type === 'decision') decisionStatus('enterUserCode', outcome.decision);
    const got = outcome.type === 'decision' ? describeDecision(outcome.decision) : JSON.stringify(outcome);
    count(`enterUserCode -> ${outcome.type === 'decision' ? outcome.decision.type : outcome.type}`);
    if (!session) {
      check('modelAgreement', outcome.type === 'decision' && outcome.decision.type === 'login', () => `code entry signed out: ${got}`);
      return;
    }
    // A sign-in time that is not a finite number counts as not signed in: the sign-in step, and
    // no wrong code counted against the account (device-sign-in-time.test.ts).
    if (session.broken) {
      model.hostBug = true;
      check(
        'nonFiniteSignInIsSignedOut',
        outcome.type === 'decision' && outcome.decision.type === 'login',
        () => `code entry with a sign-in time that is not a finite number: ${got}`,
      );
      return;
    }
    const keys = [`a:${session.account.uuid}`, `b:${this.browser}`];
    const locked = Math.max(...keys.map((k) => lockedUntil(model, k)));
    if (locked > model.now) {
      check('deviceGuessLimit', outcome.type === 'locked', () => `code entry while locked until ${new Date(locked).toISOString()}: ${got}`);
      check('modelAgreement', outcome.type !== 'locked' || outcome.until === locked, () => `locked until ${got}, expected ${locked}`);
      return;
    }
    const counts = keys.map((k) => failGuess(model, k));
    const right = device !== null && device.status === 'pending' && model.now < device.expiresAt;
    if (right) {
      for (const k of keys) forgiveGuess(model, k);
      check(
        'modelAgreement',
        outcome.type === 'decision' && outcome.decision.type === 'consent',
        () => `the right code of a pending device request: ${got}`,
      );
      const decision = (outcome as { decision: AuthorizeDecision & { type: 'consent' } }).decision;
      check(
        'modelAgreement',
        decision.interaction.device?.userCode === device.userCode && decision.interaction.account?.uuid === session.account.uuid,
        () => `the device confirmation names ${decision.interaction.device?.userCode} for ${decision.interaction.account?.uuid}`,
      );
      model.deviceSteps.push({
        id: decision.interaction.id,
        device,
        account: session.account,
        browser: this.browser,
        expiresAt: model.now + LIFETIMES.interaction * 1000,
        status: 'live',
      });
      return;
    }
    const attempts = Math.max(...counts.map((c) => c.failures));
    const lockNow = counts.some((c) => c.lockedUntil > model.now);
    check(
      'deviceGuessLimit',
      outcome.type === (lockNow ? 'locked' : 'wrong'),
      () => `a wrong code (attempt ${attempts} of ${DEVICE.maxUserCodeAttempts}): ${got}`,
    );
    if (outcome.type === 'wrong')
      check('modelAgreement', outcome.attempts === attempts, () => `wrong code: attempts ${outcome.attempts}, expected ${attempts}`);
  }
  toString = () =>
    `EnterUserCode(browser ${this.browser}, ${this.device === null ? 'a wrong code' : `device ${this.device}`}, ${this.typing})`;
}

/** A user code of the right shape that no device request was given (20^8 codes: a clash is 1 in 25 billion). */
function wrongUserCode(): string {
  const alphabet = 'BCDFGHJKLMNPQRSTVWXZ';
  const bytes = randomBytes(8);
  const code = [...bytes].map((b) => alphabet[b % 20]).join('');
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** `approve` / `deny` of a device confirmation step, in any browser. */
export class DeviceDecide implements Cmd {
  constructor(
    readonly step: number,
    /** null: the browser the step was shown in. */
    readonly browser: number | null,
    readonly decision: 'approve' | 'deny',
  ) {}
  check = (m: Readonly<Model>) => m.deviceSteps.length > 0;
  async run(model: Model, real: Real): Promise<void> {
    const step = pick(model.deviceSteps, this.step);
    const browser = this.browser ?? step.browser;
    const session = model.browsers[browser] ?? null;
    model.hostBug = !!session?.broken;
    const request = browserRequest('/', session);
    const decision = await call(`device ${this.decision}`, () =>
      this.decision === 'approve' ? real.server.approve(step.id, request) : real.server.deny(step.id, request),
    );
    decisionStatus(`device ${this.decision}`, decision);
    const got = describeDecision(decision);
    const { device } = step;
    const allowed =
      step.status === 'live' &&
      model.now < step.expiresAt &&
      session !== null &&
      !session.broken &&
      session.account.uuid === step.account.uuid;
    count(`device ${this.decision}: ${allowed ? 'allowed' : 'refused'}`);
    if (!allowed) {
      check(
        'interactionStepRechecksRequest',
        decision.type !== 'redirect',
        () => `device ${this.decision} by ${describeSession(session)}: ${got}`,
      );
      check('modelAgreement', decision.type === 'error' || decision.type === 'login', () => `device ${this.decision}, refused: ${got}`);
      return;
    }
    step.status = 'gone';
    // The consent is saved before the request is decided, whether that then works or not.
    if (this.decision === 'approve') approve(model, consentKey(step.account, device.client), device.scope, device.resources);
    const decides = device.status === 'pending' && model.now < device.expiresAt;
    const result = this.decision === 'approve' ? 'approved' : 'denied';
    check(
      'modelAgreement',
      decides ? decision.type === 'redirect' && decision.location === `${VERIFY_PATH}?result=${result}` : decision.type === 'error',
      () => `device ${this.decision} of a ${device.status} request (expired ${model.now >= device.expiresAt}): ${got}`,
    );
    if (!decides) return;
    device.status = result;
    device.account = this.decision === 'approve' ? step.account : null;
  }
  toString = () =>
    `Device${this.decision === 'approve' ? 'Approve' : 'Deny'}(step ${this.step}, browser ${this.browser ?? 'that was shown it'})`;
}

/**
 * A whole device flow in one step, so that runs reach approved requests often: sign in afresh in
 * a browser, start a device request, enter its code, approve, and (unless `collect` is false,
 * leaving it approved but uncollected for a revocation to deny) poll for the tokens.
 */
export class DeviceFlow implements Cmd {
  constructor(
    readonly browser: number,
    readonly account: Account,
    readonly client: ClientKey,
    readonly scope: Scope,
    readonly resources: ResourceChoice,
    readonly collect: boolean,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    await new SignIn(this.browser, this.account, 0).run(model, real);
    const devices = model.devices.length;
    await new DeviceStart(this.client, this.scope, this.resources).run(model, real);
    if (model.devices.length === devices) return;
    const steps = model.deviceSteps.length;
    await new EnterUserCode(this.browser, devices, 'shown').run(model, real);
    if (model.deviceSteps.length === steps) return;
    await new DeviceDecide(steps, this.browser, 'approve').run(model, real);
    if (this.collect) await new DevicePoll(devices, 'right').run(model, real);
  }
  toString = () =>
    `DeviceFlow(browser ${this.browser}, ${this.account.name.split(' ')[0]}, ${this.client}, ${this.scope}, resource ${this.resources}, ${this.collect ? 'collected' : 'uncollected'})`;
}

/** The device polls the token endpoint (RFC 8628 §3.4) with its device code. */
export class DevicePoll implements Cmd {
  constructor(
    readonly device: number,
    readonly client: 'right' | 'other' | 'badSecret',
  ) {}
  check = (m: Readonly<Model>) => m.devices.length > 0;
  async run(model: Model, real: Real): Promise<void> {
    const device = pick(model.devices, this.device);
    const res = await call('token (device)', () =>
      real.server.token(
        post('/v1/oauth/token', {
          grant_type: DEVICE_CODE_GRANT,
          device_code: device.deviceCode,
          ...credentials(real, device.client, this.client),
        }),
      ),
    );
    noServerError('token (device)', res.status, res.body);
    const body = json(res);
    const error = body['error'];
    if (this.client !== 'right') {
      // A wrong secret is `invalid_client`; another client (not allowed the grant, nor this code's) is refused.
      const ok =
        this.client === 'badSecret'
          ? res.status === 401 && error === 'invalid_client'
          : res.status === 400 && (error === 'unauthorized_client' || error === 'invalid_grant');
      check('modelAgreement', ok, () => `device poll with client ${this.client}: ${res.status} ${res.body}`);
      return;
    }
    const expired = model.now >= device.expiresAt;
    if (res.status === 200) {
      check('deviceCodeSingleUse', device.status !== 'redeemed', () => `a redeemed device code yielded tokens again`);
      check('revocationCoversIssued', !device.revokedApproval, () => 'a device approval denied by a revocation yielded tokens');
      check(
        'deviceCodeSingleUse',
        device.status === 'approved' && !expired,
        () => `a ${device.status} device request (expired ${expired}) yielded tokens`,
      );
      check(
        'scopeNeverWidens',
        body['scope'] === device.scope,
        () => `device tokens of scope ${String(body['scope'])} for ${device.scope}`,
      );
      count('device tokens');
      device.status = 'redeemed';
      const family: Family = {
        id: model.families.length + 1,
        client: device.client,
        account: device.account!,
        scope: device.scope,
        resources: device.resources,
        revoked: 'no',
        access: [],
        current: null,
      };
      model.families.push(family);
      const access: AccessToken = {
        value: String(body['access_token']),
        family,
        scope: device.scope,
        audience: device.resources,
        expiresAt: model.now + LIFETIMES.accessToken * 1000,
        rotatedOut: false,
      };
      const refresh: RefreshToken = {
        value: String(body['refresh_token']),
        family,
        scope: device.scope,
        expiresAt: model.refreshLifetime === null ? null : model.now + model.refreshLifetime * 1000,
        rotated: false,
        access,
      };
      family.access.push(access);
      family.current = refresh;
      model.access.push(access);
      model.refresh.push(refresh);
      return;
    }
    // RFC 8628 §3.5, in the order of docs/reference.md#polling-the-token-endpoint.
    let expected: string;
    if (device.pruned || device.status === 'redeemed') expected = 'invalid_grant';
    else if (expired) expected = 'expired_token';
    else if (device.status === 'approved') expected = 'tokens';
    else if (device.status === 'denied') expected = 'access_denied';
    else {
      const tooSoon = device.lastPolledAt !== null && model.now - device.lastPolledAt < device.interval * 1000 - 250;
      device.lastPolledAt = model.now;
      if (tooSoon) device.interval += 5;
      expected = tooSoon ? 'slow_down' : 'authorization_pending';
    }
    count(`device poll -> ${expected}`);
    check(
      expected === 'tokens' ? 'modelAgreement' : 'modelAgreement',
      res.status === 400 && error === expected,
      () =>
        `device poll of a ${device.status} request (expired ${expired}, pruned ${device.pruned}): expected ${expected}, got ${res.status} ${res.body}`,
    );
    if (error === 'slow_down')
      check(
        'modelAgreement',
        body['interval'] === undefined || body['interval'] === device.interval,
        () => `slow_down interval ${String(body['interval'])}`,
      );
  }
  toString = () => `DevicePoll(device ${this.device}, client ${this.client})`;
}

// ---------------------------------------------------------------------------------------------
// Arbitraries.

const browser = fc.nat({ max: BROWSERS - 1 });
const account = fc.constantFrom(...ACCOUNTS);
const index = fc.nat({ max: 50 });
/** Every lifetime, and each side of it. */
export const ADVANCES = [1, 59, 299, 300, 301, 599, 600, 601, 3599, 3600, 86_399, 86_400, 40 * 86_400];
const authorizeParams: fc.Arbitrary<AuthorizeParams> = fc.record({
  client: fc.constantFrom<ClientKey>('conf', 'pub'),
  responseType: fc.constantFrom<'code' | 'token'>('code', 'token'),
  scope: fc.constantFrom<Scope>('read', 'read write'),
  prompt: fc.constantFrom<Prompt>(undefined, undefined, undefined, 'none', 'login', 'select_account'),
  maxAuthAge: fc.constantFrom<number | undefined>(undefined, undefined, undefined, 0, 300, 3600),
  hint: fc.constantFrom<Hint>(undefined, undefined, undefined, 'match', 'matchUpper', 'other'),
  pkce: fc.constantFrom(true, true, true, false),
  resources: fc.constantFrom<ResourceChoice>('none', 'none', 'none', 'a', 'b', 'ab', 'foreign'),
});

/**
 * Every command, weighted towards the steps that make state (several copies of an arbitrary).
 * `MODEL_SKIP_COMMANDS=SignInBroken,...` leaves kinds out (a development aid while a defect
 * that every run trips over is being fixed; CI never sets it).
 */
export function commandArbitraries(): fc.Arbitrary<Cmd>[] {
  const skip = new Set(
    (process.env['MODEL_SKIP_COMMANDS'] ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );
  return allCommandArbitraries().filter((arb) => !skip.has(fc.sample(arb, 1)[0]!.constructor.name));
}

function allCommandArbitraries(): fc.Arbitrary<Cmd>[] {
  const authorize = fc.tuple(fc.option(browser, { freq: 2 }), authorizeParams).map(([b, p]) => new Authorize(b, p));
  const resume = fc.tuple(fc.option(index, { freq: 8 }), fc.option(browser, { freq: 2 })).map(([i, b]) => new Resume(i, b));
  const decider = fc.option(browser, { freq: 2 });
  const bearer = fc
    .tuple(index, fc.constantFrom<'GET' | 'POST'>('GET', 'POST'), fc.constantFrom<'none' | 'a' | 'b'>('none', 'none', 'a', 'b'))
    .map(([t, m, r]) => new Bearer(t, m, r));
  const approve = fc.tuple(fc.option(index, { freq: 8 }), decider).map(([i, b]) => new Decide(i, b, 'approve'));
  const signIn = fc
    .tuple(browser, account, fc.constantFrom(0, 1, 60, 299, 300, 301, 3600, 2 * 86_400))
    .map(([b, a, age]) => new SignIn(b, a, age));
  // Half of the exchanges are right in every respect; the others get one or more things wrong.
  // A third of the right exchanges prove a DPoP key (RFC 9449 §5), either of two.
  const dpopKey = fc.constantFrom<KeyIndex | undefined>(undefined, undefined, undefined, undefined, 0, 1);
  const exchange = fc.oneof(
    fc.tuple(index, dpopKey).map(([c, k]) => new ExchangeCode(c, 'right', 'right', true, 'none', k)),
    fc
      .tuple(
        index,
        fc.constantFrom<ClientChoice>('right', 'other', 'badSecret', 'none'),
        fc.constantFrom<VerifierChoice>('right', 'wrong', 'none'),
        fc.boolean(),
        fc.constantFrom<ResourceChoice>('none', 'none', 'none', 'a', 'b', 'ab', 'foreign'),
      )
      .map(([c, cl, v, r, res]) => new ExchangeCode(c, cl, v, r, res)),
  );
  const refresh = fc
    .tuple(
      index,
      fc.constantFrom<ClientChoice>('none', 'none', 'right', 'right', 'other', 'badSecret'),
      fc.constantFrom<Scope | undefined>(undefined, undefined, 'read', 'read write'),
      fc.constantFrom<ResourceChoice>('none', 'none', 'none', 'a', 'b', 'ab', 'foreign'),
      fc.constantFrom<ProofChoice>('holder', 'holder', 'holder', 'holder', 'none', 'other'),
    )
    .map(([t, c, s, r, p]) => new Refresh(t, c, s, r, p));
  const advance = fc.constantFrom(...ADVANCES).map((s) => new Advance(s));
  const race = fc
    .tuple(
      fc.constantFrom<RevocationKind>('access', 'account', 'client'),
      account,
      fc.constantFrom<ClientKey>('conf', 'pub'),
      fc.constantFrom<RacingStep>('approve', 'approve', 'exchange', 'refresh'),
      index,
      fc.constantFrom(0, 0, 0, 1, 2, 3, 5, 8),
      fc.boolean(),
    )
    .map(([kind, a, c, step, target, lead, first]) => new Race(kind, a, c, step, target, lead, first));
  const prune = fc.constant(null).map(() => new Prune());
  const device = fc
    .tuple(
      fc.constantFrom<ClientKey>('conf', 'pub'),
      fc.constantFrom<Scope>('read', 'read write'),
      fc.constantFrom<ResourceChoice>('none', 'none', 'a', 'ab', 'foreign'),
    )
    .map(([c, sc, r]) => new DeviceStart(c, sc, r));
  const poll = fc
    .tuple(index, fc.constantFrom<'right' | 'other' | 'badSecret'>('right', 'right', 'right', 'right', 'other', 'badSecret'))
    .map(([d, c]) => new DevicePoll(d, c));
  return [
    signIn,
    signIn,
    signIn,
    fc
      .tuple(browser, account, fc.constantFrom<'NaN' | 'undefined' | 'string'>('NaN', 'undefined', 'string'))
      .map(([b, a, v]) => new SignInBroken(b, a, v)),
    browser.map((b) => new SignOut(b)),
    advance,
    advance,
    advance,
    prune,
    prune,
    authorize,
    authorize,
    authorize,
    authorize,
    resume,
    resume,
    approve,
    approve,
    approve,
    approve,
    fc.tuple(fc.option(index, { freq: 8 }), decider).map(([i, b]) => new Decide(i, b, 'deny')),
    fc
      .tuple(
        browser,
        account,
        fc.constantFrom<ClientKey>('conf', 'pub'),
        fc.constantFrom<Scope>('read', 'read write'),
        fc.constantFrom<ResourceChoice>('none', 'none', 'a', 'b', 'ab'),
        dpopKey,
      )
      .map(([b, a, c, sc, r, k]) => new CodeFlow(b, a, c, sc, r, k)),
    // The token side only runs once there is something to use, so it weighs more.
    exchange,
    exchange,
    exchange,
    exchange,
    exchange,
    refresh,
    refresh,
    refresh,
    refresh,
    refresh,
    refresh,
    refresh,
    refresh,
    fc
      .tuple(index, fc.boolean(), fc.constantFrom<'right' | 'other' | 'none'>('right', 'other', 'none'))
      .map(([t, r, c]) => new RevokeToken(t, r, c)),
    fc
      .tuple(fc.constantFrom<RevocationKind>('access', 'access', 'account', 'client'), account, fc.constantFrom<ClientKey>('conf', 'pub'))
      .map(([k, a, c]) => new Revoke(k, a, c)),
    // The device flow: its single steps, and (DeviceFlow below) whole flows that reach the tokens.
    device,
    fc
      .tuple(browser, fc.option(index, { freq: 4 }), fc.constantFrom<'shown' | 'lower' | 'bare'>('shown', 'shown', 'lower', 'bare'))
      .map(([b, d, t]) => new EnterUserCode(b, d, t)),
    fc
      .tuple(index, fc.option(browser, { freq: 4 }), fc.constantFrom<'approve' | 'deny'>('approve', 'approve', 'approve', 'deny'))
      .map(([st, b, d]) => new DeviceDecide(st, b, d)),
    poll,
    poll,
    fc
      .tuple(
        browser,
        account,
        fc.constantFrom<ClientKey>('conf', 'pub'),
        fc.constantFrom<Scope>('read', 'read write'),
        fc.constantFrom<ResourceChoice>('none', 'none', 'a', 'ab'),
        fc.boolean(),
      )
      .map(([b, a, c, sc, r, collect]) => new DeviceFlow(b, a, c, sc, r, collect)),
    fc
      .tuple(account, fc.constantFrom<Scope>('read', 'read write'), fc.constantFrom<number | null>(null, 600, 86_400))
      .map(([a, sc, e]) => new CreatePersonal(a, sc, e)),
    fc
      .tuple(index, fc.constantFrom<'GET' | 'POST'>('GET', 'POST'), fc.constantFrom<'none' | 'a' | 'b'>('none', 'none', 'a', 'b'))
      .map(([t, m, r]) => new UsePersonal(t, m, r)),
    account.map((a) => new ListPersonal(a)),
    fc
      .tuple(index, fc.constantFrom<'own' | 'own' | 'other' | 'endpoint'>('own', 'own', 'other', 'endpoint'))
      .map(([t, by]) => new RevokePersonal(t, by)),
    race,
    race,
    bearer,
    bearer,
    bearer,
  ];
}
