import type { Context } from '../context.js';
import { reportFault } from '../failure.js';
import type { AuthorizationRequestRecord, InteractionRecord } from '../storage/types.js';
import type { UserSession } from '../types.js';

/**
 * What an authorization request demands of the signed-in session, and what every step of it
 * (authorize, `resume`, `approve`, `deny`) checks again, with `sessionMeets`, against the session
 * it reads from its own request. Checked at one step only, a requirement could be met by one
 * session and the code issued to another: a consent shown after a fresh sign-in, approved from
 * a day-old session of the same account. See docs/reference.md#prompt-and-sign-in-requirements.
 */
export interface SessionRequirement {
  /** The stored request: its `prompt`, `maxAuthAge` and `accountHint`. */
  request: Pick<AuthorizationRequestRecord, 'prompt' | 'maxAuthAge' | 'accountHint'>;
  /** When the authorization request arrived (ms since epoch). */
  requestedAt: number;
  /**
   * A sign-in must have happened strictly after this time, or `null`. Set on the interactions of
   * a request that sent the user to sign in for `prompt=login` or `max_auth_age`, and kept on
   * the consent that follows, so the fresh sign-in stays required up to the decision.
   */
  loginAfter: number | null;
}

/** What a step of a device verification asks of the request side: nothing but a usable sign-in. */
const ANY_SIGN_IN: SessionRequirement['request'] = { prompt: [] };

/**
 * What a step demands of the session: an authorization request's step, its request's
 * requirements (it is its own `SessionRequirement`); a device verification's step, a usable
 * sign-in after its `loginAfter`, if any.
 */
export function requirementOf(record: InteractionRecord): SessionRequirement {
  return record.purpose === 'device' ? { request: ANY_SIGN_IN, requestedAt: record.requestedAt, loginAfter: record.loginAfter } : record;
}

/** Server instances (by their context) that have already reported a broken sign-in time. */
const reported = new WeakSet<Context>();

/**
 * The `loginAfter` of a sign-in step of this requirement: the one it carries already; else the
 * request's own time when the request demands a fresh or recent sign-in (`prompt=login`,
 * `max_auth_age`), so the sign-in it sends the user to must follow the request; else `null`
 * (any sign-in will do).
 */
export function signInAfter(requirement: SessionRequirement): number | null {
  const { request, requestedAt, loginAfter } = requirement;
  if (loginAfter !== null) return loginAfter;
  return request.prompt.includes('login') || request.maxAuthAge !== undefined ? requestedAt : null;
}

/**
 * Whether `session` satisfies every requirement of the request at `now`:
 * - signed in, with `authenticatedAt` a finite number of ms; anything else (`undefined`, a
 *   string, `NaN`, `Infinity`) is a host bug, counts as not signed in, and is reported once per
 *   server instance through `onError` (comparisons with it would otherwise pass: fail open);
 * - the `i` hint, when sent, is a prefix of the account uuid (case-insensitive; a mismatch is
 *   "not signed in");
 * - `loginAfter`: signed in strictly after it;
 * - `prompt=login`: signed in strictly after the request (OIDC Core §3.1.2.1 `login`);
 * - `max_auth_age`: signed in at most that many seconds before `now`, or after the request
 *   (a sign-in made for this request is as recent as the request can ask).
 */
export function sessionMeets(
  ctx: Context,
  requirement: SessionRequirement,
  session: UserSession | null,
  now: number,
): session is UserSession {
  if (!signedIn(ctx, session)) return false;
  const at = session.authenticatedAt;
  const { request, requestedAt, loginAfter } = requirement;
  const hint = request.accountHint;
  if (hint !== undefined && !session.account.uuid.toLowerCase().startsWith(hint.toLowerCase())) return false;
  if (loginAfter !== null && at <= loginAfter) return false;
  if (request.prompt.includes('login') && at <= requestedAt) return false;
  if (request.maxAuthAge !== undefined && at <= requestedAt && now - at > request.maxAuthAge * 1000) return false;
  return true;
}

/**
 * Whether `session` is signed in at all: present, with `authenticatedAt` a finite number of ms
 * (anything else is a host bug, reported once, and counts as not signed in). The first rule of
 * `sessionMeets`, alone, for the steps that ask nothing more (the device verification page).
 */
export function signedIn(ctx: Context, session: UserSession | null): session is UserSession {
  if (!session) return false;
  const at = session.authenticatedAt;
  if (typeof at === 'number' && Number.isFinite(at)) return true;
  reportBrokenSignInTime(ctx, at);
  return false;
}

/** Tell the host, once per server instance, that its `UserSessions` reports no usable sign-in time. */
function reportBrokenSignInTime(ctx: Context, value: unknown): void {
  if (reported.has(ctx)) return;
  reported.add(ctx);
  // Only the kind of value: nothing of the session (account, cookie) goes into the report.
  const kind = typeof value === 'number' ? String(value) : value === null ? 'null' : typeof value;
  reportFault(
    ctx,
    new TypeError(
      `UserSessions.current() returned a session whose authenticatedAt is not a finite number of ms since epoch (got ${kind}); ` +
        "authgate treats such a session as not signed in. Fix the host's sign-in to report when the user last signed in.",
    ),
  );
}
