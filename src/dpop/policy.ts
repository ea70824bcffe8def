/**
 * What a DPoP proof must satisfy on this server (RFC 9449 §4.3): the signing algorithms, how old
 * and how far in the future its `iat` may be, how long the header may be, and whether server
 * nonces are required (§8, §9). Built and checked once, when the server is constructed, so a
 * request never meets a bad configuration.
 */
import { ConfigError } from '../errors.js';
import type { NonceCheck } from './nonce.js';

/**
 * Every JWS algorithm a host may allow for proofs: asymmetric only (RFC 9449 §4.2: "MUST NOT be
 * `none` or an identifier for a symmetric algorithm"), as `jose` verifies them on Web Crypto.
 * `Ed25519` is the fully specified name of EdDSA over Ed25519 (RFC 9864) that current clients
 * (the `dpop` and `oauth4webapi` packages) write; `EdDSA` is the older, polymorphic one.
 */
export const DPOP_ALGORITHMS: ReadonlySet<string> = new Set([
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
]);

/**
 * The algorithms allowed when the host names none: what DPoP clients implement (RFC 9449
 * §4.2 names ES256 and RS256 in its examples; EdDSA both by its old and its RFC 9864 name).
 */
export const DEFAULT_DPOP_ALGORITHMS: readonly string[] = Object.freeze(['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256']);

/** What the host may set; every field has a default (see {@link proofPolicy}). */
export interface ProofPolicyOptions {
  /** JWS algorithms accepted for proofs, each one of {@link DPOP_ALGORITHMS}. */
  algorithms?: readonly string[];
  /** How old a proof's `iat` may be, in seconds (RFC 9449 §4.3 point 11, §11.1). Default 60. */
  maxAgeSeconds?: number;
  /** How far in the future a proof's `iat` may be, for clients whose clock runs fast. Default 5. */
  clockSkewSeconds?: number;
  /** Longest `DPoP` header accepted, in characters; longer ones are refused unparsed. Default 8192. */
  maxLength?: number;
  /** Server nonces (RFC 9449 §8, §9): when given, every proof must carry a nonce they accept. */
  nonces?: NonceCheck;
}

/** The checked, frozen configuration {@link checkProof} applies. Make one with {@link proofPolicy}. */
export interface ProofPolicy {
  readonly algorithms: readonly string[];
  readonly maxAgeSeconds: number;
  readonly clockSkewSeconds: number;
  readonly maxLength: number;
  readonly nonces: NonceCheck | undefined;
}

/**
 * The proof policy for the given options, with defaults: ES256, EdDSA, Ed25519, RS256 and PS256;
 * `iat` at most 60 s old and 5 s ahead (RFC 9449 §11.1 asks for a short window: a proof lives
 * only as long as the window, and its `jti` is remembered that long for the replay check); a
 * header of at most 8 KiB (an RSA 4096 proof is about 1.5 KiB); no nonces.
 *
 * @throws ConfigError for an empty or unknown algorithm list, `none` or an HMAC algorithm
 *   (never accepted, configured or not), or a bound out of range.
 * @example
 * ```ts
 * const policy = proofPolicy({ algorithms: ['ES256', 'EdDSA'], nonces: dpopNonces({ secret }) });
 * ```
 */
export function proofPolicy(options: ProofPolicyOptions = {}): ProofPolicy {
  const algorithms = options.algorithms ?? DEFAULT_DPOP_ALGORITHMS;
  if (!Array.isArray(algorithms) || algorithms.length === 0) {
    throw new ConfigError('dpop.algorithms', 'expected a non-empty list of asymmetric JWS algorithms (RFC 9449 section 4.2)');
  }
  for (const alg of algorithms) {
    if (typeof alg === 'string' && (alg === 'none' || /^HS\d+$/.test(alg))) {
      throw new ConfigError(
        'dpop.algorithms',
        `"${alg}" can never sign a DPoP proof: RFC 9449 section 4.2 allows asymmetric algorithms only`,
      );
    }
    if (typeof alg !== 'string' || !DPOP_ALGORITHMS.has(alg)) {
      throw new ConfigError('dpop.algorithms', `expected each of ${[...DPOP_ALGORITHMS].join(', ')}; got ${JSON.stringify(alg)}`);
    }
  }
  return Object.freeze({
    algorithms: Object.freeze([...new Set(algorithms)]),
    maxAgeSeconds: bounded('dpop.maxAgeSeconds', options.maxAgeSeconds, 60, 1, 600),
    clockSkewSeconds: bounded('dpop.clockSkewSeconds', options.clockSkewSeconds, 5, 0, 300),
    maxLength: bounded('dpop.maxLength', options.maxLength, 8192, 1024, 65536),
    nonces: options.nonces,
  });
}

/** An integer option within [min, max], or its default. */
function bounded(option: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(option, `expected an integer from ${min} to ${max}`);
  }
  return value;
}

/**
 * `dpop_signing_alg_values_supported` of the authorization server metadata (RFC 9449 §5.1):
 * the algorithms the policy accepts, as a new array the caller may keep.
 */
export function dpopSigningAlgValuesSupported(policy: ProofPolicy): string[] {
  return [...policy.algorithms];
}
