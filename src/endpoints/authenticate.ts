import type { Context } from '../context.js';
import { covers, requiredScope } from '../checks/scope.js';
import { copyAccount } from '../storage/copy.js';
import { audienceAllows } from '../checks/audience.js';
import type { GrantRecord, OAuthTokenRecord, TokenRead } from '../storage/types.js';
import { OAuthError } from '../errors.js';
import { errorResponse, pathNormalForm, queryParams, repeatedAuthorization } from '../http.js';
import { isPending, liveness, lookupToken, MAX_TOKEN_LENGTH } from '../tokens/lookup.js';
import { verifyPersonal } from '../personal/personal-tokens.js';
import { protectedResource } from './resource-metadata.js';
import type { DpopProofs } from '../context.js';
import { boundTo, dpopChallenge, type DpopChallengeError } from '../dpop/binding.js';
import { requestUrl, resourceUrl } from '../dpop/htu.js';
import type {
  AuthenticateOptions,
  AuthenticateResult,
  OAuthRequest,
  OAuthVerifiedToken,
  ProtectedResource,
  ResourceCheck,
  VerifiedToken,
} from '../types.js';

/**
 * The bearer check (RFC 6750; docs/reference.md#resource-check): one function, `authenticate`,
 * for every request that presents an access token. The plain check (`server.authenticate(request)`,
 * `requireToken(server)`) is the case with no `BearerNeeds`; a request to one of the
 * `protectedResources` and a check that needs a fixed scope (`requireBearerScope`) are the
 * cases with them. Which tokens are live is `liveness` (src/tokens/lookup.ts), shared with
 * introspection and revocation.
 */

/** `Bearer <b64token>` (RFC 6750 §2.1), the scheme in any case. */
const WELL_FORMED = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i;
const CANONICAL = /^Bearer [A-Za-z0-9\-._~+/]+=*$/;

/**
 * Why a request is refused, before its answer is written: the status and RFC 6750 error of a
 * challenge. Constants, so refusing allocates nothing until the answer itself.
 */
interface Refusal {
  readonly status: number;
  readonly error?: string;
  readonly description?: string;
}

// RFC 6750 §3.1: with no credentials, no error code; the body still says what is missing.
const NO_TOKEN: Refusal = { status: 401 };
const REPEATED: Refusal = { status: 400, error: 'invalid_request', description: 'The request carries more than one Authorization header.' };
const TWO_PLACES: Refusal = { status: 400, error: 'invalid_request', description: 'The access token was sent in more than one place.' };
const MALFORMED: Refusal = { status: 400, error: 'invalid_request', description: 'The Authorization header is malformed.' };
const INVALID: Refusal = { status: 401, error: 'invalid_token', description: 'The access token is invalid, expired or revoked.' };
const METHOD_SCOPE: Refusal = {
  status: 403,
  error: 'insufficient_scope',
  description: 'The access token does not allow this request method.',
};
const REQUEST_SCOPE: Refusal = { status: 403, error: 'insufficient_scope', description: 'The access token does not allow this request.' };
// RFC 9449 §7: a resource that takes DPoP-bound tokens only refuses a bearer token, whatever it is.
const DPOP_ONLY: Refusal = { status: 401, error: 'invalid_token', description: 'This resource accepts DPoP-bound access tokens only.' };
/** `DPoP <token68>` (RFC 9449 §7.1), the scheme in any case. */
const DPOP_SCHEME = /^dpop +([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * The challenge that answers `refusal`: `scope` is what the request needs (RFC 6750 §3), and a
 * request to a protected resource names its metadata (`resource_metadata`, RFC 9728 §5.1), so a
 * client knows what to ask for and where.
 */
function challenge(
  ctx: Context,
  refusal: Refusal,
  scope?: string,
  resource?: ProtectedResource,
  scheme?: 'DPoP',
  nonce?: string,
): AuthenticateResult {
  const { status, error, description } = refusal;
  let value = `Bearer realm="${ctx.options.realm}"`;
  if (scheme === undefined) {
    if (error) value += `, error="${error}"`;
    if (description) value += `, error_description="${description}"`;
    if (scope) value += `, scope="${scope}"`;
  }
  if (resource) value += `, resource_metadata="${resource.metadataUrl}"`;
  // RFC 9449 §7.1: with DPoP on, the challenges name both schemes; the error goes with the scheme used.
  if (ctx.dpop !== undefined) value = withDpopChallenge(ctx, ctx.dpop, value, refusal, scope, resource, scheme);
  const body = error
    ? { error, error_description: description }
    : { error_description: 'An access token is required (Authorization: Bearer <token>).' };
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'www-authenticate': value,
  };
  // RFC 9449 §9: the nonce to retry with.
  if (nonce !== undefined) headers['dpop-nonce'] = nonce;
  return { ok: false, response: { status, headers, body: JSON.stringify(body) } };
}

/**
 * `bearer` followed by the DPoP challenge (RFC 9449 §7.1), or the DPoP challenge alone at a
 * resource that takes DPoP-bound tokens only. The refusal's error goes with the DPoP challenge
 * when the request used that scheme, or when the resource takes no other.
 */
function withDpopChallenge(
  ctx: Context,
  dpop: DpopProofs,
  bearer: string,
  refusal: Refusal,
  scope: string | undefined,
  resource: ProtectedResource | undefined,
  scheme: 'DPoP' | undefined,
): string {
  const only = resource?.dpopBoundAccessTokensRequired === true;
  const own = scheme !== undefined || only;
  const value = dpopChallenge({
    algorithms: dpop.algorithms,
    realm: ctx.options.realm,
    ...(own && refusal.error !== undefined && { error: refusal.error as DpopChallengeError }),
    ...(own && refusal.description !== undefined && { description: refusal.description }),
    ...(own && scope && { scope }),
    ...(only && resource && { resourceMetadata: resource.metadataUrl }),
  });
  return only ? value : `${bearer}, ${value}`;
}

/**
 * The bearer token of a request, or why there is none to check. The common case (one
 * well-formed `Authorization: Bearer` header, no token in the query) is one regex; anything
 * else is classified by `classify`.
 */
function bearerToken(request: OAuthRequest): string | Refusal {
  const raw = request.headers['authorization'];
  if (typeof raw === 'string' && !request.url.includes('access_token')) {
    // `Bearer ` as clients write it: a case-sensitive test without captures is the cheapest check.
    if (raw.length <= MAX_TOKEN_LENGTH + 7 && CANONICAL.test(raw)) return raw.slice(7);
    const token = WELL_FORMED.exec(raw)?.[1];
    if (token !== undefined && token.length <= MAX_TOKEN_LENGTH) return token;
  }
  return classify(request);
}

/**
 * A token the caller took from a form body (RFC 6750 §2.2): refused when the request also has an
 * `Authorization` header, whatever its scheme, since RFC 6750 §2 forbids more than one method
 * per request and the two could name different tokens.
 */
function bodyToken(request: OAuthRequest, token: string): string | Refusal {
  return request.headers['authorization'] === undefined ? token : TWO_PLACES;
}

function classify(request: OAuthRequest): string | Refusal {
  if (repeatedAuthorization(request)) return REPEATED;
  const raw = request.headers['authorization'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  // Parse the query only when it could hold a token.
  const inQuery = request.url.includes('access_token') && queryParams(request).has('access_token');
  const token = value === undefined || inQuery ? undefined : WELL_FORMED.exec(value)?.[1];
  if (token !== undefined && token.length <= MAX_TOKEN_LENGTH) return token;
  // RFC 6750 §3: no authentication information at all → 401 with no error code. A token in
  // the URL is ignored (OAuth 2.1 §5.1): URLs end up in logs.
  if (value === undefined || !/^bearer(\s|$)/i.test(value)) return NO_TOKEN;
  if (inQuery) return TWO_PLACES;
  if (!/^bearer +(\S+)$/i.test(value)) return MALFORMED;
  return INVALID;
}

/** 503 without `invalid_token`, so clients do not throw away good tokens during an outage. */
const unavailable = (): AuthenticateResult => ({
  ok: false,
  response: errorResponse(new OAuthError('temporarily_unavailable', 'The service is temporarily unavailable.', 503)),
});

/**
 * What the host gets for an OAuth access token that passed: its own copies, as the records may be
 * the store's (readToken), or a cache's.
 */
function verifiedAccess(ctx: Context, token: Readonly<OAuthTokenRecord>, grant: Readonly<GrantRecord>): OAuthVerifiedToken {
  return {
    kind: 'oauth',
    clientId: token.clientId,
    account: ctx.storage.readToken ? copyAccount(grant.account) : grant.account,
    scope: [...token.scope],
    expiresAt: token.expiresAt ?? Number.MAX_SAFE_INTEGER,
  };
}

/**
 * The token a found record stands for at a bearer check, or `null`: a live (`liveness`) OAuth
 * access token whose audience allows `resource`, or a personal access token (`verifyPersonal`,
 * which also records its use). A token issued for named resources (RFC 8707) is accepted only
 * by a check for one of them, never by one that names no resource; a personal access token (no
 * audience) by every one, as an OAuth token issued without one. Refresh tokens never.
 */
function verified(
  ctx: Context,
  found: NonNullable<TokenRead>,
  now: number,
  resource: ProtectedResource | undefined,
  report: (error: unknown) => void,
  jkt?: string,
): VerifiedToken | null {
  const token = found.token;
  if (token.kind === 'access') {
    const allowed = resource === undefined ? token.audience === undefined : audienceAllows(token, resource.resource);
    // RFC 9449 §7.1, §7.2: a bound token with a proof of its key only, a bearer token without one.
    const keyed = token.dpop === undefined ? jkt === undefined : jkt !== undefined && boundTo(token.dpop, jkt);
    return allowed && keyed && liveness(found, now) === 'live' ? verifiedAccess(ctx, token, found.grant) : null;
  }
  return token.kind === 'personal' && jkt === undefined ? verifyPersonal(ctx, found, now, report) : null;
}

/**
 * What a bearer check asks beyond the plain one (which is the case without them): the protected
 * resource a request is to, or a scope every request needs.
 */
export interface BearerNeeds {
  /**
   * The protected resource the request is to, resolved once by the caller
   * (`protectedResource`, when a `requireToken` or a `resourceCheck` is made): the token's
   * audience must allow it, its `requiredScope` decides the scope, and every challenge names its
   * metadata (docs/reference.md#checking-a-request-to-a-resource).
   */
  readonly resource?: ProtectedResource | undefined;
  /** The body the framework parsed, for the resource's `requiredScope`. */
  readonly body?: unknown;
  /** Reads the body for the resource's `requiredScope` when `body` is undefined: called at most once. */
  readonly readBody?: (() => unknown) | undefined;
  /**
   * Every scope value the token must hold, instead of the scope rule of the server or of the
   * resource: a 403 `insufficient_scope` names them (`scope="…"`, RFC 6750 §3.1).
   */
  readonly scope?: readonly string[] | undefined;
  /**
   * The token, when the caller took it from elsewhere than the `Authorization` header (a form
   * body, RFC 6750 §2.2); else the header's. A request that has an `Authorization` header too is
   * refused (400 `invalid_request`, RFC 6750 §2: one method per request).
   */
  readonly token?: string | undefined;
  /**
   * `DPoP` when the request presented its token with the DPoP scheme and a proof (RFC 9449 §7):
   * the challenges then carry the error on the DPoP scheme. Set by the DPoP check itself.
   */
  readonly scheme?: 'DPoP' | undefined;
}

/**
 * The bearer check of `Authorization: Bearer <token>` (RFC 6750; docs/reference.md#resource-check),
 * the one for every caller: without `needs`, the plain check, where the scope follows the HTTP
 * method (docs/reference.md#scope: `read` for GET and HEAD, `write` for the rest); with them, as
 * `BearerNeeds` says. A storage outage or a throwing host hook (clock, scope rule) is a 503,
 * reported.
 *
 * The plain case is the most tuned path of the server (docs/architecture.md#hot-paths): no
 * `await` when the store answers at once (`isPending`), and nothing allocated for the cases
 * with needs.
 */
export async function authenticate(
  ctx: Context,
  request: OAuthRequest,
  report: (error: unknown) => void,
  needs?: BearerNeeds,
): Promise<AuthenticateResult> {
  // Everything inside one try (free until something throws), rather than a wrapper promise on
  // every API request.
  try {
    const token = needs?.token === undefined ? bearerToken(request) : bodyToken(request, needs.token);
    if (typeof token !== 'string') {
      // `Authorization: DPoP …` is no bearer token; with DPoP on, it is checked with its proof.
      if (token === NO_TOKEN && ctx.dpop !== undefined) return await dpopAuthenticate(ctx, ctx.dpop, request, report, needs);
      return needs === undefined ? challenge(ctx, token) : await refuse(ctx, token, request, needs);
    }
    if (needs?.resource?.dpopBoundAccessTokensRequired) return await refuse(ctx, DPOP_ONLY, request, needs);
    // Only a verified JWT names an access token when they are JWTs (a bare `jti` is no credential).
    const read = lookupToken(ctx, token, true);
    const found = isPending(read) ? await read : read;
    const verifiedToken = found === null ? null : verified(ctx, found, ctx.clock.now(), needs?.resource, report);
    if (verifiedToken === null) return needs === undefined ? challenge(ctx, INVALID) : await refuse(ctx, INVALID, request, needs);
    if (needs !== undefined) return await scoped(ctx, verifiedToken, request, needs);
    const allowed = ctx.scopes.check(verifiedToken.scope, request);
    return allowed.ok ? { ok: true, token: verifiedToken } : challenge(ctx, METHOD_SCOPE, allowed.needed);
  } catch (error) {
    report(error);
    return unavailable();
  }
}

/**
 * The refusal of a check with needs: a 401 also names the scope the request needs (a fixed one
 * is named only by the 403), and a request to a resource names its metadata.
 */
async function refuse(ctx: Context, refusal: Refusal, request: OAuthRequest, needs: BearerNeeds): Promise<AuthenticateResult> {
  const resource = needs.resource;
  if (resource === undefined || refusal.status !== 401) return challenge(ctx, refusal, undefined, resource, needs.scheme);
  return challenge(ctx, refusal, (await neededScope(ctx, resource, request, needs))?.join(' '), resource, needs.scheme);
}

/** The scope part of a check with needs, for a token that passed. */
async function scoped(ctx: Context, token: VerifiedToken, request: OAuthRequest, needs: BearerNeeds): Promise<AuthenticateResult> {
  const resource = needs.resource;
  const needed = needs.scope ?? (resource?.requiredScope ? await neededScope(ctx, resource, request, needs) : undefined);
  if (needed !== undefined) {
    return covers(token.scope, needed) ? { ok: true, token } : challenge(ctx, REQUEST_SCOPE, needed.join(' '), resource, needs.scheme);
  }
  const allowed = ctx.scopes.check(token.scope, request);
  return allowed.ok ? { ok: true, token } : challenge(ctx, METHOD_SCOPE, allowed.needed, resource, needs.scheme);
}

/**
 * The check of `Authorization: DPoP <token>` with its `DPoP` proof (RFC 9449 §7): the proof of
 * this request (`htm`, `htu`, `ath` of the token, not seen before), then the bearer check's own
 * steps for a token bound to the proof's key. A refused proof is a 401 `invalid_dpop_proof`, or
 * `use_dpop_nonce` with a `DPoP-Nonce` header (§9). Reached only when the Authorization header
 * holds no bearer token, so a bearer request never comes here.
 */
async function dpopAuthenticate(
  ctx: Context,
  dpop: DpopProofs,
  request: OAuthRequest,
  report: (error: unknown) => void,
  needs: BearerNeeds | undefined,
): Promise<AuthenticateResult> {
  const raw = request.headers['authorization'];
  if (typeof raw !== 'string' || !/^dpop(\s|$)/i.test(raw))
    return needs === undefined ? challenge(ctx, NO_TOKEN) : await refuse(ctx, NO_TOKEN, request, needs);
  const withScheme: BearerNeeds = { ...needs, scheme: 'DPoP' };
  const token = DPOP_SCHEME.exec(raw)?.[1];
  if (token === undefined || token.length > MAX_TOKEN_LENGTH) return await refuse(ctx, MALFORMED, request, withScheme);
  const now = ctx.clock.now();
  // A named resource has a configured origin: the proof must name it (RFC 9449 §4.3 point 9,
  // §11.1), whatever Host the request came with. Without one, the URL the adapter built.
  const resource = needs?.resource;
  const verdict = await dpop.verify(request.headers['dpop'], {
    htm: request.method,
    htu: resource === undefined ? requestUrl(ctx.options.issuer, request.url) : resourceUrl(resource.resource, request.url),
    now,
    accessToken: token,
  });
  if (!verdict.ok) {
    const refusal: Refusal = { status: 401, error: verdict.error, description: verdict.description };
    return challenge(ctx, refusal, undefined, resource, 'DPoP', verdict.nonce);
  }
  const read = lookupToken(ctx, token, true);
  const found = isPending(read) ? await read : read;
  const verifiedToken = found === null ? null : verified(ctx, found, now, resource, report, verdict.jkt);
  if (verifiedToken === null) return await refuse(ctx, INVALID, request, withScheme);
  return await scoped(ctx, verifiedToken, request, withScheme);
}

/** A scope token (RFC 6749 §3.3): what may go between the quotes of a challenge's `scope`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * The scope values a request to `resource` needs: its own `requiredScope` on the request and its
 * body (the one the framework parsed, or else read once through `readBody`), or the server's
 * rule (docs/reference.md#scope). `undefined` when the server's rule is a host's `allows`,
 * which names no scope.
 */
async function neededScope(
  ctx: Context,
  resource: ProtectedResource,
  request: OAuthRequest,
  needs: BearerNeeds,
): Promise<readonly string[] | undefined> {
  if (!resource.requiredScope) {
    if (ctx.options.scopes) return undefined;
    return requiredScope(request.method) === 'write' ? ['read', 'write'] : ['read'];
  }
  let body = needs.body;
  if (body === undefined && needs.readBody) {
    const read = needs.readBody();
    body = read instanceof Promise ? await read : read;
  }
  // The path in its normal form, which the frameworks route by: `/r/%61ccount` is `/r/account`.
  const url = pathNormalForm(request.url);
  const needed = resource.requiredScope({ method: request.method, url, ...(body !== undefined && { body }) });
  // A host's value goes into a header: anything but scope tokens is a bug of the rule (a 503, reported).
  if (!Array.isArray(needed) || !needed.every((s) => typeof s === 'string' && SCOPE_TOKEN.test(s))) {
    throw new TypeError(
      `The requiredScope of protected resource ${resource.resource} returned something other than a list of scope values.`,
    );
  }
  return needed;
}

/**
 * `server.authenticate(request, { resource, body, readBody })`: `authenticate` for the protected
 * resource the caller named by its identifier, resolved here as it came as a string (the
 * adapters resolve theirs once: `AuthorizationServer.resourceCheck`). An identifier that is not
 * one of the `protectedResources` is a `ConfigError`, reported, and a 503.
 */
export function authenticateNamed(
  ctx: Context,
  request: OAuthRequest,
  report: (error: unknown) => void,
  options: AuthenticateOptions,
): Promise<AuthenticateResult> {
  try {
    const resource = protectedResource(ctx, options.resource);
    return authenticate(ctx, request, report, { resource, body: options.body, readBody: options.readBody });
  } catch (error) {
    report(error);
    return Promise.resolve(unavailable());
  }
}

/**
 * `authenticateNamed` with the resource resolved once, now (`AuthorizationServer.resourceCheck`).
 * @throws ConfigError when `name` is not one of the `protectedResources`.
 */
export function resourceCheck(ctx: Context, name: string, report: (error: unknown) => void): ResourceCheck {
  const resource = protectedResource(ctx, name);
  return (request, body) => authenticate(ctx, request, report, { resource, body: body?.body, readBody: body?.readBody });
}

/**
 * The core check "a live access token, presented as a bearer token, whose scope includes every
 * value of `scope`", with the answers of RFC 6750: 401 `invalid_token` (or 401 without an error
 * code, 400 `invalid_request` for a missing or malformed header), 403 `insufficient_scope` with
 * `scope="…"` in `WWW-Authenticate`, 503 when storage fails. For endpoints of the server that
 * take an access token (OpenID Connect userinfo needs `openid`), so that none writes a bearer
 * check of its own. A token issued for named resources (RFC 8707) is refused, as by the plain
 * check; `token` is one the caller took from a form body (RFC 6750 §2.2), else the header's.
 */
export function requireBearerScope(
  ctx: Context,
  request: OAuthRequest,
  scope: readonly string[],
  report: (error: unknown) => void,
  token?: string,
): Promise<AuthenticateResult> {
  return authenticate(ctx, request, report, { scope, token });
}
