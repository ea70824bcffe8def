/**
 * The ID token (OpenID Connect Core 1.0 §2): a JWT the provider signs to tell a client who
 * signed in, when, and for which request. Built here from what the integration already knows;
 * which claims of the host go in (Core §5.4) is decided by `filterClaims` before.
 */
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { base64url } from '../crypto.js';
import type { SigningAlgorithm } from '../keys/jwk.js';
import type { SigningKeys } from '../keys/signing-keys.js';

/**
 * The claims the protocol sets: a host's claims never carry them into an ID token, since each
 * means something a relying party checks (Core §2, §3.1.3.6, §3.1.3.7; `sid`: Front-Channel
 * Logout 1.0 §3; `jti`, `nbf`: RFC 7519 §4.1; `c_hash`, `s_hash`: Core §3.3.2.11, FAPI).
 */
export const PROTOCOL_CLAIMS: ReadonlySet<string> = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'nbf',
  'jti',
  'nonce',
  'auth_time',
  'at_hash',
  'c_hash',
  's_hash',
  'azp',
  'acr',
  'amr',
  'sid',
  'cnf',
]);

/** What an ID token says (Core §2). Times in ms since epoch, written in seconds. */
export interface IdTokenInput {
  /** `iss`: the issuer, exactly as in the discovery document (Core §3.1.3.7 step 2). */
  issuer: string;
  /** `sub`: the subject for this client (`Subjects.for`). */
  subject: string;
  /** `aud`: the client id (Core §2: it MUST contain the client's `client_id`). */
  clientId: string;
  /** Further audiences, rarely: with any, `aud` is an array and `azp` the client id (Core §2). */
  audiences?: readonly string[];
  /** ms since epoch: `iat`, and `exp` = `iat` + `lifetime`. */
  now: number;
  /** Seconds the token is valid. */
  lifetime: number;
  /** ms since epoch: when the user last signed in with a credential (`auth_time`). */
  authTime: number;
  /** The `nonce` of the authorization request, when it had one (Core §3.1.2.1), unchanged. */
  nonce?: string | undefined;
  /** The access token issued with this ID token: sets `at_hash` (Core §3.1.3.6). */
  accessToken?: string | undefined;
  /** The client's `id_token_signed_response_alg` (OpenID Connect Dynamic Client Registration §2); default RS256. */
  alg?: SigningAlgorithm | undefined;
  acr?: string | undefined;
  amr?: readonly string[] | undefined;
  /** The session id (Front-Channel Logout 1.0 §3), when sessions are told apart. */
  sid?: string | undefined;
  /** The host's claims allowed in the ID token (`filterClaims`); the protocol's win (`PROTOCOL_CLAIMS`). */
  claims?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * Core §3.1.3.6 (errata set 2): `at_hash` is the left-most half of the hash of the ASCII octets
 * of the access token, base64url-encoded; the hash is that of the JWS algorithm: SHA-256 for
 * RS256, ES256 (and PS256); SHA-512 for EdDSA with Ed25519.
 */
export function atHash(accessToken: string, alg: SigningAlgorithm): string {
  const digest = (alg === 'EdDSA' ? sha512 : sha256)(new TextEncoder().encode(accessToken));
  return base64url(digest.subarray(0, digest.length / 2));
}

/**
 * Sign an ID token with the client's algorithm: header `{ alg, kid, typ: 'JWT' }`, claims
 * `iss`, `sub`, `aud`, `exp`, `iat`, `auth_time`, then `nonce`, `acr`, `amr`, `azp`, `at_hash`,
 * `sid` when they apply, then the host's claims that are not the protocol's.
 * @throws ConfigError (rejects) when the set has no key of the client's algorithm.
 */
export function issueIdToken(keys: SigningKeys, input: IdTokenInput): Promise<string> {
  const alg = input.alg ?? 'RS256';
  const iat = Math.floor(input.now / 1000);
  const extra = input.audiences?.filter((audience) => audience !== input.clientId) ?? [];
  // A null prototype: a host's claim named `__proto__` is then an ordinary member, never the prototype.
  const payload: Record<string, unknown> = Object.assign(Object.create(null), {
    iss: input.issuer,
    sub: input.subject,
    aud: extra.length > 0 ? [input.clientId, ...extra] : input.clientId,
    exp: iat + Math.max(1, Math.floor(input.lifetime)),
    iat,
    auth_time: Math.floor(input.authTime / 1000),
  });
  if (input.nonce !== undefined) payload.nonce = input.nonce;
  if (input.acr !== undefined) payload.acr = input.acr;
  if (input.amr !== undefined) payload.amr = [...input.amr];
  // Core §2: azp is needed when the ID token has a single audience that is not the client, or several.
  if (extra.length > 0) payload.azp = input.clientId;
  if (input.accessToken !== undefined) payload.at_hash = atHash(input.accessToken, alg);
  if (input.sid !== undefined) payload.sid = input.sid;
  if (input.claims) {
    for (const name of Object.keys(input.claims)) {
      const value = input.claims[name];
      if (!PROTOCOL_CLAIMS.has(name) && value !== undefined) payload[name] = value;
    }
  }
  return keys.sign(alg, payload, 'JWT');
}
