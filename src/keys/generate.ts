import { exportJWK, generateKeyPair } from 'jose';
import { randomToken } from '../crypto.js';
import { SIGNING_ALGORITHMS, type SigningAlgorithm, type SigningJwk } from './jwk.js';

/**
 * A new private signing key as a JWK with `kid`, `alg` and `use: 'sig'`, to store as a secret
 * (an environment variable, a secret manager) and give to every instance: one key for all of
 * them, unlike the per-process keys authgate makes when it is given none. `alg`: `RS256` (the
 * default: OpenID Connect Core §15.1 requires every relying party to accept it; a 2048-bit
 * key, RFC 7518 §3.3), `ES256` or `EdDSA` (Ed25519). `kid`: default 16 random characters; a
 * date (`2025-06`) makes rotation easier to follow (see `SigningKeys` for the procedure).
 *
 * The same with `jose` alone:
 * ```ts
 * import { exportJWK, generateKeyPair } from 'jose';
 * const { privateKey } = await generateKeyPair('RS256', { extractable: true });
 * const jwk = { ...(await exportJWK(privateKey)), kid: '2025-06', alg: 'RS256', use: 'sig' };
 * console.log(JSON.stringify(jwk)); // store it as a secret; never publish it
 * ```
 * @example
 * ```ts
 * // node -e "import('authgate').then(async (a) => console.log(JSON.stringify(await a.generateSigningKey('RS256', '2025-06'))))"
 * const key = await generateSigningKey('ES256');
 * ```
 * @throws TypeError for an algorithm other than RS256, ES256 and EdDSA, or an empty or overlong `kid`.
 * @group Token
 */
export async function generateSigningKey(alg: SigningAlgorithm = 'RS256', kid?: string): Promise<SigningJwk> {
  if (!SIGNING_ALGORITHMS.includes(alg))
    throw new TypeError(`authgate: generateSigningKey: expected RS256, ES256 or EdDSA, not ${String(alg)}`);
  if (kid !== undefined && (typeof kid !== 'string' || kid.length === 0 || kid.length > 256))
    throw new TypeError('authgate: generateSigningKey: expected a kid of 1 to 256 characters');
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const { key_ops: _ops, ext: _ext, ...jwk } = await exportJWK(privateKey);
  return { ...jwk, kid: kid ?? randomToken().slice(0, 16), alg, use: 'sig' };
}
