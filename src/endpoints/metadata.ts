import type { Context } from '../context.js';
import { documentMethodRefused, jsonResponse, publicJsonResponse } from '../http.js';
import { DEFAULT_BASE_PATH } from '../rules.js';
import type { OAuthResponse } from '../types.js';
import { jsonFailure } from '../failure.js';
import { openIdFields, publishedKeys } from '../oidc/provider.js';

/**
 * Where the endpoints are, relative to the issuer. Adapters mount them at these paths.
 * @group Adapter kit
 */
export const PATHS = {
  authorize: `${DEFAULT_BASE_PATH}/authorize`,
  token: `${DEFAULT_BASE_PATH}/token`,
  revoke: `${DEFAULT_BASE_PATH}/revoke`,
  introspect: `${DEFAULT_BASE_PATH}/introspect`,
  register: `${DEFAULT_BASE_PATH}/register`,
  metadata: '/.well-known/oauth-authorization-server',
  jwks: '/.well-known/jwks.json',
  openidConfiguration: '/.well-known/openid-configuration',
} as const;

/**
 * The authorization server metadata (RFC 8414 §2), describing exactly what this server is
 * configured to do. `null` without an `issuer`: metadata is meaningless without one.
 */
export function metadataDocument(ctx: Context, options: MetadataOptions = {}): Record<string, unknown> | null {
  const issuer = ctx.options.issuer;
  if (!issuer) return null;
  const base = issuer.replace(/\/$/, '');
  // The adapters tell where they mounted the OAuth routes (basePath, a Fastify prefix).
  const oauth = `${base}${options.basePath ?? DEFAULT_BASE_PATH}`;
  const o = ctx.options;
  return {
    issuer,
    authorization_endpoint: `${oauth}/authorize`,
    token_endpoint: `${oauth}/token`,
    revocation_endpoint: `${oauth}/revoke`,
    introspection_endpoint: `${oauth}/introspect`,
    ...((ctx.jwt || ctx.openid) && { jwks_uri: `${base}${options.documentsPath ?? ''}${PATHS.jwks}` }),
    ...(o.allowDynamicRegistration && { registration_endpoint: `${oauth}/register` }),
    // RFC 8628 §4.
    ...(o.deviceAuthorization && { device_authorization_endpoint: `${oauth}/device` }),
    response_types_supported: o.allowImplicit ? ['code', 'token'] : ['code'],
    response_modes_supported: o.allowImplicit ? ['query', 'fragment'] : ['query'],
    grant_types_supported: [
      'authorization_code',
      'refresh_token',
      ...(o.allowImplicit ? ['implicit'] : []),
      ...(o.deviceAuthorization ? ['urn:ietf:params:oauth:grant-type:device_code'] : []),
    ],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: o.allowPlainPkce ? ['S256', 'plain'] : ['S256'],
    scopes_supported: ctx.scopes.values,
    prompt_values_supported: ['none', 'login', 'select_account'],
    authorization_response_iss_parameter_supported: true,
    ...(o.clientMetadataDocuments && { client_id_metadata_document_supported: true }),
    // RFC 9728 §4: the protected resources this authorization server issues tokens for.
    ...(o.protectedResources && { protected_resources: o.protectedResources.map((r) => r.resource) }),
    // RFC 9449 §5.1: DPoP is on, with these proof algorithms.
    ...(ctx.dpop && { dpop_signing_alg_values_supported: [...ctx.dpop.algorithms] }),
    // OpenID Connect Discovery 1.0 §3: the same document, with the provider's fields.
    ...(ctx.openid && openIdFields(ctx, ctx.openid, oauth, `${base}${options.documentsPath ?? ''}${PATHS.jwks}`)),
  };
}

/**
 * Where an adapter mounted the routes, relative to the issuer.
 * @group Adapter kit
 */
export interface MetadataOptions {
  /** The path of the OAuth endpoints. Default `/v1/oauth`. */
  basePath?: string;
  /** A prefix in front of `/.well-known/...` (a Fastify `prefix`). Default none. */
  documentsPath?: string;
}

/** GET /.well-known/oauth-authorization-server */
export function metadata(ctx: Context, request?: { method: string }, options: MetadataOptions = {}): OAuthResponse {
  try {
    const refused = documentMethodRefused(request);
    if (refused) return refused;
    const document = metadataDocument(ctx, options);
    if (!document)
      return jsonResponse(404, { error: 'not_found', error_description: 'No issuer is configured, so no metadata is published.' });
    return publicJsonResponse(document, 3600);
  } catch (error) {
    // A request that is not one (a method that is not a string). No credentials come here.
    return jsonFailure(ctx, undefined, error, 500);
  }
}

/** GET /.well-known/jwks.json */
export async function jwks(ctx: Context, request?: { method: string }): Promise<OAuthResponse> {
  try {
    const refused = documentMethodRefused(request);
    if (refused) return refused;
    if (ctx.openid) return publicJsonResponse(await publishedKeys(ctx, ctx.openid), 300);
    if (!ctx.jwt)
      return jsonResponse(404, { error: 'not_found', error_description: 'Access tokens are opaque: there are no signing keys.' });
    return publicJsonResponse(await ctx.jwt.jwks(), 300);
  } catch (error) {
    // The keys could not be read, or a request that is not one. No credentials come here.
    return jsonFailure(ctx, undefined, error, 500);
  }
}
