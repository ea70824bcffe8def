import { checkBrowserBinding } from './checks/browser-binding.js';
import { findClient, isDocumentClientId } from './checks/clients.js';
import { audit, type Context } from './context.js';
import { randomId, randomToken, sha256Base64url } from './crypto.js';
import { authorize } from './endpoints/authorize.js';
import { approve, deny, resume } from './endpoints/interaction.js';
import { authenticate, authenticateResource } from './endpoints/authenticate.js';
import { revoke } from './endpoints/revoke.js';
import { token } from './endpoints/token.js';
import { introspect } from './endpoints/introspect.js';
import { jwks, metadata, metadataDocument, type MetadataOptions } from './endpoints/metadata.js';
import { register } from './endpoints/register.js';
import { resourceMetadata, resourceMetadataDocument } from './endpoints/resource-metadata.js';
import { reportFault } from './failure.js';
import { ConfigError, OAuthError } from './errors.js';
import {
  clientInfo,
  clientMetadata,
  clientName,
  clientOwner,
  clientRedirectUri,
  deleteClient,
  listClients,
  revokeAllForAccount,
  saveClientChanges,
  updateClient,
} from './management.js';
import { resolveOptions, type AuthorizationServerOptions, type ResolvedOptions } from './options.js';
import { plausibleId } from './rules.js';
import { ScopePolicy } from './checks/scope.js';
import { RecentPairs } from './checks/pkce.js';
import { PendingAnonymous } from './interactions/pending-anonymous.js';
import { JwtAccessTokens } from './tokens/jwt.js';
import { createPersonalToken, listPersonalTokens, personalMemory, revokePersonalToken } from './personal/personal-tokens.js';
import { DEVICE_CODE_GRANT, type ClientGrantType, type ClientRecord, type ClientResponseType } from './storage/types.js';
import { deviceAuthorization, deviceSignIn, enterUserCode, type UserCodeOutcome } from './device/device-authorization.js';
import { GuessLimiter } from './device/user-code.js';
import type {
  AuthenticateOptions,
  AuthenticateResult,
  AuthorizationInfo,
  AuthorizeDecision,
  ClientInfo,
  CreatedPersonalToken,
  OAuthRequest,
  OAuthResponse,
  PersonalTokenInfo,
  PersonalTokenInput,
  ProtectedResource,
  RegisteredClient,
  RegisteredPublicClient,
} from './types.js';

/**
 * What a client may use, as `registerClient` takes it (RFC 7591 §2 `response_types`, `grant_types`).
 * @group Authorization
 */
export interface ClientTypes {
  /** Default: every response type the server allows (`code`, and `token` where the implicit flow is on). */
  responseTypes?: ClientResponseType[];
  /**
   * Default: `authorization_code` and `refresh_token`. One of `authorization_code` and
   * `urn:ietf:params:oauth:grant-type:device_code` is required (how a client gets its first
   * tokens). The device grant (RFC 8628) is never a default: a client may use it only when listed
   * here, and only while the server's `deviceAuthorization` option is on.
   */
  grantTypes?: ClientGrantType[];
  /** Who owns the client in your terms (a developer's account uuid, a team id): `listClients({ owner })` finds it. */
  owner?: string;
  /** Your own fields for the client: a plain JSON object of at most 4 KiB, kept as given. */
  metadata?: Record<string, unknown>;
}

const RESPONSE_TYPES: readonly ClientResponseType[] = ['code', 'token'];
const GRANT_TYPES: readonly ClientGrantType[] = ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT];

/** A non-empty list of known values, de-duplicated in canonical order; `null` for anything else. */
function typeList<T extends string>(value: unknown, known: readonly T[]): T[] | null {
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => known.includes(v as T))) return null;
  return known.filter((k) => value.includes(k));
}

/**
 * The authorization server: one method per endpoint, each taking plain values and returning a
 * plain decision or response. It never throws at its caller for anything a client can send;
 * storage failures become `server_error` (and reach the `onError` option).
 *
 * @example
 * const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions });
 * const { clientId, clientSecret } = await server.registerClient({
 *   name: 'Example App',
 *   redirectUri: 'https://app.example/callback',
 * });
 * @group Authorization
 */
export class AuthorizationServer {
  /**
   * The resolved options, frozen.
   * @group Authorization
   */
  readonly options: ResolvedOptions;
  private readonly ctx: Context;

  /** @throws ConfigError naming the first bad option. */
  constructor(options: AuthorizationServerOptions) {
    this.options = resolveOptions(options);
    this.ctx = {
      options: this.options,
      storage: this.options.storage,
      sessions: this.options.sessions,
      // Whole milliseconds, whatever the injected clock returns (stores keep integers).
      clock: { now: () => Math.floor(this.options.clock.now()) },
      scopes: new ScopePolicy(this.options.scopes),
      challenges: new RecentPairs(10_000),
      personal: personalMemory(),
      ...(this.options.maxPendingAnonymousInteractions !== null && {
        pendingAnonymous: new PendingAnonymous(this.options.maxPendingAnonymousInteractions),
      }),
      ...(this.options.deviceAuthorization && {
        deviceGuesses: new GuessLimiter(
          this.options.deviceAuthorization.maxUserCodeAttempts,
          this.options.deviceAuthorization.lockSeconds * 1000,
        ),
      }),
      ...(this.options.accessTokenFormat === 'jwt' && {
        jwt: new JwtAccessTokens({
          ...(this.options.jwt.keys && { keys: this.options.jwt.keys }),
          algorithm: this.options.jwt.algorithm,
          issuer: this.options.issuer!,
          audience: this.options.jwt.audience ?? this.options.issuer!,
        }),
      }),
    };
  }

  /**
   * Register an application (docs/reference.md#clients). The client secret is returned once; only
   * its hash is stored. The callback URL must be https (http only for loopback hosts), with no
   * fragment, user information, wildcard or response parameter.
   * @throws OAuthError `invalid_request` (use `isOAuthError`) when the name or URL is refused.
   * @group Authorization
   */
  async registerClient(input: { name: string; redirectUri: string; public?: false } & ClientTypes): Promise<RegisteredClient>;
  /**
   * Register a public application (a native or CLI app that cannot keep a secret, RFC 8252):
   * no client secret, PKCE required, and a loopback callback (`http://127.0.0.1/cb`) matches on
   * any port (RFC 8252 §7.3); a private-use scheme (`com.example.app:/cb`) is allowed too.
   */
  async registerClient(input: { name: string; redirectUri: string; public: true } & ClientTypes): Promise<RegisteredPublicClient>;
  /**
   * With `responseTypes` / `grantTypes`, the client may use only those: anything else is
   * `unauthorized_client` (RFC 6749 §4.1.2.1, §5.2). Without them, it may use what the server allows.
   */
  async registerClient(
    input: { name: string; redirectUri: string; public?: boolean } & ClientTypes,
  ): Promise<RegisteredClient | RegisteredPublicClient> {
    return this.createClient(input, undefined);
  }

  /**
   * `registerClient`, and for a client that registered itself (`registerDynamic`) what marks it
   * as unreviewed: `registration` and the https `client_uri` / `logo_uri` it stated.
   */
  private async createClient(
    input: { name: string; redirectUri: string; public?: boolean } & ClientTypes,
    unreviewed: Pick<ClientRecord, 'registration' | 'clientUri' | 'logoUri'> | undefined,
  ): Promise<RegisteredClient | RegisteredPublicClient> {
    const name = clientName(input?.name);
    const isPublic = input.public === true;
    const redirectUri = clientRedirectUri(input.redirectUri, isPublic);
    const owner = input.owner === undefined ? undefined : clientOwner(input.owner);
    const metadata = input.metadata === undefined ? undefined : clientMetadata(input.metadata);
    const responseTypes = input.responseTypes === undefined ? undefined : typeList(input.responseTypes, RESPONSE_TYPES);
    if (responseTypes === null) throw new OAuthError('invalid_request', "responseTypes must list one or both of 'code' and 'token'.");
    const grantTypes = input.grantTypes === undefined ? undefined : typeList(input.grantTypes, GRANT_TYPES);
    if (grantTypes === null || (grantTypes && !grantTypes.includes('authorization_code') && !grantTypes.includes(DEVICE_CODE_GRANT))) {
      throw new OAuthError(
        'invalid_request',
        `grantTypes must list 'authorization_code' or '${DEVICE_CODE_GRANT}' (or both), and may add 'refresh_token'.`,
      );
    }
    const clientId = randomId() + randomId();
    const clientSecret = isPublic ? null : randomToken();
    const record: ClientRecord = {
      id: clientId,
      name,
      redirectUri,
      secretHash: clientSecret === null ? null : sha256Base64url(clientSecret),
      createdAt: this.ctx.clock.now(),
    };
    if (responseTypes) record.responseTypes = responseTypes;
    if (grantTypes) record.grantTypes = grantTypes;
    if (unreviewed?.registration) record.registration = unreviewed.registration;
    if (unreviewed?.clientUri) record.clientUri = unreviewed.clientUri;
    if (unreviewed?.logoUri) record.logoUri = unreviewed.logoUri;
    if (owner !== undefined) record.owner = owner;
    if (metadata !== undefined) record.metadata = metadata;
    await this.ctx.storage.saveClient(record);
    audit(this.ctx, { type: 'client.registered', clientId, public: isPublic });
    return clientSecret === null ? { clientId, name, redirectUri, public: true } : { clientId, clientSecret, name, redirectUri };
  }

  /**
   * GET /v1/oauth/authorize: the start of the code and implicit flows (RFC 6749 §4.1.1, §4.2.1;
   * docs/reference.md#authorization-endpoint).
   * @group Authorization
   */
  authorize(request: OAuthRequest): Promise<AuthorizeDecision> {
    return authorize(this.ctx, request);
  }

  /**
   * After a `login` decision, once the host has signed the user in.
   * @group Authorization
   */
  resume(interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
    return resume(this.ctx, interactionId, request);
  }

  /**
   * After a `consent` decision: the signed-in user authorized the application.
   * @group Authorization
   */
  approve(interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
    return approve(this.ctx, interactionId, request);
  }

  /**
   * After a `consent` decision: the user refused; redirects with `error=access_denied`.
   * @group Authorization
   */
  deny(interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
    return deny(this.ctx, interactionId, request);
  }

  /**
   * Whether `request` comes from the browser that started the interaction
   * (docs/reference.md#browser-binding): `null` when it may continue (the same browser, an
   * interaction created without a binding, or an unknown or expired one, which `resume` /
   * `approve` / `deny` then report), otherwise the error page to show instead: `invalid_request`,
   * "This authorization was started in another browser". The adapters call it on `resume` and on
   * the consent form's POST; a host with its own pages calls it before `resume`, `approve` or
   * `deny`, and binds its own authorization route with `bindBrowser`. `resume`, `approve` and
   * `deny` themselves do not check it.
   *
   * @example
   * const refused = await server.checkBrowserBinding(interactionId, request);
   * const decision = refused ?? (await server.approve(interactionId, request));
   * @group Authorization
   */
  checkBrowserBinding(interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision | null> {
    return checkBrowserBinding(this.ctx, interactionId, request);
  }

  /**
   * POST /v1/oauth/token (RFC 6749 §3.2; docs/reference.md#token-endpoint): code exchange and refresh.
   * @group Token
   */
  token(request: OAuthRequest): Promise<OAuthResponse> {
    return token(this.ctx, request);
  }

  /**
   * POST /v1/oauth/device (RFC 8628 §3.1; docs/reference.md#device-authorization-grant-rfc-8628):
   * a device asks for a device code and a user code. `verificationUri` is the absolute URL of the
   * verification page (the adapters pass `{origin}{basePath}/device/verify`). 404 while the
   * `deviceAuthorization` option is off.
   * @group Token
   */
  deviceAuthorization(request: OAuthRequest, verificationUri: string): Promise<OAuthResponse> {
    return deviceAuthorization(this.ctx, request, verificationUri);
  }

  /**
   * The verification page's step once the user typed a user code (RFC 8628 §3.3): a `login`
   * decision when nobody is signed in, a `consent` decision whose `interaction.device` names the
   * code for the right one (decide it with `approve` / `deny`, which send the browser back to
   * `verificationPath?result=approved|denied`), or `wrong` / `locked` (RFC 8628 §5.1: wrong codes
   * are counted per account and per browser, and lock both out after `maxUserCodeAttempts`).
   * `browserSecret`: a secret cookie of the browser (the built-in page's CSRF cookie), which keys
   * the browser's count and binds the step to the browser.
   * @group Authorization
   */
  enterUserCode(userCode: string, request: OAuthRequest, verificationPath: string, browserSecret?: string): Promise<UserCodeOutcome> {
    return enterUserCode(this.ctx, userCode, request, verificationPath, browserSecret);
  }

  /**
   * The verification page's first step: `null` when someone is signed in (show the code entry),
   * otherwise a `login` decision, which the host answers as for an authorization request
   * (`loginUrl?interaction=…`, then `resume`); `resume` then sends the browser to
   * `verificationPath` (with `?user_code=` when `userCode` is a well-formed code). An error
   * decision while the option is off.
   * @group Authorization
   */
  deviceVerification(request: OAuthRequest, verificationPath: string, userCode?: string): Promise<AuthorizeDecision | null> {
    return deviceSignIn(this.ctx, request, verificationPath, userCode);
  }

  /**
   * POST /v1/oauth/revoke (RFC 7009; docs/reference.md#revocation-endpoint). A revocation storage
   * could not record is 503, never 200.
   * @group Revocation
   */
  revoke(request: OAuthRequest): Promise<OAuthResponse> {
    return revoke(this.ctx, request);
  }

  /**
   * POST /v1/oauth/introspect (RFC 7662): a confidential client asks about one of its tokens.
   * @group Resource
   */
  introspect(request: OAuthRequest): Promise<OAuthResponse> {
    return introspect(this.ctx, request);
  }

  /**
   * POST /v1/oauth/register (RFC 7591): dynamic registration of public clients, when enabled.
   * @group Authorization
   */
  registerDynamic(request: OAuthRequest): Promise<OAuthResponse> {
    return register(
      this.ctx,
      request,
      ({ clientUri, logoUri, ...input }) =>
        this.createClient({ ...input, public: true }, { registration: 'dynamic', clientUri, logoUri }) as Promise<RegisteredPublicClient>,
    );
  }

  /**
   * GET /.well-known/oauth-authorization-server (RFC 8414); 404 without an `issuer`, 405 for
   * methods other than GET and HEAD. Adapters pass where they mounted the OAuth routes.
   * @group Token
   */
  metadata(request?: { method: string }, options?: MetadataOptions): OAuthResponse {
    return metadata(this.ctx, request, options);
  }

  /**
   * The metadata document itself, or `null` without an `issuer`.
   * @group Token
   */
  metadataDocument(options?: MetadataOptions): Record<string, unknown> | null {
    return metadataDocument(this.ctx, options);
  }

  /**
   * GET /.well-known/jwks.json: the public keys of JWT access tokens; 404 for opaque tokens, 405 for methods other than GET and HEAD.
   * @group Token
   */
  jwks(request?: { method: string }): Promise<OAuthResponse> {
    return jwks(this.ctx, request);
  }

  /**
   * Check the bearer token of a resource API request (RFC 6750; docs/reference.md#resource-check):
   * `read` allows GET and HEAD, `read write` also POST, PUT, PATCH and DELETE.
   * @group Resource
   */
  authenticate(request: OAuthRequest): Promise<AuthenticateResult>;
  /**
   * The same check for a request to one of the `protectedResources`
   * (docs/reference.md#protected-resources-rfc-9728): its `requiredScope` decides the scope
   * (given `options.body`, or the body `options.readBody` reads), and every challenge names its
   * metadata (`resource_metadata`, RFC 9728 §5.1); a 401 also says the scope the request needs.
   */
  authenticate(request: OAuthRequest, options: AuthenticateOptions): Promise<AuthenticateResult>;
  authenticate(request: OAuthRequest, options?: AuthenticateOptions): Promise<AuthenticateResult> {
    // Storage failures are caught inside (a 503), without a wrapper promise on every API request.
    return options === undefined
      ? authenticate(this.ctx, request, this.reporter)
      : authenticateResource(this.ctx, request, this.reporter, options);
  }

  /**
   * One of the `protectedResources`, with its defaults; adapters look it up once, when
   * `requireToken(server, { resource })` is made.
   * @throws ConfigError when `resource` is not one of them.
   * @group Resource
   */
  protectedResource(resource: string): ProtectedResource {
    const entry = this.options.protectedResources?.find((r) => r.resource === resource);
    if (!entry) throw new ConfigError('resource', `expected one of the protectedResources, not ${JSON.stringify(resource)}`);
    return entry;
  }

  /**
   * GET /.well-known/oauth-protected-resource{path} (RFC 9728 §3): the metadata of a protected
   * resource; 404 without an `issuer` or for an unknown resource, 405 for methods other than GET
   * and HEAD. The adapters serve it at each resource's `metadataPath`.
   * @group Resource
   */
  protectedResourceMetadata(resource: string | undefined, request?: { method: string }): OAuthResponse {
    return resourceMetadata(this.ctx, resource, request);
  }

  /**
   * The metadata document of a protected resource (RFC 9728 §2), or `null` without an `issuer`
   * or for an unknown resource.
   * @group Resource
   */
  protectedResourceMetadataDocument(resource: string): Record<string, unknown> | null {
    return resourceMetadataDocument(this.ctx, resource);
  }

  /**
   * The user revokes an application (docs/reference.md#revocation-semantics): its consent, and
   * every grant, code and token it holds for this user. The next `prompt=none` answers
   * `consent_required`.
   * @group Revocation
   */
  async revokeAccess(input: { accountUuid: string; clientId: string }): Promise<void> {
    // No client has the empty id: it would name the account's personal access tokens.
    if (typeof input?.clientId !== 'string' || input.clientId === '') return;
    await this.ctx.storage.revokeAccess(input.accountUuid, input.clientId, this.ctx.clock.now());
    audit(this.ctx, { type: 'access.revoked', clientId: input.clientId, accountUuid: input.accountUuid });
  }

  /**
   * What a pending interaction is about, without using it up: for a sign-in page that says
   * "Sign in to continue to <app>" and pre-fills the `i` hint. `null` when unknown or expired.
   * @group Authorization
   */
  async describeInteraction(interactionId: string): Promise<{
    kind: 'login' | 'consent';
    /** `verified: false` for a client nobody at the platform reviewed, as on `Interaction`. */
    client: { id: string; name: string; verified?: false };
    scope: string[];
    accountHint?: string;
    expiresAt: number;
  } | null> {
    if (!plausibleId(interactionId)) return null;
    const record = await this.ctx.storage.findInteraction(sha256Base64url(interactionId));
    if (!record || this.ctx.clock.now() >= record.expiresAt) return null;
    const client = await findClient(this.ctx, record.request.clientId);
    if (!client) return null;
    return {
      kind: record.kind,
      client:
        client.registration === undefined ? { id: client.id, name: client.name } : { id: client.id, name: client.name, verified: false },
      scope: [...record.request.scope],
      ...(record.request.accountHint !== undefined && { accountHint: record.request.accountHint }),
      expiresAt: record.expiresAt,
    };
  }

  /**
   * A registered application, without its secret; `null` when unknown.
   * @group Authorization
   */
  async getClient(clientId: string): Promise<ClientInfo | null> {
    const client = plausibleId(clientId) ? await this.ctx.storage.findClient(clientId) : null;
    return client ? clientInfo(client) : null;
  }

  /**
   * The registered applications, those of `owner` when given (as `registerClient` got it), oldest
   * first: for a developer's page. Needs `Storage.listClients`.
   * @throws ConfigError when the storage has no `listClients`.
   * @group Authorization
   */
  listClients(filter: { owner?: string } = {}): Promise<ClientInfo[]> {
    return listClients(this.ctx, filter);
  }

  /**
   * Change an application's name, callback URL or `metadata` (`null` removes it). A new callback
   * URL takes effect at once: every authorization still pending and every unused code issued to
   * the old URL are refused from then on (docs/reference.md#managing-clients). Reported as
   * `client.updated`.
   * @throws OAuthError `invalid_client` when the client is unknown, `invalid_request` for a refused value.
   * @group Authorization
   */
  updateClient(
    clientId: string,
    changes: { name?: string; redirectUri?: string; metadata?: Record<string, unknown> | null },
  ): Promise<ClientInfo> {
    return updateClient(this.ctx, clientId, changes);
  }

  /**
   * Delete an application: every code and token it holds, for every user, stops working at once,
   * and the consents users gave it are deleted. Reported as `client.deleted`. Needs `Storage.deleteClient`.
   * @throws OAuthError `invalid_client` when the client is unknown.
   * @throws ConfigError when the storage has no `deleteClient`.
   * @group Revocation
   */
  deleteClient(clientId: string): Promise<void> {
    return deleteClient(this.ctx, clientId);
  }

  /**
   * Revoke everything one account authorized, for "sign out everywhere" and account deletion:
   * every grant of it to every client (so every code and token), and its consents (the next
   * `prompt=none` answers `consent_required`). Reported as `account.grants_revoked`. Needs
   * `Storage.revokeAccountGrants`.
   * @throws ConfigError when the storage has no `revokeAccountGrants`.
   * @group Revocation
   */
  revokeAllForAccount(accountUuid: string): Promise<void> {
    return revokeAllForAccount(this.ctx, accountUuid);
  }

  /**
   * Give an application a new client secret, returned once; the old one stops working at once.
   * Tokens already issued stay valid (use `revokeClientTokens` for those).
   * @throws OAuthError `invalid_client` when the client is unknown or public.
   * @group Authorization
   */
  async resetClientSecret(clientId: string): Promise<{ clientId: string; clientSecret: string }> {
    const client = plausibleId(clientId) ? await this.ctx.storage.findClient(clientId) : null;
    if (!client || client.secretHash === null)
      throw new OAuthError('invalid_client', 'The application is unknown or has no client secret.');
    const clientSecret = randomToken();
    const secretHash = sha256Base64url(clientSecret);
    await saveClientChanges(this.ctx.storage, client, { secretHash });
    audit(this.ctx, { type: 'client.secret_reset', clientId: client.id });
    return { clientId: client.id, clientSecret };
  }

  /**
   * Revoke every code and token an application holds, for every user. Users' consents stay.
   * @group Revocation
   */
  async revokeClientTokens(clientId: string): Promise<void> {
    // No client has the empty id: it would name every personal access token.
    if (typeof clientId !== 'string' || clientId === '') return;
    await this.ctx.storage.revokeClientGrants(clientId, this.ctx.clock.now());
    audit(this.ctx, { type: 'client.tokens_revoked', clientId });
  }

  /**
   * The applications a user has authorized, with scope and date (for an "Authorized applications" page).
   * @group Authorization
   */
  async listAuthorizations(accountUuid: string): Promise<AuthorizationInfo[]> {
    const consents = await this.ctx.storage.listConsents(accountUuid);
    const out: AuthorizationInfo[] = [];
    for (const consent of consents) {
      // A client ID metadata document client is listed even when its document is gone, named by
      // its host then, so the user can always see and revoke it.
      const client = isDocumentClientId(this.ctx, consent.clientId)
        ? ((await findClient(this.ctx, consent.clientId)) ?? {
            id: consent.clientId,
            name: URL.canParse(consent.clientId) ? new URL(consent.clientId).host : consent.clientId,
          })
        : await this.ctx.storage.findClient(consent.clientId);
      if (client)
        out.push({
          client: { id: client.id, name: client.name },
          scope: this.ctx.scopes.format(consent.scope).split(' ').filter(Boolean),
          grantedAt: consent.grantedAt,
        });
    }
    return out.sort((a, b) => b.grantedAt - a.grantedAt);
  }

  /**
   * Create a personal access token for an account (docs/reference.md#personal-access-tokens): a
   * bearer token `requireToken` accepts like an OAuth access token of the same scope, for the
   * account's own scripts. The value is returned once; only its hash is stored.
   *
   * @example
   * const { token, id } = await server.createPersonalToken({ account, name: 'CI deploy', scope: ['read'], expiresIn: 90 * 86400 });
   * @throws OAuthError `invalid_request` (account, name, expiresIn) or `invalid_scope` for a value outside the server's vocabulary.
   * @throws ConfigError when the storage has no `listPersonalTokens` / `touchPersonalToken`.
   * @group Personal tokens
   */
  createPersonalToken(input: PersonalTokenInput): Promise<CreatedPersonalToken> {
    return createPersonalToken(this.ctx, input);
  }

  /**
   * The personal access tokens of an account, newest first, without their values: for an "API
   * tokens" page. Revoked tokens are not listed; expired ones are, until storage is pruned.
   * `lastUsedAt` is written at most once a minute per token and server instance.
   * @throws ConfigError when the storage has no `listPersonalTokens` / `touchPersonalToken`.
   * @group Personal tokens
   */
  listPersonalTokens(accountUuid: string): Promise<PersonalTokenInfo[]> {
    return listPersonalTokens(this.ctx, accountUuid);
  }

  /**
   * Revoke a personal access token of this account, at once (its next use is a 401). `false`,
   * and nothing changes, when the account has no such live token (an unknown id, or another
   * account's).
   * @throws ConfigError when the storage has no `listPersonalTokens` / `touchPersonalToken`.
   * @group Personal tokens
   */
  revokePersonalToken(accountUuid: string, id: string): Promise<boolean> {
    return revokePersonalToken(this.ctx, accountUuid, id);
  }

  private readonly reporter = (error: unknown): void => reportFault(this.ctx, error);
}
