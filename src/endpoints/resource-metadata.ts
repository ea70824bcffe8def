import type { Context } from '../context.js';
import { ConfigError } from '../errors.js';
import { documentMethodRefused, jsonResponse, publicJsonResponse } from '../http.js';
import type { OAuthResponse, ProtectedResource } from '../types.js';
import { jsonFailure } from '../failure.js';

/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728; docs/reference.md#protected-resources-rfc-9728):
 * the document of each of the `protectedResources`, served at its well-known path (§3.1).
 */

/** One of the `protectedResources` (`AuthorizationServer.protectedResource`), or a `ConfigError` naming the option. */
export function protectedResource(ctx: Context, resource: string): ProtectedResource {
  const entry = ctx.options.protectedResources?.find((r) => r.resource === resource);
  if (!entry) throw new ConfigError('resource', `expected one of the protectedResources, not ${JSON.stringify(resource)}`);
  return entry;
}

/**
 * The metadata of one protected resource (RFC 9728 §2): `null` without an `issuer` (there is no
 * authorization server to name) or for an identifier that is not one of the `protectedResources`.
 */
export function resourceMetadataDocument(ctx: Context, resource: string): Record<string, unknown> | null {
  const issuer = ctx.options.issuer;
  const entry = ctx.options.protectedResources?.find((r) => r.resource === resource);
  if (!issuer || !entry) return null;
  return {
    resource: entry.resource,
    authorization_servers: [issuer],
    scopes_supported: [...entry.scopes],
    // RFC 6750 §2.1 only: a token in a form body or the query is refused (docs/reference.md#resource-check).
    bearer_methods_supported: ['header'],
    ...(entry.name !== undefined && { resource_name: entry.name }),
    // RFC 9728 §2: the proofs this resource takes (RFC 9449), and whether it takes DPoP-bound tokens only.
    ...(ctx.dpop && { dpop_signing_alg_values_supported: [...ctx.dpop.algorithms] }),
    ...(entry.dpopBoundAccessTokensRequired && { dpop_bound_access_tokens_required: true }),
  };
}

/**
 * Which resource's document a request to `path` (a `metadataPath`) asks for: the one resource
 * with that path, or, when several hosts share it, the one on the request's host.
 */
export function resourceAt(resources: readonly ProtectedResource[] | undefined, path: string, url: string): string | undefined {
  const candidates = resources?.filter((r) => r.metadataPath === path) ?? [];
  if (candidates.length <= 1) return candidates[0]?.resource;
  const host = URL.canParse(url) ? new URL(url).host : '';
  return candidates.find((r) => new URL(r.resource).host === host)?.resource;
}

/** GET /.well-known/oauth-protected-resource{path}: 404 without an issuer or for an unknown resource. */
export function resourceMetadata(ctx: Context, resource: string | undefined, request?: { method: string }): OAuthResponse {
  try {
    const refused = documentMethodRefused(request);
    if (refused) return refused;
    const document = resource === undefined ? null : resourceMetadataDocument(ctx, resource);
    if (!document)
      return jsonResponse(404, {
        error: 'not_found',
        error_description: ctx.options.issuer
          ? 'No protected resource is described here.'
          : 'No issuer is configured, so no metadata is published.',
      });
    // Public and stable, as the authorization server's metadata.
    return publicJsonResponse(document, 3600);
  } catch (error) {
    // A request that is not one (a method that is not a string). No credentials come here.
    return jsonFailure(ctx, undefined, error, 500);
  }
}
