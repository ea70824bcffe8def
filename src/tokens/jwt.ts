import { createLocalJWKSet, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type JWK, type JWTVerifyGetKey } from 'jose';
import { isResourceIndicator } from '../checks/audience.js';
import { randomToken } from '../crypto.js';

/**
 * JWT access tokens (RFC 9068), signed with `jose` on Web Crypto. Storage knows a JWT by its
 * `jti`, the SHA-256 of a secret nobody keeps (`mintAccessToken`), and only a JWT that verifies
 * leads there: the `jti` and the other claims, which resource servers log, are no credentials.
 * `authenticate` and revocation look every JWT up, so a revoked JWT is refused like an opaque
 * token, while resource servers elsewhere can verify signatures offline with the JWKS.
 *
 * Keys: the first key signs; every key is published and verifies, so rotating is "put the new
 * key first", and retiring is "remove the old one" once its tokens have expired. Without keys a
 * key pair is generated per process, which suits tests and a single instance only.
 */

type Algorithm = 'EdDSA' | 'ES256';
interface Loaded {
  sign: { key: CryptoKey | Uint8Array; kid: string; alg: Algorithm };
  verify: JWTVerifyGetKey;
  publicKeys: JWK[];
}

const PUBLIC_FIELDS = ['kty', 'crv', 'x', 'y', 'kid', 'alg'] as const;

function publicJwk(jwk: JWK): JWK {
  const out: JWK = { use: 'sig' };
  for (const field of PUBLIC_FIELDS) if (jwk[field] !== undefined) (out as Record<string, unknown>)[field] = jwk[field];
  return out;
}

export interface JwtOptions {
  keys?: JWK[];
  algorithm: Algorithm;
  issuer: string;
  audience: string;
}

export class JwtAccessTokens {
  private loaded?: Promise<Loaded>;

  constructor(private readonly options: JwtOptions) {}

  private load(): Promise<Loaded> {
    this.loaded ??= (async () => {
      let keys = this.options.keys;
      if (!keys || keys.length === 0) {
        const pair = await generateKeyPair(this.options.algorithm, { extractable: true });
        keys = [{ ...(await exportJWK(pair.privateKey)), kid: randomToken().slice(0, 16), alg: this.options.algorithm }];
      }
      const first = keys[0]!;
      const alg = first.alg as Algorithm;
      const publicKeys = keys.map(publicJwk);
      return {
        sign: { key: await importJWK(first, alg), kid: first.kid!, alg },
        verify: createLocalJWKSet({ keys: publicKeys }),
        publicKeys,
      };
    })();
    return this.loaded;
  }

  /**
   * Sign an access token; `jti` is the id storage knows. `aud` is the token's resources (RFC 8707
   * §2; a string for one); without them the `audience` option, as before resource indicators.
   */
  async sign(claims: {
    sub: string;
    clientId: string;
    scope: string;
    jti: string;
    iat: number;
    exp: number;
    aud?: readonly string[] | undefined;
  }): Promise<string> {
    const { sign } = await this.load();
    return new SignJWT({ client_id: claims.clientId, scope: claims.scope })
      .setProtectedHeader({ alg: sign.alg, kid: sign.kid, typ: 'at+jwt' })
      .setIssuer(this.options.issuer)
      .setAudience(claims.aud === undefined ? this.options.audience : claims.aud.length === 1 ? claims.aud[0]! : [...claims.aud])
      .setSubject(claims.sub)
      .setJti(claims.jti)
      .setIssuedAt(Math.floor(claims.iat / 1000))
      .setExpirationTime(Math.floor(claims.exp / 1000))
      .sign(sign.key);
  }

  /** The `jti` of a token this server signed and that has not expired at `now`; `null` otherwise. */
  async jti(token: string, now: number): Promise<string | null> {
    const { verify } = await this.load();
    try {
      const { payload } = await jwtVerify(token, verify, {
        issuer: this.options.issuer,
        typ: 'at+jwt',
        currentDate: new Date(now),
      });
      return typeof payload.jti === 'string' && this.audienceSigned(payload.aud) ? payload.jti : null;
    } catch {
      return null;
    }
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
  async jwks(): Promise<{ keys: JWK[] }> {
    return { keys: (await this.load()).publicKeys };
  }
}

/** Whether a string has the shape of a JWS compact serialization. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}
