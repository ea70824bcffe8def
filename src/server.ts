import { checkBrowserBinding, checkSecret } from './checks/browser-binding.js';
import type { Context } from './context.js';
import { deviceAuthorization, deviceSignIn, enterUserCode, type UserCodeOutcome } from './device/device-authorization.js';
import { authenticate, authenticateNamed, resourceCheck } from './endpoints/authenticate.js';
import { authorize } from './endpoints/authorize.js';
import { approve, deny, resume } from './endpoints/interaction.js';
import { introspect } from './endpoints/introspect.js';
import { jwks, metadata, metadataDocument, type MetadataOptions } from './endpoints/metadata.js';
import { register } from './endpoints/register.js';
import { protectedResource, resourceMetadata, resourceMetadataDocument } from './endpoints/resource-metadata.js';
import { revoke } from './endpoints/revoke.js';
import { token } from './endpoints/token.js';
import { reportFault } from './failure.js';
import { describeInteraction, type InteractionDescription } from './interactions/describe.js';
import * as management from './management.js';
import type { ClientTypes, ClientUpdate } from './management.js';
import { resolveOptions, type AuthorizationServerOptions, type ResolvedOptions } from './options.js';
import { createPersonalToken, listPersonalTokens, revokePersonalToken } from './personal/personal-tokens.js';
import { instanceContext } from './instance.js';
import { openIdConfiguration, userinfo } from './oidc/userinfo.js';
import { endSession, type EndSessionUi } from './oidc/logout.js';
import { DEFAULT_BASE_PATH } from './rules.js';
import type { AuthenticateOptions, AuthenticateResult, AuthorizationInfo, AuthorizeDecision, ClientInfo, ResourceCheck } from './types.js';
import type { CreatedPersonalToken, OAuthRequest, OAuthResponse, PersonalTokenInfo, PersonalTokenInput } from './types.js';
import type { ProtectedResource, RegisteredClient, RegisteredPublicClient } from './types.js';

/**
 * The authorization server: one method per endpoint, each taking plain values and returning a
 * plain decision or response. It never throws at its caller for anything a client can send;
 * storage failures become `server_error` (and reach the `onError` option). A method that needs a
 * storage group (its doc says which) throws `ConfigError` naming it when the storage lacks it.
 *
 * @example
 * const server = new AuthorizationServer({ storage: new MemoryStorage(), sessions });
 * const { clientId, clientSecret } = await server.registerClient({ name: 'Example App', redirectUri: 'https://app.example/callback' });
 * @group Authorization
 */
export class AuthorizationServer {
  /** The resolved options, frozen. @group Authorization */
  readonly options: ResolvedOptions;
  private readonly ctx: Context;

  /** @throws ConfigError naming the first bad option. */
  constructor(options: AuthorizationServerOptions) {
    this.options = resolveOptions(options);
    this.ctx = instanceContext(this.options);
  }

  /**
   * Register an application (docs/reference.md#clients). The client secret is returned once; only its hash is stored. The callback URL must
   * be https (http only for loopback hosts), with no fragment, user information, wildcard or response parameter. With `responseTypes` /
   * `grantTypes`, the client may use only those (else `unauthorized_client`, RFC 6749 §4.1.2.1, §5.2); without, what the server allows.
   * @throws OAuthError `invalid_request` (use `isOAuthError`) when the name or URL is refused. @group Authorization
   */
  registerClient(input: { name: string; redirectUri: string; public?: false } & ClientTypes): Promise<RegisteredClient>;
  /**
   * Register a public application (a native or CLI app that cannot keep a secret, RFC 8252): no client secret, PKCE required, and a
   * loopback callback (`http://127.0.0.1/cb`) matches on any port (RFC 8252 §7.3); a private-use scheme (`com.example.app:/cb`) is allowed
   * too.
   */
  registerClient(input: { name: string; redirectUri: string; public: true } & ClientTypes): Promise<RegisteredPublicClient>;
  registerClient(input: management.ClientInput): Promise<RegisteredClient | RegisteredPublicClient> {
    return management.createClient(this.ctx, input);
  }

  /**
   * GET /v1/oauth/authorize: the start of the code and implicit flows (RFC 6749 §4.1.1, §4.2.1; docs/reference.md#authorization-endpoint).
   * @group Authorization
   */
  authorize(request: OAuthRequest): Promise<AuthorizeDecision> {
    return authorize(this.ctx, request);
  }

  /** After a `login` decision, once the host has signed the user in. @group Authorization */
  resume(interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
    return resume(this.ctx, interactionId, request);
  }

  /** After a `consent` decision: the signed-in user authorized the application. @group Authorization */
  approve(interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
    return approve(this.ctx, interactionId, request);
  }

  /** After a `consent` decision: the user refused; redirects with `error=access_denied`. @group Authorization */
  deny(interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
    return deny(this.ctx, interactionId, request);
  }

  /**
   * Whether `request` comes from the browser that started the interaction (docs/reference.md#browser-binding): `null` when it may continue
   * (the same browser, an interaction created without a binding, or an unknown or expired one, which `resume` / `approve` / `deny` then
   * report), otherwise the error page to show instead: `invalid_request`, "This authorization was started in another browser". The adapters
   * call it on `resume` and on the consent form's POST; a host with its own pages calls it before `resume`, `approve` or `deny`, and binds
   * its own authorization route with `bindBrowser`. `resume`, `approve` and `deny` themselves do not check it.
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
   * `checkBrowserBinding` for the confirmation step of a device verification, bound to the device pages' CSRF cookie, whose value the
   * page read is `browserSecret` (docs/reference.md#verification-page). The verification route calls it before `approve` or `deny`.
   * @group Authorization
   */
  checkDeviceBinding(interactionId: string, browserSecret: string | undefined): Promise<AuthorizeDecision | null> {
    return checkSecret(this.ctx, interactionId, browserSecret);
  }

  /** POST /v1/oauth/token (RFC 6749 §3.2; docs/reference.md#token-endpoint): code exchange and refresh. @group Token */
  token(request: OAuthRequest): Promise<OAuthResponse> {
    return token(this.ctx, request);
  }

  /**
   * POST /v1/oauth/device (RFC 8628 §3.1; docs/reference.md#device-authorization-grant-rfc-8628): a device asks for a device code and a
   * user code. `verificationUri` is the absolute URL of the verification page (the adapters pass `{origin}{basePath}/device/verify`). 404
   * while the `deviceAuthorization` option is off. @group Token
   */
  deviceAuthorization(request: OAuthRequest, verificationUri: string): Promise<OAuthResponse> {
    return deviceAuthorization(this.ctx, request, verificationUri);
  }

  /**
   * The verification page's step once the user typed a user code (RFC 8628 §3.3): a `login` decision when nobody is signed in, a `consent`
   * decision whose `interaction.device` names the code for the right one (decide it with `approve` / `deny`, which send the browser back to
   * `verificationPath?result=approved|denied`), or `wrong` / `locked` (RFC 8628 §5.1: wrong codes are counted per account and per browser,
   * and lock both out after `maxUserCodeAttempts`). `browserSecret`: a secret cookie of the browser (the built-in page's CSRF cookie),
   * which keys the browser's count and binds the step to the browser. @group Authorization
   */
  enterUserCode(userCode: string, request: OAuthRequest, verificationPath: string, browserSecret?: string): Promise<UserCodeOutcome> {
    return enterUserCode(this.ctx, userCode, request, verificationPath, browserSecret);
  }

  /**
   * The verification page's first step: `null` when someone is signed in (show the code entry), otherwise a `login` decision, which the
   * host answers as for an authorization request (`loginUrl?interaction=…`, then `resume`); `resume` then sends the browser to
   * `verificationPath` (with `?user_code=` when `userCode` is a well-formed code). An error decision while the option is off.
   * @group Authorization
   */
  deviceVerification(request: OAuthRequest, verificationPath: string, userCode?: string): Promise<AuthorizeDecision | null> {
    return deviceSignIn(this.ctx, request, verificationPath, userCode);
  }

  /**
   * POST /v1/oauth/revoke (RFC 7009; docs/reference.md#revocation-endpoint). A revocation storage could not record is 503, never 200.
   * @group Revocation
   */
  revoke(request: OAuthRequest): Promise<OAuthResponse> {
    return revoke(this.ctx, request);
  }

  /** POST /v1/oauth/introspect (RFC 7662): a confidential client asks about one of its tokens. @group Resource */
  introspect(request: OAuthRequest): Promise<OAuthResponse> {
    return introspect(this.ctx, request);
  }

  /** POST /v1/oauth/register (RFC 7591): dynamic registration of public clients, when enabled. @group Authorization */
  registerDynamic(request: OAuthRequest): Promise<OAuthResponse> {
    return register(this.ctx, request);
  }

  /**
   * GET /.well-known/oauth-authorization-server (RFC 8414); 404 without an `issuer`, 405 for methods other than GET and HEAD. Adapters pass
   * where they mounted the OAuth routes. @group Token
   */
  metadata(request?: { method: string }, options?: MetadataOptions): OAuthResponse {
    return metadata(this.ctx, request, options);
  }

  /** The metadata document itself, or `null` without an `issuer`. @group Token */
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
   * GET|POST /v1/oauth/userinfo (OpenID Connect Core §5.3; docs/reference.md#userinfo): the claims of the access token's account its scope
   * allows; the token needs `openid`. 404 while the `openid` option is off. @group OpenID Connect
   */
  userinfo(request: OAuthRequest): Promise<OAuthResponse> {
    return userinfo(this.ctx, request, this.reporter);
  }

  /**
   * GET|POST /v1/oauth/logout, the end-session endpoint (OpenID Connect RP-Initiated Logout 1.0; docs/reference.md#rp-initiated-logout):
   * checks `id_token_hint`, `client_id` and `post_logout_redirect_uri`, asks the user to confirm unless the hint names the signed-in
   * account, calls `openid.signOut`, then redirects to the registered URI with `state` or shows the "signed out" page. Every refusal is
   * an HTML page, never a redirect. `where` is where the route is mounted (the form posts there). An error page (404) while the `openid`
   * option is off. @group OpenID Connect
   */
  endSession(request: OAuthRequest, where: EndSessionUi = { basePath: DEFAULT_BASE_PATH }): Promise<OAuthResponse> {
    return endSession(this.ctx, request, this.reporter, where);
  }

  /**
   * GET /.well-known/openid-configuration (OpenID Connect Discovery 1.0 §4): the metadata document with the provider's fields; 404
   * while the `openid` option is off. @group OpenID Connect
   */
  openidConfiguration(request?: { method: string }, options?: MetadataOptions): OAuthResponse {
    return openIdConfiguration(this.ctx, request, options);
  }

  /**
   * Check the bearer token of a resource API request (RFC 6750; docs/reference.md#resource-check): `read` allows GET and HEAD, `read write`
   * also POST, PUT, PATCH and DELETE. @group Resource
   */
  authenticate(request: OAuthRequest): Promise<AuthenticateResult>;
  /**
   * The same check for a request to one of the `protectedResources` (docs/reference.md#protected-resources-rfc-9728): its `requiredScope`
   * decides the scope (given `options.body`, or the body `options.readBody` reads), and every challenge names its metadata
   * (`resource_metadata`, RFC 9728 §5.1); a 401 also says the scope the request needs.
   */
  authenticate(request: OAuthRequest, options: AuthenticateOptions): Promise<AuthenticateResult>;
  authenticate(request: OAuthRequest, options?: AuthenticateOptions): Promise<AuthenticateResult> {
    // Storage failures are caught inside (a 503), without a wrapper promise on every API request.
    return options === undefined
      ? authenticate(this.ctx, request, this.reporter)
      : authenticateNamed(this.ctx, request, this.reporter, options);
  }

  /**
   * The check of `authenticate(request, { resource, body, readBody })` for one of the `protectedResources`, the resource resolved
   * once, here: the adapters' `requireToken(server, { resource })` makes one when it is made.
   * @throws ConfigError when `resource` is not one of them. @group Resource
   */
  resourceCheck(resource: string): ResourceCheck {
    return resourceCheck(this.ctx, resource, this.reporter);
  }

  /**
   * One of the `protectedResources`, with its defaults; adapters look it up once, when `requireToken(server, { resource })` is made.
   * @throws ConfigError when `resource` is not one of them. @group Resource
   */
  protectedResource(resource: string): ProtectedResource {
    return protectedResource(this.ctx, resource);
  }

  /**
   * GET /.well-known/oauth-protected-resource{path} (RFC 9728 §3): the metadata of a protected resource; 404 without an `issuer` or for an
   * unknown resource, 405 for methods other than GET and HEAD. The adapters serve it at each resource's `metadataPath`. @group Resource
   */
  protectedResourceMetadata(resource: string | undefined, request?: { method: string }): OAuthResponse {
    return resourceMetadata(this.ctx, resource, request);
  }

  /**
   * The metadata document of a protected resource (RFC 9728 §2), or `null` without an `issuer` or for an unknown resource. @group Resource
   */
  protectedResourceMetadataDocument(resource: string): Record<string, unknown> | null {
    return resourceMetadataDocument(this.ctx, resource);
  }

  /**
   * The user revokes an application (docs/reference.md#revocation-semantics): its consent, and every grant, code and token it holds for
   * this user. The next `prompt=none` answers `consent_required`. @group Revocation
   */
  revokeAccess(input: { accountUuid: string; clientId: string }): Promise<void> {
    return management.revokeAccess(this.ctx, input);
  }

  /**
   * What a pending interaction is about, without using it up: for a sign-in page that says "Sign in to continue to <app>" (or, for
   * `purpose: 'device'`, "to connect a device") and pre-fills the `i` hint. `null` when unknown or expired (docs/reference.md#interactions).
   * @group Authorization
   */
  describeInteraction(interactionId: string): Promise<InteractionDescription | null> {
    return describeInteraction(this.ctx, interactionId);
  }

  /** A registered application, without its secret; `null` when unknown. @group Authorization */
  getClient(clientId: string): Promise<ClientInfo | null> {
    return management.getClient(this.ctx, clientId);
  }

  /**
   * The registered applications, those of `owner` when given (as `registerClient` got it), oldest first: for a developer's page. Needs
   * the client administration storage group. @group Authorization
   */
  listClients(filter: { owner?: string } = {}): Promise<ClientInfo[]> {
    return management.listClients(this.ctx, filter);
  }

  /**
   * Change an application's name, callback URL or `metadata` (`null` removes it). A new callback URL takes effect at once: every
   * authorization still pending and every unused code issued to the old URL are refused from then on (docs/reference.md#managing-clients).
   * Reported as `client.updated`.
   * @throws OAuthError `invalid_client` when the client is unknown, `invalid_request` for a refused value. @group Authorization
   */
  updateClient(clientId: string, changes: ClientUpdate): Promise<ClientInfo> {
    return management.updateClient(this.ctx, clientId, changes);
  }

  /**
   * Delete an application: every code and token it holds, for every user, stops working at once, and the consents users gave it are
   * deleted. Reported as `client.deleted`. Needs the client administration storage group.
   * @throws OAuthError `invalid_client` when the client is unknown. @group Revocation
   */
  deleteClient(clientId: string): Promise<void> {
    return management.deleteClient(this.ctx, clientId);
  }

  /**
   * Revoke everything one account authorized, for "sign out everywhere" and account deletion: every grant of it to every client (so every
   * code and token), and its consents (the next `prompt=none` answers `consent_required`). Reported as `account.grants_revoked`. Needs
   * the account administration storage group. @group Revocation
   */
  revokeAllForAccount(accountUuid: string): Promise<void> {
    return management.revokeAllForAccount(this.ctx, accountUuid);
  }

  /**
   * Give an application a new client secret, returned once; the old one stops working at once. Tokens already issued stay valid (use
   * `revokeClientTokens` for those).
   * @throws OAuthError `invalid_client` when the client is unknown or public. @group Authorization
   */
  resetClientSecret(clientId: string): Promise<{ clientId: string; clientSecret: string }> {
    return management.resetClientSecret(this.ctx, clientId);
  }

  /** Revoke every code and token an application holds, for every user. Users' consents stay. @group Revocation */
  revokeClientTokens(clientId: string): Promise<void> {
    return management.revokeClientTokens(this.ctx, clientId);
  }

  /** The applications a user has authorized, with scope and date (for an "Authorized applications" page). @group Authorization */
  listAuthorizations(accountUuid: string): Promise<AuthorizationInfo[]> {
    return management.listAuthorizations(this.ctx, accountUuid);
  }

  /**
   * Create a personal access token for an account (docs/reference.md#personal-access-tokens): a bearer token `requireToken` accepts like an
   * OAuth access token of the same scope, for the account's own scripts. The value is returned once; only its hash is stored. This and
   * the next two methods need the personal access tokens storage group.
   *
   * @example
   * const { token, id } = await server.createPersonalToken({ account, name: 'CI deploy', scope: ['read'], expiresIn: 90 * 86400 });
   * @throws OAuthError `invalid_request` (account, name, expiresIn) or `invalid_scope` for a value outside the server's vocabulary.
   * @group Personal tokens
   */
  createPersonalToken(input: PersonalTokenInput): Promise<CreatedPersonalToken> {
    return createPersonalToken(this.ctx, input);
  }

  /**
   * The personal access tokens of an account, newest first, without their values: for an "API tokens" page. Revoked tokens are not listed;
   * expired ones are, until storage is pruned. `lastUsedAt` is written at most once a minute per token and server instance.
   * @group Personal tokens
   */
  listPersonalTokens(accountUuid: string): Promise<PersonalTokenInfo[]> {
    return listPersonalTokens(this.ctx, accountUuid);
  }

  /**
   * Revoke a personal access token of this account, at once (its next use is a 401). `false`, and nothing changes, when the account has no
   * such live token (an unknown id, or another account's). @group Personal tokens
   */
  revokePersonalToken(accountUuid: string, id: string): Promise<boolean> {
    return revokePersonalToken(this.ctx, accountUuid, id);
  }

  private readonly reporter = (error: unknown): void => reportFault(this.ctx, error);
}
