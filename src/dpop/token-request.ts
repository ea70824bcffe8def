/**
 * DPoP at the token endpoint (RFC 9449 §5): the proof of a token request, checked before the
 * grant uses anything up, and the refusals of a request that needs one.
 */
import type { DpopProofs } from '../context.js';
import { OAuthError } from '../errors.js';
import type { OAuthRequest } from '../types.js';

/** The key a valid proof of a token request proves, and a fresh nonce to hand out when due. */
export interface TokenRequestProof {
  jkt: string;
  nonce?: string;
}

/**
 * The URL a token request's `htu` must name: the issuer's origin with the path the request came
 * to, so neither a `Host` header nor a proxy's scheme decides it, while the endpoint may sit
 * under any `basePath` or mount point.
 */
export function tokenEndpointUrl(issuer: string, url: string): string {
  let path = url;
  if (!url.startsWith('/')) path = URL.canParse(url) ? new URL(url).pathname : '/';
  const query = path.search(/[?#]/);
  return new URL(issuer).origin + (query === -1 ? path : path.slice(0, query));
}

/**
 * The proof of the token request `request` (its `DPoP` header), checked and remembered.
 * @throws OAuthError `invalid_dpop_proof` (400), or `use_dpop_nonce` (400) with a `DPoP-Nonce` header.
 */
export async function tokenRequestProof(dpop: DpopProofs, issuer: string, request: OAuthRequest, now: number): Promise<TokenRequestProof> {
  const verdict = await dpop.verify(request.headers['dpop'], { htm: 'POST', htu: tokenEndpointUrl(issuer, request.url), now });
  if (verdict.ok) return verdict;
  const error = new OAuthError(verdict.error, verdict.description);
  if (verdict.nonce !== undefined) error.headers = { 'dpop-nonce': verdict.nonce };
  return Promise.reject(error);
}

/** `invalid_dpop_proof` for a request without a proof that needs one: `what` says why. */
export function proofRequired(what: string): OAuthError {
  return new OAuthError('invalid_dpop_proof', `A DPoP proof is required: ${what}.`);
}
