import { bindRequest } from './browser-binding.js';
import { openIdParameters } from '../oidc/provider.js';
import { findClient, isDocumentClientId } from './clients.js';
import { challengeSeen, parseChallenge } from './pkce.js';
import { clientRedirectUriMatches, formPost, redirectTo } from './redirect-uri.js';
import { isResourceProblem, requestedResources } from './resource.js';
import type { Context } from '../context.js';
import { isThumbprint } from '../dpop/binding.js';
import { errorPage } from '../failure.js';
import { AuthorizeError, OAuthError, type ErrorCallback } from '../errors.js';
import { single, type Params } from '../http.js';
import { CONTROL, plausibleId } from '../rules.js';
import type { AuthorizationRequestRecord, ClientRecord } from '../storage/types.js';
import type { AuthorizeDecision, OAuthRequest } from '../types.js';

/**
 * The authorization request (RFC 6749 §4.1.1, §4.2.1): parsed and checked, and where its errors
 * go. The order of the checks decides that: the client and its `redirect_uri` first, and until
 * both are verified every error is an error page, never a redirect (RFC 6749 §3.1.2.4,
 * §4.1.2.1); then the scope, also an error page; only then do errors go back to the client's
 * callback. Each error says which (`AuthorizeError.callback`), and `errorDecision` is the one
 * place that turns it into the answer. The checks, their order and their answers are listed in
 * docs/reference.md#authorization-endpoint.
 */

const PROMPTS: readonly string[] = ['none', 'login', 'select_account'];
/** OpenID Connect requests (scope `openid`) also take `consent` (Core §3.1.2.1). */
const OPENID_PROMPTS: readonly string[] = ['none', 'login', 'consent', 'select_account'];
const SECONDS = /^\d{1,10}$/;
const ACCOUNT_HINT = /^[0-9A-Fa-f-]{1,36}$/;
// Module-level, so the checks below allocate no closure per request.
const isPrompt = (p: string) => PROMPTS.includes(p);
const isOpenIdPrompt = (p: string) => OPENID_PROMPTS.includes(p);
const isNone = (p: string) => p === 'none';

/** The parameters `parseOptionalParameters` reads. */
export type OptionalParameter = 'state' | 'prompt' | 'max_auth_age' | 'i';

/** The optional parameters of an authorization request, checked, in the request record's names. */
export interface OptionalParameters {
  state?: string;
  /** The `prompt` values; `['select_account']` when none was sent. */
  prompt: string[];
  /** `max_auth_age`, in seconds. */
  maxAuthAge?: number;
  /** The `i` hint: the start of the expected account's uuid. */
  accountHint?: string;
}

/** Why the optional parameters were refused: the first problem found, and its parameter. */
export interface ParameterProblem {
  parameter: OptionalParameter;
  /** What is wrong, to follow "The request is malformed: " in the description. */
  message: string;
}

const problem = (parameter: OptionalParameter, message: string): ParameterProblem => ({ parameter, message });

/**
 * Whether `value` is longer than `max` code points (a surrogate pair counts as one, a lone
 * surrogate as one too), the measure these bounds have always had: a state of 2048 emoji is
 * accepted. Counted only past `max` UTF-16 units, which no shorter string reaches.
 */
function longerThan(value: string, max: number): boolean {
  const units = value.length;
  if (units <= max) return false;
  let length = units;
  for (let i = 0; i < units - 1; i++) {
    if ((value.charCodeAt(i) & 0xfc00) === 0xd800 && (value.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      length--;
      i++;
    }
  }
  return length > max;
}

/**
 * Check `state`, `prompt`, `max_auth_age` and `i` (each sent at most once, empty ones left out):
 * the checked values, or the first problem, the parameters taken in that order. So a malformed
 * `state` is always the problem reported when there is one, and the caller knows not to echo it.
 * The message texts are fixed: hosts and clients may match on them.
 */
export function parseOptionalParameters(
  values: Partial<Record<OptionalParameter, string>>,
  openid = false,
): OptionalParameters | ParameterProblem {
  const { state, prompt, max_auth_age: maxAge, i } = values;
  if (state !== undefined) {
    if (longerThan(state, 2048)) return problem('state', 'state is longer than 2048 characters');
    if (CONTROL.test(state)) return problem('state', 'state contains control characters');
  }
  let prompts: string[];
  if (prompt === undefined) prompts = ['select_account'];
  else {
    // The wording of the schema library this check once was, kept as it was.
    if (longerThan(prompt, 200)) return problem('prompt', 'Too big: expected string to have <=200 characters');
    prompts = prompt.split(' ');
    if (!prompts.every(openid ? isOpenIdPrompt : isPrompt)) return problem('prompt', 'prompt holds an unknown value');
    if (prompts.includes('none') && !prompts.every(isNone)) return problem('prompt', 'prompt=none cannot be combined with other values');
  }
  if (maxAge !== undefined && !SECONDS.test(maxAge))
    return problem('max_auth_age', 'max_auth_age must be a non-negative integer number of seconds');
  if (i !== undefined && !ACCOUNT_HINT.test(i)) return problem('i', 'i must be the start of an account UUID');
  const parsed: OptionalParameters = { prompt: prompts };
  if (state !== undefined) parsed.state = state;
  if (maxAge !== undefined) parsed.maxAuthAge = Number(maxAge);
  if (i !== undefined) parsed.accountHint = i;
  return parsed;
}

const NO_CLIENT_ID = new AuthorizeError('invalid_request', 'The request must name the application exactly once (client_id).', null);

/** The error page for a client that is not (or no longer) registered. */
export const UNKNOWN_CLIENT = new AuthorizeError('invalid_client', 'The application (client_id) is not known.', null);

/** A pending request whose callback URL the client no longer has (`updateClient`): nothing is sent there. */
export const CALLBACK_CHANGED = new AuthorizeError(
  'invalid_request',
  "The application's callback URL changed after this authorization started. Start again from the application.",
  null,
);

/**
 * The request's client as it is now, or why the request cannot go on: the client is gone, or its
 * callback URL changed (`updateClient`) and the one the request carries is no longer registered,
 * so nothing (not even an error) is sent there (docs/reference.md#managing-clients).
 */
export async function currentClient(
  ctx: Context,
  req: AuthorizationRequestRecord,
  read?: ClientRecord | null,
): Promise<ClientRecord | AuthorizeError> {
  // `read`: the client as the store answered it with the interaction (`findInteractionAndClient`);
  // a client ID metadata document client is never stored, and is found as always.
  const client = read !== undefined && !isDocumentClientId(ctx, req.clientId) ? read : await findClient(ctx, req.clientId);
  if (!client) return UNKNOWN_CLIENT;
  return clientRedirectUriMatches(client, req.redirectUri, client.secretHash === null) ? client : CALLBACK_CHANGED;
}

/**
 * The `client_id` to look up, or the error page when it is missing or sent more than once. A
 * value that no client id can be is answered as an unknown client without asking storage.
 */
export function requestedClientId(params: Params): string | AuthorizeError {
  const ids = params.get('client_id');
  if (!ids || ids.length !== 1 || !ids[0]) return NO_CLIENT_ID;
  return plausibleId(ids[0]) ? ids[0] : UNKNOWN_CLIENT;
}

const INVALID_REDIRECT_URI = new AuthorizeError(
  'invalid_redirect_uri',
  'The redirect URI is not valid: it must equal the callback URL registered for this application.',
  null,
);

/** The redirected error for a PKCE challenge this client used before. */
export const reusedChallenge = (callback: ErrorCallback) =>
  new AuthorizeError(
    'invalid_request',
    'This code_challenge was used before: send a fresh one with every authorization request.',
    callback,
  );

/**
 * The callback of a request whose client, `redirect_uri` and scope are verified, for an error
 * found before its record exists: its `state` when sent once (unless `echoState` is false), and
 * its `response_type` when sent once, which chooses query or fragment. Built only for an error.
 */
function callbackOf(redirectUri: string, params: Params, echoState = true): ErrorCallback {
  const states = params.get('state');
  const types = params.get('response_type');
  return {
    redirectUri,
    state: echoState && states?.length === 1 && states[0] ? states[0] : undefined,
    responseType: types?.length === 1 ? types[0] : undefined,
  };
}

const OPTIONAL = ['state', 'prompt', 'max_auth_age', 'i', 'code_challenge', 'code_challenge_method'] as const;

/** Why a DPoP-only client is refused `response_type=token` (`dpopOnlyImplicit`). */
export const DPOP_ONLY =
  'This application uses DPoP-bound access tokens only, which response_type=token cannot issue: use response_type=code.';

/**
 * Whether `client` is registered for DPoP-bound access tokens only (RFC 9449 §5.2) and the request
 * is for the implicit flow, whose bearer token binds nothing to a key (no proof comes with a
 * redirect): refused as a response type it may not use (`unauthorized_client`), at the request
 * and again when a step of it stored elsewhere (DPoP off there) is resumed or approved. Ignored
 * while DPoP is off, as at the token endpoint.
 */
export function dpopOnlyImplicit(ctx: Context, client: ClientRecord, responseType: string): boolean {
  return responseType === 'token' && client.dpopBoundAccessTokens === true && ctx.dpop !== undefined;
}

/**
 * The rest of an authorization request of `client` (already found by `requestedClientId`): the
 * record every later step carries, bound to the browser that sent it, or the first error.
 */
export function parseAuthorizationRequest(
  ctx: Context,
  client: ClientRecord,
  params: Params,
  request: OAuthRequest,
): AuthorizationRequestRecord | AuthorizeError {
  const redirectUris = params.get('redirect_uri');
  const redirectUri = redirectUris?.length === 1 ? redirectUris[0] : undefined;
  const isPublic = client.secretHash === null;
  if (redirectUri === undefined || !clientRedirectUriMatches(client, redirectUri, isPublic)) return INVALID_REDIRECT_URI;

  const scopes = params.get('scope');
  const scope = scopes && scopes.length > 1 ? null : ctx.scopes.parse(scopes?.[0] || undefined);
  if (!scope) {
    return new AuthorizeError(
      'invalid_scope',
      `The requested scope is invalid, unknown or malformed. Use ${ctx.scopes.values.length === 2 && ctx.scopes.values[0] === 'read' ? "'read' or 'read write'" : 'values this server knows'}.`,
      null,
    );
  }

  // From here on the callback (`redirectUri`) is trusted: errors go back to it.
  const responseTypes = params.get('response_type');
  if (!responseTypes || responseTypes.length !== 1 || !responseTypes[0]) {
    return new AuthorizeError(
      'invalid_request',
      'The response_type parameter is missing or was sent more than once.',
      callbackOf(redirectUri, params),
    );
  }
  const responseType = responseTypes[0];
  if (responseType !== 'code' && responseType !== 'token') {
    return new AuthorizeError('unsupported_response_type', "The response_type must be 'code' or 'token'.", callbackOf(redirectUri, params));
  }
  if (responseType === 'token' && !ctx.options.allowImplicit) {
    // RFC 9700 §2.1.2: the implicit grant SHOULD NOT be used; the strict profile turns it off.
    // Not supported by this server at all: unsupported_response_type (RFC 6749 §4.2.2.1).
    return new AuthorizeError(
      'unsupported_response_type',
      'The implicit flow (response_type=token) is not enabled on this server.',
      callbackOf(redirectUri, params),
    );
  }
  // Supported here, but not for this client (e.g. a dynamically registered one): RFC 6749 §4.1.2.1,
  // §4.2.2.1. A client whose grant types leave out `authorization_code` (a device-only client, RFC
  // 8628) uses none of the authorization endpoint.
  if (
    (client.responseTypes && !client.responseTypes.includes(responseType)) ||
    (client.grantTypes && !client.grantTypes.includes('authorization_code'))
  ) {
    return new AuthorizeError(
      'unauthorized_client',
      `This application may not use response_type=${responseType}.`,
      callbackOf(redirectUri, params),
    );
  }
  if (dpopOnlyImplicit(ctx, client, responseType))
    return new AuthorizeError('unauthorized_client', DPOP_ONLY, callbackOf(redirectUri, params));

  let values: Partial<Record<(typeof OPTIONAL)[number], string>>;
  try {
    values = single(params, OPTIONAL);
  } catch (error) {
    // A parameter sent twice. The state is not echoed, whichever it was: a duplicated state
    // could be either value, and either could be forged.
    if (error instanceof OAuthError) return new AuthorizeError(error.code, error.description, callbackOf(redirectUri, params, false));
    throw error;
  }
  // OpenID Connect (the `openid` option, a scope with `openid`): its parameters, else none of them.
  const openid = ctx.openid && scope.includes('openid') ? openIdParameters(params, client, ctx.options.allowImplicit) : undefined;
  if (openid && 'error' in openid) return new AuthorizeError(openid.error, openid.description, callbackOf(redirectUri, params));
  // No ID token in a redirect here (no implicit nor hybrid flow, Core §3.2, §3.3): the code flow only.
  if (openid && responseType !== 'code')
    return new AuthorizeError(
      'unsupported_response_type',
      'OpenID Connect requests use response_type=code.',
      callbackOf(redirectUri, params),
    );
  const optional = parseOptionalParameters(values, openid !== undefined);
  if ('message' in optional) {
    return new AuthorizeError(
      'invalid_request',
      `The request is malformed: ${optional.message}.`,
      callbackOf(redirectUri, params, optional.parameter !== 'state'),
    );
  }
  let pkce: ReturnType<typeof parseChallenge> = null;
  try {
    pkce = responseType === 'code' ? parseChallenge(values.code_challenge, values.code_challenge_method, ctx.options.allowPlainPkce) : null;
  } catch (error) {
    if (error instanceof OAuthError) return new AuthorizeError(error.code, error.description, callbackOf(redirectUri, params));
    throw error;
  }
  if (responseType === 'code' && !pkce && (isPublic || ctx.options.requirePkce)) {
    // RFC 9700 §2.1.1: public clients MUST use PKCE; the strict profile requires it of every client.
    return new AuthorizeError(
      'invalid_request',
      'PKCE is required: send code_challenge with code_challenge_method=S256.',
      callbackOf(redirectUri, params),
    );
  }

  // RFC 8707 §2: one or more resources, each one this server issues for (`invalid_target`).
  const resources = requestedResources(ctx, params.get('resource'), undefined);
  if (isResourceProblem(resources)) return new AuthorizeError('invalid_target', resources.message, callbackOf(redirectUri, params));

  // RFC 9449 §10: `dpop_jkt` binds the code to a key, where DPoP is on (else ignored, as any unknown parameter).
  const dpopJkt = ctx.dpop && responseType === 'code' ? params.get('dpop_jkt') : undefined;
  if (dpopJkt !== undefined && (dpopJkt.length !== 1 || !isThumbprint(dpopJkt[0]))) {
    return new AuthorizeError(
      'invalid_request',
      'The request is malformed: dpop_jkt is not one JWK SHA-256 thumbprint.',
      callbackOf(redirectUri, params),
    );
  }
  const req: AuthorizationRequestRecord = { clientId: client.id, redirectUri, responseType, scope, prompt: optional.prompt };
  if (optional.state !== undefined) req.state = optional.state;
  if (optional.maxAuthAge !== undefined) req.maxAuthAge = optional.maxAuthAge;
  if (optional.accountHint !== undefined) req.accountHint = optional.accountHint;
  if (resources !== undefined) req.resources = resources;
  if (dpopJkt !== undefined) req.dpopJkt = dpopJkt[0];
  if (openid) {
    req.openid = openid.section;
    // `max_age` (or the client's `default_max_age`) is `max_auth_age` by another name: the stricter wins.
    const maxAge = openid.section.maxAge;
    if (maxAge !== undefined && (req.maxAuthAge === undefined || maxAge < req.maxAuthAge)) req.maxAuthAge = maxAge;
  }
  bindRequest(req, request); // the browser that sent it, carried by every interaction
  if (pkce) {
    // Refused here, before any page, when the challenge is known already; `issueCode` checks
    // again (and reports) for flows that were started side by side with the same challenge.
    if (ctx.options.rejectReusedPkceChallenge && challengeSeen(ctx, client.id, pkce.codeChallenge, false)) return reusedChallenge(req);
    req.codeChallenge = pkce.codeChallenge;
    req.codeChallengeMethod = pkce.codeChallengeMethod;
  }
  return req;
}

/**
 * The answer to an error of an authorization step: a redirect to its callback, with `error`,
 * `error_description`, the `state` it echoes and `iss` (RFC 9207), in the fragment for
 * `response_type=token` and in the query otherwise, or where the OpenID Connect request's
 * `response_mode` says (posted for `form_post`, in the fragment for `fragment`); or, without a
 * callback, an error page.
 */
export function errorDecision(ctx: Context, error: AuthorizeError): AuthorizeDecision {
  const callback = error.callback;
  if (!callback) return errorPage(error.code, error.description);
  const mode = callback.openid?.responseMode;
  if (mode === 'form_post') {
    const fields = { error: error.code, error_description: error.description, state: callback.state, iss: ctx.options.issuer };
    return formPost(callback.redirectUri, fields);
  }
  return {
    type: 'redirect',
    location: redirectTo(
      callback.redirectUri,
      { error: error.code, error_description: error.description, state: callback.state, iss: ctx.options.issuer },
      callback.responseType === 'token' || mode === 'fragment' ? 'fragment' : 'query',
    ),
  };
}
