import { authenticateClient, mayUseGrant } from '../checks/client-auth.js';
import type { Presented } from '../checks/clients.js';
import { sha256Base64url } from '../crypto.js';
import { MAX_TOKEN_LENGTH } from '../tokens/lookup.js';
import { requirePost } from '../checks/require-post.js';
import type { Context } from '../context.js';
import { OAuthError } from '../errors.js';
import { authorizationCodeGrant } from '../grants/authorization-code.js';
import { deviceCodeGrant } from '../device/device-code.js';
import { DEVICE_CODE_GRANT } from '../storage/types.js';
import { refreshTokenGrant } from '../grants/refresh-token.js';
import { formBounds, formParamsWithin, jsonTextResponse, requestParams, singleWithin } from '../http.js';
import type { ClientRecord } from '../storage/types.js';
import type { IssuedTokens } from '../tokens/mint.js';
import { tokenResponseJson } from '../tokens/response.js';
import type { OAuthRequest, OAuthResponse } from '../types.js';
import { jsonFailure } from '../failure.js';
import { proofRequired, tokenRequestProof } from '../dpop/token-request.js';
import { idTokenResponse } from '../oidc/provider.js';

/**
 * Every parameter the token endpoint defines, each of which may appear once (RFC 6749 §3.2),
 * with an upper bound on its length, so nothing unbounded reaches hashing or storage.
 */
const TOKEN_PARAMS = {
  grant_type: 100,
  code: 4096,
  redirect_uri: 4096,
  code_verifier: 4096,
  refresh_token: 4096,
  scope: 200,
  client_id: 512,
  client_secret: 512,
  // RFC 8707 §2: may be sent more than once (see `token`); bounded by its own check (`invalid_target`).
  resource: Infinity,
  // RFC 8628 §3.4. Last: the names above are matched first, so the other grants' parsing stays as it was.
  device_code: 4096,
} as const;
type TokenParams = Partial<Record<keyof typeof TOKEN_PARAMS, string>>;
const TOKEN_FORM = formBounds(TOKEN_PARAMS);
const { resource: _resource, ...ONE_VALUE_PARAMS } = TOKEN_PARAMS;

/**
 * A grant answers with the pair it issued and the grant it belongs to; the endpoint writes the
 * response. `resources` are the `resource` values sent (RFC 8707), `undefined` for none.
 */
type Grant = (
  ctx: Context,
  params: TokenParams,
  client: ClientRecord | null,
  resources: readonly string[] | undefined,
  jkt: string | undefined,
  presented: Presented | undefined,
) => Promise<IssuedTokens>;

/** The grants, by `grant_type`. */
const GRANTS: Record<string, Grant> = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
  // RFC 8628 §3.4; answers `unsupported_grant_type` itself while `deviceAuthorization` is off.
  'urn:ietf:params:oauth:grant-type:device_code': deviceCodeGrant,
};

/**
 * The code or refresh token a request presents, by its hash, for the store to read together
 * with the client (`findClientWith`); `undefined` for another grant, or a value no store holds
 * (the grant refuses it without a read).
 */
function presentedCredential(params: TokenParams): Presented | undefined {
  const kind = params.grant_type === 'authorization_code' ? 'code' : params.grant_type === 'refresh_token' ? 'token' : undefined;
  const value = kind === 'code' ? params.code : params.refresh_token;
  return kind === undefined || value === undefined || value.length > MAX_TOKEN_LENGTH ? undefined : { kind, hash: sha256Base64url(value) };
}

/**
 * POST /v1/oauth/token. Order (docs/reference.md#token-endpoint): POST only; parse (a parameter twice is
 * `invalid_request`); client credentials, when sent, checked first; `grant_type`; then the
 * grant's own checks.
 */
export async function token(ctx: Context, request: OAuthRequest): Promise<OAuthResponse> {
  try {
    requirePost(request);
    let params: TokenParams;
    let resources: readonly string[] | undefined;
    try {
      params = formParamsWithin(request, TOKEN_FORM);
      resources = params.resource === undefined ? undefined : [params.resource];
    } catch (error) {
      // The one-value reader refuses a repeated parameter, and `resource` may be repeated (RFC
      // 8707 §2): such a request is read again by the general reader. Any other problem stands.
      const all = requestParams(request);
      resources = all.get('resource');
      if (resources === undefined || resources.length < 2) throw error;
      params = singleWithin(all, ONE_VALUE_PARAMS);
    }
    // Client authentication: the store's answer is its one await. The code or refresh token,
    // when the store can read it with the client, comes in the same answer.
    const presented = ctx.combined && presentedCredential(params);
    const client = await authenticateClient(ctx, request, params, presented);
    if (params.grant_type === undefined) throw new OAuthError('invalid_request', 'The grant_type parameter is missing.');
    const grant = Object.hasOwn(GRANTS, params.grant_type) ? GRANTS[params.grant_type] : undefined;
    if (!grant) {
      const device = ctx.options.deviceAuthorization ? `, or '${DEVICE_CODE_GRANT}'` : '';
      throw new OAuthError('unsupported_grant_type', `The grant_type must be 'authorization_code' or 'refresh_token'${device}.`);
    }
    // RFC 6749 §5.2: the authenticated client may not use this grant type (RFC 7591 `grant_types`).
    if (client && !mayUseGrant(client, params.grant_type)) {
      throw new OAuthError('unauthorized_client', `This application may not use grant_type=${params.grant_type}.`);
    }
    // RFC 9449 §5: a proof binds the tokens; checked before the grant uses anything up.
    const issuer = ctx.options.issuer;
    const proof =
      ctx.dpop && issuer && request.headers['dpop'] !== undefined
        ? await tokenRequestProof(ctx.dpop, issuer, request, ctx.clock.now())
        : undefined;
    if (proof === undefined && client?.dpopBoundAccessTokens && ctx.dpop)
      throw proofRequired('this application uses DPoP-bound tokens only');
    const issued = await grant(ctx, params, client, resources, proof?.jkt, presented);
    const json = tokenResponseJson(ctx, issued.grant, issued.pair);
    let body = typeof json === 'string' ? json : await json;
    // OpenID Connect (Core §3.1.3.3, §12.2): an ID token while the scope keeps `openid`.
    if (issued.openid && ctx.openid && issued.pair.scope.includes('openid')) body = await idTokenResponse(ctx, ctx.openid, issued, body);
    const response = jsonTextResponse(200, body);
    if (proof?.nonce !== undefined) response.headers['dpop-nonce'] = proof.nonce;
    return response;
  } catch (error) {
    return jsonFailure(ctx, request, error, 500);
  }
}
