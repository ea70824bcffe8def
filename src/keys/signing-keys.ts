/**
 * The keys of every signature authgate makes (ID tokens, OpenID Connect Core §2 and §10.1; JWT
 * access tokens, RFC 9068 §2.1), with `jose` on Web Crypto, so the same code runs on Node and
 * workerd.
 *
 * **Which key signs.** Several keys at once, each with its own `kid`. For each algorithm, the
 * first key of that algorithm in the list signs; every key is published in the JWKS (RFC 7517
 * §5) and verifies. What a key signed carries its `kid`, so verifiers pick the key by it.
 *
 * **Rotating keys across several instances.** Relying parties and resource servers cache the
 * JWKS (a few minutes; authgate sends `max-age=300`), and instances restart one by one, so a
 * new key must be published everywhere before anything signs with it, and an old key must stay
 * published until nothing it signed is still valid:
 * 1. *Publish.* Add the new key at the **end** of the list on every instance. Nothing changes
 *    for signing; the new key is in every JWKS. Wait until every instance runs with it, plus the
 *    longest JWKS cache time of your verifiers.
 * 2. *Sign.* Move the new key **first** (first of its algorithm) on every instance. New tokens
 *    carry its `kid`; tokens signed by the old key still verify, since it is still published.
 * 3. *Retire.* Once the longest lifetime of what the old key signed has passed (the access token
 *    and ID token lifetimes; for `id_token_hint` and logout, as long as you accept old hints),
 *    remove the old key everywhere.
 *
 * Without keys (`SigningKeys.generated`) a key pair per algorithm is made per process: for tests
 * and a single instance only, since every restart invalidates what was signed.
 *
 * Keys are checked when the set is built (`ConfigError`: no `none`, no HMAC, no public-only or
 * malformed JWK, no duplicate `kid`, no `alg` that does not fit the key) and imported at their
 * first use, never at module load: an import failure or a key pair whose public members do not
 * match its private key is a `ConfigError` then.
 */
import { decodeProtectedHeader, jwtVerify, SignJWT, type JWK, type JWTHeaderParameters, type JWTPayload } from 'jose';
import { ConfigError } from '../errors.js';
import { generateSigningKey } from './generate.js';
import {
  type CheckedKey,
  checkSigningJwk,
  importSigningKey,
  type ImportedKey as Key,
  SIGNING_ALGORITHMS,
  type SigningAlgorithm,
} from './jwk.js';

interface Loaded {
  keys: readonly Key[];
  byKid: ReadonlyMap<string, Key>;
  signers: ReadonlyMap<SigningAlgorithm, Key>;
  published: readonly JWK[];
}

/** Why a JWS is refused: the token, its header, its key, its signature, or its claims. */
export type JwsRefusal = 'malformed' | 'algorithm' | 'unknown_key' | 'signature' | 'claims' | 'expired';

/** The outcome of `SigningKeys.verify`. `expired`: only with `acceptExpired`. */
export type JwsVerification =
  | { valid: true; payload: JWTPayload; header: JWTHeaderParameters; kid: string; expired: boolean }
  | { valid: false; reason: JwsRefusal };

/** What `SigningKeys.verify` checks besides the signature (RFC 7519 §7.2). */
export interface JwsVerifyOptions {
  /** ms since epoch: `exp` and `nbf` are checked against it. */
  now: number;
  /** The `iss` required, when given. */
  issuer?: string;
  /** The header's `typ` required (RFC 8725 §3.11), when given. */
  typ?: string;
  /** Accept a token past its `exp` (an `id_token_hint` may be expired, Core §3.1.2.1). */
  acceptExpired?: boolean;
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const refused = (reason: JwsRefusal): JwsVerification => ({ valid: false, reason });

/** A signing key set (see the module documentation for how keys are chosen and rotated). */
export class SigningKeys {
  /** The algorithms this set signs with, in the order of their first key. */
  readonly algorithms: readonly SigningAlgorithm[];
  private ready: Loaded | undefined;
  private loading: Promise<Loaded> | undefined;

  private constructor(
    private readonly source: { given: readonly CheckedKey[] } | { generate: readonly SigningAlgorithm[] },
    private readonly option: string,
  ) {
    const algs = 'given' in source ? source.given.map((key) => key.alg) : source.generate;
    this.algorithms = Object.freeze([...new Set(algs)]);
  }

  /**
   * The host's keys: private JWKs (`SigningJwk`), checked now. `option` is the option path a
   * `ConfigError` names (e.g. `jwt.keys`; a key is `jwt.keys.1`).
   * @throws ConfigError
   */
  static from(keys: readonly unknown[], option = 'keys'): SigningKeys {
    if (!Array.isArray(keys) || keys.length === 0) throw new ConfigError(option, 'expected at least one signing key');
    const checked = keys.map((key, i) => checkSigningJwk(key, `${option}.${i}`));
    const kids = new Set<string>();
    checked.forEach((key, i) => {
      if (kids.has(key.kid)) throw new ConfigError(`${option}.${i}`, `duplicate kid "${key.kid}": each key needs its own kid`);
      kids.add(key.kid);
    });
    return new SigningKeys({ given: checked }, option);
  }

  /** A key pair per algorithm, made at first use, for this process only (tests, one instance). */
  static generated(algorithms: readonly SigningAlgorithm[], option = 'keys'): SigningKeys {
    if (algorithms.length === 0 || algorithms.some((alg) => !SIGNING_ALGORITHMS.includes(alg)))
      throw new ConfigError(option, 'expected algorithms among RS256, ES256 and EdDSA');
    return new SigningKeys({ generate: [...new Set(algorithms)] }, option);
  }

  /** Whether a key of `alg` signs here. */
  signs(alg: string): alg is SigningAlgorithm {
    return (this.algorithms as readonly string[]).includes(alg);
  }

  /**
   * A compact JWS of `claims`, signed by the first key of `alg`, with the header
   * `{ alg, kid, typ }`. Not async once the keys are imported: no await on the token path.
   * @throws ConfigError (rejects) when no key of `alg` is in the set.
   */
  sign(alg: SigningAlgorithm, claims: JWTPayload, typ: string): Promise<string> {
    const loaded = this.ready;
    if (!loaded) return this.load().then(() => this.sign(alg, claims, typ));
    const key = loaded.signers.get(alg);
    if (!key) return Promise.reject(new ConfigError(this.option, `expected a signing key with alg ${alg}`));
    return new SignJWT(claims).setProtectedHeader({ alg, kid: key.kid, typ }).sign(key.sign);
  }

  /** The JWKS (RFC 7517 §5): every key, public members only (`publicJwk`), a fresh copy each time. */
  async jwks(): Promise<{ keys: JWK[] }> {
    const { published } = this.ready ?? (await this.load());
    return { keys: published.map((jwk) => ({ ...jwk })) };
  }

  /**
   * Verify a compact JWS against this set: the key named by its `kid` (its `alg` must be the
   * key's), or, without `kid`, each key of the header's `alg`. `none`, HMAC and any algorithm
   * without a key here are refused before any cryptography. Never throws on a bad token.
   */
  async verify(token: string, options: JwsVerifyOptions): Promise<JwsVerification> {
    const loaded = this.ready ?? (await this.load());
    if (typeof token !== 'string' || !COMPACT_JWS.test(token)) return refused('malformed');
    let header: JWTHeaderParameters;
    try {
      header = decodeProtectedHeader(token) as JWTHeaderParameters;
    } catch {
      return refused('malformed');
    }
    const alg = header.alg;
    if (typeof alg !== 'string' || !this.signs(alg)) return refused('algorithm');
    let candidates: readonly Key[];
    if (header.kid !== undefined) {
      if (typeof header.kid !== 'string') return refused('malformed');
      const key = loaded.byKid.get(header.kid);
      if (!key) return refused('unknown_key');
      if (key.alg !== alg) return refused('algorithm');
      candidates = [key];
    } else candidates = loaded.keys.filter((key) => key.alg === alg);
    for (const key of candidates) {
      try {
        const { payload, protectedHeader } = await jwtVerify(token, key.verify, {
          algorithms: [key.alg],
          currentDate: new Date(options.now),
          ...(options.issuer !== undefined && { issuer: options.issuer }),
          ...(options.typ !== undefined && { typ: options.typ }),
        });
        return { valid: true, payload, header: protectedHeader, kid: key.kid, expired: false };
      } catch (error) {
        const { code, claim, payload } = error as { code?: string; claim?: string; payload?: JWTPayload };
        if (code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') continue;
        // jose checks `exp` after the signature and every other claim: an expired token is otherwise valid.
        if (code === 'ERR_JWT_EXPIRED' && claim === 'exp' && payload)
          return options.acceptExpired ? { valid: true, payload, header, kid: key.kid, expired: true } : refused('expired');
        return refused(code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' || code === 'ERR_JWT_EXPIRED' ? 'claims' : 'malformed');
      }
    }
    return refused(candidates.length === 0 ? 'unknown_key' : 'signature');
  }

  /** Import every key once, at first use; a failure stays (the set is misconfigured). */
  private load(): Promise<Loaded> {
    this.loading ??= (async () => {
      const source = this.source;
      const checked =
        'given' in source
          ? source.given
          : await Promise.all(source.generate.map(async (alg) => checkSigningJwk(await generateSigningKey(alg), 'generated key')));
      const keys = await Promise.all(checked.map((key, i) => importSigningKey(key, `${this.option}.${i}`)));
      const signers = new Map<SigningAlgorithm, Key>();
      for (const key of keys) if (!signers.has(key.alg)) signers.set(key.alg, key);
      this.ready = {
        keys,
        byKid: new Map(keys.map((key) => [key.kid, key])),
        signers,
        published: checked.map((key) => key.publicJwk),
      };
      return this.ready;
    })();
    return this.loading;
  }
}
