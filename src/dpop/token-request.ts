/**
 * DPoP at the token endpoint (RFC 9449 §5): the proof of a token request, checked before the
 * grant uses anything up, and the refusals of a request that needs one.
 */
import type { DpopProofs } from '../context.js';
import { OAuthError } from '../errors.js';
import type { OAuthRequest } from '../types.js';
import { endpointUrl } from './htu.js';

/** The key a valid proof of a token request proves, and a fresh nonce to hand out when due. */
export interface TokenRequestProof {
  jkt: string;
  nonce?: string;
}

/**
 * The proof of the token request `request` (its `DPoP` header), checked and remembered.
 * @throws OAuthError `invalid_dpop_proof` (400), or `use_dpop_nonce` (400) with a `DPoP-Nonce` header.
 */
export async function tokenRequestProof(dpop: DpopProofs, issuer: string, request: OAuthRequest, now: number): Promise<TokenRequestProof> {
  // The token endpoint as the metadata advertises it: neither a Host header nor a proxy decides it.
  const verdict = await dpop.verify(request.headers['dpop'], { htm: 'POST', htu: endpointUrl(issuer, request.url), now });
  if (verdict.ok) return verdict;
  const error = new OAuthError(verdict.error, verdict.description);
  if (verdict.nonce !== undefined) error.headers = { 'dpop-nonce': verdict.nonce };
  return Promise.reject(error);
}

/** `invalid_dpop_proof` for a request without a proof that needs one: `what` says why. */
export function proofRequired(what: string): OAuthError {
  return new OAuthError('invalid_dpop_proof', `A DPoP proof is required: ${what}.`);
}
