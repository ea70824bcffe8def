import { OAuthError } from '../errors.js';
import { isMethod } from '../http.js';
import type { OAuthRequest } from '../types.js';

/** Reject a non-POST request before reading anything (RFC 6749 §3.2, RFC 7009 §2.1, RFC 7662 §2.1). */
export function requirePost(request: OAuthRequest): void {
  if (!isMethod(request, 'POST')) {
    throw new OAuthError('invalid_request', 'This endpoint only accepts POST requests.', 405);
  }
}
