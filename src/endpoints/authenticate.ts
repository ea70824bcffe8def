import type { Context } from '../context.js';
import { covers, requiredScope } from '../checks/scope.js';
import { copyAccount } from '../storage/copy.js';
import { audienceAllows } from '../checks/audience.js';
import type { GrantRecord, OAuthTokenRecord, TokenRead } from '../storage/types.js';
import { ConfigError, OAuthError } from '../errors.js';
import { errorResponse, queryParams, repeatedAuthorization } from '../http.js';
import { isPending, lookupToken, MAX_TOKEN_LENGTH } from '../tokens/lookup.js';
import { verifyPersonal } from '../personal/personal-tokens.js';
import type { AuthenticateOptions, AuthenticateResult, OAuthRequest, ProtectedResource, VerifiedToken } from '../types.js';

/** `Bearer <b64token>` (RFC 6750 §2.1), the scheme in any case. */
const WELL_FORMED = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i;
const CANONICAL = /^Bearer [A-Za-z0-9\-._~+/]+=*$/;

function challenge(ctx: Context, status: number, error?: string, description?: string, scope?: string): AuthenticateResult {
  let value = `Bearer realm="${ctx.options.realm}"`;
  if (error) value += `, error="${error}"`;
  if (description) value += `, error_description="${description}"`;
  if (scope) value += `, scope="${scope}"`;
  // With no credentials RFC 6750 §3.1 wants no error code; the body still says what is missing.
  const body = error
    ? { error, error_description: description }
    : { error_description: 'An access token is required (Authorization: Bearer <token>).' };
  return {
    ok: false,
    response: {
      status,
      headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'www-authenticate': value },
      body: JSON.stringify(body),
    },
  };
}

/**
 * The bearer token of a request, or the challenge that answers it. The common case (one
 * well-formed `Authorization: Bearer` header, no token in the query) is one regex; anything
 * else is classified by `classify`.
 */
function bearerToken(ctx: Context, request: OAuthRequest): string | AuthenticateResult {
  const raw = request.headers['authorization'];
  if (typeof raw === 'string' && !request.url.includes('access_token')) {
    // `Bearer ` as clients write it: a case-sensitive test without captures is the cheapest check.
    if (raw.length <= MAX_TOKEN_LENGTH + 7 && CANONICAL.test(raw)) return raw.slice(7);
    const wellFormed = WELL_FORMED.exec(raw);
    if (wellFormed && wellFormed[1]!.length <= MAX_TOKEN_LENGTH) return wellFormed[1]!;
  }
  return classify(ctx, request);
}

function classify(ctx: Context, request: OAuthRequest): string | AuthenticateResult {
  if (repeatedAuthorization(request)) {
    return challenge(ctx, 400, 'invalid_request', 'The request carries more than one Authorization header.');
  }
  const raw = request.headers['authorization'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  // Parse the query only when it could hold a token.
  const inQuery = request.url.includes('access_token') && queryParams(request).has('access_token');
  const wellFormed = value === undefined || inQuery ? null : WELL_FORMED.exec(value);
  if (wellFormed && wellFormed[1]!.length <= MAX_TOKEN_LENGTH) return wellFormed[1]!;
  // RFC 6750 §3: no authentication information at all → 401 with no error code. A token in
  // the URL is ignored (OAuth 2.1 §5.1): URLs end up in logs.
  if (value === undefined || !/^bearer(\s|$)/i.test(value)) return challenge(ctx, 401);
  if (inQuery) return challenge(ctx, 400, 'invalid_request', 'The access token was sent in more than one place.');
  const match = /^bearer +(\S+)$/i.exec(value);
  if (!match) return challenge(ctx, 400, 'invalid_request', 'The Authorization header is malformed.');
  return challenge(ctx, 401, 'invalid_token', 'The access token is invalid, expired or revoked.');
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
function verifiedAccess(ctx: Context, token: Readonly<OAuthTokenRecord>, grant: Readonly<GrantRecord>): VerifiedToken {
  return {
    kind: 'oauth',
    clientId: token.clientId,
    account: ctx.storage.readToken ? copyAccount(grant.account) : grant.account,
    scope: [...token.scope],
    expiresAt: token.expiresAt ?? Number.MAX_SAFE_INTEGER,
  };
}

/**
 * The resource API's check of `Authorization: Bearer <token>` (RFC 6750;
 * docs/reference.md#resource-check). Scope follows the HTTP method (docs/reference.md#scope):
 * `read` for GET and HEAD, `write` for the rest.
 */
export async function authenticate(ctx: Context, request: OAuthRequest, report: (error: unknown) => void): Promise<AuthenticateResult> {
  // Everything inside one try (free until something throws), rather than a wrapper promise on
  // every API request: a storage outage or a throwing host hook (clock, scope rule) is a 503.
  try {
    const token = bearerToken(ctx, request);
    if (typeof token !== 'string') return token;
    // Only a verified JWT names an access token when they are JWTs (a bare `jti` is no credential).
    const read = lookupToken(ctx, token, true);
    const found = isPending(read) ? await read : read;
    const now = ctx.clock.now();
    if (
      !found ||
      found.token.kind !== 'access' ||
      // Issued for named resources (RFC 8707): only `requireToken(server, { resource })` for one
      // of them accepts it, never a check that names no resource.
      found.token.audience !== undefined ||
      found.token.revokedAt !== null ||
      found.grant.revokedAt !== null ||
      (found.token.expiresAt !== null && now >= found.token.expiresAt)
    ) {
      // A personal access token is told apart only here, off the path of OAuth access tokens.
      if (found?.token.kind === 'personal') return personal(ctx, request, found, now, report);
      return challenge(ctx, 401, 'invalid_token', 'The access token is invalid, expired or revoked.');
    }
    const allowed = ctx.scopes.check(found.token.scope, request);
    if (!allowed.ok) {
      return challenge(ctx, 403, 'insufficient_scope', 'The access token does not allow this request method.', allowed.needed);
    }
    return { ok: true, token: verifiedAccess(ctx, found.token, found.grant) };
  } catch (error) {
    report(error);
    return unavailable();
  }
}

/**
 * The bearer check of a personal access token (docs/reference.md#personal-access-tokens): the
 * same answers and scope rule as for an OAuth access token.
 */
function personal(
  ctx: Context,
  request: OAuthRequest,
  found: NonNullable<TokenRead>,
  now: number,
  report: (error: unknown) => void,
): AuthenticateResult {
  const token = verifyPersonal(ctx, found, now, report);
  if (!token) return challenge(ctx, 401, 'invalid_token', 'The access token is invalid, expired or revoked.');
  const allowed = ctx.scopes.check(token.scope, request);
  if (!allowed.ok) {
    return challenge(ctx, 403, 'insufficient_scope', 'The access token does not allow this request method.', allowed.needed);
  }
  return { ok: true, token };
}

/** A scope token (RFC 6749 §3.3): what may go between the quotes of a challenge's `scope`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * The scope values a request to `entry` needs: its own `requiredScope` on the request and its
 * body (the one the framework parsed, or else read once through `readBody`), or the server's
 * rule (docs/reference.md#scope). `undefined` when the server's rule is a host's `allows`,
 * which names no scope.
 */
async function neededScope(
  ctx: Context,
  entry: ProtectedResource,
  request: OAuthRequest,
  options: AuthenticateOptions,
): Promise<string[] | undefined> {
  if (!entry.requiredScope) {
    if (ctx.options.scopes) return undefined;
    return requiredScope(request.method) === 'write' ? ['read', 'write'] : ['read'];
  }
  let body = options.body;
  if (body === undefined && options.readBody) {
    const read = options.readBody();
    body = read instanceof Promise ? await read : read;
  }
  const needed = entry.requiredScope({ method: request.method, url: request.url, ...(body !== undefined && { body }) });
  // A host's value goes into a header: anything but scope tokens is a bug of the rule (a 503, reported).
  if (!Array.isArray(needed) || !needed.every((s) => typeof s === 'string' && SCOPE_TOKEN.test(s))) {
    throw new TypeError(`The requiredScope of protected resource ${entry.resource} returned something other than a list of scope values.`);
  }
  return needed;
}

/**
 * A challenge of `entry` (RFC 9728 §5.1): `resource_metadata` names its document, and a 401
 * also says which scope the request needs (RFC 6750 §3), so a client knows what to ask for.
 */
function resourceChallenge(result: AuthenticateResult, entry: ProtectedResource, scope: string[] | undefined): AuthenticateResult {
  if (result.ok) return result;
  const headers = result.response.headers;
  let value = headers['www-authenticate']!;
  if (scope !== undefined && scope.length > 0 && !value.includes(', scope="')) value += `, scope="${scope.join(' ')}"`;
  headers['www-authenticate'] = `${value}, resource_metadata="${entry.metadataUrl}"`;
  return result;
}

/**
 * `authenticate` for a request to one of the `protectedResources`
 * (docs/reference.md#protected-resources-rfc-9728): the same bearer and token checks, the
 * token's audience, the resource's own scope rule, and challenges that name its metadata. A
 * function of its own, so that `authenticate`, the tuned path, does no work for it.
 */
export async function authenticateResource(
  ctx: Context,
  request: OAuthRequest,
  report: (error: unknown) => void,
  options: AuthenticateOptions,
): Promise<AuthenticateResult> {
  try {
    const entry = ctx.options.protectedResources?.find((r) => r.resource === options.resource);
    if (!entry) throw new ConfigError('resource', `expected one of the protectedResources, not ${JSON.stringify(options.resource)}`);
    const token = bearerToken(ctx, request);
    if (typeof token !== 'string') {
      const scope = token.ok || token.response.status !== 401 ? undefined : await neededScope(ctx, entry, request, options);
      return resourceChallenge(token, entry, scope);
    }
    const read = lookupToken(ctx, token, true);
    const found = isPending(read) ? await read : read;
    const now = ctx.clock.now();
    // A personal access token (no audience) is accepted by every resource, as an OAuth token issued without one.
    const verified =
      found === null
        ? null
        : found.token.kind === 'personal'
          ? verifyPersonal(ctx, found, now, report)
          : found.token.kind === 'access' &&
              found.token.revokedAt === null &&
              found.grant.revokedAt === null &&
              (found.token.expiresAt === null || now < found.token.expiresAt) &&
              audienceAllows(found.token, entry.resource)
            ? verifiedAccess(ctx, found.token, found.grant)
            : null;
    if (!verified) {
      const refused = challenge(ctx, 401, 'invalid_token', 'The access token is invalid, expired or revoked.');
      return resourceChallenge(refused, entry, await neededScope(ctx, entry, request, options));
    }
    if (entry.requiredScope) {
      const needed = (await neededScope(ctx, entry, request, options))!;
      if (!covers(verified.scope, needed)) {
        return resourceChallenge(
          challenge(ctx, 403, 'insufficient_scope', 'The access token does not allow this request.', needed.join(' ')),
          entry,
          undefined,
        );
      }
    } else {
      const allowed = ctx.scopes.check(verified.scope, request);
      if (!allowed.ok) {
        return resourceChallenge(
          challenge(ctx, 403, 'insufficient_scope', 'The access token does not allow this request method.', allowed.needed),
          entry,
          undefined,
        );
      }
    }
    return { ok: true, token: verified };
  } catch (error) {
    report(error);
    return unavailable();
  }
}
