/**
 * Building DPoP proofs for the tests of src/dpop/: valid ones with the `dpop` package (a client
 * library, so what real clients send), and hand-made ones, signed with Web Crypto directly, that
 * differ from a valid proof in exactly one respect.
 */
import { base64url, exportJWK, generateKeyPair, type JWK } from 'jose';

export const TOKEN_URL = 'https://as.example/v1/oauth/token';
/** A fixed time (milliseconds) for hand-made proofs; `iat` is this in seconds. */
export const NOW = 1_800_000_000_000;
export const IAT = NOW / 1000;

export interface TestKey {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
}

/** A key pair with its public JWK, as a client would put it in `jwk`. */
export async function testKey(alg: string, options: { modulusLength?: number } = {}): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, ...options });
  return { privateKey, publicKey, jwk: await exportJWK(publicKey) };
}

const encoder = new TextEncoder();

/** The Web Crypto parameters that sign as the key's JWS algorithm does. */
function signing(key: CryptoKey): AlgorithmIdentifier | EcdsaParams | RsaPssParams {
  const algorithm = key.algorithm as { name: string; namedCurve?: string; hash?: { name: string } };
  switch (algorithm.name) {
    case 'ECDSA':
      return { name: 'ECDSA', hash: { 'P-256': 'SHA-256', 'P-384': 'SHA-384', 'P-521': 'SHA-512' }[algorithm.namedCurve!]! };
    case 'RSA-PSS':
      return { name: 'RSA-PSS', saltLength: Number(algorithm.hash!.name.slice(4)) / 8 };
    default:
      return { name: algorithm.name };
  }
}

/** A compact JWS of exactly this header and these claims, signed with `key` (or with the signature given). */
export async function sign(header: unknown, claims: unknown, key: CryptoKey | string): Promise<string> {
  return signText(JSON.stringify(header), JSON.stringify(claims), key);
}

/** The same from the JSON texts, for what `JSON.stringify` cannot write (`1e400`, duplicate members). */
export async function signText(header: string, claims: string, key: CryptoKey | string): Promise<string> {
  const input = `${base64url.encode(header)}.${base64url.encode(claims)}`;
  if (typeof key === 'string') return `${input}.${key}`;
  const signature = await crypto.subtle.sign(signing(key), key, encoder.encode(input));
  return `${input}.${base64url.encode(new Uint8Array(signature))}`;
}

/** The header and claims of a valid ES256 proof of `POST TOKEN_URL` at `NOW`. */
export function validParts(key: TestKey, alg = 'ES256') {
  return {
    header: { typ: 'dpop+jwt', alg, jwk: key.jwk } as Record<string, unknown>,
    claims: { jti: 'e1j3V_bKic8-LAEB', htm: 'POST', htu: TOKEN_URL, iat: IAT } as Record<string, unknown>,
  };
}

/**
 * A proof that is valid but for the changes given: `header` and `claims` members replace the
 * valid ones (`undefined` removes one), `signer` signs instead of the key of `jwk`.
 */
export async function proofWith(
  key: TestKey,
  change: { header?: Record<string, unknown>; claims?: Record<string, unknown>; signer?: CryptoKey | string; alg?: string } = {},
): Promise<string> {
  const { header, claims } = validParts(key, change.alg);
  return sign({ ...header, ...change.header }, { ...claims, ...change.claims }, change.signer ?? key.privateKey);
}
