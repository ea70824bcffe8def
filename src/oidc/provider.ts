/**
 * The OpenID Provider (OpenID Connect Core 1.0) on top of the code flow, opt-in with the `openid`
 * option: the option resolved once (`openIdProvider`), the scope vocabulary it adds
 * (`OpenIdScopes`), the authorization request's parameters (`openIdParameters`), the
 * `id_token_hint` check for a client (`hintSubject`) and the ID token of a token response
 * (`withIdToken`). Everything here runs only for a request whose scope has `openid` on a server
 * with the option: every other request is answered as if this file did not exist.
 */
import type { Context, OpenIdProvider, Scopes } from '../context.js';
import { AuthorizeError, ConfigError, OAuthError, type OAuthErrorCode } from '../errors.js';
import { reportFault } from '../failure.js';
import { jsonString, single, type Params } from '../http.js';
import type { SigningAlgorithm } from '../keys/jwk.js';
import { SigningKeys } from '../keys/signing-keys.js';
import type { ResolvedOptions } from '../options.js';
import { CONTROL, plainLine } from '../rules.js';
import type { AuthorizationRequestRecord, ClientRecord, OAuthGrantRecord, OpenIdRequestSection } from '../storage/types.js';
import type { Account } from '../types.js';
import { findClient } from '../checks/clients.js';
import { claimsPolicy, filterClaims } from './claims.js';
import { checkIdTokenHint, MAX_ID_TOKEN_HINT_LENGTH } from './id-token-hint.js';
import { issueIdToken } from './id-token.js';
import { openIdDiscovery } from './discovery.js';
import { Subjects, type SubjectType } from './subject.js';
import { en } from '../ui/messages/en.js';
import type { JWK } from 'jose';

/** The `openid` option as `resolveOptions` leaves it. */
type OpenIdOption = NonNullable<ResolvedOptions['openid']>;

/**
 * The OpenID Provider of an `openid` option: its keys (the host's, or one RS256 key made for this
 * process), its claims policy and its subjects, all checked now.
 * @throws ConfigError for keys without an RS256 one (Discovery 1.0 §3: RS256 MUST be supported),
 * bad keys, bad claim names, a short pairwise salt.
 */
export function openIdProvider(option: OpenIdOption): OpenIdProvider {
  const keys = option.signingKeys
    ? SigningKeys.from(option.signingKeys, 'openid.signingKeys')
    : SigningKeys.generated(['RS256'], 'openid.signingKeys');
  if (!keys.signs('RS256'))
    throw new ConfigError('openid.signingKeys', 'expected an RS256 key among them (OpenID Connect Discovery section 3 requires RS256)');
  const policy = claimsPolicy(option.claimsByScope ? { scopes: option.claimsByScope } : {}, 'openid.claimsByScope');
  const subjects = new Subjects(
    { ...(option.subject && { subject: option.subject }), ...(option.pairwise && { pairwise: option.pairwise }) },
    'openid',
  );
  const hostClaims = option.claims;
  return {
    keys,
    idTokenLifetime: option.idTokenLifetime,
    claimsInIdToken: option.claimsInIdToken,
    claimScopes: policy.scopes,
    supportedClaims: policy.supported,
    subjectTypes: subjects.types,
    subject: (account, client) => subjects.for(account, { redirectUri: client.redirectUri, subjectType: client.openid?.subjectType }),
    claims: async (account, scope, clientId) =>
      hostClaims ? filterClaims(policy, scope, await hostClaims(account, { scope: [...scope], clientId })) : {},
  };
}

/**
 * The scope vocabulary of a server with the `openid` option: a `scope` without `openid` is
 * parsed, formatted and checked by the server's own vocabulary exactly as without the option;
 * with `openid`, the OpenID Connect scopes (`openid` and the scopes with claims) are taken out
 * first and the rest, if any, parsed by the server's vocabulary. A sign-in only (`openid
 * profile`) has no resource scope at all: its access token is good for userinfo and nothing else.
 * `offline_access` (Core §11) is not offered and is ignored, as Core §3.1.2.1 asks of values not
 * understood; any other unknown value is `invalid_scope`, as without the option.
 */
export class OpenIdScopes implements Scopes {
  private readonly own: readonly string[];

  constructor(
    private readonly inner: Scopes,
    claimScopes: readonly string[],
  ) {
    this.own = ['openid', ...claimScopes.filter((s) => s !== 'openid' && !inner.values.includes(s))];
  }

  get values(): string[] {
    return this.inner.values;
  }

  parse(value: string | undefined): string[] | null {
    if (value === undefined) return this.inner.parse(value);
    const parts = value.split(' ');
    if (!parts.includes('openid')) return this.inner.parse(value);
    if (new Set(parts).size !== parts.length) return null;
    const rest = parts.filter((p) => !this.own.includes(p) && p !== 'offline_access');
    const resource = rest.length === 0 ? [] : this.inner.parse(rest.join(' '));
    if (resource === null) return null;
    return [...resource, ...this.own.filter((s) => parts.includes(s))];
  }

  format(scope: readonly string[]): string {
    const base = this.inner.format(scope);
    if (!scope.includes('openid')) return base;
    const own = this.own.filter((s) => scope.includes(s)).join(' ');
    return base === '' ? own : `${base} ${own}`;
  }

  check(scope: readonly string[], request: { method: string; url: string }): { ok: true } | { ok: false; needed?: string } {
    return this.inner.check(scope, request);
  }

  describe(value: string): string {
    // The English catalogue's words (the pages translate them); a host's claim scope is its own name.
    if (!this.own.includes(value)) return this.inner.describe(value);
    return (Object.hasOwn(en.scopes, value) ? en.scopes[value] : undefined) ?? value;
  }
}

/** Core §3.1.2.1 `display`. */
const DISPLAYS: readonly string[] = ['page', 'popup', 'touch', 'wap'];
const SECONDS = /^\d{1,10}$/;
/** Space-separated tokens of printable ASCII (BCP 47 tags, ACR values). */
const TOKENS = /^[\x21-\x7e]+( [\x21-\x7e]+)*$/;

const NAMES = [
  'nonce',
  'max_age',
  'id_token_hint',
  'login_hint',
  'ui_locales',
  'claims_locales',
  'acr_values',
  'display',
  'response_mode',
  'request',
  'request_uri',
  'registration',
] as const;

/** A refused OpenID Connect parameter: the error (Core §3.1.2.6) and its description, redirected. */
export interface OpenIdParameterProblem {
  error: OAuthErrorCode;
  description: string;
}

/** The section of the request record, and the raw `id_token_hint` still to verify (`hintSubject`). */
export interface OpenIdParameters {
  section: OpenIdRequestSection;
  idTokenHint?: string;
}

const refuse = (error: OAuthErrorCode, description: string): OpenIdParameterProblem => ({ error, description });
const BAD_MODE = 'The request is malformed: response_mode must be query or form_post.';
const BAD_MODE_WITH_FRAGMENT = 'The request is malformed: response_mode must be query, fragment or form_post.';

/**
 * The OpenID Connect parameters of a request whose scope has `openid` (Core §3.1.2.1), each sent
 * at most once: checked and kept, or the first problem. `response_mode` is one of those discovery
 * lists (`openIdFields`): `query`, `form_post`, and `fragment` when `fragment` (the server allows
 * the implicit flow, so it answers in fragments anyway; OAuth 2.0 Multiple Response Types §2.1).
 * `request`, `request_uri` and `registration` are refused with their own errors (Core §3.1.2.6,
 * §6); `claims` is ignored (`claims_parameter_supported: false`), as are parameters nobody defined.
 */
export function openIdParameters(params: Params, client: ClientRecord, fragment: boolean): OpenIdParameters | OpenIdParameterProblem {
  let v: Partial<Record<(typeof NAMES)[number], string>>;
  try {
    v = single(params, NAMES);
  } catch (error) {
    if (error instanceof OAuthError) return refuse(error.code, error.description);
    throw error;
  }
  if (v.request !== undefined) return refuse('request_not_supported', 'Request objects (the request parameter) are not supported.');
  if (v.request_uri !== undefined) return refuse('request_uri_not_supported', 'The request_uri parameter is not supported.');
  if (v.registration !== undefined) return refuse('registration_not_supported', 'The registration parameter is not supported.');
  const mode = v.response_mode;
  if (mode !== undefined && mode !== 'query' && mode !== 'form_post' && (mode !== 'fragment' || !fragment))
    return refuse('invalid_request', fragment ? BAD_MODE_WITH_FRAGMENT : BAD_MODE);
  const section: OpenIdRequestSection = {};
  if (mode === 'form_post' || mode === 'fragment') section.responseMode = mode;
  if (v.nonce !== undefined) {
    if (v.nonce.length > 512 || CONTROL.test(v.nonce))
      return refuse('invalid_request', 'The request is malformed: nonce must be at most 512 characters, without control characters.');
    section.nonce = v.nonce;
  }
  if (v.max_age !== undefined) {
    if (!SECONDS.test(v.max_age))
      return refuse('invalid_request', 'The request is malformed: max_age must be a non-negative integer number of seconds.');
    section.maxAge = Number(v.max_age);
  } else if (client.openid?.defaultMaxAge !== undefined) section.maxAge = client.openid.defaultMaxAge;
  if (v.login_hint !== undefined) {
    if (!plainLine(v.login_hint, 256))
      return refuse('invalid_request', 'The request is malformed: login_hint must be 1 to 256 characters, without control characters.');
    section.loginHint = v.login_hint;
  }
  for (const [name, key] of [
    ['ui_locales', 'uiLocales'],
    ['claims_locales', 'claimsLocales'],
    ['acr_values', 'acrValues'],
  ] as const) {
    const value = v[name];
    if (value === undefined) continue;
    if (value.length > 256 || !TOKENS.test(value))
      return refuse('invalid_request', `The request is malformed: ${name} must be space-separated values, at most 256 characters.`);
    section[key] = value.split(' ');
  }
  if (v.display !== undefined) {
    if (!DISPLAYS.includes(v.display))
      return refuse('invalid_request', 'The request is malformed: display must be page, popup, touch or wap.');
    section.display = v.display;
  }
  if (v.id_token_hint !== undefined && v.id_token_hint.length > MAX_ID_TOKEN_HINT_LENGTH)
    return refuse('invalid_request', 'The id_token_hint is not an ID token this server issued to this application.');
  return v.id_token_hint === undefined ? { section } : { section, idTokenHint: v.id_token_hint };
}

/**
 * The `sub` of an `id_token_hint` (Core §3.1.2.1): an ID token this server signed (even
 * expired) for this client; `null` for anything else: a foreign key, another issuer, another
 * client's token, a token of another kind.
 */
export async function hintSubject(ctx: Context, provider: OpenIdProvider, hint: string, client: ClientRecord): Promise<string | null> {
  const issuer = ctx.options.issuer;
  if (issuer === undefined) return null;
  const checked = await checkIdTokenHint(provider.keys, hint, { issuer, now: ctx.clock.now() });
  return checked.valid && checked.aud.includes(client.id) ? checked.sub : null;
}

/** The algorithm of `client`'s ID tokens: its `id_token_signed_response_alg`, or RS256. */
function idTokenAlg(client: ClientRecord): SigningAlgorithm {
  return client.openid?.idTokenSignedResponseAlg ?? 'RS256';
}

/**
 * Why `provider` cannot sign `client`'s ID tokens, or `undefined` when it can. The client's
 * algorithm was one of `signingKeys`' when it was registered (`clientOpenIdSection`), but keys
 * change: an instance started without that key (a key removed, a rotation half done, another
 * instance's configuration) has none to sign with. RS256 is always there (`openIdProvider`), so
 * only a client registered for another algorithm meets this. A configuration error, made only
 * when it happens: the host hears of it (`onError`), the client gets `server_error`, and nothing
 * single-use is used up, so the same code or refresh token works once the key is back.
 */
export function missingIdTokenKey(provider: OpenIdProvider, client: ClientRecord): ConfigError | undefined {
  const alg = idTokenAlg(client);
  if (provider.keys.signs(alg)) return undefined;
  return new ConfigError(
    'openid.signingKeys',
    `no key with alg ${alg}, the ID token algorithm of client ${client.id} (id_token_signed_response_alg): add one, or change the client's openid.idTokenSignedResponseAlg (updateClient)`,
  );
}

/**
 * At the token endpoint, before a grant uses anything up: throws `missingIdTokenKey`'s error
 * (`500 server_error`, reported) when the response would need an ID token the server cannot sign.
 */
export function checkIdTokenKey(provider: OpenIdProvider, client: ClientRecord): void {
  const missing = missingIdTokenKey(provider, client);
  if (missing) throw missing;
}

const UNSIGNABLE = "The server cannot sign ID tokens with this application's id_token_signed_response_alg. Try again later.";

/**
 * An OpenID Connect authorization request whose ID token this server cannot sign: refused before
 * any code is issued (and before the user is asked anything), with `server_error` to the
 * callback (RFC 6749 §4.1.2.1: the error that exists because a 500 cannot be redirected), in the
 * request's response mode; the cause goes to `onError`. `undefined` for any other request.
 */
export function unsignableRequest(ctx: Context, client: ClientRecord, req: AuthorizationRequestRecord): AuthorizeError | undefined {
  const provider = ctx.openid;
  if (!provider || !req.openid) return undefined;
  const missing = missingIdTokenKey(provider, client);
  if (!missing) return undefined;
  reportFault(ctx, missing);
  return new AuthorizeError('server_error', UNSIGNABLE, req);
}

/** What the ID token of a token response says besides the grant: `auth_time`, and the code's `nonce`. */
export interface IdTokenFacts {
  authTime: number;
  nonce?: string | undefined;
}

/**
 * `json`, a successful token response, with the `id_token` added as its last member (Core
 * §3.1.3.3): `at_hash` of its access token, `auth_time`, the code's `nonce` (none on a refresh,
 * Core §12.2), signed with the client's algorithm. The host's claims go in only with
 * `claimsInIdToken` (Core §5.4: an access token is issued, so userinfo serves them).
 */
export async function withIdToken(
  ctx: Context,
  provider: OpenIdProvider,
  grant: OAuthGrantRecord,
  scope: readonly string[],
  facts: IdTokenFacts,
  client: ClientRecord,
  json: string,
): Promise<string> {
  const issuer = ctx.options.issuer;
  if (issuer === undefined) return json;
  // The access token exactly as the response carries it (opaque, or a JWT signed once).
  const { access_token: accessToken } = JSON.parse(json) as { access_token: string };
  const claims = provider.claimsInIdToken ? await provider.claims(grant.account, scope, client.id) : undefined;
  const alg = idTokenAlg(client);
  const idToken = await issueIdToken(provider.keys, {
    issuer,
    subject: provider.subject(grant.account, client),
    clientId: client.id,
    now: ctx.clock.now(),
    lifetime: provider.idTokenLifetime,
    authTime: facts.authTime,
    nonce: facts.nonce,
    accessToken,
    alg,
    claims,
  });
  return `${json.slice(0, -1)},"id_token":${jsonString(idToken)}}`;
}

/** Whether the account may be the one the request's `id_token_hint` names. */
export function hintAllows(
  provider: OpenIdProvider,
  section: OpenIdRequestSection | undefined,
  account: Account,
  client: ClientRecord,
): boolean {
  return section?.idTokenHintSub === undefined || provider.subject(account, client) === section.idTokenHintSub;
}

/**
 * The token endpoint's response with its ID token (`withIdToken`), for the client the grant was
 * issued to. A client deleted in the meantime gets the response without one.
 */
export async function idTokenResponse(
  ctx: Context,
  provider: OpenIdProvider,
  issued: { grant: OAuthGrantRecord; pair: { scope: readonly string[] }; openid?: IdTokenFacts | undefined },
  json: string,
): Promise<string> {
  const client = await findClient(ctx, issued.grant.clientId);
  if (!client || !issued.openid) return json;
  return withIdToken(ctx, provider, issued.grant, issued.pair.scope, issued.openid, client, json);
}

/**
 * The discovery fields of the provider (Discovery 1.0 §3), over the RFC 8414 document: only what
 * is served (`end_session_endpoint`: RP-initiated logout, oidc/logout.ts).
 */
export function openIdFields(ctx: Context, provider: OpenIdProvider, oauthBase: string, jwksUri: string): Record<string, unknown> {
  const o = ctx.options;
  return {
    ...openIdDiscovery({
      userinfoEndpoint: `${oauthBase}/userinfo`,
      jwksUri,
      endSessionEndpoint: `${oauthBase}/logout`,
      signingAlgorithms: provider.keys.algorithms,
      subjectTypes: provider.subjectTypes as SubjectType[],
      claims: provider.supportedClaims,
      scopes: ctx.scopes.values,
      claimScopes: provider.claimScopes,
      offlineAccess: false,
      responseModes: o.allowImplicit ? ['query', 'fragment'] : ['query'],
      formPost: true,
      prompts: ['none', 'login', 'consent', 'select_account'],
      languages: o.pages.languages,
    }),
    display_values_supported: DISPLAYS,
  };
}

/**
 * The JWKS (RFC 7517 §5) of a server with the provider: the ID token keys, and the JWT access
 * token keys when there are any (one `jwks_uri` for both; a key given to both is listed once).
 */
export async function publishedKeys(ctx: Context, provider: OpenIdProvider): Promise<{ keys: JWK[] }> {
  const keys = (await provider.keys.jwks()).keys;
  if (ctx.jwt) {
    const kids = new Set(keys.map((key) => key.kid));
    for (const key of (await ctx.jwt.jwks()).keys) if (!kids.has(key.kid)) keys.push(key);
  }
  return { keys };
}
