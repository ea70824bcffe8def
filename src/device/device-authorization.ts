import { authenticateClient } from '../checks/client-auth.js';
import { findClient } from '../checks/clients.js';
import { approvedConsent } from '../checks/consent.js';
import { requirePost } from '../checks/require-post.js';
import { signedIn } from '../checks/session.js';
import { isResourceProblem, requestedResources } from '../checks/resource.js';
import { formatUserCode, newUserCode, normalizeUserCode, userCodeHash } from './user-code.js';
import { audit, type Context } from '../context.js';
import { randomToken, sha256Base64url } from '../crypto.js';
import { invalidClient, OAuthError } from '../errors.js';
import { jsonResponse, requestParams, singleWithin } from '../http.js';
import { DEVICE_CODE_GRANT, type DeviceConfirmationInteractionRecord, type DeviceVerificationRecord } from '../storage/types.js';
import type { AuthorizeDecision, OAuthRequest, OAuthResponse } from '../types.js';
import { errorPage, jsonFailure, pageFailure } from '../failure.js';
import { askToConfirmDevice, askToSignInForDevice } from '../interactions/ask.js';

/**
 * The device authorization grant (RFC 8628; docs/reference.md#device-authorization-grant-rfc-8628),
 * apart from the token endpoint's part (`device-code.ts`):
 * - `deviceAuthorization`: `POST {basePath}/device`, where a device gets its device code and the
 *   user code to show (RFC 8628 §3.1, §3.2);
 * - `enterUserCode`: the verification page's step (RFC 8628 §3.3) once a signed-in user typed a
 *   code: a wrong one is counted (§5.1), a right one becomes a `consent` step whose
 *   `interaction.device` names the code, decided by `approve` / `deny` (`decideDevice`);
 * - `deviceSignIn`: the sign-in step of a verification page opened by nobody signed in. It uses
 *   the host's existing contract (`loginUrl?interaction=…`, then `authorize/resume`), and `resume`
 *   sends the browser back to the verification page.
 */

/** The parameters of the device authorization request, each once, bounded (`resource` may repeat). */
const DEVICE_PARAMS = { client_id: 512, client_secret: 512, scope: 200 } as const;

/** How often a new user code is drawn when the one drawn is in use (20^8 codes: a collision is rare). */
const USER_CODE_DRAWS = 5;

/**
 * `POST {basePath}/device` (RFC 8628 §3.1): the client authenticates as at the token endpoint
 * (a public client with `client_id` alone) and must be allowed the grant; `scope` and `resource`
 * are checked as at the authorization endpoint. Answers the codes, `verification_uri` (the
 * absolute URL of the verification page, given by the adapter kit), `verification_uri_complete`,
 * `expires_in` and `interval` (RFC 8628 §3.2). 404 while the option is off.
 */
export async function deviceAuthorization(ctx: Context, request: OAuthRequest, verificationUri: string): Promise<OAuthResponse> {
  try {
    const settings = ctx.options.deviceAuthorization;
    const devices = ctx.devices;
    if (!settings || !devices) {
      return jsonResponse(404, { error: 'not_found', error_description: 'The device authorization grant is not enabled on this server.' });
    }
    requirePost(request);
    const all = requestParams(request);
    const params = singleWithin(all, DEVICE_PARAMS);
    const client = await authenticateClient(ctx, request, params);
    // RFC 8628 §3.1: `client_id` is required of a public client; a confidential one authenticates.
    if (!client) throw invalidClient();
    if (!client.grantTypes?.includes(DEVICE_CODE_GRANT)) {
      throw new OAuthError('unauthorized_client', 'This application may not use the device authorization grant.');
    }
    const scope = ctx.scopes.parse(params.scope);
    if (!scope) throw new OAuthError('invalid_scope', 'The requested scope is invalid, unknown or malformed.');
    const resources = requestedResources(ctx, all.get('resource'), undefined);
    if (isResourceProblem(resources)) throw new OAuthError('invalid_target', resources.message);

    const now = ctx.clock.now();
    const deviceCode = randomToken();
    for (let draw = 0; draw < USER_CODE_DRAWS; draw++) {
      const userCode = newUserCode(settings.userCodeLength);
      const created = await devices.createDeviceAuthorization({
        hash: sha256Base64url(deviceCode),
        userCodeHash: userCodeHash(userCode),
        clientId: client.id,
        scope,
        ...(resources !== undefined && { resources }),
        createdAt: now,
        expiresAt: now + settings.lifetime * 1000,
        interval: settings.interval,
        lastPolledAt: null,
        status: 'pending',
        account: null,
        decidedAt: null,
      });
      if (!created) continue;
      audit(ctx, { type: 'device.authorization_started', clientId: client.id });
      const shown = formatUserCode(userCode);
      return jsonResponse(200, {
        device_code: deviceCode,
        user_code: shown,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${shown}`,
        expires_in: settings.lifetime,
        interval: settings.interval,
      });
    }
    throw new Error('deviceAuthorization: no free user code after several draws');
  } catch (error) {
    return jsonFailure(ctx, request, error, 500);
  }
}

/**
 * What a user typed on the verification page came to: the next step (`login` when nobody is
 * signed in, `consent` for the right code, an error page), or `wrong` (unknown, expired or
 * decided: the page asks again) or `locked` (too many wrong codes: RFC 8628 §5.1).
 * @group Authorization
 */
export type UserCodeOutcome =
  | { type: 'decision'; decision: AuthorizeDecision }
  | { type: 'wrong'; attempts: number }
  | { type: 'locked'; until: number };

/**
 * The verification page's step after the user typed `typed` (RFC 8628 §3.3): checked against
 * the account's and the browser's count of wrong codes first; then, for the code of a pending
 * request, a device confirmation step (`askToConfirmDevice`) for the signed-in account, naming
 * the code (`interaction.device`). `verifyPath` is the verification page, where `approve` /
 * `deny` send the browser. `browserSecret` is the browser's own secret cookie (the adapter kit
 * passes its CSRF cookie): wrong codes are counted per account and per browser, and the step is
 * bound to it (`DeviceVerificationRecord.browserHash`, checked by `checkDeviceBinding`).
 */
export async function enterUserCode(
  ctx: Context,
  typed: string,
  request: OAuthRequest,
  verifyPath: string,
  browserSecret: string | undefined,
): Promise<UserCodeOutcome> {
  try {
    const settings = ctx.options.deviceAuthorization;
    const guesses = ctx.deviceGuesses;
    const devices = ctx.devices;
    if (!settings || !guesses || !devices) return { type: 'decision', decision: notEnabled() };
    const session = await ctx.sessions.current(request);
    if (!signedIn(ctx, session))
      return { type: 'decision', decision: (await deviceSignIn(ctx, request, verifyPath, typed)) ?? notEnabled() };
    const now = ctx.clock.now();
    const keys = [`a:${session.account.uuid}`];
    const browserHash = browserSecret === undefined ? undefined : sha256Base64url(browserSecret);
    if (browserHash !== undefined) keys.push(`b:${browserHash}`);
    const lockedUntil = Math.max(...keys.map((key) => guesses.lockedUntil(key, now)));
    if (lockedUntil > now) return { type: 'locked', until: lockedUntil };
    // Counted before the lookup (an await), in the same synchronous step as the check above, so
    // that concurrent guesses cannot all pass it; a right code gives its count back.
    let attempts = 0;
    let until = 0;
    for (const key of keys) {
      const counted = guesses.fail(key, now);
      attempts = Math.max(attempts, counted.failures);
      until = Math.max(until, counted.lockedUntil);
    }

    const code = normalizeUserCode(typed, settings.userCodeLength);
    const record = code === null ? null : await devices.findDeviceAuthorization(userCodeHash(code));
    const client = record && record.status === 'pending' && now < record.expiresAt ? await findClient(ctx, record.clientId) : null;
    if (!record || !client || code === null) {
      audit(ctx, { type: 'device.user_code_failed', accountUuid: session.account.uuid, attempts });
      if (until === 0) return { type: 'wrong', attempts };
      audit(ctx, { type: 'device.user_code_locked', accountUuid: session.account.uuid, until });
      return { type: 'locked', until };
    }
    for (const key of keys) guesses.forgive(key);
    const device: DeviceVerificationRecord = { codeHash: record.hash, clientId: client.id, scope: record.scope, returnTo: verifyPath };
    if (record.resources !== undefined) device.resources = record.resources;
    if (browserHash !== undefined) device.browserHash = browserHash;
    return { type: 'decision', decision: await askToConfirmDevice(ctx, client, device, session.account, formatUserCode(code)) };
  } catch (error) {
    return { type: 'decision', decision: pageFailure(ctx, error) };
  }
}

const notEnabled = () => errorPage('invalid_request', 'The device authorization grant is not enabled on this server.', 404);

/**
 * The verification page's first step: `null` when someone is signed in (`signedIn`: a session
 * with a finite sign-in time; the page asks for the code), else the sign-in step (`askToSignInForDevice`), whose `resume` sends the browser back
 * to the verification page, with the code the user came with, if any. It names no client: no
 * code has been checked yet.
 */
export async function deviceSignIn(
  ctx: Context,
  request: OAuthRequest,
  verifyPath: string,
  userCode: string | undefined,
): Promise<AuthorizeDecision | null> {
  try {
    const settings = ctx.options.deviceAuthorization;
    if (!settings) return notEnabled();
    if (signedIn(ctx, await ctx.sessions.current(request))) return null;
    const code = userCode === undefined ? null : normalizeUserCode(userCode, settings.userCodeLength);
    return await askToSignInForDevice(ctx, code === null ? verifyPath : `${verifyPath}?user_code=${formatUserCode(code)}`);
  } catch (error) {
    return pageFailure(ctx, error);
  }
}

/**
 * `approve` / `deny` of a device verification's `consent` step (already taken, single use): the
 * device authorization is decided once (`decideDeviceAuthorization`, atomic), and the browser
 * goes back to the verification page, which says how it ended (`?result=approved|denied`).
 */
export async function decideDevice(
  ctx: Context,
  record: DeviceConfirmationInteractionRecord,
  approved: boolean,
): Promise<AuthorizeDecision> {
  const { account, device } = record;
  // A step stored while the option was on, decided after a restart with it off.
  const devices = ctx.devices;
  if (!devices) return notEnabled();
  const now = ctx.clock.now();
  if (approved) {
    // The consent first, then the decision, as `approve` saves it before it issues: a revocation
    // that comes in between deletes the consent and finds the request still pending, so what the
    // decision then makes live was made after it. The other way round, it would deny the
    // approval and miss the consent saved after it, which `prompt=none` would go on using.
    // The resources of the device request, as on its confirmation page (RFC 8707 §2).
    await ctx.storage.saveConsent(approvedConsent(account.uuid, device.clientId, device, now));
    audit(ctx, { type: 'consent.granted', clientId: device.clientId, accountUuid: account.uuid, scope: device.scope });
  }
  const decided = await devices.decideDeviceAuthorization(device.codeHash, now, approved ? account : null);
  if (!decided) {
    return errorPage('invalid_request', 'This code has expired or was already used. Start again on your device to get a new code.');
  }
  if (!approved) audit(ctx, { type: 'consent.denied', clientId: device.clientId, accountUuid: account.uuid });
  return { type: 'redirect', location: `${device.returnTo}?result=${approved ? 'approved' : 'denied'}` };
}
