/**
 * The wire pieces of a DPoP-bound token that are not the proof itself: the `DPoP` challenge of
 * a protected resource (RFC 9449 §7.1), the `cnf` confirmation claim (§6), the `token_type`
 * (§5) and the `dpop_jkt` authorization request parameter (§10).
 */
import { timingSafeEqual } from '../crypto.js';

/** The `token_type` of a DPoP-bound access token in a token response (RFC 9449 §5). */
export const DPOP_TOKEN_TYPE = 'DPoP';

/**
 * The confirmation of a DPoP-bound token (RFC 9449 §6, RFC 7800 §3.1): the JWK SHA-256
 * Thumbprint of the key its proofs must be signed with. The `cnf` claim of a JWT access token
 * (§6.1) and of an introspection response (§6.2).
 */
export interface DpopConfirmation {
  readonly jkt: string;
}

/** The `cnf` value binding a token to the key with thumbprint `jkt`. */
export function confirmation(jkt: string): DpopConfirmation {
  return { jkt };
}

/**
 * Whether a proof's key is the one a token is bound to (RFC 9449 §7.1, §4.3 point 12). A token
 * without a confirmation is bound to no key, so no proof matches it.
 */
export function boundTo(cnf: DpopConfirmation | undefined, jkt: string): boolean {
  return cnf !== undefined && timingSafeEqual(cnf.jkt, jkt);
}

/**
 * Whether `value` can be a JWK SHA-256 Thumbprint: 43 base64url characters (RFC 7638 §3,
 * 32 bytes unpadded). For the `dpop_jkt` authorization request parameter (RFC 9449 §10).
 */
export function isThumbprint(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value);
}

/** The errors a `DPoP` challenge carries: RFC 6750 §3.1's and RFC 9449 §7.1's, §9's. */
export type DpopChallengeError = 'invalid_request' | 'invalid_token' | 'insufficient_scope' | 'invalid_dpop_proof' | 'use_dpop_nonce';

/** What goes into a `DPoP` challenge; `algorithms` is required (RFC 9449 §7.1: `algs`). */
export interface DpopChallenge {
  /** The proof algorithms the resource accepts (`dpopSigningAlgValuesSupported`). */
  algorithms: readonly string[];
  realm?: string;
  /** Absent when the request carried no credentials at all (RFC 6750 §3.1). */
  error?: DpopChallengeError;
  description?: string;
  scope?: string;
  /** The resource's metadata document (RFC 9728 §5.1 `resource_metadata`). */
  resourceMetadata?: string;
}

/**
 * A `quoted-string` (RFC 9110 §5.6.4): `"` and `\` escaped, and anything outside printable
 * ASCII (control characters, which would split or smuggle a header) made `?`.
 */
function quoted(value: string): string {
  return `"${value.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, '\\$&')}"`;
}

/**
 * The `WWW-Authenticate` value of a protected resource that accepts DPoP (RFC 9449 §7.1), e.g.
 * `DPoP algs="ES256 PS256"` or
 * `DPoP error="use_dpop_nonce", error_description="…", algs="ES256 PS256"`.
 * With Bearer tokens also accepted, the resource sends it next to the Bearer challenge.
 *
 * @example
 * ```ts
 * headers['www-authenticate'] = dpopChallenge({ algorithms, error: 'invalid_token', description: 'The access token is bound to another key.' });
 * ```
 */
export function dpopChallenge(challenge: DpopChallenge): string {
  const params: string[] = [];
  if (challenge.realm !== undefined) params.push(`realm=${quoted(challenge.realm)}`);
  if (challenge.error !== undefined) params.push(`error=${quoted(challenge.error)}`);
  if (challenge.description !== undefined) params.push(`error_description=${quoted(challenge.description)}`);
  if (challenge.scope !== undefined) params.push(`scope=${quoted(challenge.scope)}`);
  if (challenge.resourceMetadata !== undefined) params.push(`resource_metadata=${quoted(challenge.resourceMetadata)}`);
  params.push(`algs=${quoted(challenge.algorithms.join(' '))}`);
  return `DPoP ${params.join(', ')}`;
}
