import type { Context } from '../context.js';
import { jsonResponse } from '../http.js';
import type { OAuthResponse } from '../types.js';

/** Where the endpoints are, relative to the issuer. Adapters mount them at these paths. */
export const PATHS = {
  authorize: '/v1/oauth/authorize',
  token: '/v1/oauth/token',
  revoke: '/v1/oauth/revoke',
  introspect: '/v1/oauth/introspect',
  register: '/v1/oauth/register',
  metadata: '/.well-known/oauth-authorization-server',
  jwks: '/.well-known/jwks.json',
} as const;

/**
 * The authorization server metadata (RFC 8414 §2), describing exactly what this server is
 * configured to do. `null` without an `issuer`: metadata is meaningless without one.
 */
export function metadataDocument(ctx: Context): Record<string, unknown> | null {
  const issuer = ctx.options.issuer;
  if (!issuer) return null;
  const base = issuer.replace(/\/$/, '');
  const o = ctx.options;
  return {
    issuer,
    authorization_endpoint: `${base}${PATHS.authorize}`,
    token_endpoint: `${base}${PATHS.token}`,
    revocation_endpoint: `${base}${PATHS.revoke}`,
    introspection_endpoint: `${base}${PATHS.introspect}`,
    ...(ctx.jwt && { jwks_uri: `${base}${PATHS.jwks}` }),
    ...(o.allowDynamicRegistration && { registration_endpoint: `${base}${PATHS.register}` }),
    response_types_supported: o.allowImplicit ? ['code', 'token'] : ['code'],
    response_modes_supported: o.allowImplicit ? ['query', 'fragment'] : ['query'],
    grant_types_supported: o.allowImplicit ? ['authorization_code', 'refresh_token', 'implicit'] : ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: o.allowPlainPkce ? ['S256', 'plain'] : ['S256'],
    scopes_supported: ctx.scopes.values,
    prompt_values_supported: ['none', 'login', 'select_account'],
    authorization_response_iss_parameter_supported: true,
  };
}

/** GET /.well-known/oauth-authorization-server */
export function metadata(ctx: Context): OAuthResponse {
  const document = metadataDocument(ctx);
  if (!document) return jsonResponse(404, { error: 'not_found', error_description: 'No issuer is configured, so no metadata is published.' });
  // Public and stable: caching is fine here, unlike token responses.
  return { ...jsonResponse(200, document), headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=3600' } };
}

/** GET /.well-known/jwks.json */
export async function jwks(ctx: Context): Promise<OAuthResponse> {
  if (!ctx.jwt) return jsonResponse(404, { error: 'not_found', error_description: 'Access tokens are opaque: there are no signing keys.' });
  return { ...jsonResponse(200, await ctx.jwt.jwks()), headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=300' } };
}
