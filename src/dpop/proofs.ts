/**
 * The DPoP proof check of one server instance (RFC 9449 §4.3): `checkProof` with the instance's
 * policy, then the replay check of §4.3 point 12 and §11.1 through the store's `dpopProofs`
 * group, so two instances sharing a store accept a proof once between them.
 */
import type { DpopProofs, DpopVerdict } from '../context.js';
import type { DpopProofStorage } from '../storage/types.js';
import { dpopNonces } from './nonce.js';
import { dpopSigningAlgValuesSupported, proofPolicy, type ProofPolicyOptions } from './policy.js';
import { checkProof } from './proof.js';

/** The `dpop` option of the server (docs/reference.md#dpop-rfc-9449), as resolved. */
export interface DpopSettings {
  algorithms?: readonly string[] | undefined;
  maxAgeSeconds?: number | undefined;
  clockSkewSeconds?: number | undefined;
  maxLength?: number | undefined;
  /** A secret shared by every instance (at least 32 bytes): server nonces are required then (RFC 9449 §8, §9). */
  nonceSecret?: string | Uint8Array | undefined;
  nonceWindowSeconds?: number | undefined;
}

const REPLAYED: DpopVerdict = { ok: false, error: 'invalid_dpop_proof', description: 'The DPoP proof was used before.' };

/**
 * The proof check for `settings` over `store`.
 * @throws ConfigError for a setting out of range (`proofPolicy`, `dpopNonces`).
 */
export function dpopProofs(settings: DpopSettings, store: DpopProofStorage): DpopProofs {
  const options: ProofPolicyOptions = {};
  if (settings.algorithms !== undefined) options.algorithms = settings.algorithms;
  if (settings.maxAgeSeconds !== undefined) options.maxAgeSeconds = settings.maxAgeSeconds;
  if (settings.clockSkewSeconds !== undefined) options.clockSkewSeconds = settings.clockSkewSeconds;
  if (settings.maxLength !== undefined) options.maxLength = settings.maxLength;
  if (settings.nonceSecret !== undefined) {
    options.nonces = dpopNonces({
      secret: settings.nonceSecret,
      ...(settings.nonceWindowSeconds !== undefined && { windowSeconds: settings.nonceWindowSeconds }),
    });
  }
  const policy = proofPolicy(options);
  const proofs: DpopProofs = {
    algorithms: Object.freeze(dpopSigningAlgValuesSupported(policy)),
    nonces: policy.nonces !== undefined,
    async verify(header, request): Promise<DpopVerdict> {
      const proof = await checkProof(header, request, policy);
      if (!proof.ok) return proof;
      // §11.1: the `jti` is remembered as long as the proof would pass, by whichever instance sees it first.
      if (!(await store.rememberDpopProof(proof.replayKey, proof.expiresAt, request.now))) return REPLAYED;
      return proof.nonce === undefined ? { ok: true, jkt: proof.jkt } : { ok: true, jkt: proof.jkt, nonce: proof.nonce };
    },
  };
  return Object.freeze(proofs);
}
