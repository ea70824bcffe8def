import type { Context } from '../context.js';
import { randomToken, sha256Base64url } from '../crypto.js';
import type { AuthorizationRequestRecord, ClientRecord, InteractionRecord } from '../storage/types.js';
import type { Account, AuthorizeDecision, Interaction } from '../types.js';
import { interactionStarted } from './pending-anonymous.js';

/**
 * Starting an interaction step: store it, and answer the `login` or `consent` decision that
 * shows it to the host. The authorization endpoint asks, `resume` asks again
 * (endpoints/interaction.ts), and the device verification asks for consent
 * (device/device-authorization.ts); `resume`, `approve` and `deny` then take the step. Below all
 * three, so none of them imports another. See docs/reference.md#interactions.
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
  const record: InteractionRecord =
    account === undefined
      ? { idHash, kind: 'login', request: req, requestedAt, expiresAt, loginAfter }
      : { idHash, kind: 'consent', request: req, requestedAt, expiresAt, loginAfter, account };
  await ctx.storage.saveInteraction(record);
  await interactionStarted(ctx, record); // audit, and the cap on anonymous ones
  const scopeDescriptions: Record<string, string> = {};
  for (const s of req.scope) scopeDescriptions[s] = ctx.scopes.describe(s);
  // Built field by field (no conditional spreads: each is an object more), in the documented order.
  const shown = { id, client: { id: client.id, name: client.name }, scope: [...req.scope], scopeDescriptions } as Interaction;
  if (account !== undefined) shown.account = account;
  if (req.accountHint !== undefined) shown.accountHint = req.accountHint;
  if (req.resources !== undefined) shown.resources = [...req.resources];
  // Where the browser goes after the decision, shown on every consent page (docs/reference.md#consent-page).
  const redirectHost = hostOf(req.redirectUri);
  if (redirectHost) shown.redirectHost = redirectHost;
  if (client.registration !== undefined) unreviewed(shown, client);
  shown.expiresAt = expiresAt;
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
