import { randomToken, sha256Base64url } from '../crypto.js';
import { currentClient, errorDecision, UNKNOWN_CLIENT } from '../checks/authorization-request.js';
import { approvedConsent } from '../checks/consent.js';
import { interactionStarted } from '../interactions/pending-anonymous.js';
import { sessionMeets, signInAfter } from '../checks/session.js';
import { audit, type Context } from '../context.js';
import { AuthorizeError } from '../errors.js';
import { authorizationResponse } from '../grants/authorization-response.js';
import type { AuthorizationRequestRecord, ClientRecord, InteractionRecord } from '../storage/types.js';
import type { Account, AuthorizeDecision, Interaction, OAuthRequest } from '../types.js';
import { decideDevice } from '../device/device-authorization.js';
import { pageFailure } from '../failure.js';

/**
 * The interaction steps of an authorization request: the `login` and `consent` decisions that
 * start them, `resume` after the host signed the user in, and `approve` / `deny` after consent.
 * Each step takes its interaction (single use) and checks every requirement of the original
 * request again, against the session it reads from its own request (`sessionMeets`). See
 * docs/reference.md#interactions.
 */

const EXPIRED = new AuthorizeError(
  'invalid_request',
  'This authorization step has expired or was already completed. Start again from the application.',
  null,
);
const NOT_SHOWN_TO = new AuthorizeError('invalid_request', 'The signed-in account is not the one this authorization was shown to.', null);
const STALE_SIGN_IN = new AuthorizeError(
  'invalid_request',
  'The current sign-in does not meet what this authorization requires (a fresh or recent sign-in). Sign in again, then start again from the application.',
  null,
);

/** The stored interaction's expiry. */
const expiry = (ctx: Context) => ctx.clock.now() + ctx.options.lifetimes.interaction * 1000;

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
  const id = randomToken();
  return start(ctx, client, id, {
    idHash: sha256Base64url(id),
    kind: 'login',
    request: req,
    requestedAt,
    expiresAt: expiry(ctx),
    loginAfter,
  });
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
  const id = randomToken();
  return start(ctx, client, id, {
    idHash: sha256Base64url(id),
    kind: 'consent',
    request: req,
    requestedAt,
    expiresAt: expiry(ctx),
    loginAfter,
    account,
  });
}

/** Store the interaction `id` identifies, and answer the decision that shows it to the host. */
async function start(ctx: Context, client: ClientRecord, id: string, record: InteractionRecord): Promise<AuthorizeDecision> {
  await ctx.storage.saveInteraction(record);
  await interactionStarted(ctx, record); // audit, and the cap on anonymous ones
  const req = record.request;
  const scopeDescriptions: Record<string, string> = {};
  for (const s of req.scope) scopeDescriptions[s] = ctx.scopes.describe(s);
  // Built field by field (no conditional spreads: each is an object more), in the documented order.
  const shown = { id, client: { id: client.id, name: client.name }, scope: [...req.scope], scopeDescriptions } as Interaction;
  if (record.kind === 'consent') shown.account = record.account;
  if (req.accountHint !== undefined) shown.accountHint = req.accountHint;
  if (req.resources !== undefined) shown.resources = [...req.resources];
  // Where the browser goes after the decision, shown on every consent page (docs/reference.md#consent-page).
  const redirectHost = hostOf(req.redirectUri);
  if (redirectHost) shown.redirectHost = redirectHost;
  if (client.registration !== undefined) unreviewed(shown, client);
  shown.expiresAt = record.expiresAt;
  return { type: record.kind, interaction: shown };
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

function validId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= 200;
}

/**
 * After the host signed the user in: continue the request behind a `login` decision. A
 * `consent` interaction may be resumed too: that is "use another account" (`select_account`),
 * and the consent is then asked anew of whoever is signed in now.
 */
export async function resume(ctx: Context, interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
  try {
    if (!validId(interactionId)) return errorDecision(ctx, EXPIRED);
    const record = await ctx.storage.takeInteraction(sha256Base64url(interactionId), ctx.clock.now());
    if (!record) return errorDecision(ctx, EXPIRED);
    // The sign-in step of a device verification: back to the verification page (RFC 8628 §3.3).
    if (record.request.device) return { type: 'redirect', location: record.request.redirectUri };
    const client = await currentClient(ctx, record.request);
    if (client instanceof AuthorizeError) return errorDecision(ctx, client);
    // Every requirement of the original request, against the session seen now (the consent
    // keeps `loginAfter`, so a fresh sign-in stays required up to the decision).
    const session = await ctx.sessions.current(request);
    if (!sessionMeets(ctx, record, session, ctx.clock.now())) {
      return await askToSignIn(ctx, client, record.request, record.requestedAt, signInAfter(record));
    }
    return await askForConsent(ctx, client, record.request, record.requestedAt, record.loginAfter, session.account);
  } catch (error) {
    return pageFailure(ctx, error);
  }
}

/**
 * The consent record behind a decision, checked against the signed-in user and then taken
 * (single use, so two concurrent approvals give one code).
 */
async function takeConsent(ctx: Context, interactionId: string, request: OAuthRequest): Promise<InteractionRecord | AuthorizeError> {
  if (!validId(interactionId)) return EXPIRED;
  const idHash = sha256Base64url(interactionId);
  const found = await ctx.storage.findInteraction(idHash);
  if (!found || found.kind !== 'consent' || ctx.clock.now() >= found.expiresAt) return EXPIRED;
  const session = await ctx.sessions.current(request);
  // `?.`: a store that lost the account has no one the consent was shown to.
  if (!session || session.account.uuid !== found.account?.uuid) return NOT_SHOWN_TO;
  if (!sessionMeets(ctx, found, session, ctx.clock.now())) return STALE_SIGN_IN;
  return (await ctx.storage.takeInteraction(idHash, ctx.clock.now())) ?? EXPIRED;
}

/** The user authorized the application: the code or token it asked for, to its callback. */
export async function approve(ctx: Context, interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
  try {
    const record = await takeConsent(ctx, interactionId, request);
    if (record instanceof AuthorizeError) return errorDecision(ctx, record);
    if (record.request.device) return await decideDevice(ctx, record, true);
    const client = await currentClient(ctx, record.request);
    if (client instanceof AuthorizeError) return errorDecision(ctx, client);
    if (!record.account) return errorDecision(ctx, UNKNOWN_CLIENT);
    const now = ctx.clock.now();
    await ctx.storage.saveConsent(approvedConsent(record.account.uuid, client.id, record.request, now));
    audit(ctx, { type: 'consent.granted', clientId: client.id, accountUuid: record.account.uuid, scope: record.request.scope });
    return await authorizationResponse(ctx, client, record.request, record.account, now);
  } catch (error) {
    return pageFailure(ctx, error);
  }
}

/** The user denied the application: `access_denied` back to the callback (RFC 6749 §4.1.2.1). */
export async function deny(ctx: Context, interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
  try {
    const record = await takeConsent(ctx, interactionId, request);
    if (record instanceof AuthorizeError) return errorDecision(ctx, record);
    if (record.request.device) return await decideDevice(ctx, record, false);
    // `access_denied` goes to the callback only while it is still the client's.
    const client = await currentClient(ctx, record.request);
    if (client instanceof AuthorizeError) return errorDecision(ctx, client);
    audit(ctx, { type: 'consent.denied', clientId: record.request.clientId, accountUuid: record.account?.uuid ?? '' });
    return errorDecision(ctx, new AuthorizeError('access_denied', 'The user denied the authorization request.', record.request));
  } catch (error) {
    return pageFailure(ctx, error);
  }
}
