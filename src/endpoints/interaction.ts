import { sha256Base64url } from '../crypto.js';
import { currentClient, DPOP_ONLY, dpopOnlyImplicit, errorDecision } from '../checks/authorization-request.js';
import { approvedConsent } from '../checks/consent.js';
import { requirementOf, sessionMeets, signInAfter } from '../checks/session.js';
import { audit, type Context } from '../context.js';
import { AuthorizeError } from '../errors.js';
import { authorizationResponse } from '../grants/authorization-response.js';
import { ApprovalTaken, type PendingApproval } from '../grants/store-grant.js';
import { plausibleId } from '../rules.js';
import type {
  AuthorizationRequestRecord,
  ClientRecord,
  ConsentInteractionRecord,
  DeviceConfirmationInteractionRecord,
} from '../storage/types.js';
import type { AuthorizeDecision, OAuthRequest } from '../types.js';
import { decideDevice } from '../device/device-authorization.js';
import { askForConsent, askToSignIn } from '../interactions/ask.js';
import { pageFailure } from '../failure.js';
import { hintAllows, unsignableRequest } from '../oidc/provider.js';

/**
 * The interaction steps of an authorization request after one was started
 * (`askToSignIn` / `askForConsent`, interactions/ask.ts): `resume` after the host signed the user
 * in, and `approve` / `deny` after consent.
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

const HINT_MISMATCH = 'The signed-in account is not the one the id_token_hint names.';

/**
 * After the host signed the user in: continue the request behind a `login` decision. A
 * `consent` interaction may be resumed too: that is "use another account" (`select_account`),
 * and the consent is then asked anew of whoever is signed in now.
 */
export async function resume(ctx: Context, interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
  try {
    if (!plausibleId(interactionId)) return errorDecision(ctx, EXPIRED);
    const record = await ctx.storage.takeInteraction(sha256Base64url(interactionId), ctx.clock.now());
    if (!record) return errorDecision(ctx, EXPIRED);
    // A step of a device verification: back to the verification page (RFC 8628 §3.3).
    if (record.purpose === 'device') return { type: 'redirect', location: record.device.returnTo };
    const client = issuable(ctx, await currentClient(ctx, record.request), record.request);
    if (client instanceof AuthorizeError) return errorDecision(ctx, client);
    // Every requirement of the original request, against the session seen now (the consent
    // keeps `loginAfter`, so a fresh sign-in stays required up to the decision).
    const session = await ctx.sessions.current(request);
    if (!sessionMeets(ctx, record, session, ctx.clock.now())) {
      return await askToSignIn(ctx, client, record.request, record.requestedAt, signInAfter(record));
    }
    // OpenID Connect `id_token_hint` (Core §3.1.2.1): the user signed in during this request as
    // another account than the hint's. Refused to the client, not asked again: the user chose
    // that account, and the client that named one learns the browser is not theirs.
    if (ctx.openid && !hintAllows(ctx.openid, record.request.openid, session.account, client))
      return errorDecision(ctx, new AuthorizeError('login_required', HINT_MISMATCH, record.request));
    return await askForConsent(ctx, client, record.request, record.requestedAt, record.loginAfter, session.account);
  } catch (error) {
    return pageFailure(ctx, error);
  }
}

/**
 * The request's client as it is now (`currentClient`), when this instance can still answer the
 * request: for an OpenID Connect request, one whose ID tokens it can sign (`unsignableRequest`: a
 * request started on an instance with the key of the client's algorithm, continued on one
 * without it), so that no consent is asked or stored and no code issued for an exchange that
 * would fail; for the implicit flow, not a DPoP-only client (`dpopOnlyImplicit`: a request
 * started on an instance with DPoP off, which ignores the flag). Synchronous: no more promises
 * on the approval's path.
 */
function issuable(ctx: Context, client: ClientRecord | AuthorizeError, req: AuthorizationRequestRecord): ClientRecord | AuthorizeError {
  if (client instanceof AuthorizeError) return client;
  if (dpopOnlyImplicit(ctx, client, req.responseType)) return new AuthorizeError('unauthorized_client', DPOP_ONLY, req);
  return unsignableRequest(ctx, client, req) ?? client;
}

/** A consent interaction checked for a decision, with its request's client when the store read it too. */
interface Checked {
  record: ConsentInteractionRecord | DeviceConfirmationInteractionRecord;
  idHash: string;
  /** The client of the request, as read with the interaction (`combinedApproval`); `undefined`: not read. */
  client?: ClientRecord | null;
}

/**
 * The consent record behind a decision, checked against the signed-in user, and taken (single
 * use, so two concurrent approvals give one code) unless `later`: then the caller takes it with
 * what it writes (`approveInteraction`), and it is read together with its request's client.
 */
async function checkedConsent(
  ctx: Context,
  interactionId: string,
  request: OAuthRequest,
  later: boolean,
): Promise<Checked | AuthorizeError> {
  if (!plausibleId(interactionId)) return EXPIRED;
  const idHash = sha256Base64url(interactionId);
  const read = later && ctx.approval ? await ctx.approval.findInteractionAndClient(idHash) : undefined;
  const found = read ? read.interaction : await ctx.storage.findInteraction(idHash);
  if (!found || found.kind !== 'consent' || ctx.clock.now() >= found.expiresAt) return EXPIRED;
  const session = await ctx.sessions.current(request);
  // `?.`: a store that lost the account has no one the consent was shown to.
  if (!session || session.account.uuid !== found.account?.uuid) return NOT_SHOWN_TO;
  if (!sessionMeets(ctx, requirementOf(found), session, ctx.clock.now())) return STALE_SIGN_IN;
  if (read && found.purpose === 'authorization') return { record: found, idHash, client: read.client };
  const taken = await ctx.storage.takeInteraction(idHash, ctx.clock.now());
  // What was taken is what was checked (single use: the same id, the same record).
  return taken?.kind === 'consent' ? { record: taken, idHash } : EXPIRED;
}

/**
 * The user authorized the application: the code or token it asked for, to its callback. With the
 * `combinedApproval` group the interaction is taken, the consent saved and the grant stored in
 * one step of the store (`storeGrant`); without it, one after the other.
 */
export async function approve(ctx: Context, interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
  try {
    const checked = await checkedConsent(ctx, interactionId, request, true);
    if (checked instanceof AuthorizeError) return errorDecision(ctx, checked);
    const record = checked.record;
    if (record.purpose === 'device') return await decideDevice(ctx, record, true);
    const client = issuable(ctx, await currentClient(ctx, record.request, checked.client), record.request);
    if (client instanceof AuthorizeError) {
      // Not taken yet (combinedApproval): the decision ends here all the same.
      if (checked.client !== undefined) await ctx.storage.takeInteraction(checked.idHash, ctx.clock.now());
      return errorDecision(ctx, client);
    }
    const now = ctx.clock.now();
    const consent = approvedConsent(record.account.uuid, client.id, record.request, now);
    const granted = () =>
      audit(ctx, { type: 'consent.granted', clientId: client.id, accountUuid: record.account.uuid, scope: record.request.scope });
    let approval: PendingApproval | undefined;
    if (checked.client !== undefined && ctx.approval) approval = { store: ctx.approval, idHash: checked.idHash, consent, stored: granted };
    else {
      await ctx.storage.saveConsent(consent);
      granted();
    }
    // OpenID Connect: `auth_time` is the sign-in of the session that approved (checked by checkedConsent).
    const signedIn = record.request.openid ? (await ctx.sessions.current(request))?.authenticatedAt : undefined;
    return await authorizationResponse(ctx, client, record.request, record.account, now, signedIn, approval);
  } catch (error) {
    // Another decision took the interaction between the check and the approval's write.
    if (error instanceof ApprovalTaken) return errorDecision(ctx, EXPIRED);
    return pageFailure(ctx, error);
  }
}

/** The user denied the application: `access_denied` back to the callback (RFC 6749 §4.1.2.1). */
export async function deny(ctx: Context, interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision> {
  try {
    const checked = await checkedConsent(ctx, interactionId, request, false);
    if (checked instanceof AuthorizeError) return errorDecision(ctx, checked);
    const record = checked.record;
    if (record.purpose === 'device') return await decideDevice(ctx, record, false);
    // `access_denied` goes to the callback only while it is still the client's.
    const client = await currentClient(ctx, record.request);
    if (client instanceof AuthorizeError) return errorDecision(ctx, client);
    audit(ctx, { type: 'consent.denied', clientId: record.request.clientId, accountUuid: record.account.uuid });
    return errorDecision(ctx, new AuthorizeError('access_denied', 'The user denied the authorization request.', record.request));
  } catch (error) {
    return pageFailure(ctx, error);
  }
}
