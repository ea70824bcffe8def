/**
 * Protocol errors (`OAuthError`) and configuration errors (`ConfigError`).
 * Core methods never throw an `OAuthError` at their callers: they turn it into a decision or a
 * response. `ConfigError` is thrown once, by the constructor.
 */

const brand = Symbol.for('authgate.OAuthError');

/**
 * Error codes of RFC 6749 §4.1.2.1, §5.2, RFC 6750 §3.1, RFC 7009 §2.2.1, RFC 8707 §2 and OIDC prompt errors.
 * @group Authorization
 * @group Token
 */
export type OAuthErrorCode =
  // RFC 6749 §4.1.2.1 / §5.2
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable'
  // RFC 8707 §2: a `resource` that is malformed or that this server does not issue for (status 400)
  | 'invalid_target'
  // RFC 8628 §3.5: the device authorization grant's answers while polling
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  // RFC 6750 §3.1
  | 'invalid_token'
  | 'insufficient_scope'
  // OpenID Connect Core §3.1.2.6, for `prompt=none` (docs/reference.md#prompt-and-sign-in-requirements)
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  | 'account_selection_required'
  // OpenID Connect Core §3.1.2.6, §6: request objects and `registration` are not supported
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'registration_not_supported'
  // error pages (docs/reference.md#error-index)
  | 'invalid_redirect_uri'
  // RFC 9449 §5, §8: a DPoP proof refused at the token endpoint, or one without the server's nonce
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce';

/** What RFC 6749 §5.2 allows in `error_description`: %x20-21 / %x23-5B / %x5D-7E. */
const DESCRIPTION_SAFE = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * A description in the character set RFC 6749 §5.2 (and RFC 7591 §3.2.2) allows: returned as it
 * is when it fits (every description this package writes does); otherwise `"` becomes `'`, `\`
 * becomes `/`, whitespace a space, and anything else outside printable ASCII `?`. So text from
 * elsewhere (a schema library's message, a host's) can never put a non-ASCII description on
 * the wire.
 */
export function asciiDescription(text: string): string {
  if (DESCRIPTION_SAFE.test(text)) return text;
  return text
    .replace(/"/g, "'")
    .replace(/\\/g, '/')
    .replace(/\s/g, ' ')
    .replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '?');
}

/**
 * A protocol error with a client-safe description (ASCII, `asciiDescription`).
 * @group Authorization
 * @group Token
 */
export class OAuthError extends Error {
  readonly [brand] = true;
  readonly code: OAuthErrorCode;
  readonly description: string;
  readonly status: number;
  /** Response headers the error asks for beyond the usual ones (a `DPoP-Nonce`, RFC 9449 §8). Absent: none. */
  headers?: Record<string, string>;

  constructor(code: OAuthErrorCode, description: string, status = 400) {
    super(`${code}: ${description}`);
    this.name = 'OAuthError';
    this.code = code;
    this.description = asciiDescription(description);
    this.status = status;
  }
}

/**
 * `invalid_client` (401, RFC 6749 §5.2): client authentication failed, or a client that must
 * authenticate sent nothing. One description whatever the cause, so the answer tells nothing of
 * which. Built only on failure: an Error captures a stack trace, which every request would pay
 * for otherwise (see BENCHMARKS.md). `jsonFailure` adds the Basic challenge when the client
 * tried HTTP Basic.
 */
export function invalidClient(): OAuthError {
  return new OAuthError('invalid_client', 'Client authentication failed.', 401);
}

/**
 * Where an error of an authorization step may be sent back to: the client's callback, once it is
 * verified (a stored request, or a new one past its client, `redirect_uri` and scope checks),
 * with the `state` to echo (`undefined`: none). The response mode follows the response type: the
 * fragment for `token` (RFC 6749 §4.2.2.1), the query otherwise (§4.1.2.1), unless an OpenID
 * Connect request asked for another (`openid.responseMode`).
 */
export interface ErrorCallback {
  redirectUri: string;
  state?: string | undefined;
  responseType?: string | undefined;
  /** An OpenID Connect request's response mode: `form_post` posts the error too, `fragment` puts it in the fragment. */
  openid?: { responseMode?: 'form_post' | 'fragment' } | undefined;
}

/**
 * A protocol error of the authorization endpoint or of one of its interaction steps. Whether it
 * is redirected is part of the error: it carries the verified callback it goes back to, or
 * `null` for an error page, which is the only answer before the client and its `redirect_uri`
 * are verified (RFC 6749 §3.1.2.4, §4.1.2.1) and for an invalid scope. Returned rather than
 * thrown, and cheap to make: not an `Error`, so no stack is captured.
 */
export class AuthorizeError {
  readonly code: OAuthErrorCode;
  /** Client-safe and ASCII (`asciiDescription`). */
  readonly description: string;
  /** The callback the error is redirected to, or `null`: an error page (status 400). */
  readonly callback: ErrorCallback | null;

  constructor(code: OAuthErrorCode, description: string, callback: ErrorCallback | null) {
    this.code = code;
    this.description = asciiDescription(description);
    this.callback = callback;
  }
}

/**
 * Brand check that also works across copies of the package.
 * @group Authorization
 * @group Token
 */
export function isOAuthError(value: unknown): value is OAuthError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

/**
 * A bad option given to `new AuthorizationServer()`. The message names the option.
 * @group Authorization
 */
export class ConfigError extends Error {
  /** The option path, e.g. `lifetimes.code`. */
  readonly option: string;

  constructor(option: string, expected: string) {
    super(`authgate: option "${option}": ${expected}`);
    this.name = 'ConfigError';
    this.option = option;
  }
}
