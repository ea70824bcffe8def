/**
 * The OpenID Provider fields of the discovery document (OpenID Connect Discovery 1.0 §3), added
 * to the RFC 8414 document, so `/.well-known/openid-configuration` and
 * `/.well-known/oauth-authorization-server` describe the same server (RFC 8414 §3 allows both
 * names). Pure: the integration says what is on and where the endpoints are.
 */
import type { SigningAlgorithm } from '../keys/jwk.js';
import type { SubjectType } from './subject.js';

/** What the OpenID Provider does, as the integration configured it. */
export interface OpenIdDiscoveryInput {
  /** Absolute URL of the userinfo endpoint (Core §5.3). */
  userinfoEndpoint: string;
  /** Absolute URL of the JWKS with the ID token keys (Discovery §3: REQUIRED). */
  jwksUri: string;
  /** Absolute URL of the end-session endpoint (RP-Initiated Logout 1.0 §2.1); absent: logout off. */
  endSessionEndpoint?: string | undefined;
  /**
   * The algorithms ID tokens can be signed with (`SigningKeys.algorithms`). Discovery §3:
   * RS256 MUST be among them; the integration makes sure a key of it exists.
   */
  signingAlgorithms: readonly SigningAlgorithm[];
  /** `Subjects.types`. */
  subjectTypes: readonly SubjectType[];
  /** Every claim a client can get (`ClaimsPolicy.supported`). */
  claims: readonly string[];
  /** `scopes_supported` of the RFC 8414 document, as it is without OpenID Connect. */
  scopes: readonly string[];
  /** The scopes with claims the server offers (`ClaimsPolicy.scopes`, or those of them offered). */
  claimScopes: readonly string[];
  /** Whether `offline_access` (Core §11) is offered. */
  offlineAccess: boolean;
  /** `response_modes_supported` of the RFC 8414 document, as it is without OpenID Connect. */
  responseModes: readonly string[];
  /** Whether `response_mode=form_post` (OAuth 2.0 Form Post Response Mode) is served. */
  formPost: boolean;
  /** The `prompt` values served (Core §3.1.2.1). */
  prompts: readonly string[];
  /** The languages of the built-in pages (`ResolvedPages.languages`), for `ui_locales_supported`. */
  languages: readonly string[];
}

/** The fields Discovery 1.0 §3 adds, or whose value OpenID Connect changes. */
export interface OpenIdDiscoveryFields {
  userinfo_endpoint: string;
  jwks_uri: string;
  end_session_endpoint?: string;
  scopes_supported: string[];
  response_modes_supported: string[];
  subject_types_supported: SubjectType[];
  id_token_signing_alg_values_supported: SigningAlgorithm[];
  claims_supported: string[];
  prompt_values_supported: string[];
  ui_locales_supported?: string[];
  claims_parameter_supported: false;
  request_parameter_supported: false;
  request_uri_parameter_supported: false;
}

/** Claims of every ID token (Core §2), listed in `claims_supported` with the scopes' claims. */
const ID_TOKEN_CLAIMS = ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash'];

const unique = (...lists: (readonly string[])[]): string[] => [...new Set(lists.flat())];

/**
 * The fields to spread over the RFC 8414 document (`{ ...metadataDocument, ...openIdDiscovery(input) }`).
 * `claims`, `request` and `request_uri` request parameters are not supported and say so:
 * Discovery §3 makes `request_uri_parameter_supported` true when absent.
 */
export function openIdDiscovery(input: OpenIdDiscoveryInput): OpenIdDiscoveryFields {
  return {
    userinfo_endpoint: input.userinfoEndpoint,
    jwks_uri: input.jwksUri,
    ...(input.endSessionEndpoint !== undefined && { end_session_endpoint: input.endSessionEndpoint }),
    scopes_supported: unique(input.scopes, ['openid'], input.claimScopes, input.offlineAccess ? ['offline_access'] : []),
    response_modes_supported: unique(input.responseModes, input.formPost ? ['form_post'] : []),
    subject_types_supported: [...input.subjectTypes],
    id_token_signing_alg_values_supported: [...input.signingAlgorithms],
    claims_supported: unique(ID_TOKEN_CLAIMS, input.claims),
    prompt_values_supported: [...input.prompts],
    ...(input.languages.length > 0 && { ui_locales_supported: [...input.languages] }),
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}
