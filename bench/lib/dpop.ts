/**
 * DPoP proofs (RFC 9449 §4.2) for the DPoP workloads, made with node:crypto in `prepare` (a
 * client's cost, never timed): one ES256 key per client, a fresh `jti` and the current `iat` in
 * every proof, and `ath` for a resource request.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/** The issuer of the DPoP and OpenID Connect fixtures: `htu` is on its origin. */
export const BENCH_ISSUER = 'https://as.example';
export const TOKEN_URL = `${BENCH_ISSUER}/v1/oauth/token`;
export const RESOURCE_URL = `${BENCH_ISSUER}/v2/account`;

const b64 = (value: string | Buffer) => Buffer.from(value).toString('base64url');

export interface ProofKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The public JWK the proofs carry (`crv`, `kty`, `x`, `y`). */
  jwk: { kty: string; crv: string; x: string; y: string };
}

export function proofKey(): ProofKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' }) as ProofKey['jwk'];
  return { privateKey, publicKey, jwk: { kty, crv, x, y } };
}

/** A fresh ES256 proof of `htm htu` now; with `accessToken`, its `ath`. */
export function proof(key: ProofKey, htm: string, htu: string, accessToken?: string): string {
  const header = b64(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk }));
  const claims: Record<string, unknown> = { jti: randomBytes(16).toString('base64url'), htm, htu, iat: Math.floor(Date.now() / 1000) };
  if (accessToken !== undefined) claims.ath = createHash('sha256').update(accessToken).digest('base64url');
  const input = `${header}.${b64(JSON.stringify(claims))}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}
