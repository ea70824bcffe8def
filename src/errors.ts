/**
 * Protocol errors (`OAuthError`) and configuration errors (`ConfigError`).
 * Core methods never throw an `OAuthError` at their callers: they turn it into a decision or a
 * response. `ConfigError` is thrown once, by the constructor.
 */

const brand = Symbol.for('authgate.OAuthError');

/** Error codes of RFC 6749 §4.1.2.1, §5.2, RFC 6750 §3.1, RFC 7009 §2.2.1 and OIDC prompt errors. */
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
  // RFC 6750 §3.1
  | 'invalid_token'
  | 'insufficient_scope'
  // OpenID Connect Core §3.1.2.6, used by SPEC 2.6 for `prompt=none`
  | 'login_required'
  | 'consent_required'
  // error pages (DESIGN.md, pinned details)
  | 'invalid_redirect_uri';

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
  return text.replace(/"/g, "'").replace(/\\/g, '/').replace(/\s/g, ' ').replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '?');
}

/** A protocol error with a client-safe description (ASCII, `asciiDescription`). */
export class OAuthError extends Error {
  readonly [brand] = true;
  readonly code: OAuthErrorCode;
  readonly description: string;
  readonly status: number;

  constructor(code: OAuthErrorCode, description: string, status = 400) {
    super(`${code}: ${description}`);
    this.name = 'OAuthError';
    this.code = code;
    this.description = asciiDescription(description);
    this.status = status;
  }
}

/** Brand check that also works across copies of the package. */
export function isOAuthError(value: unknown): value is OAuthError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

/** A bad option given to `new AuthorizationServer()`. The message names the option. */
export class ConfigError extends Error {
  /** The option path, e.g. `lifetimes.code`. */
  readonly option: string;

  constructor(option: string, expected: string) {
    super(`authgate: option "${option}": ${expected}`);
    this.name = 'ConfigError';
    this.option = option;
  }
}
