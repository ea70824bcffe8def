/**
 * DPoP proof validation, RFC 9449 §4.3, in one function that never throws: whatever the `DPoP`
 * header holds, the answer is an accepted proof or a refusal with its OAuth error code. The
 * replay check of `jti` (§4.3 point 12, §11.1) is the caller's, as it needs storage: the
 * accepted proof says which key to remember and until when.
 */
import { calculateJwkThumbprint, compactVerify, importJWK, base64url as jose64, type JWK } from 'jose';
import { BoundedMap } from '../bounded-map.js';
import { sha256Base64url, timingSafeEqual } from '../crypto.js';
import { normalizeHtu } from './htu.js';
import { DPOP_ALGORITHMS, type ProofPolicy } from './policy.js';

/** What the request a proof comes with is: its method, its URL, and the time (`Clock.now()`, milliseconds). */
export interface ProofRequest {
  /** The HTTP method, as received (RFC 9110 §9.1: methods are case-sensitive). */
  htm: string;
  /** The full URL the request was sent to; its query and fragment are ignored. */
  htu: string;
  now: number;
  /** The access token presented with the proof, at a protected resource (§7); absent at the token endpoint. */
  accessToken?: string;
}

/** A proof that passed every check of RFC 9449 §4.3 but the replay check. */
export interface ProofAccepted {
  ok: true;
  /** JWK SHA-256 Thumbprint (RFC 7638) of the proof's key: the `jkt` of `cnf` (§6.1). */
  jkt: string;
  jti: string;
  /** The proof's `iat`, in seconds. */
  iat: number;
  /**
   * The key under which the caller records the proof as used: SHA-256 of the key thumbprint and
   * `jti` (a `jti` is unique per key, §4.2; fixed length, whatever the client sent).
   */
  replayKey: string;
  /** Until when (milliseconds) the proof would pass again, so how long `replayKey` must be remembered. */
  expiresAt: number;
  /** When the proof's nonce is from the previous window: a fresh one to send in `DPoP-Nonce` (§8.2). */
  nonce?: string;
}

/**
 * A refused proof: `invalid_dpop_proof`, or `use_dpop_nonce` with the nonce to send in
 * `DPoP-Nonce` (§8.1, §9). The description is ASCII and fits `error_description`.
 */
export interface ProofRefused {
  ok: false;
  error: 'invalid_dpop_proof' | 'use_dpop_nonce';
  description: string;
  nonce?: string;
}

/** The answer of {@link checkProof}. */
export type ProofResult = ProofAccepted | ProofRefused;

/** One JWS in compact serialisation (RFC 7515 §7.1): three base64url parts, none empty. */
const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** JWK members that only a private or a symmetric key has (RFC 7518 §6.2.2, §6.3.2, §6.4.1). */
const SECRET_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const PUBLIC_KEY_TYPES = new Set(['EC', 'OKP', 'RSA']);
/** Longest `jti` accepted: ample for any random identifier (a UUID has 36 characters). */
export const MAX_JTI_LENGTH = 256;
const decoder = new TextDecoder('utf-8', { fatal: true });

const has = (value: object, member: string) => Object.hasOwn(value, member);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const refuse = (description: string): ProofRefused => ({ ok: false, error: 'invalid_dpop_proof', description });

/** A JSON object from UTF-8 bytes, or `undefined`. */
function jsonObject(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes));
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The one proof of the request, or why there is none usable. Cheap: no parsing, length first. */
function singleProof(header: unknown, maxLength: number): string | ProofRefused {
  let value = header;
  if (Array.isArray(header)) {
    // §4.3 point 1: "there is not more than one DPoP HTTP request header field".
    if (header.length > 1) return refuse('The request carries more than one DPoP header.');
    value = header[0];
  }
  if (value === undefined || value === '') return refuse('A DPoP proof is required.');
  if (typeof value !== 'string') return refuse('The DPoP header is malformed.');
  if (value.length > maxLength) return refuse('The DPoP header is too long.');
  // Node joins repeated headers with ", ", and no compact JWS holds a comma.
  if (value.includes(',')) return refuse('The request carries more than one DPoP header.');
  if (!COMPACT.test(value)) return refuse('The DPoP proof is not a compact JWS.');
  return value;
}

/** The checked JOSE header (§4.3 points 3 to 7, as far as they need no crypto). */
function proofHeader(proof: string, policy: ProofPolicy): { alg: string; jwk: JWK } | ProofRefused {
  let header: Record<string, unknown> | undefined;
  try {
    header = jsonObject(jose64.decode(proof.slice(0, proof.indexOf('.'))));
  } catch {
    header = undefined;
  }
  if (!header) return refuse('The DPoP proof header is not a JSON object.');
  if (header.typ !== 'dpop+jwt') return refuse('The DPoP proof typ is not dpop+jwt.');
  const alg = header.alg;
  // §4.3 point 5: asymmetric and supported. DPOP_ALGORITHMS holds no `none` and no HMAC, so
  // neither passes even when a hand-built policy lists it.
  if (typeof alg !== 'string' || !DPOP_ALGORITHMS.has(alg) || !policy.algorithms.includes(alg)) {
    return refuse('The DPoP proof alg is not supported.');
  }
  // Extensions this server does not understand (RFC 7515 §4.1.11), e.g. an unencoded payload.
  if (has(header, 'crit') || has(header, 'b64')) return refuse('The DPoP proof header has unsupported parameters.');
  const jwk = header.jwk;
  if (!isObject(jwk)) return refuse('The DPoP proof header has no jwk.');
  // §4.3 point 7: the key must be public; a private or symmetric key in a proof is a client
  // leaking its secret, never something to verify with.
  if (SECRET_MEMBERS.some((member) => has(jwk, member))) return refuse('The DPoP proof jwk is not a public key.');
  if (typeof jwk.kty !== 'string' || !PUBLIC_KEY_TYPES.has(jwk.kty)) return refuse('The DPoP proof jwk is not an asymmetric public key.');
  if (jwk.alg !== undefined && jwk.alg !== alg) return refuse('The DPoP proof jwk is for another algorithm.');
  return { alg, jwk: jwk as JWK };
}

/** The claims checks of §4.3 points 8 to 11, nonce aside; `undefined` when they pass. */
function claimsProblem(claims: Record<string, unknown>, request: ProofRequest, policy: ProofPolicy): string | undefined {
  const { jti, htm, htu, iat, ath } = claims;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) return 'The DPoP proof jti is missing or malformed.';
  if (typeof htm !== 'string' || htm !== request.htm) return 'The DPoP proof htm does not match the request method.';
  const expected = normalizeHtu(request.htu);
  if (typeof htu !== 'string' || expected === undefined || normalizeHtu(htu) !== expected) {
    return 'The DPoP proof htu does not match the request URL.';
  }
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return 'The DPoP proof iat is missing or malformed.';
  // §4.3 point 11 and §11.1: "within an acceptable window"; live while now < expiresAt.
  if (iat * 1000 + policy.maxAgeSeconds * 1000 <= request.now) return 'The DPoP proof is too old.';
  if (iat * 1000 > request.now + policy.clockSkewSeconds * 1000) return 'The DPoP proof iat is in the future.';
  // §4.3 point 10: with an access token, `ath` must be its hash. Without one (the token endpoint)
  // an `ath` is ignored: the RFC asks for it only "when presented with an access token", and a
  // JWT's other claims are ignored (RFC 7519 §4); such a proof is no use elsewhere anyway, since
  // its `htm` and `htu` name the token endpoint.
  if (request.accessToken !== undefined) {
    if (typeof ath !== 'string') return 'The DPoP proof has no ath for the access token.';
    if (!timingSafeEqual(ath, sha256Base64url(request.accessToken))) return 'The DPoP proof ath does not match the access token.';
  }
  return undefined;
}

/**
 * Checks the `DPoP` header of a request (RFC 9449 §4.3, every point but the replay check of
 * point 12, which the caller does with `replayKey` and `expiresAt`). Never throws: a header
 * that is absent, repeated, too long or malformed, a proof that fails a check, is refused with
 * `invalid_dpop_proof`; a proof without a nonce the policy's nonces accept, with
 * `use_dpop_nonce` and a fresh nonce.
 *
 * Cheap checks first: the length bound, the compact form and the header come before any
 * decoding of the payload and before any cryptography, and the claims are read only from a
 * payload whose signature verified.
 *
 * @param header the request's `dpop` header as the adapter received it
 * @example
 * ```ts
 * const proof = await checkProof(request.headers['dpop'], { htm: 'POST', htu: tokenUrl, now: clock.now() }, policy);
 * if (!proof.ok) return dpopError(proof); // 400 at the token endpoint (§5), 401 at a resource (§7.1)
 * if (!(await replays.remember(proof.replayKey, proof.expiresAt))) return refuseReplay();
 * ```
 */
export async function checkProof(
  header: string | readonly string[] | undefined,
  request: ProofRequest,
  policy: ProofPolicy,
): Promise<ProofResult> {
  const proof = singleProof(header, policy.maxLength);
  if (typeof proof !== 'string') return proof;
  const parsed = proofHeader(proof, policy);
  if ('ok' in parsed) return parsed;

  let claims: Record<string, unknown> | undefined;
  let key: ImportedKey;
  try {
    // §4.3 point 6: the signature verifies with the key of the header's jwk, for that alg only.
    key = await publicKey(parsed.jwk, parsed.alg);
    // RFC 7518 §3.3, §3.5: an RSA key under 2048 bits is refused (jose would throw while
    // verifying); said as such, since the signature itself may well be right.
    if (shortRsaKey(key.key)) return refuse("The DPoP proof's RSA key is shorter than 2048 bits.");
    claims = jsonObject((await compactVerify(proof, key.key, { algorithms: [parsed.alg] })).payload);
  } catch {
    return refuse('The DPoP proof signature does not verify with its jwk.');
  }
  if (!claims) return refuse('The DPoP proof claims are not a JSON object.');
  const problem = claimsProblem(claims, request, policy);
  if (problem) return refuse(problem);

  let nonce: string | undefined;
  if (policy.nonces) {
    // §8 and §9: a missing, forged or outdated nonce is answered with a fresh one to retry with.
    const verdict = policy.nonces.check(claims.nonce, request.now);
    if (verdict === 'invalid') {
      const description = claims.nonce === undefined ? 'A DPoP nonce is required.' : 'The DPoP nonce is invalid or expired.';
      return { ok: false, error: 'use_dpop_nonce', description, nonce: policy.nonces.issue(request.now) };
    }
    if (verdict === 'previous') nonce = policy.nonces.issue(request.now);
  }
  let jkt: string;
  try {
    jkt = await thumbprint(key, parsed.jwk);
  } catch {
    // Unreachable for a key that verified a signature; kept so that nothing can throw.
    return refuse('The DPoP proof jwk is malformed.');
  }
  const { jti, iat } = claims as { jti: string; iat: number };
  const accepted: ProofAccepted = {
    ok: true,
    jkt,
    jti,
    iat,
    replayKey: sha256Base64url(`${jkt}.${jti}`),
    expiresAt: Math.ceil(iat * 1000 + policy.maxAgeSeconds * 1000),
  };
  if (nonce !== undefined) accepted.nonce = nonce;
  return accepted;
}

/**
 * The public keys of recent proofs, imported once, with their thumbprints: a client signs every
 * proof with the same key, and importing it costs more than checking the signature. Keyed by the
 * algorithm and the header's `jwk` exactly as sent, so an entry is only ever that key; public data
 * only, shared by every server of the process, bounded like every memory of authgate.
 */
const importedKeys = new BoundedMap<string, ImportedKey>(1024);

/** A proof's public key, imported, and its thumbprint once computed. */
interface ImportedKey {
  key: Awaited<ReturnType<typeof importJWK>>;
  jkt?: string;
}

/** Whether `key` is an RSA key shorter than 2048 bits (its `modulusLength`, as Web Crypto reports it). */
function shortRsaKey(key: ImportedKey['key']): boolean {
  if (key instanceof Uint8Array) return false;
  const bits = (key.algorithm as { modulusLength?: unknown }).modulusLength;
  return typeof bits === 'number' && bits < 2048;
}

/** The imported public key of `jwk` for `alg`, from `importedKeys` when it was imported before. */
async function publicKey(jwk: JWK, alg: string): Promise<ImportedKey> {
  const id = `${alg}.${JSON.stringify(jwk)}`;
  const known = importedKeys.get(id);
  if (known !== undefined) return known;
  const entry: ImportedKey = { key: await importJWK(jwk, alg) };
  importedKeys.set(id, entry);
  return entry;
}

/** The RFC 7638 thumbprint (SHA-256) of the imported `jwk`, computed once per key. */
async function thumbprint(entry: ImportedKey, jwk: JWK): Promise<string> {
  entry.jkt ??= await calculateJwkThumbprint(jwk, 'sha256');
  return entry.jkt;
}
