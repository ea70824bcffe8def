/**
 * Redirect URIs. At the endpoints the comparison is an exact string comparison with the
 * registered value, with no case folding or normalisation (RFC 9700 §4.1.3, RFC 3986 §6.2.1), so
 * that nothing here decides what "the same URI" means. Registration refuses what could never be
 * safe to redirect to.
 */
import { CONTROL, isHttpsOrLoopback } from '../rules.js';
import type { AuthorizeDecision } from '../types.js';

/** Response parameters a registered URI may not carry, so none can be smuggled into a response. */
const RESERVED = [
  'code',
  'state',
  'iss',
  'error',
  'error_description',
  'access_token',
  'token_type',
  'expires_in',
  'scope',
  'refresh_token',
];

/** A private-use URI scheme of a native app (RFC 8252 §7.1): reverse domain notation, with a dot. */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;

/**
 * Why a URI can't be registered, or `null` when it can. Public (native) clients may also
 * register a private-use scheme such as `com.example.app:/callback` (RFC 8252 §7.1).
 */
export function redirectUriProblem(uri: string, isPublic = false): string | null {
  if (uri.length > 2000) return 'is longer than 2000 characters';
  if (/[\s\\]/.test(uri) || CONTROL.test(uri)) return 'contains whitespace, control characters or backslashes';
  if (!URL.canParse(uri)) return 'is not an absolute URL';
  const url = new URL(uri);
  const privateUse = isPublic && PRIVATE_USE_SCHEME.test(url.protocol);
  if (!isHttpsOrLoopback(url) && !privateUse) {
    return 'must use https (http only for localhost, 127.0.0.1 or [::1])';
  }
  if (uri.includes('#')) return 'must not contain a fragment (RFC 6749 section 3.1.2)';
  const authority = uri.slice(url.protocol.length + 2);
  const slash = authority.indexOf('/');
  if (url.username || url.password || (slash < 0 ? authority : authority.slice(0, slash)).includes('@')) {
    return 'must not contain user information';
  }
  if (uri.includes('*')) return 'must not contain wildcards';
  for (const name of url.searchParams.keys()) {
    if (RESERVED.includes(name)) return `must not carry the response parameter '${name}' in its query`;
  }
  if (NOT_ASCII.test(uri)) return notAscii(url.href, isPublic);
  return null;
}

const NOT_ASCII = /[^\x00-\x7f]/;

/**
 * Why a URL that is not ASCII is refused, naming its ASCII form (punycode host, percent-encoded
 * path and query, as WHATWG URL writes it) when that form could be registered instead. It is
 * refused rather than stored converted: redirect URIs are compared exactly (RFC 9700 §4.1.3), so
 * a client configured with the Unicode form would never match a stored ASCII one, and the
 * developer learns it here rather than the user at the first authorization. A `Location` header
 * holds only ASCII.
 */
function notAscii(href: string, isPublic: boolean): string {
  const registrable = !NOT_ASCII.test(href) && redirectUriProblem(href, isPublic) === null;
  return registrable ? `must be ASCII: register ${href} instead` : 'must be ASCII (punycode host, percent-encoded path and query)';
}

const LOOPBACK_URI = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(?::(\d{1,5}))?(\/[^#]*)?$/;

function loopbackParts(uri: string): { host: string; rest: string } | null {
  const match = LOOPBACK_URI.exec(uri);
  const host = match?.[1]; // always there when the pattern matches
  if (!match || host === undefined || (match[2] !== undefined && Number(match[2]) > 65535)) return null;
  return { host, rest: match[3] ?? '' };
}

/**
 * Whether a requested `redirect_uri` is the registered one: the exact same string, or, for a
 * public client with a loopback callback, the same URI on any port (RFC 8252 §7.3).
 */
export function redirectUriMatches(registered: string, requested: string, loopbackAnyPort: boolean): boolean {
  if (requested === registered) return true;
  if (!loopbackAnyPort) return false;
  const a = loopbackParts(registered);
  const b = loopbackParts(requested);
  return a !== null && b !== null && a.host === b.host && a.rest === b.rest;
}

/**
 * Whether a requested `redirect_uri` is one of `client`'s: any of a metadata document's
 * `redirect_uris`, exactly; otherwise the registered one, as `redirectUriMatches` compares.
 */
export function clientRedirectUriMatches(
  client: { redirectUri: string; redirectUris?: string[] },
  requested: string,
  loopbackAnyPort: boolean,
): boolean {
  return client.redirectUris ? client.redirectUris.includes(requested) : redirectUriMatches(client.redirectUri, requested, loopbackAnyPort);
}

// What the form serializer leaves as it is (WHATWG application/x-www-form-urlencoded).
const FORM_SAFE = /^[A-Za-z0-9*\-._]*$/;

/** A name or value encoded exactly as `URLSearchParams` encodes it; codes and tokens pass as they are. */
export function formEncode(value: string): string {
  return FORM_SAFE.test(value) ? value : new URLSearchParams([['', value]]).toString().slice(1);
}

/**
 * The registered URI with response parameters added: in the query (keeping the registered query
 * byte for byte) or in the fragment. Every name and value is encoded as `URLSearchParams`
 * encodes it, so no value can add a parameter or a header line.
 */
export function redirectTo(registered: string, params: Record<string, string | undefined>, mode: 'query' | 'fragment'): string {
  if (!HEADER_SAFE.test(registered)) registered = asciiUrl(registered);
  let encoded = '';
  for (const name of Object.keys(params)) {
    const value = params[name];
    if (value !== undefined) encoded += `${encoded ? '&' : ''}${formEncode(name)}=${formEncode(value)}`;
  }
  if (mode === 'fragment') return `${registered}#${encoded}`;
  const q = registered.indexOf('?');
  if (q < 0) return `${registered}?${encoded}`;
  return q === registered.length - 1 ? `${registered}${encoded}` : `${registered}&${encoded}`;
}

/**
 * The `form_post` decision (OAuth 2.0 Form Post Response Mode §2) of an authorization response:
 * the same parameters `redirectTo` puts in the query, posted to the registered URI instead.
 */
export function formPost(registered: string, params: Record<string, string | undefined>): AuthorizeDecision {
  const fields: Record<string, string> = {};
  for (const name of Object.keys(params)) {
    const value = params[name];
    if (value !== undefined) fields[name] = value;
  }
  return { type: 'form_post', action: HEADER_SAFE.test(registered) ? registered : asciiUrl(registered), fields };
}

// What a Location header carries as it is: visible ASCII.
const HEADER_SAFE = /^[\x21-\x7e]*$/;
const NOT_HEADER_SAFE = /[^\x21-\x7e]+/g;
const utf8 = new TextEncoder();

/**
 * A registered URI that is not visible ASCII (registration refuses those now; an earlier version
 * stored them) in a form a `Location` header can carry: what WHATWG URL makes of it (punycode
 * host, percent-encoded path and query), the place a browser would go to anyway, then anything
 * still outside visible ASCII percent-encoded as UTF-8. Never throws (a lone surrogate encodes
 * as U+FFFD), so a stored URL can never turn a redirect into a 500.
 */
export function asciiUrl(uri: string): string {
  let out = uri;
  try {
    if (URL.canParse(uri)) out = new URL(uri).href;
  } catch {
    // keep `uri`: encoded below
  }
  return out.replace(NOT_HEADER_SAFE, (run) => {
    let escaped = '';
    for (const byte of utf8.encode(run)) escaped += `%${byte < 16 ? '0' : ''}${byte.toString(16).toUpperCase()}`;
    return escaped;
  });
}
