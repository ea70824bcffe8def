import type { Context } from './context.js';
import { asciiDescription, isOAuthError, OAuthError } from './errors.js';
import { errorResponse, header } from './http.js';
import type { AuthorizeDecision, OAuthRequest, OAuthResponse } from './types.js';

/**
 * What an endpoint answers when one of its steps throws. One pattern for every endpoint: its
 * function holds its whole body in one `try`, and its `catch` answers with one of these, so it
 * never throws nor rejects and the server's method only forwards to it:
 *
 * - the JSON endpoints (token, revoke, introspect, register, and the metadata and JWKS
 *   documents): `catch (error) { return jsonFailure(ctx, request, error, status) }`, with
 *   status 500, or 503 where a retry is the right reaction (revocation);
 * - the authorization steps (authorize, resume, approve, deny, the browser binding check):
 *   `catch (error) { return pageFailure(ctx, error) }`, an error page;
 * - the bearer check (`authenticate`): its own 503 (RFC 6750 §3), the fault handed to `onError`.
 *
 * The `try` sits inside the endpoint rather than in a wrapper around it: a wrapper is one more
 * promise on every request (see BENCHMARKS.md).
 */

/** Hand an unexpected error (a store or a host hook failing) to the `onError` option. */
export function reportFault(ctx: Context, error: unknown): void {
  try {
    ctx.options.onError?.(error);
  } catch {
    // A failing hook must not turn a clean 500 into a crash.
  }
}

/** An error page: the browser stays here, with no redirect (RFC 6749 §4.1.2.1). The description is made ASCII (RFC 6749 §5.2). */
export function errorPage(error: string, description: string, status = 400): AuthorizeDecision {
  return { type: 'error', status, error, description: asciiDescription(description) };
}

/** The error page for what an authorization step threw: its own OAuth error, or a 500. */
export function pageFailure(ctx: Context, error: unknown): AuthorizeDecision {
  if (isOAuthError(error)) return errorPage(error.code, error.description);
  reportFault(ctx, error);
  return errorPage('server_error', 'The server could not complete the request. Try again later.', 500);
}

/**
 * The JSON answer to what a JSON endpoint threw: an OAuth error as itself (RFC 6749 §5.2), with
 * `Allow` on a 405 and a Basic challenge when the client tried HTTP Basic; anything else is
 * reported and answered `faultStatus` (500, or 503 where a retry is the right reaction).
 * `request` is `undefined` for the metadata documents, which take no credentials.
 */
export function jsonFailure(ctx: Context, request: OAuthRequest | undefined, error: unknown, faultStatus: number): OAuthResponse {
  if (isOAuthError(error)) {
    const headers: Record<string, string> = {};
    if (error.status === 405) headers['allow'] = 'POST';
    // RFC 6749 §5.2: a client that tried HTTP Basic gets a Basic challenge back; one that tried
    // a scheme this server does not support gets the one it does (RFC 9110 §11.6.1).
    if (error.code === 'invalid_client' && request && triedHeaderAuthentication(header(request, 'authorization'))) {
      headers['www-authenticate'] = `Basic realm="${ctx.options.realm}"`;
    }
    if (error.headers) Object.assign(headers, error.headers);
    return errorResponse(error, headers);
  }
  reportFault(ctx, error);
  const code = faultStatus === 503 ? 'temporarily_unavailable' : 'server_error';
  return errorResponse(new OAuthError(code, 'The server could not complete the request. Try again later.', faultStatus));
}

/** Whether an `Authorization` value tried client authentication: anything but nothing or `Bearer`. */
function triedHeaderAuthentication(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== '' && !/^bearer(\s|$)/i.test(value);
}
