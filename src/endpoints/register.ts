import type { Context } from '../context.js';
import { asciiDescription, type OAuthError } from '../errors.js';
import { header, isMethod, jsonResponse } from '../http.js';
import { BIDI_CONTROLS } from '../rules.js';
import type { ClientGrantType } from '../storage/types.js';
import type { OAuthRequest, OAuthResponse, RegisteredPublicClient } from '../types.js';
import { jsonFailure } from '../failure.js';
import { createClient, refusedField } from '../management.js';
import { clientOpenIdSection, openIdRegistrationInput, openIdRegistrationOutput } from '../oidc/client-fields.js';

/** The longest `client_uri` / `logo_uri` kept, as for redirect URIs. */
const MAX_URI = 2000;

/**
 * A `client_uri` or `logo_uri` worth keeping: an https URL of visible ASCII (so it is stored and
 * shown as it was sent, like a redirect URI), without user information. Anything else is dropped
 * rather than refused (RFC 7591 §3.2.1 lets the server replace a requested value and answers
 * what was stored, so the client sees it was not kept): these are only shown, never used, and an MCP
 * client with a development `http://localhost` home page must still be able to register.
 */
function httpsUri(value: string): string | undefined {
  if (value.length > MAX_URI || !/^https:\/\/[\x21-\x7e]+$/.test(value) || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  return url.protocol === 'https:' && url.host && !url.username && !url.password ? value : undefined;
}

/**
 * POST /v1/oauth/register: dynamic client registration (RFC 7591) of public clients, off by
 * default. The body is JSON; exactly one redirect URI (authgate binds one callback to a client);
 * `token_endpoint_auth_method`, when sent, must be `none`. The host's `onDynamicRegistration`
 * hook decides each registration. The client is stored code-only (`response_types: ["code"]`:
 * a public client gets no implicit-flow tokens), with the `grant_types` it asked for
 * (default both), and may use nothing else. `client_uri` and `logo_uri` are kept only as https
 * URLs. The client is marked as registered by itself, so pages show it as not verified
 * (docs/reference.md#dynamic-registration-endpoint). Other metadata (`scope`, `software_id`,
 * `contacts`...) is accepted and not stored.
 */
export async function register(ctx: Context, request: OAuthRequest): Promise<OAuthResponse> {
  try {
    if (!ctx.options.allowDynamicRegistration) {
      return jsonResponse(404, { error: 'not_found', error_description: 'Dynamic client registration is not enabled on this server.' });
    }
    if (!isMethod(request, 'POST')) {
      return jsonResponse(
        405,
        { error: 'invalid_request', error_description: 'This endpoint only accepts POST requests.' },
        { allow: 'POST' },
      );
    }
    const bad = (error: string, description: string, status = 400) =>
      jsonResponse(status, { error, error_description: asciiDescription(description) });
    const type = (header(request, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    // No body and an empty body are the same request, whatever the framework hands over.
    const body = typeof request.body === 'string' ? request.body : '';
    if (type !== 'application/json' || !body)
      return bad('invalid_client_metadata', 'The request body must be a JSON object (application/json).');
    let metadata: unknown;
    try {
      metadata = JSON.parse(body);
    } catch {
      return bad('invalid_client_metadata', 'The request body is not valid JSON.');
    }
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
      return bad('invalid_client_metadata', 'The request body must be a JSON object.');
    const m = metadata as Record<string, unknown>;
    const uris = m.redirect_uris;
    if (!Array.isArray(uris) || uris.length !== 1 || typeof uris[0] !== 'string') {
      return bad('invalid_redirect_uri', 'redirect_uris must hold exactly one URI.');
    }
    const name = m.client_name === undefined ? 'Unnamed application' : m.client_name;
    if (typeof name !== 'string') return bad('invalid_client_metadata', 'client_name must be a string.');
    if (BIDI_CONTROLS.test(name)) return bad('invalid_client_metadata', 'client_name must not hold bidirectional control characters.');
    if (m.token_endpoint_auth_method !== undefined && m.token_endpoint_auth_method !== 'none') {
      return bad('invalid_client_metadata', 'Only public clients can register dynamically: token_endpoint_auth_method must be none.');
    }
    const grants: unknown = m.grant_types ?? ['authorization_code', 'refresh_token'];
    if (!Array.isArray(grants) || grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
      return bad('invalid_client_metadata', 'grant_types may only hold authorization_code and refresh_token.');
    }
    // RFC 7591 §2.1: response_types ["code"] goes with the authorization_code grant.
    if (!grants.includes('authorization_code')) return bad('invalid_client_metadata', 'grant_types must include authorization_code.');
    const grantTypes: ClientGrantType[] = grants.includes('refresh_token')
      ? ['authorization_code', 'refresh_token']
      : ['authorization_code'];
    const responses = m.response_types ?? ['code'];
    if (!Array.isArray(responses) || responses.some((r) => r !== 'code'))
      return bad('invalid_client_metadata', 'response_types may only hold code.');
    if ((m.client_uri !== undefined && typeof m.client_uri !== 'string') || (m.logo_uri !== undefined && typeof m.logo_uri !== 'string')) {
      return bad('invalid_client_metadata', 'client_uri and logo_uri must be strings.');
    }
    const clientUri = m.client_uri === undefined ? undefined : httpsUri(m.client_uri);
    const logoUri = m.logo_uri === undefined ? undefined : httpsUri(m.logo_uri);
    // RFC 9449 §5.2: a client may register as using DPoP always; without DPoP here the field is ignored.
    const dpopBound = ctx.dpop ? m.dpop_bound_access_tokens : undefined;
    if (dpopBound !== undefined && typeof dpopBound !== 'boolean') {
      return bad('invalid_client_metadata', 'dpop_bound_access_tokens must be true or false.');
    }
    // OpenID Connect's client fields (Dynamic Client Registration 1.0 §2), with the option on; ignored without, as any metadata.
    const openid = ctx.openid ? openIdRegistrationInput(m) : undefined;
    const allow = ctx.options.onDynamicRegistration;
    if (allow && !(await allow({ clientName: name, redirectUri: uris[0] }, request))) {
      return bad('access_denied', 'This registration was refused.', 403);
    }
    let client: RegisteredPublicClient;
    try {
      client = await createClient(
        ctx,
        {
          name,
          redirectUri: uris[0],
          public: true,
          responseTypes: ['code'],
          grantTypes,
          ...(dpopBound && { dpopBoundAccessTokens: true }),
          ...(openid && { openid }),
        },
        { registration: 'dynamic', clientUri, logoUri },
      );
    } catch (error) {
      // A refused field is the client's metadata (RFC 7591 §3.2.2); anything else (storage) is a 500 below.
      const field = refusedField(error);
      if (field === undefined) throw error;
      return bad(field === 'redirectUri' ? 'invalid_redirect_uri' : 'invalid_client_metadata', (error as OAuthError).description);
    }
    // RFC 7591 §3.2.1: everything stored about the client, and nothing that was not.
    return jsonResponse(201, {
      client_id: client.clientId,
      client_id_issued_at: Math.floor(ctx.clock.now() / 1000),
      client_name: client.name,
      redirect_uris: [client.redirectUri],
      token_endpoint_auth_method: 'none',
      grant_types: grantTypes,
      response_types: ['code'],
      ...(clientUri !== undefined && { client_uri: clientUri }),
      ...(logoUri !== undefined && { logo_uri: logoUri }),
      ...(dpopBound && { dpop_bound_access_tokens: true }),
      ...(openid && openIdRegistrationOutput(clientOpenIdSection(ctx.openid, openid))),
    });
  } catch (error) {
    // The host's hook or storage failing, or a request that is not one (a method that is not a string).
    return jsonFailure(ctx, request, error, 500);
  }
}
