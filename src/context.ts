import type { JWK } from 'jose';
import type { SigningKeys } from './keys/signing-keys.js';
import type { ResolvedOptions } from './options.js';
import type {
  ClientRecord,
  CombinedApprovalStorage,
  CombinedReadStorage,
  DeviceAuthorizationStorage,
  RefreshRetryStorage,
  Storage,
} from './storage/types.js';
import type { Account, AuditEventInput, Clock, UserSessions } from './types.js';

/**
 * What every endpoint needs: the resolved options, the three seams, and the parts
 * `AuthorizationServer` makes once per instance. Each part is named here by what the core asks
 * of it, and made in its own room (named on each field): so this base module imports none of the
 * modules above it, and none of them can import it back in a cycle.
 */
export interface Context {
  options: ResolvedOptions;
  storage: Storage;
  sessions: UserSessions;
  clock: Clock;
  /** The scope vocabulary (`ScopePolicy`, checks/scope.ts). */
  scopes: Scopes;
  /** Present when `accessTokenFormat` is `jwt` (`JwtAccessTokens`, tokens/jwt.ts). */
  jwt?: JwtSigner;
  /** The (client, PKCE challenge) pairs this instance issued codes for, or refused, lately (P-10; `RecentPairs`, checks/pkce.ts). */
  challenges: PairMemory;
  /**
   * The anonymous interactions this instance stored, when `maxPendingAnonymousInteractions` caps
   * them (`PendingAnonymous`, interactions/pending-anonymous.ts).
   */
  pendingAnonymous?: PendingCap;
  /**
   * Personal access tokens whose last use this instance wrote lately, and expired ones whose use it
   * reported lately: each at most once a minute (`RecentWrites`, personal/personal-tokens.ts).
   */
  personal: { uses: WriteThrottle; expiredUses: WriteThrottle };
  /**
   * Wrong user codes per account and per browser, when `deviceAuthorization` is on (RFC 8628 §5.1;
   * `GuessLimiter`, device/user-code.ts).
   */
  deviceGuesses?: GuessCounter;
  /**
   * The store with its device authorization group, when `deviceAuthorization` is on (the
   * constructor requires the group then: `requireGroup`, storage/groups.ts).
   */
  devices?: Storage & DeviceAuthorizationStorage;
  /**
   * Refresh retries (`refreshRetryWindowSeconds`), when on: the store with its refresh retry
   * group, the window in ms, and whether only public clients have them (the default) (`refreshRetry` in instance.ts).
   */
  refreshRetry?: { store: Storage & RefreshRetryStorage; windowMs: number; publicOnly: boolean };
  /**
   * DPoP (RFC 9449), when the `dpop` option is on: the proof check with its replay store (the
   * constructor requires the `dpopProofs` group then; `dpopProofs`, dpop/proofs.ts).
   */
  dpop?: DpopProofs;
  /** Present when the `openid` option is on (`openIdProvider`, oidc/provider.ts). */
  openid?: OpenIdProvider;
  /**
   * The store, when it has the `combinedReads` group: a token request's client is then read
   * together with the code or token it presents (`findClientWith`, checks/clients.ts).
   */
  combined?: Storage & CombinedReadStorage;
  /**
   * The store, when it has the `combinedApproval` group: an approval is then one read and one
   * atomic write (`approve`, endpoints/interaction.ts; `storeGrant`, grants/store-grant.ts).
   */
  approval?: Storage & CombinedApprovalStorage;
}

/** What the core asks of the OpenID Provider (the `openid` option, resolved once). */
export interface OpenIdProvider {
  /** The ID token keys (and, published with them, the JWKS). */
  readonly keys: SigningKeys;
  /** Seconds an ID token is valid. */
  readonly idTokenLifetime: number;
  readonly claimsInIdToken: boolean;
  /** The scopes with claims (Core §5.4 and the host's), for the vocabulary and discovery. */
  readonly claimScopes: readonly string[];
  /** Every claim a client can get, `sub` first (`claims_supported`). */
  readonly supportedClaims: readonly string[];
  /** `subject_types_supported`. */
  readonly subjectTypes: readonly string[];
  /** The `sub` the client sees for the account (public, or pairwise for a pairwise client). */
  subject(account: Account, client: ClientRecord): string;
  /** The host's claims for the account allowed by `scope` (Core §5.4), without `sub`. */
  claims(account: Account, scope: readonly string[], clientId: string): Promise<Record<string, unknown>>;
}

/** What a DPoP proof check answers: the key it proves, or why it is refused (RFC 9449 §4.3, §8, §9). */
export type DpopVerdict =
  | { ok: true; jkt: string; nonce?: string }
  | { ok: false; error: 'invalid_dpop_proof' | 'use_dpop_nonce'; description: string; nonce?: string };

/** What the core asks of DPoP: check a proof (replays included), and the algorithms it takes. */
export interface DpopProofs {
  /** The proof algorithms accepted (`dpop_signing_alg_values_supported`, the `algs` of a challenge). */
  readonly algorithms: readonly string[];
  /** Whether proofs must carry a server nonce. */
  readonly nonces: boolean;
  /**
   * Checks the `DPoP` header of a request sent to `htu` with `htm` at `now`, with `accessToken`
   * at a resource, and remembers its `jti`: a proof is accepted once, by any instance.
   */
  verify(
    header: string | readonly string[] | undefined,
    request: { htm: string; htu: string; now: number; accessToken?: string },
  ): Promise<DpopVerdict>;
}

/** What the core asks of the scope vocabulary. */
export interface Scopes {
  /** Every known value. */
  readonly values: string[];
  /** `undefined` is the default scope; `null` is invalid, unknown or malformed. */
  parse(value: string | undefined): string[] | null;
  /** The wire form. */
  format(scope: readonly string[]): string;
  /** Whether a token's scope allows a resource request; `needed` names the scope it lacks. */
  check(scope: readonly string[], request: { method: string; url: string }): { ok: true } | { ok: false; needed?: string };
  /** Plain words for a value, for the consent page. */
  describe(value: string): string;
}

/** The claims of a JWT access token (RFC 9068) as the core mints it. */
export interface JwtClaims {
  sub: string;
  clientId: string;
  scope: string;
  jti: string;
  iat: number;
  exp: number;
  aud?: readonly string[] | undefined;
  /** The key a DPoP-bound token is bound to (RFC 9449 §6.1: `cnf.jkt`); absent for a bearer token. */
  cnf?: { readonly jkt: string } | undefined;
}

/** What the core asks of its JWT access tokens. */
export interface JwtSigner {
  sign(claims: JwtClaims): Promise<string>;
  /** The `jti` of a valid token this server signed, or `null`. */
  jti(token: string, now: number): Promise<string | null>;
  /** The public keys (RFC 7517). */
  jwks(): Promise<{ keys: JWK[] }>;
}

/** A bounded memory of (client id, value) pairs. */
export interface PairMemory {
  has(clientId: string, value: string): boolean;
  /** Remember the pair as the newest. */
  add(clientId: string, value: string): void;
  delete(clientId: string, value: string): void;
}

/** The pending anonymous interactions, within their cap. */
export interface PendingCap {
  /** Remember a newly stored one; the id hash of a displaced one still live at `now`, which the caller deletes. */
  add(idHash: string, expiresAt: number, now: number): string | undefined;
}

/** Whether something of an id is due to be written at `now` (and if so, it counts as written). */
export interface WriteThrottle {
  due(id: string, now: number): boolean;
}

/** Wrong guesses counted per key, with a lock after too many. */
export interface GuessCounter {
  /** Until when `key` is locked at `now`, or 0. */
  lockedUntil(key: string, now: number): number;
  /** Count a wrong guess: the count, and the lock's end when this one locks the key (else 0). */
  fail(key: string, now: number): { failures: number; lockedUntil: number };
  /** Give back a count `fail` took for a guess that was right. */
  forgive(key: string): void;
}

/** Report a security event to the host's `onAudit` hook. A failing hook never fails the request. */
export function audit(ctx: Context, event: AuditEventInput): void {
  const hook = ctx.options.onAudit;
  if (!hook) return;
  try {
    const stamped = { ...event, at: ctx.clock.now() } as Parameters<typeof hook>[0];
    // The hook gets its own scope array: the event's is the one being issued or stored.
    if ('scope' in stamped) stamped.scope = [...stamped.scope];
    hook(stamped);
  } catch {
    // The audit log is the host's; its failure must not change the protocol's answer.
  }
}
