/**
 * The plain values that cross the boundary between an adapter and the core.
 * Adapters translate framework objects into these and back; the core sees nothing else.
 */

/**
 * One HTTP request, as an adapter hands it to the core.
 * @group Authorization
 * @group Token
 */
export interface OAuthRequest {
  /** HTTP method, e.g. `'GET'` or `'POST'` (any case). */
  method: string;
  /** Path and query (`/v1/oauth/token?grant_type=...`) or an absolute URL. */
  url: string;
  /** Header names in lower case. */
  headers: Record<string, string | string[] | undefined>;
  /**
   * The raw body, or a form the host already parsed. Adapters pass the raw string so that the
   * core sees duplicated parameters the same way in every framework.
   */
  body?: string | Record<string, unknown>;
}

/**
 * One HTTP response, as the core hands it to an adapter.
 * @group Authorization
 * @group Token
 */
export interface OAuthResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A user account of the host platform. Extra fields are kept but not sent to clients.
 * @group Authorization
 */
export interface Account {
  /**
   * The account identifier, a hexadecimal string (the `info.uuid` of token responses,
   * docs/reference.md#token-response).
   */
  uuid: string;
  name: string;
  email: string;
}

/**
 * The signed-in user, as the host's sign-in system reports it.
 * @group Authorization
 */
export interface UserSession {
  account: Account;
  /** When the user last signed in with a credential: ms since epoch. */
  authenticatedAt: number;
}

/**
 * The host's sign-in, seen from the core.
 *
 * @example
 * const sessions: UserSessions = {
 *   current: (req) => mySessionStore.fromCookie(req.headers.cookie),
 * };
 * @group Authorization
 */
export interface UserSessions {
  current(request: OAuthRequest): UserSession | null | Promise<UserSession | null>;
}

/**
 * A source of time, in ms since epoch. The default is the system clock.
 * @group Authorization
 */
export interface Clock {
  now(): number;
}

/**
 * What the host must show or do in the middle of an authorization request.
 * @group Authorization
 */
export interface Interaction {
  /** Unguessable, single use, short-lived. */
  id: string;
  /**
   * The application. For a client nobody at the platform reviewed (it registered itself, or is
   * described by its own metadata document) `verified` is `false`, and `name`, `uri` and
   * `logoUri` are only what the client says about itself: show them as such
   * (docs/reference.md#consent-page). For a client the platform registered, only `id` and `name`.
   */
  client: {
    id: string;
    name: string;
    /** `false` when nobody at the platform reviewed this client; absent when the platform registered it. */
    verified?: false;
    /** The host of the client id, when the client id is a URL (a metadata-document client). */
    idHost?: string;
    /** The home page the client stated (`client_uri`), https only. */
    uri?: string;
    /**
     * The logo the client stated (`logo_uri`), https only. The built-in page does not show it: a
     * remote image tells its server who opens the page, and lets a client show anyone's logo.
     */
    logoUri?: string;
  };
  /** The requested scope, e.g. `['read']` or `['read', 'write']`. */
  scope: string[];
  /** What each requested scope value means, in plain words for the consent page. */
  scopeDescriptions?: Record<string, string>;
  /** For consent: who is deciding. */
  account?: Account;
  /** The `i` parameter, if sent: the first characters of the expected account UUID. */
  accountHint?: string;
  /**
   * The resources (RFC 8707) the tokens will be for, when the client named any: show them on
   * the consent page. Absent: tokens not restricted to a resource.
   */
  resources?: string[];
  /**
   * Where the browser is sent after the decision, for every client (the consent page shows it):
   * the host (and port) of the requested callback, e.g. `localhost:8090`, or the scheme of a
   * private-use callback, e.g. `com.example.app:`.
   */
  redirectHost?: string;
  /**
   * The OpenID Connect hints of the request (Core §3.1.2.1), when it had any: `loginHint` to
   * pre-fill the sign-in, `acrValues` the authentication the client would like, `uiLocales` the
   * languages the user prefers (the built-in pages follow them before `Accept-Language`),
   * `claimsLocales`, `display`. Hints only: nothing of them is checked.
   */
  openid?: { loginHint?: string; acrValues?: string[]; uiLocales?: string[]; claimsLocales?: string[]; display?: string };
  /** When this interaction stops being usable: ms since epoch. */
  expiresAt: number;
  /**
   * `'device'` on both steps of a device verification (RFC 8628 §3.3): its sign-in, a `login`
   * step that names no application (no code is entered yet: its `client` is `{ id: '', name: ''
   * }`, kept only because this type requires one; show "a device" rather than an application),
   * and its confirmation, which also has `device`. Absent on the steps of an authorization
   * request (docs/reference.md#verification-page).
   */
  purpose?: 'device';
  /**
   * Present when the step is the confirmation of a device verification (RFC 8628 §3.3): the
   * user code the user entered, as the device shows it (`WDJB-MJHT`). Show it, and warn that the
   * user should only continue if they started this on their own device and the codes match
   * (RFC 8628 §5.4). The adapters hand such a step to `onDeviceVerification`, never to `onConsent`.
   */
  device?: { userCode: string };
}

/**
 * The outcome of an authorization-endpoint step. Adapters handle each case explicitly.
 * @group Authorization
 */
export type AuthorizeDecision =
  /** Send the browser to the client's callback: a code, a fragment, or an error. */
  | { type: 'redirect'; location: string }
  /** The host signs the user in, then calls `resume()`. */
  | { type: 'login'; interaction: Interaction }
  /** The host shows the client and scope, then calls `approve()` or `deny()`. */
  | { type: 'consent'; interaction: Interaction }
  /** Show an error page. Never a redirect: the client or its callback could not be trusted. */
  | { type: 'error'; status: number; error: string; description: string }
  /**
   * Post the response to the client's callback (OAuth 2.0 Form Post Response Mode): a page whose
   * form, sent by its own script, carries `fields` (`code`, `state`, `iss`, or the error) to
   * `action`. Only for an OpenID Connect request with `response_mode=form_post`; the adapters
   * render it with `interactionResponse` (`formPostResponse`).
   */
  | { type: 'form_post'; action: string; fields: Record<string, string> };

/**
 * The verified access token a resource API request carries: an OAuth access token, issued to an
 * application, or a personal access token, which belongs to no application. Tell them apart by
 * `kind`.
 * @group Resource
 */
export type VerifiedToken = OAuthVerifiedToken | PersonalVerifiedToken;

/**
 * What every verified token carries.
 * @group Resource
 */
export interface VerifiedTokenBase {
  account: Account;
  scope: string[];
  /** ms since epoch; `Number.MAX_SAFE_INTEGER` for a token that never expires. */
  expiresAt: number;
}

/**
 * An access token an application got through OAuth.
 * @group Resource
 */
export interface OAuthVerifiedToken extends VerifiedTokenBase {
  kind: 'oauth';
  /** The application the token was issued to. */
  clientId: string;
  personalToken?: undefined;
}

/**
 * A personal access token the account created itself (docs/reference.md#personal-access-tokens):
 * no application, so no `clientId`.
 * @group Resource
 */
export interface PersonalVerifiedToken extends VerifiedTokenBase {
  kind: 'personal';
  /** Absent: a personal token belongs to no application (declared, so `token.clientId` reads on the union). */
  clientId?: undefined;
  /** Its id (as `listPersonalTokens` and `revokePersonalToken` name it) and its name. */
  personalToken: { id: string; name: string };
}

/**
 * The result of `AuthorizationServer.authenticate()`.
 * @group Resource
 */
export type AuthenticateResult = { ok: true; token: VerifiedToken } | { ok: false; response: OAuthResponse };

/**
 * What a protected resource's scope rule sees of a request: the method, the URL and, when the
 * framework already parsed it (or the adapter read it for the rule), the body.
 * @group Resource
 */
export interface ResourceRequest {
  method: string;
  /**
   * The request's URL, its path in the normal form of RFC 3986 §6.2.2 (`/r/%61ccount` is given as
   * `/r/account`; `%2F` stays encoded, the case stays). A host's router may still match more paths
   * than this one (Express: `/R/account`, `/r/account/`): see
   * docs/reference.md#protected-resources-rfc-9728.
   */
  url: string;
  /** The parsed body (JSON for an MCP server), or undefined when none was read. */
  body?: unknown;
}

/**
 * A protected resource the server issues tokens for and describes (RFC 9728), as the
 * `protectedResources` option takes it (docs/reference.md#protected-resources-rfc-9728).
 * @group Resource
 */
export interface ProtectedResourceOptions {
  /**
   * The resource identifier (RFC 9728 §1.2): an absolute https URL (http only for loopback
   * hosts) with no query, fragment or user information, e.g. `https://api.example/v2`.
   */
  resource: string;
  /** `resource_name` of its metadata: a name for people. */
  name?: string;
  /** `scopes_supported` of its metadata; default every scope value of the server. */
  scopes?: string[];
  /**
   * The resource's own scope rule: the scope values a request to it needs (all of them). For an
   * MCP server, decide by the JSON-RPC method or tool of the parsed body. Default: the server's
   * rule (docs/reference.md#scope).
   */
  requiredScope?: (request: ResourceRequest) => string[];
  /**
   * Only DPoP-bound access tokens, each request with its proof (RFC 9449 §7): bearer tokens are
   * refused, and its metadata says `dpop_bound_access_tokens_required`. Needs the `dpop` option.
   */
  dpopBoundAccessTokensRequired?: boolean;
}

/**
 * A protected resource after defaults, as `options.protectedResources` holds it (frozen).
 * @group Resource
 */
export interface ProtectedResource {
  readonly resource: string;
  readonly name?: string;
  /** `scopes_supported`: the option's, or every scope value of the server. */
  readonly scopes: readonly string[];
  readonly requiredScope?: (request: ResourceRequest) => string[];
  /** Only DPoP-bound access tokens (RFC 9449 §7); absent: bearer tokens too. */
  readonly dpopBoundAccessTokensRequired?: boolean;
  /** The URL of its RFC 9728 document (§3.1): `/.well-known/oauth-protected-resource` inserted after the host. */
  readonly metadataUrl: string;
  /** The path of that URL, where the adapters serve the document. */
  readonly metadataPath: string;
}

/**
 * The second argument of `AuthorizationServer.authenticate()`: check the request as one to a
 * protected resource (its scope rule, its challenges naming its metadata).
 * @group Resource
 */
export interface AuthenticateOptions {
  /** The identifier of one of the `protectedResources`. */
  resource: string;
  /** The body the framework already parsed, for the resource's `requiredScope`. */
  body?: unknown;
  /**
   * Read the body for the resource's `requiredScope` when `body` is undefined: called at most
   * once, and only when the resource has a rule of its own (Hono reads a clone this way).
   */
  readBody?: () => unknown;
}

/**
 * The check of `AuthorizationServer.authenticate(request, { resource, body, readBody })` for one
 * protected resource, the resource resolved once (`AuthorizationServer.resourceCheck`): the
 * adapters' `requireToken(server, { resource })` makes one when it is made, and calls it per
 * request with the body the framework parsed, if any.
 * @group Resource
 */
export type ResourceCheck = (request: OAuthRequest, body?: Pick<AuthenticateOptions, 'body' | 'readBody'>) => Promise<AuthenticateResult>;

/**
 * A registered confidential application, as returned once by `registerClient()`.
 * @group Authorization
 */
export interface RegisteredClient {
  clientId: string;
  /** Shown once: only its hash is stored. */
  clientSecret: string;
  name: string;
  redirectUri: string;
}

/**
 * A registered public application (native or CLI app): no secret, PKCE required.
 * @group Authorization
 */
export interface RegisteredPublicClient {
  clientId: string;
  name: string;
  redirectUri: string;
  public: true;
}

/**
 * A security event for the host's audit log or alerting. Carries ids, never a secret, token,
 * code or verifier. `at` is ms since epoch.
 * @group Authorization
 */
export type AuditEvent = { at: number } & (
  | {
      type: 'token.issued';
      grantType: 'authorization_code' | 'refresh_token' | 'implicit' | 'device_code';
      clientId: string;
      accountUuid: string;
      grantId: string;
      scope: string[];
    }
  | { type: 'token.revoked'; clientId: string; accountUuid: string; grantId: string }
  | { type: 'code.reused'; clientId: string; grantId: string }
  | { type: 'pkce.challenge_reused'; clientId: string }
  | { type: 'refresh_token.reused'; clientId: string; grantId: string; familyRevoked: boolean }
  | { type: 'refresh_token.retried'; clientId: string; grantId: string }
  | { type: 'consent.granted'; clientId: string; accountUuid: string; scope: string[] }
  | { type: 'consent.denied'; clientId: string; accountUuid: string }
  | { type: 'access.revoked'; clientId: string; accountUuid: string }
  | { type: 'account.inactive'; clientId: string; accountUuid: string; grantId: string }
  | { type: 'client.authentication_failed'; clientId: string }
  | { type: 'client.registered'; clientId: string; public: boolean }
  | { type: 'client.secret_reset'; clientId: string }
  | { type: 'client.tokens_revoked'; clientId: string }
  /** `updateClient`; `callbackChanged`: a new callback URL, so pending authorizations and codes of the old one died. */
  | { type: 'client.updated'; clientId: string; callbackChanged: boolean }
  /** `deleteClient`: the client, its consents and every grant of it are gone. */
  | { type: 'client.deleted'; clientId: string }
  /** `revokeAllForAccount`: every grant of the account, to every client, revoked, and its consents deleted. */
  | { type: 'account.grants_revoked'; accountUuid: string }
  /** A personal access token was created (docs/reference.md#personal-access-tokens); `expiresAt` `null`: no expiry. */
  | { type: 'personal_token.created'; accountUuid: string; tokenId: string; scope: string[]; expiresAt: number | null }
  /** An expired personal token was presented to `requireToken` (reported at most once a minute per token and instance). */
  | { type: 'personal_token.used_after_expiry'; accountUuid: string; tokenId: string; expiresAt: number }
  /**
   * A personal token was revoked: by its account (`revokePersonalToken`), or at the revocation
   * endpoint by whoever held it (`revocation_endpoint`, e.g. a secret scanner that found it leaked).
   */
  | { type: 'personal_token.revoked'; accountUuid: string; tokenId: string; via: 'account' | 'revocation_endpoint' }
  /**
   * An authorization request stored an interaction, for rate limits: a sign-in step (`login`,
   * `signedIn: false`: the browser is not signed in as the request needs) or a consent step
   * (`consent`, `signedIn: true`, with the account it is shown to).
   */
  | { type: 'interaction.started'; clientId: string; kind: 'login'; signedIn: false }
  | { type: 'interaction.started'; clientId: string; kind: 'consent'; signedIn: true; accountUuid: string }
  /** A device asked for authorization (RFC 8628 §3.1). */
  | { type: 'device.authorization_started'; clientId: string }
  /**
   * A wrong (unknown, expired or already used) user code was entered on the verification page
   * (RFC 8628 §5.1): `attempts` is the count for the account (and for the browser, when it has a
   * binding cookie) since the last lock. Never the code itself.
   */
  | { type: 'device.user_code_failed'; accountUuid: string; attempts: number }
  /** Too many wrong user codes: the account (and browser) may enter none for `lockSeconds`. */
  | { type: 'device.user_code_locked'; accountUuid: string; until: number }
);

/**
 * An audit event before the core stamps its time.
 * @group Authorization
 */
export type AuditEventInput = AuditEvent extends infer E ? (E extends { at: number } ? Omit<E, 'at'> : never) : never;

/**
 * A registered application as the host may show it (never its secret).
 * @group Authorization
 */
export interface ClientInfo {
  clientId: string;
  name: string;
  redirectUri: string;
  /** Registered without a secret. */
  public: boolean;
  /** ms since epoch. */
  createdAt: number;
  /** `false` when nobody at the platform reviewed the client (it registered itself); absent otherwise. */
  verified?: false;
  /** The home page the client stated (`client_uri`), https only. */
  clientUri?: string;
  /** The logo the client stated (`logo_uri`), https only. */
  logoUri?: string;
  /** Who owns it, in the host's terms, as given to `registerClient`. */
  owner?: string;
  /** The host's own fields, as given to `registerClient` or `updateClient`. */
  metadata?: Record<string, unknown>;
  /** Its OpenID Connect fields, as registered (`ClientRecord.openid`; docs/reference.md#openid-connect). */
  openid?: {
    idTokenSignedResponseAlg?: 'RS256' | 'ES256' | 'EdDSA';
    postLogoutRedirectUris?: string[];
    defaultMaxAge?: number;
    requireAuthTime?: boolean;
    subjectType?: 'public' | 'pairwise';
  };
}

/**
 * One application a user has authorized.
 * @group Authorization
 */
export interface AuthorizationInfo {
  client: { id: string; name: string };
  scope: string[];
  /** When the user last approved it: ms since epoch. */
  grantedAt: number;
}

/**
 * What `createPersonalToken()` takes (docs/reference.md#personal-access-tokens).
 * @group Personal tokens
 */
export interface PersonalTokenInput {
  /** The account the token acts for (`VerifiedToken.account` of each use). */
  account: Account;
  /** A name for people, e.g. `CI deploy`: 1 to 100 characters, no control characters. */
  name: string;
  /** Scope values of the server's vocabulary, as a list or a space-separated string; absent: the default scope. */
  scope?: string[] | string;
  /** Seconds until the token expires (1 to ten years); absent or `null`: it never expires. */
  expiresIn?: number | null;
}

/**
 * A personal access token as a host may show it (never its value).
 * @group Personal tokens
 */
export interface PersonalTokenInfo {
  /** The token's id (not a secret), for `revokePersonalToken`. */
  id: string;
  name: string;
  scope: string[];
  /** ms since epoch. */
  createdAt: number;
  /** ms since epoch; `null`: never expires. A token past it is listed until storage is pruned. */
  expiresAt: number | null;
  /** ms since epoch, of a use written at most once a minute per token and server instance; `null`: not used yet. */
  lastUsedAt: number | null;
}

/**
 * A new personal access token: its value, shown once (only its hash is stored), and what
 * `listPersonalTokens` shows of it.
 * @group Personal tokens
 */
export interface CreatedPersonalToken extends PersonalTokenInfo {
  /** The token itself: show it to the user once. */
  token: string;
}

/**
 * What the `openid.signOut` hook returns (docs/reference.md#rp-initiated-logout): nothing, or
 * headers for the end-session endpoint's answer, typically a `set-cookie` that clears the host's
 * session cookie. Names are lower-cased; `location`, `content-type` and the page's own headers
 * cannot be replaced.
 * @group OpenID Connect
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing is the common case
export type SignOutResult = void | undefined | { headers?: Record<string, string> };
