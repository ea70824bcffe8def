import { accessAudience } from '../checks/resource.js';
import type { Context } from '../context.js';
import { randomId, sha256Base64url } from '../crypto.js';
import { invalidClient, OAuthError } from '../errors.js';
import { DEVICE_CODE_GRANT, type ClientRecord, type OAuthGrantRecord } from '../storage/types.js';
import { MAX_TOKEN_LENGTH } from '../tokens/lookup.js';
import { familyEnd, type IssuedTokens } from '../tokens/mint.js';
import { invalidGrant } from '../grants/invalid-grant.js';
import { issued, keyBinding, mintTokens, type Issue } from '../grants/issue-tokens.js';

/**
 * A poll sooner than `interval` seconds after the last one by less than this is not `slow_down`:
 * a client that waits exactly `interval` seconds (measured from its last answer) may still
 * arrive a little early by the server's clock (timer precision, network).
 */
const POLL_LEEWAY_MS = 250;

/**
 * `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4, §3.5;
 * docs/reference.md#device-authorization-grant-rfc-8628). Only reached through the token
 * endpoint's grant map, so the other grants pay nothing for it. The client must authenticate (a
 * public client with `client_id` alone) and be allowed the grant; then one atomic storage step
 * (`pollDeviceAuthorization`) says where the request stands. Once approved, the tokens of a new
 * grant are minted and `redeemDeviceAuthorization` stores them in the same atomic step that uses
 * the approval up, as `redeemCode` does: exactly one poll gets them, and a failure (storage down,
 * a `resource` not requested) leaves the approval for the next poll.
 */
export async function deviceCodeGrant(
  ctx: Context,
  params: Partial<Record<'device_code', string>>,
  client: ClientRecord | null,
  resources?: readonly string[],
  jkt?: string,
): Promise<IssuedTokens> {
  // Set exactly when the option is on, with the store's device authorization group.
  const devices = ctx.devices;
  if (!devices) throw new OAuthError('unsupported_grant_type', 'The device authorization grant is not enabled on this server.');
  if (!client) throw invalidClient();
  // Named explicitly: a client registered without `grantTypes` may not use it (the token endpoint's `mayUseGrant` allows it every type).
  if (!client.grantTypes?.includes(DEVICE_CODE_GRANT)) {
    throw new OAuthError('unauthorized_client', `This application may not use grant_type=${DEVICE_CODE_GRANT}.`);
  }
  if (params.device_code === undefined) throw new OAuthError('invalid_request', 'The device_code parameter is missing.');
  if (params.device_code.length > MAX_TOKEN_LENGTH) throw invalidGrant();

  const now = ctx.clock.now();
  const hash = sha256Base64url(params.device_code);
  const outcome = await devices.pollDeviceAuthorization(hash, client.id, now, POLL_LEEWAY_MS);
  switch (outcome.status) {
    case 'pending':
      throw new OAuthError('authorization_pending', 'The user has not yet approved this device. Keep polling.');
    case 'slow_down':
      throw new OAuthError('slow_down', `Polling too fast: wait ${outcome.interval} seconds between requests.`);
    case 'denied':
      throw new OAuthError('access_denied', 'The user denied the authorization request.');
    case 'expired':
      throw new OAuthError('expired_token', 'The device code has expired. Start a new device authorization.');
    case 'missing':
    case 'redeemed':
      throw invalidGrant();
  }
  const record = outcome.record;
  // RFC 8707 §2.2: `resource` here narrows the access token to some of the requested resources;
  // a wrong one is refused before anything is used up.
  const audience = resources === undefined ? record.resources : accessAudience(ctx, resources, record.resources);
  const grant: OAuthGrantRecord = {
    id: randomId(),
    kind: 'oauth',
    clientId: client.id,
    account: record.account,
    scope: record.scope,
    createdAt: now,
    revokedAt: null,
  };
  const issue: Issue = {
    grantType: 'device_code',
    grantId: grant.id,
    clientId: client.id,
    scope: record.scope,
    now,
    end: familyEnd(ctx, now),
    audience,
    refreshAudience: record.resources,
    refreshFamily: null,
    dpop: keyBinding(jkt, client),
  };
  const pair = mintTokens(ctx, issue, client);
  if (!(await devices.redeemDeviceAuthorization(hash, now, grant, pair.records))) throw invalidGrant();
  return issued(ctx, issue, grant, pair);
}
