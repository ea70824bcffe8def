import type { Context } from '../context.js';
import { randomToken, sha256Base64url } from '../crypto.js';
import type {
  AuthorizationInteractionRecord,
  AuthorizationRequestRecord,
  ClientRecord,
  DeviceConfirmationInteractionRecord,
  DeviceSignInInteractionRecord,
  DeviceVerificationRecord,
} from '../storage/types.js';
import type { Account, AuthorizeDecision, Interaction } from '../types.js';
import { interactionStarted } from './pending-anonymous.js';
import { noClientShown } from './describe.js';

/**
 * Starting an interaction step: store it, and answer the `login` or `consent` decision that
 * shows it to the host. The authorization endpoint asks, `resume` asks again
 * (endpoints/interaction.ts), and the device verification asks to sign in and to confirm
 * (device/device-authorization.ts); `resume`, `approve` and `deny` then take the step. Below all
 * three, so none of them imports another. Each step is stored with its purpose: an authorization
 * request's steps carry the request, a device verification's what it decides. See
 * docs/reference.md#interactions.
 */

/**
 * Store a sign-in step of `req` and answer `login`: the host signs the user in, then calls
 * `resume`. `loginAfter` is the time the sign-in must follow, if any (`signInAfter`).
 */
export function askToSignIn(
  ctx: Context,
  client: ClientRecord,
  req: AuthorizationRequestRecord,
  requestedAt: number,
  loginAfter: number | null,
): Promise<AuthorizeDecision> {
  return ask(ctx, client, req, requestedAt, loginAfter, undefined);
}

/**
 * Store a consent step of `req` shown to `account` and answer `consent`: the host asks the user,
 * then calls `approve` or `deny`. `loginAfter` is kept from the sign-in step before it, if any.
 */
export function askForConsent(
  ctx: Context,
  client: ClientRecord,
  req: AuthorizationRequestRecord,
  requestedAt: number,
  loginAfter: number | null,
  account: Account,
): Promise<AuthorizeDecision> {
  return ask(ctx, client, req, requestedAt, loginAfter, account);
}

/** Store the step (a consent step when shown to `account`), and answer the decision that shows it to the host. */
async function ask(
  ctx: Context,
  client: ClientRecord,
  req: AuthorizationRequestRecord,
  requestedAt: number,
  loginAfter: number | null,
  account: Account | undefined,
): Promise<AuthorizeDecision> {
  const id = randomToken();
  const idHash = sha256Base64url(id);
  const expiresAt = ctx.clock.now() + ctx.options.lifetimes.interaction * 1000;
  const record: AuthorizationInteractionRecord =
    account === undefined
      ? { idHash, kind: 'login', purpose: 'authorization', request: req, requestedAt, expiresAt, loginAfter }
      : { idHash, kind: 'consent', purpose: 'authorization', request: req, requestedAt, expiresAt, loginAfter, account };
  await ctx.storage.saveInteraction(record);
  await interactionStarted(ctx, record); // audit, and the cap on anonymous ones
  const shown = shownStep(ctx, id, client, req.scope, account);
  if (req.accountHint !== undefined) shown.accountHint = req.accountHint;
  if (req.resources !== undefined) shown.resources = [...req.resources];
  // Where the browser goes after the decision, shown on every consent page (docs/reference.md#consent-page).
  const redirectHost = hostOf(req.redirectUri);
  if (redirectHost) shown.redirectHost = redirectHost;
  if (req.openid) {
    // OpenID Connect's hints for the host's pages; nonce, max_age and the hint's sub stay inside.
    const { loginHint, acrValues, uiLocales, claimsLocales, display } = structuredClone(req.openid);
    const hints = { loginHint, acrValues, uiLocales, claimsLocales, display };
    for (const key of Object.keys(hints) as (keyof typeof hints)[]) if (hints[key] === undefined) delete hints[key];
    if (Object.keys(hints).length > 0) shown.openid = hints as NonNullable<Interaction['openid']>;
  }
  if (client.registration !== undefined) unreviewed(shown, client);
  shown.expiresAt = expiresAt;
  return { type: record.kind, interaction: shown };
}

/**
 * Store the confirmation step of a device verification (RFC 8628 §3.3) of `device`, shown to
 * `account`, and answer `consent`: the host (`onDeviceVerification`, or the built-in page) shows
 * the code the user entered (`interaction.device.userCode`), then calls `approve` or `deny`. No
 * `redirectHost`: the device's client says nothing about where the browser goes (the
 * verification page).
 */
export async function askToConfirmDevice(
  ctx: Context,
  client: ClientRecord,
  device: DeviceVerificationRecord,
  account: Account,
  userCode: string,
): Promise<AuthorizeDecision> {
  const id = randomToken();
  const now = ctx.clock.now();
  const expiresAt = now + ctx.options.lifetimes.interaction * 1000;
  const record: DeviceConfirmationInteractionRecord = {
    idHash: sha256Base64url(id),
    kind: 'consent',
    purpose: 'device',
    device,
    requestedAt: now,
    expiresAt,
    loginAfter: null,
    account,
  };
  await ctx.storage.saveInteraction(record);
  await interactionStarted(ctx, record);
  const shown = shownStep(ctx, id, client, device.scope, account);
  if (device.resources !== undefined) shown.resources = [...device.resources];
  if (client.registration !== undefined) unreviewed(shown, client);
  shown.purpose = 'device';
  shown.device = { userCode };
  shown.expiresAt = expiresAt;
  return { type: 'consent', interaction: shown };
}

/**
 * Store the sign-in step of a device verification and answer `login`, which the host answers as
 * for an authorization request (`loginUrl?interaction=…`, then `resume`); `resume` then sends
 * the browser to `returnTo` (the verification page). Not bound to the browser: resuming it
 * issues nothing.
 */
export async function askToSignInForDevice(ctx: Context, returnTo: string): Promise<AuthorizeDecision> {
  const id = randomToken();
  const now = ctx.clock.now();
  const record: DeviceSignInInteractionRecord = {
    idHash: sha256Base64url(id),
    kind: 'login',
    purpose: 'device',
    device: { returnTo },
    requestedAt: now,
    expiresAt: now + ctx.options.lifetimes.interaction * 1000,
    loginAfter: null,
  };
  await ctx.storage.saveInteraction(record);
  await interactionStarted(ctx, record);
  return { type: 'login', interaction: { id, client: noClientShown(), scope: [], purpose: 'device', expiresAt: record.expiresAt } };
}

/** The start of what a step shows, field by field (no conditional spreads: each is an object more), in the documented order. */
function shownStep(ctx: Context, id: string, client: ClientRecord, scope: readonly string[], account: Account | undefined): Interaction {
  const scopeDescriptions: Record<string, string> = {};
  for (const s of scope) scopeDescriptions[s] = ctx.scopes.describe(s);
  const shown = { id, client: { id: client.id, name: client.name }, scope: [...scope], scopeDescriptions } as Interaction;
  if (account !== undefined) shown.account = account;
  return shown;
}

/**
 * What the user must see of a client nobody at the platform reviewed (docs/reference.md#consent-page):
 * that it is not verified, the host of its client id when that is a URL, and what it stated about
 * itself.
 */
function unreviewed(shown: Interaction, client: ClientRecord): void {
  shown.client.verified = false;
  const idHost = client.id.includes('://') ? hostOf(client.id) : undefined;
  if (idHost) shown.client.idHost = idHost;
  if (client.clientUri !== undefined) shown.client.uri = client.clientUri;
  if (client.logoUri !== undefined) shown.client.logoUri = client.logoUri;
}

/** The host and port of a URL, or the scheme of a private-use URI (RFC 8252 §7.1) such as `com.example.app:/cb`. */
function hostOf(uri: string): string | undefined {
  // One parse (not canParse then parse): every consent step runs it (docs/reference.md#branding-and-languages).
  try {
    const url = new URL(uri);
    return url.host || url.protocol;
  } catch {
    return undefined;
  }
}
