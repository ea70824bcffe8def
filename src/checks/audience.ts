import type { TokenRecord } from '../storage/types.js';

/**
 * Whether an access token may be used at `resource` (RFC 8707 §2, audience restriction): a
 * token issued for resources only at those (compared as exact strings), a token issued without
 * `resource` at any resource, as before resource indicators existed.
 * @group Resource
 */
export function audienceAllows(token: Readonly<Pick<TokenRecord, 'audience'>>, resource: string): boolean {
  const audience = token.audience;
  return audience === undefined || audience.includes(resource);
}

/** Longest resource indicator accepted: nothing unbounded reaches the host's check or storage. */
const MAX_LENGTH = 2048;
// An absolute URI (RFC 3986 §4.3): a scheme, then printable ASCII but `#`: no fragment (RFC 8707 §2).
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:[\x21\x22\x24-\x7e]*$/;

/** Whether `value` is a resource indicator: an absolute URI without a fragment (RFC 8707 §2), at most 2048 characters. */
export function isResourceIndicator(value: string): boolean {
  return value.length <= MAX_LENGTH && ABSOLUTE_URI.test(value) && URL.canParse(value);
}
