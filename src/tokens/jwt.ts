import type { JWK } from 'jose';
import { isResourceIndicator } from '../checks/audience.js';
import type { JwtClaims } from '../context.js';
import { ConfigError } from '../errors.js';
import { SigningKeys } from '../keys/signing-keys.js';

/**
 * JWT access tokens (RFC 9068), signed with `jose` on Web Crypto. Storage knows a JWT by its
 * `jti`, the SHA-256 of a secret nobody keeps (`mintAccessToken`), and only a JWT that verifies
 * leads there: the `jti` and the other claims, which resource servers log, are no credentials.
 * `authenticate` and revocation look every JWT up, so a revoked JWT is refused like an opaque
 * token, while resource servers elsewhere can verify signatures offline with the JWKS.
 *
 * Keys (`SigningKeys`, src/keys/signing-keys.ts): the first key signs; every key is published
 * and verifies, so rotating is "put the new key first", and retiring is "remove the old one"
 * once its tokens have expired. Without keys a key pair is generated per process, which suits
 * tests and a single instance only.
 */

type Algorithm = 'EdDSA' | 'ES256';

export interface JwtOptions {
  keys?: JWK[];
  /**
   * A key set shared with other signatures (ID tokens), instead of `keys`: access tokens are
   * signed by its first EdDSA or ES256 key, whichever comes first.
   */
  signingKeys?: SigningKeys;
  algorithm: Algorithm;
  issuer: string;
  audience: string;
}

export class JwtAccessTokens {
  private readonly keys: SigningKeys;
  private readonly alg: Algorithm;

  /** @throws ConfigError naming `jwt.keys` when a key is refused (`SigningKeys.from`). */
  constructor(private readonly options: JwtOptions) {
    this.keys =
      options.signingKeys ??
      (options.keys && options.keys.length > 0
        ? SigningKeys.from(options.keys, 'jwt.keys')
        : SigningKeys.generated([options.algorithm], 'jwt.keys'));
    // The first key signs: with the host's keys, which are EdDSA or ES256, that is keys[0].
    const alg = this.keys.algorithms.find((a): a is Algorithm => a === 'EdDSA' || a === 'ES256');
    if (!alg) throw new ConfigError('jwt.keys', 'expected an EdDSA or ES256 key to sign JWT access tokens');
    this.alg = alg;
  }

  /**
   * Sign an access token; `jti` is the id storage knows. `aud` is the token's resources (RFC 8707
   * §2; a string for one); without them the `audience` option, as before resource indicators.
   */
  sign(claims: JwtClaims): Promise<string> {
    const aud = claims.aud === undefined ? this.options.audience : claims.aud.length === 1 ? claims.aud[0]! : [...claims.aud];
    // The claims in the order the token has always had them.
    const payload = { client_id: claims.clientId, scope: claims.scope, iss: this.options.issuer, aud, sub: claims.sub, jti: claims.jti };
    const body: Record<string, unknown> = { ...payload, iat: Math.floor(claims.iat / 1000), exp: Math.floor(claims.exp / 1000) };
    // RFC 9449 §6.1: a DPoP-bound token names its key's thumbprint, last.
    if (claims.cnf !== undefined) body.cnf = { jkt: claims.cnf.jkt };
    return this.keys.sign(this.alg, body, 'at+jwt');
  }

  /** The `jti` of a token this server signed and that has not expired at `now`; `null` otherwise. */
  async jti(token: string, now: number): Promise<string | null> {
    const verified = await this.keys.verify(token, { now, issuer: this.options.issuer, typ: 'at+jwt' });
    if (!verified.valid) return null;
    const { jti, aud } = verified.payload;
    return typeof jti === 'string' && this.audienceSigned(aud) ? jti : null;
  }

  /**
   * Whether `aud` is one `sign` writes: the `audience` option, or the resources of a token issued
   * with resource indicators (RFC 8707), absolute URIs. Which resource may accept the token is
   * its stored record's audience (`audienceAllows`), never this claim.
   */
  private audienceSigned(aud: unknown): boolean {
    if (aud === this.options.audience) return true;
    const values = Array.isArray(aud) ? aud : [aud];
    return values.length > 0 && values.every((value) => typeof value === 'string' && isResourceIndicator(value));
  }

  /** The public keys, for the JWKS endpoint (RFC 7517). */
  jwks(): Promise<{ keys: JWK[] }> {
    return this.keys.jwks();
  }
}

/** Whether a string has the shape of a JWS compact serialization. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}
