import { CompactSign, compactVerify, importJWK, type CryptoKey, type JWK } from 'jose';
import { ConfigError } from '../errors.js';

/**
 * The JWS algorithms authgate signs with: RS256 (RFC 7518 §3.3, the OpenID Connect default,
 * Core §15.1), ES256 (RFC 7518 §3.4) and EdDSA with Ed25519 (RFC 8037 §3.1). Asymmetric only:
 * `none` (RFC 7518 §3.6) and HMAC (§3.2) would let anyone who can verify also sign, or sign
 * without a key, so they are refused wherever a key or a token names them.
 * @group Token
 */
export type SigningAlgorithm = 'RS256' | 'ES256' | 'EdDSA';

/** Every `SigningAlgorithm`, in the order discovery documents list them. */
export const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = ['RS256', 'ES256', 'EdDSA'];

/**
 * A private signing key as a host stores it (RFC 7517 §4): a JWK with its private members, a
 * `kid` and an `alg`; `use`, when present, is `sig`. `generateSigningKey` makes one.
 * @group Token
 */
export type SigningJwk = JWK & { kid: string; alg: SigningAlgorithm };

/**
 * The members a published key may have (RFC 7517 §4, RFC 7518 §6.2.1 and §6.3.1, RFC 8037 §2),
 * in the order they are written: the order the JWKS of JWT access tokens has always had, so
 * its bytes do not change. Nothing else is ever copied: whatever a host's JWK carries besides
 * (`d`, `p`, `q`, `dp`, `dq`, `qi`, `k`, `oth`, `key_ops`, `x5c`…) stays private.
 */
const PUBLIC_MEMBERS = ['kty', 'crv', 'x', 'y', 'n', 'e', 'kid', 'alg'] as const;

/** The members of a private JWK, by key type, and the byte length of those whose length is fixed. */
interface KeyShape {
  kty: 'RSA' | 'EC' | 'OKP';
  crv?: string;
  members: Readonly<Record<string, number | null>>;
}

const SHAPES: Readonly<Record<SigningAlgorithm, KeyShape>> = {
  // RFC 7518 §6.3.2: Web Crypto imports a private RSA key with all its CRT members.
  RS256: { kty: 'RSA', members: { n: null, e: null, d: null, p: null, q: null, dp: null, dq: null, qi: null } },
  ES256: { kty: 'EC', crv: 'P-256', members: { x: 32, y: 32, d: 32 } },
  EdDSA: { kty: 'OKP', crv: 'Ed25519', members: { x: 32, d: 32 } },
};

/** RFC 7518 §3.3: "A key of size 2048 bits or larger MUST be used with these algorithms." */
const MIN_RSA_BYTES = 256;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** A host's key, checked: its `kid` and `alg`, its private members alone, and its public form. */
export interface CheckedKey {
  readonly kid: string;
  readonly alg: SigningAlgorithm;
  /** Only the members Web Crypto needs to import the private key (no `key_ops`, `ext`, `use`). */
  readonly privateJwk: JWK;
  /** What the JWKS publishes (`publicJwk`). */
  readonly publicJwk: JWK;
}

/** Bytes of an unpadded base64url string of `length` characters (RFC 4648 §5). */
const decodedLength = (length: number) => Math.floor((length * 3) / 4);

/**
 * Check one private signing JWK, synchronously, so a bad key is a `ConfigError` naming it
 * (`where`, e.g. `jwt.keys.1`) when the server is built, not a failure at the first token.
 * Whether the members really form a key pair is checked when the key is first imported
 * (`SigningKeys`), the first moment Web Crypto can tell.
 * @throws ConfigError
 */
export function checkSigningJwk(value: unknown, where: string): CheckedKey {
  const fail = (expected: string): never => {
    throw new ConfigError(where, expected);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('expected a private JWK (an object)');
  const jwk = value as Record<string, unknown>;
  const alg = jwk.alg;
  if (alg === 'none' || (typeof alg === 'string' && /^HS\d+$/.test(alg)) || jwk.kty === 'oct')
    fail('symmetric (HMAC, kty "oct") keys and the "none" algorithm are refused: expected alg RS256, ES256 or EdDSA');
  if (typeof alg !== 'string' || !(SIGNING_ALGORITHMS as readonly string[]).includes(alg))
    return fail('expected "alg": "RS256", "ES256" or "EdDSA"');
  const shape = SHAPES[alg as SigningAlgorithm];
  if (jwk.kty !== shape.kty || jwk.crv !== shape.crv)
    fail(`alg ${alg} needs kty "${shape.kty}"${shape.crv ? ` and crv "${shape.crv}"` : ''}: the key's type does not match its alg`);
  const kid = jwk.kid;
  if (typeof kid !== 'string' || kid.length === 0 || kid.length > 256) return fail('expected a "kid": a string of 1 to 256 characters');
  if (jwk.use !== undefined && jwk.use !== 'sig') fail('expected "use": "sig" (or no "use")');
  if (jwk.oth !== undefined) fail('multi-prime RSA keys ("oth") are not supported');
  if (jwk.d === undefined) fail('expected a private key: "d" is missing (a public key cannot sign)');
  const privateJwk: Record<string, unknown> = { kty: shape.kty, ...(shape.crv && { crv: shape.crv }) };
  for (const [member, bytes] of Object.entries(shape.members)) {
    const text = jwk[member];
    if (typeof text !== 'string' || !BASE64URL.test(text)) return fail(`expected "${member}": an unpadded base64url string`);
    if (bytes !== null && decodedLength(text.length) !== bytes) fail(`expected "${member}" of ${bytes} bytes`);
    privateJwk[member] = text;
  }
  if (alg === 'RS256' && decodedLength((jwk.n as string).length) < MIN_RSA_BYTES)
    fail('expected an RSA modulus of at least 2048 bits (RFC 7518 section 3.3)');
  return { kid, alg: alg as SigningAlgorithm, privateJwk, publicJwk: publicJwk(jwk) };
}

/**
 * The public form of a key for a JWKS (RFC 7517 §5): `use: 'sig'` and the members of
 * `PUBLIC_MEMBERS` the key has, nothing else, whatever it is given.
 */
export function publicJwk(jwk: JWK | Record<string, unknown>): JWK {
  const out: Record<string, unknown> = { use: 'sig' };
  for (const member of PUBLIC_MEMBERS) {
    const value = (jwk as Record<string, unknown>)[member];
    if (value !== undefined) out[member] = value;
  }
  return out as JWK;
}

/**
 * A key imported into Web Crypto: both halves. jose's `CryptoKey` (the runtime's own type where
 * it has one), so the declarations need no DOM library in a host's compilation.
 */
export interface ImportedKey {
  kid: string;
  alg: SigningAlgorithm;
  sign: CryptoKey;
  verify: CryptoKey;
}

const PROBE = new TextEncoder().encode('authgate key check');

/**
 * Import both halves of a checked key and prove they are one pair: sign a probe, verify it with
 * the public half. Otherwise the key would sign tokens that nobody can verify with the JWKS.
 * @throws ConfigError naming the key (`where`).
 */
export async function importSigningKey(key: CheckedKey, where: string): Promise<ImportedKey> {
  try {
    const { use: _use, kid: _kid, alg: _alg, ...members } = key.publicJwk;
    const sign = (await importJWK(key.privateJwk, key.alg)) as CryptoKey;
    const verify = (await importJWK(members, key.alg)) as CryptoKey;
    await compactVerify(await new CompactSign(PROBE).setProtectedHeader({ alg: key.alg }).sign(sign), verify, { algorithms: [key.alg] });
    return { kid: key.kid, alg: key.alg, sign, verify };
  } catch {
    throw new ConfigError(
      where,
      'expected a usable key pair: Web Crypto cannot import it, or its public members are not those of its private key',
    );
  }
}
