import type { Account } from '../types.js';

/**
 * The records authgate keeps, and the storage seam that keeps them.
 *
 * Every secret (client secret, code, token, interaction id) reaches storage only as its SHA-256
 * hash. Records are immutable except for the state fields named in each single-use operation,
 * and each single-use operation is ONE atomic step of the storage: one conditional statement
 * (`UPDATE ... WHERE used_at IS NULL AND expires_at > $now RETURNING ...`) or one transaction in
 * SQL, one script in a key-value store, one synchronous block (no `await` inside) in memory.
 * Times are ms since epoch, always passed in by the core from its injected clock.
 */

/**
 * What `Storage.readToken` answers: the records themselves, to read and let go of.
 * @group Storage
 */
export type TokenRead = { token: Readonly<TokenRecord>; grant: Readonly<GrantRecord> } | null;

/**
 * A registered application.
 * @group Storage
 */
export interface ClientRecord {
  id: string;
  name: string;
  /** The registered callback URL, compared with `redirect_uri` as an exact string. */
  redirectUri: string;
  /**
   * Every callback URL of a client described by a client ID metadata document, each compared
   * with `redirect_uri` as an exact string (`redirectUri` is then the first). Never stored:
   * storage holds registered clients, which have `redirectUri` alone.
   */
  redirectUris?: string[];
  /** SHA-256 of the client secret; `null` for a public client. */
  secretHash: string | null;
  createdAt: number;
  /**
   * The `response_type` values this client may use at the authorization endpoint (RFC 7591
   * §2). Absent: every type the server allows (`code`, and `token` where the implicit flow is on).
   */
  responseTypes?: ClientResponseType[];
  /** The `grant_type` values this client may use at the token endpoint (RFC 7591 §2). Absent: both. */
  grantTypes?: ClientGrantType[];
  /**
   * How a client nobody at the platform reviewed came to be: `'dynamic'` when it registered
   * itself (RFC 7591), `'metadata-document'` when it is described by its own client ID metadata
   * document. Absent for a client the platform registered (`registerClient`). Pages mark the
   * first two as not verified (docs/reference.md#consent-page). A store must keep it.
   */
  registration?: ClientRegistration;
  /** The client's home page as it stated it (RFC 7591 §2 `client_uri`): an https URL, or absent. */
  clientUri?: string;
  /** The client's logo as it stated it (RFC 7591 §2 `logo_uri`): an https URL, or absent. */
  logoUri?: string;
  /**
   * Who owns the client in the host's terms (a developer's account uuid, a team id), as given to
   * `registerClient`; `listClients({ owner })` finds its clients. Absent: no owner. A store must keep it.
   */
  owner?: string;
  /** The host's own fields for the client, a JSON object kept as given (docs/reference.md#managing-clients). */
  metadata?: Record<string, unknown>;
  /**
   * The client always uses DPoP (RFC 9449 §5.2 `dpop_bound_access_tokens`): a token request
   * without a proof is refused. Absent: DPoP is the client's choice. A store must keep it.
   */
  dpopBoundAccessTokens?: true;
  /** Its OpenID Connect registration (docs/reference.md#openid-connect); absent: the defaults. A store must keep it. */
  openid?: ClientOpenIdSection;
}

/**
 * The OpenID Connect fields of a client (OpenID Connect Dynamic Client Registration 1.0 §2), each
 * absent when the client has the default.
 * @group Storage
 */
export interface ClientOpenIdSection {
  /** `id_token_signed_response_alg`: the algorithm of its ID tokens; default RS256. */
  idTokenSignedResponseAlg?: 'RS256' | 'ES256' | 'EdDSA';
  /** `post_logout_redirect_uris` (RP-Initiated Logout 1.0 §3.1). */
  postLogoutRedirectUris?: string[];
  /** `default_max_age`, in seconds: the `max_age` of its requests that send none. */
  defaultMaxAge?: number;
  /** `require_auth_time`: `auth_time` is in every ID token anyway. */
  requireAuthTime?: boolean;
  /** `subject_type`: `pairwise` for a `sub` of its own sector (needs `openid.pairwise`); default public. */
  subjectType?: 'public' | 'pairwise';
}

/**
 * How a client nobody reviewed came to be (`ClientRecord.registration`).
 * @group Storage
 */
export type ClientRegistration = 'dynamic' | 'metadata-document';

/**
 * A `response_type` a client may be allowed (RFC 6749 §3.1.1).
 * @group Storage
 */
export type ClientResponseType = 'code' | 'token';
/**
 * A `grant_type` a client may be allowed (RFC 6749 §4.1.3, §6).
 * @group Storage
 */
export type ClientGrantType = 'authorization_code' | 'refresh_token' | typeof DEVICE_CODE_GRANT;

/**
 * The `grant_type` of the device authorization grant (RFC 8628 §3.4). A client may use it only
 * when its `grantTypes` name it (docs/reference.md#device-authorization-grant-rfc-8628).
 * @group Storage
 */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/**
 * The parsed, validated authorization request an interaction carries between steps.
 * @group Storage
 */
export interface AuthorizationRequestRecord {
  clientId: string;
  redirectUri: string;
  responseType: 'code' | 'token';
  scope: string[];
  state?: string;
  prompt: string[];
  maxAuthAge?: number;
  accountHint?: string;
  /** PKCE (RFC 7636), fixed here and copied to the code. */
  codeChallenge?: string;
  codeChallengeMethod?: 'S256' | 'plain';
  /**
   * SHA-256 (base64url) of the browser-binding cookie of the browser that sent the request;
   * absent when it was made without one. Every interaction of the request may only be
   * continued by a browser that sends that cookie. A store must keep it.
   */
  browserHash?: string;
  /**
   * The `resource` values of the request (RFC 8707 §2), each accepted by the server; absent when
   * none was sent. Copied to the code. A store must keep it.
   */
  resources?: string[];
  /** The key the code is bound to (`dpop_jkt`, RFC 9449 §10), where DPoP is on. Copied to the code. A store must keep it. */
  dpopJkt?: string;
  /**
   * The OpenID Connect parameters of a request whose scope has `openid` on a server with the
   * `openid` option (OpenID Connect Core §3.1.2.1); absent for every other request. Copied to the
   * code. A store must keep it.
   */
  openid?: OpenIdRequestSection;
}

/**
 * The OpenID Connect parameters of an authorization request, as checked (`AuthorizationRequestRecord.openid`).
 * @group Storage
 */
export interface OpenIdRequestSection {
  /** `nonce`, echoed in the ID token. */
  nonce?: string;
  /** `max_age` in seconds (or the client's `default_max_age`). */
  maxAge?: number;
  /** The `sub` of a verified `id_token_hint`: the signed-in account must be this one. */
  idTokenHintSub?: string;
  /** `login_hint`, for the host's sign-in page. */
  loginHint?: string;
  /** `ui_locales`, the languages the user prefers, in order. */
  uiLocales?: string[];
  /** `acr_values`, a hint the host may read. */
  acrValues?: string[];
  /** `claims_locales`, kept for the host; authgate's claims come from the host as they are. */
  claimsLocales?: string[];
  /** `display` (`page`, `popup`, `touch`, `wap`). */
  display?: string;
  /**
   * `response_mode`: `form_post` posts the response to the callback; `fragment` (only while the
   * implicit flow is allowed) puts it in the callback's fragment. `query`, the default, is not kept.
   */
  responseMode?: 'form_post' | 'fragment';
}

/**
 * What every pending interaction step keeps, whatever it is for (its `purpose`) and whichever
 * step it is (its `kind`).
 * @group Storage
 */
export interface InteractionFields {
  idHash: string;
  /** When the request the step belongs to arrived (the authorization request, or the code entry). */
  requestedAt: number;
  expiresAt: number;
  /**
   * The sign-in must have happened after this time (`prompt=login`, `max_auth_age`): set on a
   * `login` interaction, and kept on the `consent` that follows it, so that the decision too
   * needs the fresh sign-in. `null` on the steps of a device verification.
   */
  loginAfter: number | null;
}

/**
 * A sign-in step of an authorization request: nobody suitable is signed in yet, so it names no account.
 * @group Storage
 */
export interface LoginInteractionRecord extends InteractionFields {
  kind: 'login';
  purpose: 'authorization';
  request: AuthorizationRequestRecord;
  account?: undefined;
}

/**
 * A consent step of an authorization request: shown to a signed-in account, the only one that may decide it.
 * @group Storage
 */
export interface ConsentInteractionRecord extends InteractionFields {
  kind: 'consent';
  purpose: 'authorization';
  request: AuthorizationRequestRecord;
  /** The account the consent is shown to. */
  account: Account;
}

/**
 * The sign-in step of a device verification (RFC 8628 §3.3): the verification page was opened
 * by nobody signed in. It names no client (none is known before the user enters a code) and is
 * bound to no browser: resuming it only leads back to the verification page.
 * @group Storage
 */
export interface DeviceSignInInteractionRecord extends InteractionFields {
  kind: 'login';
  purpose: 'device';
  device: {
    /** The verification page to go back to, with `?user_code=` when the user came with a code. */
    returnTo: string;
  };
  account?: undefined;
}

/**
 * What the confirmation step of a device verification decides: the device authorization
 * (by its device code's hash), what it asks for, the browser it is bound to, and where the
 * browser goes after the decision.
 * @group Storage
 */
export interface DeviceVerificationRecord {
  /** SHA-256 of the device code: the device authorization (`DeviceAuthorizationRecord.hash`) this step decides. */
  codeHash: string;
  /** The device's client. */
  clientId: string;
  /** The scope the device asked for, as the confirmation shows it. */
  scope: string[];
  /** The `resource` values the device asked for (RFC 8707), or absent. */
  resources?: string[];
  /**
   * SHA-256 of the browser secret (the device pages' CSRF cookie) of the browser that entered
   * the code: only that browser may decide the step. Absent when it had none.
   */
  browserHash?: string;
  /** The verification page, where `approve` and `deny` send the browser (with `?result=`). */
  returnTo: string;
}

/**
 * The confirmation step of a device verification (RFC 8628 §3.3): the right code was entered by
 * a signed-in account, the only one that may decide it.
 * @group Storage
 */
export interface DeviceConfirmationInteractionRecord extends InteractionFields {
  kind: 'consent';
  purpose: 'device';
  device: DeviceVerificationRecord;
  /** The account the confirmation is shown to. */
  account: Account;
}

/**
 * A pending step of an authorization request (`purpose: 'authorization'`): sign-in or consent.
 * @group Storage
 */
export type AuthorizationInteractionRecord = LoginInteractionRecord | ConsentInteractionRecord;

/**
 * A pending step of a device verification (`purpose: 'device'`): sign-in or confirmation.
 * @group Storage
 */
export type DeviceInteractionRecord = DeviceSignInInteractionRecord | DeviceConfirmationInteractionRecord;

/**
 * A pending interaction step, told apart by what it is for (`purpose`: an authorization request
 * with its `request`, or a device verification with its `device`) and by `kind` (`login`: names
 * no account; `consent`: the account it is shown to). Single use. A store keeps every field as
 * given.
 * @group Storage
 */
export type InteractionRecord = AuthorizationInteractionRecord | DeviceInteractionRecord;

/**
 * The scope a user approved for one resource (RFC 8707), or for requests without `resource`: one
 * entry of `ConsentRecord.approvals`.
 * @group Storage
 */
export interface ConsentApproval {
  /**
   * The resource (RFC 8707 §2) approved, or `null` for a request without `resource`, whose tokens
   * have no audience and are accepted by every resource: the broadest approval.
   */
  resource: string | null;
  /** Every scope value approved for it, over every approval (a save unites them). */
  scope: string[];
}

/**
 * At most this many entries of `ConsentRecord.approvals` are kept per account and client: past
 * it, a save drops the resources approved least recently (a dropped one is asked for again, never
 * let through). The resources a server issues for bound the entries already; this bounds a
 * host's `acceptResource` that accepts an open-ended set.
 * @group Storage
 */
export const MAX_CONSENT_APPROVALS = 50;

/**
 * A user's standing authorization of an application, as used by `prompt=none`: every approval
 * of the account for the client, merged (docs/reference.md#stored-consents). A silent request
 * passes only when, for each resource it names (or for "no resource" when it names none), the
 * scope approved for that resource, or without resource, covers its scope. A store must keep
 * every field; each save widens the stored consent, never narrows it (up to
 * `MAX_CONSENT_APPROVALS` resources).
 * @group Storage
 */
export interface ConsentRecord {
  accountUuid: string;
  clientId: string;
  /**
   * Every scope value the user has approved for this application, for any resource (what
   * `listAuthorizations` shows). `prompt=none` goes by `approvals`, never by this union.
   */
  scope: string[];
  /**
   * The scope approved for each resource, and for requests without `resource`
   * (`resource: null`): each resource at most once. A save merges the approvals by resource,
   * uniting the scope of each. Empty (a consent stored before authgate kept them) covers no
   * request at all.
   */
  approvals: ConsentApproval[];
  /** When the user last approved. */
  grantedAt: number;
}

/**
 * What every grant keeps, whatever its kind: the account, the scope, and the revoked flag that
 * every code and token of the grant reads. Revoking the grant kills its whole family at once.
 * @group Storage
 */
export interface GrantFields {
  id: string;
  account: Account;
  scope: string[];
  createdAt: number;
  revokedAt: number | null;
}

/**
 * One authorization of an application by a user: what the user approved once, and the family of
 * every code and token that descends from it.
 * @group Storage
 */
export interface OAuthGrantRecord extends GrantFields {
  kind: 'oauth';
  /** The application the grant was issued to. */
  clientId: string;
  /**
   * A grant of an OpenID Connect request: when the user signed in for it (ms since epoch), the
   * `auth_time` of every ID token of it, refreshed ones too (OpenID Connect Core §12.2). A store must keep it.
   */
  openid?: { authTime: number };
  name?: undefined;
  lastUsedAt?: undefined;
}

/**
 * The grant of a personal access token (docs/reference.md#personal-access-tokens): a token an
 * account made for itself, of no client, with the one token record of kind `personal`.
 * @group Storage
 */
export interface PersonalGrantRecord extends GrantFields {
  kind: 'personal';
  /** A personal token belongs to no client. */
  clientId?: undefined;
  /** The name its owner gave it. */
  name: string;
  /**
   * When it was last used, as `touchPersonalToken` wrote it (at most once a minute per token and
   * server instance), or `null` before its first use.
   */
  lastUsedAt: number | null;
}

/**
 * A grant, told apart by `kind`: an OAuth authorization of a client (`oauth`), or a personal
 * access token (`personal`, no client). A store keeps `kind` and every field of its kind.
 * @group Storage
 */
export type GrantRecord = OAuthGrantRecord | PersonalGrantRecord;

/**
 * An authorization code, kept (as a hash) after use until it expires so a replay is recognised.
 * @group Storage
 */
export interface CodeRecord {
  hash: string;
  grantId: string;
  clientId: string;
  redirectUri: string;
  scope: string[];
  /** The PKCE challenge sent with the authorization request (RFC 7636), or `null`. */
  codeChallenge: string | null;
  /** `S256`, or `plain` where a server allows it; `null` without a challenge. */
  codeChallengeMethod: 'S256' | 'plain' | null;
  expiresAt: number;
  usedAt: number | null;
  /**
   * The resources granted (RFC 8707 §2): the code's tokens are issued for these or some of them.
   * Absent when the authorization request named none (tokens without an audience).
   */
  resources?: string[];
  /** The key the exchange must prove (`dpop_jkt`, RFC 9449 §10); absent: any key or none. A store must keep it. */
  dpop?: DpopBinding;
  /**
   * A code of an OpenID Connect request: its ID token's `auth_time` (ms since epoch) and `nonce`
   * (OpenID Connect Core §3.1.3.3). A store must keep it.
   */
  openid?: { authTime: number; nonce?: string };
}

/**
 * What every token keeps, whatever its kind.
 * @group Storage
 */
export interface TokenFields {
  hash: string;
  grantId: string;
  scope: string[];
  issuedAt: number;
  /** `null`: no expiry (refresh tokens by default). */
  expiresAt: number | null;
  /** For a refresh token: the hash of the access token issued with it (invalidated on rotation). */
  pairHash: string | null;
  /** For a refresh token: when it was exchanged for a new pair. */
  rotatedAt: number | null;
  revokedAt: number | null;
  /**
   * For a refresh token: SHA-256 of its family part, shared by every refresh token of one grant
   * (see `familyOf` in `tokens/mint.ts`). A rotated token whose own record is gone is still
   * known by it as a replay. `null` or absent for access tokens and for refresh tokens issued
   * before families existed.
   */
  familyHash?: string | null;
  /**
   * For a refresh token minted by a refresh: the hash of the refresh token presented for it (its
   * parent). Refresh tokens with one parent are siblings: a retry within
   * `refreshRetryWindowSeconds` mints another (docs/reference.md#refresh-token-rotation-and-families),
   * and the first of them rotated revokes the others. `null` or absent otherwise.
   */
  parentHash?: string | null;
  /**
   * For a rotated refresh token: when a refresh token minted from it (a child) was first rotated.
   * From then on the token can no longer be retried (`retryRefreshToken`). `null` or absent otherwise.
   */
  childRotatedAt?: number | null;
  /**
   * The resources the token is for (RFC 8707): an access token is accepted only by these
   * (`audienceAllows`), a refresh token may be exchanged for access tokens to these or some of
   * them. Absent: a token issued without `resource`, accepted by any resource.
   */
  audience?: string[];
}

/**
 * An access or refresh token of an OAuth grant, issued to its client.
 * @group Storage
 */
export interface OAuthTokenRecord extends TokenFields {
  kind: 'access' | 'refresh';
  clientId: string;
  /**
   * The key the token is bound to (DPoP, RFC 9449 §6): it is accepted only with a proof signed by
   * that key. Absent: a bearer token. A store must keep it.
   */
  dpop?: DpopBinding;
}

/**
 * The binding of a token or an authorization code to a DPoP key (RFC 9449 §6, §10).
 * @group Storage
 */
export interface DpopBinding {
  /** JWK SHA-256 Thumbprint (RFC 7638) of the key. */
  jkt: string;
}

/**
 * A personal access token (docs/reference.md#personal-access-tokens), the one token of its
 * personal grant, used like an access token, never refreshed. It belongs to no client.
 * @group Storage
 */
export interface PersonalTokenRecord extends TokenFields {
  kind: 'personal';
  clientId?: undefined;
}

/**
 * A token, told apart by `kind`: an OAuth access or refresh token (with its client), or a
 * personal access token (no client).
 * @group Storage
 */
export type TokenRecord = OAuthTokenRecord | PersonalTokenRecord;

/**
 * What `Storage.findRefreshFamily` answers: the grant (and its client) a refresh-token family belongs to.
 * @group Storage
 */
export interface RefreshFamily {
  grantId: string;
  clientId: string;
}

/**
 * Why a single-use step did not happen. `used` is reported before any other reason, so a replay
 * is recognised as one even after the code or token expired or its grant was revoked.
 * @group Storage
 */
export type SingleUseFailure = 'missing' | 'used' | 'expired' | 'revoked';

/**
 * The outcome of a single-use step: on success, the grant the code or token belongs to (an
 * OAuth grant: only those have codes and refresh tokens); on `used`,
 * `grantId` names the family to revoke (a replay) and `usedAt` says when the first use happened.
 * The other failures carry neither (the `undefined` fields only let a caller that has not
 * narrowed on `reason` read them).
 * @group Storage
 */
export type SingleUseOutcome =
  | { ok: true; grant: OAuthGrantRecord }
  | { ok: false; reason: 'used'; grantId: string; usedAt: number }
  | { ok: false; reason: Exclude<SingleUseFailure, 'used'>; grantId?: undefined; usedAt?: undefined };

/**
 * A personal access token as `Storage.listPersonalTokens` answers it: its grant (id, account,
 * scope, name, last use) and its one token record (expiry, revocation).
 * @group Storage
 */
export interface PersonalTokenRead {
  grant: PersonalGrantRecord;
  token: PersonalTokenRecord;
}

/**
 * Where a device authorization (RFC 8628) stands: waiting for the user, approved, denied, or
 * already exchanged for tokens.
 * @group Storage
 */
export type DeviceAuthorizationStatus = 'pending' | 'approved' | 'denied' | 'redeemed';

/**
 * What every device authorization request (RFC 8628 §3.1) keeps, whatever its status, from the
 * device's request to the tokens it got, kept (as hashes) until it expires.
 * @group Storage
 */
export interface DeviceAuthorizationFields {
  /** SHA-256 of the `device_code`: the key. */
  hash: string;
  /** SHA-256 of the normalized `user_code` (upper case, no dash); unique among live records. */
  userCodeHash: string;
  clientId: string;
  scope: string[];
  /** The `resource` values requested (RFC 8707), or absent. */
  resources?: string[];
  createdAt: number;
  expiresAt: number;
  /** The polling interval in seconds, raised by 5 on each `slow_down` (RFC 8628 §3.5). */
  interval: number;
  /** The last poll at the token endpoint, or `null`. */
  lastPolledAt: number | null;
}

/**
 * A device authorization nobody has decided yet: no account, no decision time.
 * @group Storage
 */
export interface PendingDeviceAuthorizationRecord extends DeviceAuthorizationFields {
  status: 'pending';
  account: null;
  decidedAt: null;
}

/**
 * A device authorization `account` approved at `decidedAt`: still to be collected by the device
 * (`approved`), or already exchanged for tokens (`redeemed`).
 * @group Storage
 */
export interface ApprovedDeviceAuthorizationRecord extends DeviceAuthorizationFields {
  status: 'approved' | 'redeemed';
  /** Who approved it. */
  account: Account;
  decidedAt: number;
}

/**
 * A device authorization denied at `decidedAt`: by the user, or afterwards by a revocation that
 * covered its approval before the device collected it (the approval's account is dropped, and
 * `decidedAt` stays the approval's). Nobody gets tokens for it.
 * @group Storage
 */
export interface DeniedDeviceAuthorizationRecord extends DeviceAuthorizationFields {
  status: 'denied';
  account: null;
  decidedAt: number;
}

/**
 * A device authorization request (RFC 8628 §3.1), told apart by `status`: pending (no account),
 * approved or redeemed (the account that approved it, and when), or denied (when).
 * @group Storage
 */
export type DeviceAuthorizationRecord =
  | PendingDeviceAuthorizationRecord
  | ApprovedDeviceAuthorizationRecord
  | DeniedDeviceAuthorizationRecord;

/**
 * What `Storage.pollDeviceAuthorization` answers: `missing` (unknown, or another client's),
 * `expired`, `pending` (poll recorded), `slow_down` (polled sooner than `interval` seconds after
 * the last poll: interval raised by 5 and the poll recorded), `denied`, `redeemed` (already
 * exchanged) or `approved`: the record, still `approved` (`redeemDeviceAuthorization` hands it out
once, together with the tokens it is exchanged for).
 * @group Storage
 */
export type DevicePoll =
  | { status: 'missing' | 'expired' | 'pending' | 'denied' | 'redeemed' }
  | { status: 'slow_down'; interval: number }
  | { status: 'approved'; record: ApprovedDeviceAuthorizationRecord & { status: 'approved' } };

/** The fields of a client `updateClientFields` changes. */
export interface ClientChanges {
  name?: string;
  redirectUri?: string;
  secretHash?: string;
  metadata?: Record<string, unknown> | null;
  /** The client's new OpenID Connect section, whole; `null` removes it. */
  openid?: ClientOpenIdSection | null;
}

/**
 * What every store must have: the methods of the OAuth core (clients, interactions, consents,
 * grants, codes, tokens, revocation), with `readToken` as an optional speed-up. A store of your
 * own starts here and adds the groups of the features it serves (`StorageGroups`), each whole:
 * see `Storage`.
 * @group Storage
 */
export interface CoreStorage {
  /** Insert a client, or replace the record with the same id. */
  saveClient(client: ClientRecord): Promise<void>;
  findClient(clientId: string): Promise<ClientRecord | null>;

  saveInteraction(interaction: InteractionRecord): Promise<void>;
  findInteraction(idHash: string): Promise<InteractionRecord | null>;
  /** Atomically remove and return the interaction, if present and `now < expiresAt`. Single use. */
  takeInteraction(idHash: string, now: number): Promise<InteractionRecord | null>;

  /**
   * Insert, or merge into the existing consent of the same account and client: the scope values
   * united, and the approvals merged by resource (`null` being one more resource), the scope of each
   * united. In one step: concurrent approvals lose nothing. Past `MAX_CONSENT_APPROVALS`
   * resources, keep those approved most recently.
   */
  saveConsent(consent: ConsentRecord): Promise<void>;
  findConsent(accountUuid: string, clientId: string): Promise<ConsentRecord | null>;
  /** Every consent of an account (the user's "authorized applications"). */
  listConsents(accountUuid: string): Promise<ConsentRecord[]>;

  /** Insert a grant together with its first code or its first tokens, atomically. */
  createGrant(grant: GrantRecord, issued: { code?: CodeRecord; tokens?: TokenRecord[] }): Promise<void>;
  findCode(hash: string): Promise<CodeRecord | null>;
  /**
   * Single use, atomic: if the code exists, is unused, `now < expiresAt` and its grant is not
   * revoked, mark it used at `now` and insert `tokens`; otherwise change nothing and say why
   * (`used` with the code's `grantId`, so the caller can revoke the family).
   */
  redeemCode(hash: string, now: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome>;

  /** A token by hash, with its grant. */
  findToken(hash: string): Promise<{ token: TokenRecord; grant: GrantRecord } | null>;
  /**
   * Optional: the answer of `findToken`, for a caller that only reads it, at once, and keeps
   * nothing of it. The core uses it for the bearer check, revocation and introspection, and
   * copies whatever it hands on to the host (the account, the scope). A store that keeps its
   * records as objects (`MemoryStorage`) may return them here without the defensive copies
   * `findToken` makes, a noticeable share of a bearer check (see BENCHMARKS.md). A store that
   * holds them in memory may also answer synchronously (a value rather than a promise), which
   * saves the bearer check a microtask. Leave it out where every answer is built fresh anyway, as
   * in SQL stores; `findToken` is used then.
   */
  readToken?(hash: string): TokenRead | Promise<TokenRead>;
  /**
   * Single use, atomic: if the refresh token exists, was never rotated or revoked,
   * `now < expiresAt` (when set) and its grant is not revoked, mark it rotated at `now`, revoke
   * its paired access token, and insert `tokens`; otherwise change nothing and say why (`used`
   * with the `grantId` when it was already rotated). When the token has a `parentHash`, the same
   * step also sets the parent's `childRotatedAt` (when unset) and revokes every other refresh
   * token with that `parentHash` that is neither rotated nor revoked (its siblings), each with its
   * paired access token. A store where a retry (`retryRefreshToken`) and a rotation of a sibling
   * can run at once must order them: the sibling a retry stores is either revoked by the rotation
   * or not stored at all (`PostgresStorage` locks the parent's row first).
   */
  rotateRefreshToken(hash: string, now: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome>;
  /**
   * The family of a refresh token that is no longer stored (rotated and then pruned): the grant of
   * any stored refresh token whose `familyHash` is this one, or `null`. A store must keep the
   * newest refresh token of a family for as long as its grant lives and it has not expired, so
   * that a replay of any older one is still recognised (and revokes the family); that is one
   * record per family, however long the rotation chain. One indexed lookup.
   */
  findRefreshFamily(familyHash: string): Promise<RefreshFamily | null>;

  /** Revoke a grant and so every code and token of its family. Idempotent. */
  revokeGrant(grantId: string, now: number): Promise<void>;
  /**
   * The user revokes an application: delete the consent and revoke every grant of the pair. A
   * store with the device authorization group also denies the pair's device authorizations that
   * are approved but not yet collected (each would become a live grant at its next poll): each
   * becomes `denied`, its account dropped (`DeniedDeviceAuthorizationRecord`). The same holds for
   * `revokeClientGrants`, `deleteClient` (the client's) and `revokeAccountGrants` (the account's).
   * Each must also reach the grants, approvals and consents it covers that a concurrent
   * `createGrant`, `redeemDeviceAuthorization`, `decideDeviceAuthorization` or `saveConsent`
   * stores while it runs (the consents: those that delete them, all but `revokeClientGrants`): a
   * store whose revocation reads the rows at one moment and writes them later must keep those
   * from committing in between (`PostgresStorage` takes advisory locks, docs/architecture.md).
   */
  revokeAccess(accountUuid: string, clientId: string, now: number): Promise<void>;
  /** Revoke every grant of a client, for every user (the developer revokes all its tokens). Consents stay. */
  revokeClientGrants(clientId: string, now: number): Promise<void>;
}

/**
 * The client administration group (`listClients`, `updateClient`, `deleteClient` of
 * `AuthorizationServer`; docs/reference.md#managing-clients). `listClients` and `deleteClient`
 * need it (a `ConfigError` naming the group otherwise); `updateClient` and `resetClientSecret`
 * use `updateClientFields` when the store has the whole group, and fall back to `findClient` +
 * `saveClient` when it has none of it.
 * @group Storage
 */
export interface ClientAdministrationStorage {
  /**
   * The registered clients, those of `filter.owner` when given, oldest first. Clients described
   * by metadata documents are not stored and so never listed.
   */
  listClients(filter: { owner?: string }): Promise<ClientRecord[]>;
  /**
   * Atomic: change only the given fields of a stored client (`metadata: null` removes it), never
   * inserting one; `false` when no client has that id (deleted meanwhile).
   */
  updateClientFields(clientId: string, changes: ClientChanges): Promise<boolean>;
  /**
   * Atomic: revoke every grant of the client (so every code and token of it, for every user),
   * delete every consent given to it, and delete the client. Idempotent.
   */
  deleteClient(clientId: string, now: number): Promise<void>;
}

/**
 * The account administration group (`revokeAllForAccount` of `AuthorizationServer`, "sign out
 * everywhere"; docs/reference.md#managing-clients).
 * @group Storage
 */
export interface AccountAdministrationStorage {
  /**
   * Atomic: revoke every grant of the account (every code and token issued on its behalf, to
   * every client, and its personal access tokens) and delete its consents. Idempotent.
   */
  revokeAccountGrants(accountUuid: string, now: number): Promise<void>;
}

/**
 * The personal access tokens group (`createPersonalToken`, `listPersonalTokens`,
 * `revokePersonalToken`; docs/reference.md#personal-access-tokens). A personal token is stored by
 * `createGrant` as a grant of kind `personal` (no client; its `name` and `lastUsedAt`) with one
 * token of kind `personal` (no client); `findToken`, `revokeGrant` and prune serve it as any
 * other, and no revocation of a client (`revokeAccess`, `revokeClientGrants`, `deleteClient`)
 * reaches it.
 * @group Storage
 */
export interface PersonalTokenStorage {
  /** Every stored personal access token of an account, revoked ones included, each with its grant. */
  listPersonalTokens(accountUuid: string): Promise<PersonalTokenRead[]>;
  /**
   * Record that the personal token of this grant was used at `at` (its grant's `lastUsedAt`),
   * unless a later use is recorded already. The core calls it at most once a minute per token
   * and never waits for it.
   */
  touchPersonalToken(grantId: string, at: number): Promise<void>;
}

/**
 * The device authorization group (RFC 8628), needed by the `deviceAuthorization` option: the
 * server's constructor throws a `ConfigError` naming the group when the store lacks any of it.
 * @group Storage
 */
export interface DeviceAuthorizationStorage {
  /**
   * Insert a new device authorization (always pending). Answers `false`, storing nothing, when a
   * record with the same `userCodeHash` exists and has not expired at `record.createdAt` (an
   * expired one is replaced).
   */
  createDeviceAuthorization(record: PendingDeviceAuthorizationRecord): Promise<boolean>;
  /** The record with this `userCodeHash`, whatever its status or expiry, or `null`. */
  findDeviceAuthorization(userCodeHash: string): Promise<DeviceAuthorizationRecord | null>;
  /**
   * Single use, atomic: if the record exists, is `pending` and `now < expiresAt`, set it
   * `approved` by `account` (or `denied` when `account` is `null`), `decidedAt` being `now`, and
   * answer `true`; otherwise change nothing and answer `false`.
   */
  decideDeviceAuthorization(hash: string, now: number, account: Account | null): Promise<boolean>;
  /**
   * Atomic, the token endpoint's step (see `DevicePoll`): for the record `hash` of `clientId`
   * (another client's is `missing`, unchanged): `redeemed` if it was exchanged already, else
   * `expired` if `now >= expiresAt`; `approved` answers the record and changes nothing; `denied`
   * stays; `pending` records `now` as `lastPolledAt`, and is `slow_down` (interval + 5) when the
   * last poll was less than `interval` seconds minus `leewayMs` before.
   */
  pollDeviceAuthorization(hash: string, clientId: string, now: number, leewayMs: number): Promise<DevicePoll>;
  /**
   * Single use, atomic, as `redeemCode`: if the record is `approved` and `now < expiresAt`, mark
   * it `redeemed` and insert `grant` with `tokens` (as `createGrant` would), answering `true`;
   * otherwise change nothing and answer `false`. Of concurrent callers exactly one wins, and a
   * failure leaves the approval for the next poll.
   */
  redeemDeviceAuthorization(hash: string, now: number, grant: OAuthGrantRecord, tokens: OAuthTokenRecord[]): Promise<boolean>;
}

/**
 * The DPoP proof group (RFC 9449 §11.1): the `jti`s of proofs already seen, so a proof is
 * accepted once, by whichever instance sees it first. The key is the core's (a hash of the
 * key's thumbprint and the `jti`), fixed length; `expiresAt` is when the proof would be refused
 * anyway (its `iat` window over), so after it the key can be forgotten. `prune` deletes the
 * keys past their `expiresAt`.
 * @group Storage
 */
export interface DpopProofStorage {
  /**
   * Atomic insert-if-absent: remember `key` until `expiresAt` and answer `true`, unless `key` is
   * remembered already with an `expiresAt` after `now`: then change nothing and answer `false`.
   * A key whose `expiresAt` has passed counts as absent (it is replaced). Of concurrent callers
   * with one key, on one instance or several, exactly one gets `true`.
   */
  rememberDpopProof(key: string, expiresAt: number, now: number): Promise<boolean>;
}

/**
 * The longest `refreshRetryWindowSeconds` (and `refreshReuseGraceSeconds`) a server accepts. A
 * store's prune keeps a rotated refresh token, while no child of it was rotated, for this long
 * after its rotation, so that a retry within the window finds the record it needs.
 * @group Storage
 */
export const MAX_REFRESH_WINDOW_SECONDS = 300;

/**
 * The refresh retry group (docs/reference.md#refresh-token-rotation-and-families): a client whose
 * refresh response was lost, or several processes of one client refreshing with one token at
 * once, present a just-rotated refresh token again and get another pair (a sibling) instead of a
 * replay. Needed by `refreshRetryWindowSeconds` (on by default for a store that has it).
 * @group Storage
 */
export interface RefreshRetryStorage {
  /**
   * Single use per child, atomic: if the refresh token exists, was rotated no more than
   * `windowMs` before `now`, no refresh token minted from it was rotated since
   * (`childRotatedAt` unset), it is not revoked nor expired at `now`, and its grant is not
   * revoked, insert `tokens` (a sibling pair, minted with `parentHash` = `hash`) and answer the
   * grant. Otherwise change nothing and say why: `used` (with `grantId`, and `usedAt`: the
   * rotation) when it was rotated but the window is over or a child was rotated; `missing`
   * when it is unknown, not a refresh token, or was never rotated. Concurrent retries may all
   * succeed; a retry and a rotation of one of the token's children are ordered (see
   * `rotateRefreshToken`).
   */
  retryRefreshToken(hash: string, now: number, windowMs: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome>;
}

/**
 * The combined reads group (optional, a speed-up with no state of its own): the client a token
 * request names and the code or token it presents, read together. For a store where every read
 * is a round trip (SQL), one instead of two on every code exchange, refresh and revocation; the
 * core reads them separately (`findClient`, then `findCode` or `findToken`) from a store without
 * it. Each answers exactly what the two separate reads would answer, at one moment.
 * @group Storage
 */
export interface CombinedReadStorage {
  /** `findClient(clientId)` and `findCode(codeHash)`, in one read. */
  findClientAndCode(clientId: string, codeHash: string): Promise<{ client: ClientRecord | null; code: CodeRecord | null }>;
  /** `findClient(clientId)` and `findToken(tokenHash)`, in one read. */
  findClientAndToken(
    clientId: string,
    tokenHash: string,
  ): Promise<{ client: ClientRecord | null; token: { token: TokenRecord; grant: GrantRecord } | null }>;
}

/**
 * The combined approval group (optional, a speed-up with no state of its own): the user's
 * approval of an authorization request as one read and one atomic write, instead of the
 * interaction's `findInteraction` and `takeInteraction`, the client's `findClient`, `saveConsent`
 * and `createGrant`: on SQL, two round trips instead of five. The core uses the separate methods
 * with a store without it.
 * @group Storage
 */
export interface CombinedApprovalStorage {
  /**
   * `findInteraction(idHash)` and, for an authorization step (`purpose: 'authorization'`),
   * `findClient` of its request's client, in one read; `client` is `null` for a device step and
   * when the interaction or its client is not stored.
   */
  findInteractionAndClient(idHash: string): Promise<{ interaction: InteractionRecord | null; client: ClientRecord | null }>;
  /**
   * An approval, atomic: take the interaction as `takeInteraction(idHash, now)` does, and only if
   * that answers it (stored, and `now` before its `expiresAt`), save `consent` as `saveConsent`
   * does and create `grant` with its code or tokens as `createGrant` does (with the same issuance
   * guarantees against a concurrent revocation). Answers whether it did; otherwise nothing is
   * written (an expired interaction is deleted all the same). Of concurrent calls with one
   * `idHash`, at most one answers `true`.
   */
  approveInteraction(
    idHash: string,
    now: number,
    consent: ConsentRecord,
    grant: OAuthGrantRecord,
    issued: { code?: CodeRecord; tokens?: TokenRecord[] },
  ): Promise<boolean>;
}

/**
 * The named groups of optional storage methods, by the name `STORAGE_GROUPS` lists their methods
 * under. A store has each group whole or not at all: a feature that needs a group checks for all
 * of it, and the conformance kit fails a store that has part of one. A new capability with state
 * of its own adds its group here, to `Storage`, and to `STORAGE_GROUPS`.
 * @group Storage
 */
export interface StorageGroups {
  clientAdministration: ClientAdministrationStorage;
  accountAdministration: AccountAdministrationStorage;
  personalTokens: PersonalTokenStorage;
  deviceAuthorization: DeviceAuthorizationStorage;
  dpopProofs: DpopProofStorage;
  refreshRetry: RefreshRetryStorage;
  combinedReads: CombinedReadStorage;
  combinedApproval: CombinedApprovalStorage;
}

/**
 * The name of a storage group.
 * @group Storage
 */
export type StorageGroup = keyof StorageGroups;

/**
 * The storage seam: `CoreStorage`, and each group of `StorageGroups` whole or not at all.
 * Implement it on any database; `MemoryStorage` is the reference (it has every group), and
 * `describeStorageConformance()` from `authgate/testing` checks an implementation: the core
 * cases always, each group's cases when the store has that group. A server uses a group only
 * for its feature: without it, the feature's calls throw a `ConfigError` naming the group (or,
 * for an option such as `deviceAuthorization`, the constructor does), and everything else works.
 *
 * @example
 * const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions });
 * @group Storage
 */
export interface Storage
  extends CoreStorage,
    Partial<ClientAdministrationStorage>,
    Partial<AccountAdministrationStorage>,
    Partial<PersonalTokenStorage>,
    Partial<DeviceAuthorizationStorage>,
    Partial<DpopProofStorage>,
    Partial<RefreshRetryStorage>,
    Partial<CombinedReadStorage>,
    Partial<CombinedApprovalStorage> {}
