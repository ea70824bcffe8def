/**
 * A client's OpenID Connect fields (OpenID Connect Dynamic Client Registration 1.0 §2): checked
 * against the provider when a client registers (`registerClient`, dynamic registration, a client
 * ID metadata document), and their wire names. Apart from provider.ts, which looks clients up,
 * so that the client-metadata room can use it without a cycle.
 */
import type { OpenIdProvider } from '../context.js';
import type { SigningAlgorithm } from '../keys/jwk.js';
import type { ClientOpenIdSection } from '../storage/types.js';
import { redirectUriProblem } from '../checks/redirect-uri.js';

/**
 * The OpenID Connect fields a client registers with (OpenID Connect Dynamic Client Registration
 * 1.0 §2), as `registerClient` and `updateClient` take them.
 */
export interface ClientOpenIdInput {
  /** `id_token_signed_response_alg`: one of the algorithms of `openid.signingKeys`; default RS256. */
  idTokenSignedResponseAlg?: SigningAlgorithm;
  /** `default_max_age`, seconds: the `max_age` of the client's requests that send none. */
  defaultMaxAge?: number;
  /** `require_auth_time`: accepted; every ID token has `auth_time` anyway. */
  requireAuthTime?: boolean;
  /** `subject_type`: `pairwise` needs the `openid.pairwise` option. Default public. */
  subjectType?: 'public' | 'pairwise';
  /**
   * `post_logout_redirect_uris` (RP-Initiated Logout 1.0 §3.1): where the end-session endpoint
   * may send the browser after a sign-out, compared as exact strings. Checked like the callback
   * URL (https, http only on loopback, no fragment, no user information, no wildcard); at most 10.
   */
  postLogoutRedirectUris?: string[];
}

/** The most `postLogoutRedirectUris` a client may register. */
export const MAX_POST_LOGOUT_REDIRECT_URIS = 10;

/** What is wrong with a client's `postLogoutRedirectUris`, or `null`. */
function postLogoutProblem(value: unknown): string | null {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_POST_LOGOUT_REDIRECT_URIS)
    return `openid.postLogoutRedirectUris must be a list of 1 to ${MAX_POST_LOGOUT_REDIRECT_URIS} URLs.`;
  if (new Set(value).size !== value.length) return 'openid.postLogoutRedirectUris lists a URL twice.';
  for (const uri of value) {
    if (typeof uri !== 'string') return 'openid.postLogoutRedirectUris must be a list of URLs (strings).';
    const problem = redirectUriProblem(uri);
    if (problem) return `openid.postLogoutRedirectUris: ${JSON.stringify(uri.slice(0, 100))} ${problem}.`;
  }
  return null;
}

const MAX_AGE_LIMIT = 10 * 365 * 24 * 3600;

/**
 * A client's OpenID Connect section from what it registered with, or what is wrong with it (the
 * message of the `invalid_request` or `invalid_client_metadata`). Only the fields given are
 * kept; an empty section is none.
 */
export function clientOpenIdSection(provider: OpenIdProvider | undefined, input: unknown): ClientOpenIdSection | undefined | string {
  if (!provider) return 'OpenID Connect is not enabled on this server (the openid option).';
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return 'openid must be an object.';
  const {
    idTokenSignedResponseAlg: alg,
    defaultMaxAge,
    requireAuthTime,
    subjectType,
    postLogoutRedirectUris,
    ...rest
  } = input as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) return `openid.${unknown} is not a client field this server knows.`;
  const section: ClientOpenIdSection = {};
  if (alg !== undefined) {
    if (typeof alg !== 'string' || !provider.keys.signs(alg))
      return `openid.idTokenSignedResponseAlg must be one of ${provider.keys.algorithms.join(', ')} (the algorithms of the signing keys).`;
    section.idTokenSignedResponseAlg = alg;
  }
  if (defaultMaxAge !== undefined) {
    if (typeof defaultMaxAge !== 'number' || !Number.isInteger(defaultMaxAge) || defaultMaxAge < 0 || defaultMaxAge > MAX_AGE_LIMIT)
      return 'openid.defaultMaxAge must be a whole number of seconds.';
    section.defaultMaxAge = defaultMaxAge;
  }
  if (requireAuthTime !== undefined) {
    if (typeof requireAuthTime !== 'boolean') return 'openid.requireAuthTime must be true or false.';
    section.requireAuthTime = requireAuthTime;
  }
  if (subjectType !== undefined) {
    if (subjectType !== 'public' && subjectType !== 'pairwise') return "openid.subjectType must be 'public' or 'pairwise'.";
    if (!provider.subjectTypes.includes(subjectType)) return 'openid.subjectType pairwise needs the openid.pairwise option.';
    section.subjectType = subjectType;
  }
  if (postLogoutRedirectUris !== undefined) {
    const problem = postLogoutProblem(postLogoutRedirectUris);
    if (problem) return problem;
    section.postLogoutRedirectUris = [...(postLogoutRedirectUris as string[])];
  }
  return Object.keys(section).length > 0 ? section : undefined;
}

/** The wire names of the client fields (OpenID Connect Dynamic Client Registration 1.0 §2), for dynamic registration. */
const WIRE_FIELDS = {
  id_token_signed_response_alg: 'idTokenSignedResponseAlg',
  default_max_age: 'defaultMaxAge',
  require_auth_time: 'requireAuthTime',
  subject_type: 'subjectType',
  post_logout_redirect_uris: 'postLogoutRedirectUris',
} as const;

/** The OpenID Connect fields of a dynamic registration's metadata, by `registerClient`'s names; `undefined` when none is sent. */
export function openIdRegistrationInput(metadata: Record<string, unknown>): Record<string, unknown> | undefined {
  const input: Record<string, unknown> = {};
  for (const [wire, name] of Object.entries(WIRE_FIELDS)) if (metadata[wire] !== undefined) input[name] = metadata[wire];
  return Object.keys(input).length > 0 ? input : undefined;
}

/** A client's OpenID Connect section by its wire names, for the registration response (RFC 7591 §3.2.1). */
export function openIdRegistrationOutput(section: ClientOpenIdSection | undefined | string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (section === undefined || typeof section === 'string') return out;
  for (const [wire, name] of Object.entries(WIRE_FIELDS)) if (section[name] !== undefined) out[wire] = section[name];
  return out;
}
