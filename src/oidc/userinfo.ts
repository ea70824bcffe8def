/**
 * The OpenID Provider's endpoints besides the authorization and token endpoints: userinfo
 * (OpenID Connect Core §5.3) and the discovery document at `/.well-known/openid-configuration`
 * (Discovery 1.0 §4). Both answer 404 while the `openid` option is off.
 */
import { findClient } from '../checks/clients.js';
import type { Context } from '../context.js';
import { requireBearerScope } from '../endpoints/authenticate.js';
import { endpointUrl } from '../dpop/htu.js';
import { metadata, type MetadataOptions } from '../endpoints/metadata.js';
import { OAuthError } from '../errors.js';
import { jsonFailure } from '../failure.js';
import { jsonResponse, requestParams } from '../http.js';
import type { OAuthRequest, OAuthResponse } from '../types.js';

const OFF = { error: 'not_found', error_description: 'OpenID Connect is not enabled on this server.' };

/**
 * `GET|POST {basePath}/userinfo` (Core §5.3): the claims of the token's account its scope allows
 * (Core §5.4), with the `sub` its client sees, as JSON. The access token must be live and have
 * `openid` (`requireBearerScope`: RFC 6750 errors and `WWW-Authenticate`); in the
 * `Authorization` header, or for a POST in the form body (`access_token`, RFC 6750 §2.2).
 */
export async function userinfo(ctx: Context, request: OAuthRequest, report: (error: unknown) => void): Promise<OAuthResponse> {
  try {
    const provider = ctx.openid;
    if (!provider) return jsonResponse(404, OFF);
    const method = typeof request.method === 'string' ? request.method.toUpperCase() : '';
    if (method !== 'GET' && method !== 'POST') {
      return jsonResponse(
        405,
        { error: 'invalid_request', error_description: 'The userinfo endpoint takes GET and POST.' },
        { allow: 'GET, POST' },
      );
    }
    let token: string | undefined;
    if (method === 'POST' && request.body !== undefined && request.body !== '') {
      // The body's parameters alone (RFC 6750 §2.2), never the query's (§2.3 is not supported).
      const values = requestParams({ method, url: '/', headers: request.headers, body: request.body }).get('access_token');
      if (values && values.length > 1) throw new OAuthError('invalid_request', 'The access_token parameter was sent more than once.');
      // An empty one is no token (RFC 6749 §3.1: a parameter without a value is omitted).
      token = values?.[0] || undefined;
    }
    // RFC 9449 §4.3 point 9: a DPoP proof names userinfo as discovery advertises it, as at the
    // token endpoint: the issuer, then the path (query kept for the bearer check's own rules).
    const issuer = ctx.options.issuer;
    const checked = ctx.dpop && issuer ? { ...request, url: endpointUrl(issuer, request.url) } : request;
    const result = await requireBearerScope(ctx, checked, ['openid'], report, token);
    if (!result.ok) return result.response;
    const { token: verified } = result;
    // A personal access token belongs to no client: it has no `sub` of a client to answer with.
    const client = verified.kind === 'oauth' ? await findClient(ctx, verified.clientId) : null;
    if (!client) {
      return jsonResponse(
        401,
        { error: 'invalid_token', error_description: 'The access token is invalid, expired or revoked.' },
        { 'www-authenticate': `Bearer realm="${ctx.options.realm}", error="invalid_token"` },
      );
    }
    const claims = await provider.claims(verified.account, verified.scope, client.id);
    // Core §5.3.2: `sub` always, first; the host's claims never replace it (`filterClaims` drops it).
    return jsonResponse(200, { sub: provider.subject(verified.account, client), ...claims });
  } catch (error) {
    return jsonFailure(ctx, request, error, 500);
  }
}

/**
 * `GET /.well-known/openid-configuration` (Discovery 1.0 §4): the RFC 8414 document, which
 * carries the provider's fields while the option is on; 404 while it is off.
 */
export function openIdConfiguration(ctx: Context, request?: { method: string }, options?: MetadataOptions): OAuthResponse {
  if (!ctx.openid) return jsonResponse(404, OFF);
  return metadata(ctx, request, options);
}
