import { errorDecision, parseAuthorizationRequest, requestedClientId, UNKNOWN_CLIENT } from '../checks/authorization-request.js';
import { findClient } from '../checks/clients.js';
import { consentCovers } from '../checks/consent.js';
import { sessionMeets, signInAfter, type SessionRequirement } from '../checks/session.js';
import type { Context } from '../context.js';
import { AuthorizeError } from '../errors.js';
import { authorizationResponse } from '../grants/authorization-response.js';
import { isMethod, queryParams } from '../http.js';
import type { AuthorizationRequestRecord, ClientRecord } from '../storage/types.js';
import type { AuthorizeDecision, OAuthRequest } from '../types.js';
import { pageFailure } from '../failure.js';
import { askForConsent, askToSignIn } from '../interactions/ask.js';
import { hintAllows, hintSubject, unsignableRequest } from '../oidc/provider.js';

/**
 * The authorization endpoint (RFC 6749 §4.1.1, §4.2.1): the request is parsed and checked
 * (`checks/authorization-request.ts`, which also decides where its errors go), then the prompt
 * rules decide between an answer at once (`prompt=none`), a sign-in and a consent step
 * (`interactions/ask.ts` starts those, `endpoints/interaction.ts` continues them).
 */

const NOT_GET = new AuthorizeError('invalid_request', 'The authorization endpoint only accepts GET requests.', null);

/** GET /v1/oauth/authorize */
export async function authorize(ctx: Context, request: OAuthRequest): Promise<AuthorizeDecision> {
  try {
    // GET only: a HEAD must not start an interaction or issue a code.
    if (!isMethod(request, 'GET')) return errorDecision(ctx, NOT_GET);
    const params = queryParams(request);
    const clientId = requestedClientId(params);
    if (typeof clientId !== 'string') return errorDecision(ctx, clientId);
    const client = await findClient(ctx, clientId);
    if (!client) return errorDecision(ctx, UNKNOWN_CLIENT);
    const req = parseAuthorizationRequest(ctx, client, params, request);
    if (req instanceof AuthorizeError) return errorDecision(ctx, req);
    // OpenID Connect: an ID token this instance cannot sign is refused now, before any sign-in or code.
    const unsignable = unsignableRequest(ctx, client, req);
    if (unsignable) return errorDecision(ctx, unsignable);
    // OpenID Connect `id_token_hint` (Core §3.1.2.1): one of our ID tokens for this client, or refused.
    // Sent twice it was refused already; sent empty it is omitted (RFC 6749 §3.1), as `openIdParameters` reads it.
    const hint = req.openid && ctx.openid ? params.get('id_token_hint')?.[0] || undefined : undefined;
    if (hint !== undefined && req.openid && ctx.openid) {
      const sub = await hintSubject(ctx, ctx.openid, hint, client);
      if (sub === null)
        return errorDecision(
          ctx,
          new AuthorizeError('invalid_request', 'The id_token_hint is not an ID token this server issued to this application.', req),
        );
      req.openid.idTokenHintSub = sub;
    }
    return await decide(ctx, client, req, request);
  } catch (error) {
    return pageFailure(ctx, error);
  }
}

/** What a valid request leads to, by its `prompt` and the session its browser has. */
async function decide(
  ctx: Context,
  client: ClientRecord,
  req: AuthorizationRequestRecord,
  request: OAuthRequest,
): Promise<AuthorizeDecision> {
  const now = ctx.clock.now();
  // A session that misses any requirement (the `i` hint, `max_auth_age`, a usable sign-in time)
  // counts as none: the user signs in (again), or `login_required` with prompt=none.
  const requirement: SessionRequirement = { request: req, requestedAt: now, loginAfter: null };
  const current = await ctx.sessions.current(request);
  const session =
    sessionMeets(ctx, requirement, current, now) && (!ctx.openid || hintAllows(ctx.openid, req.openid, current.account, client))
      ? current
      : null;

  if (req.prompt.includes('none')) {
    // No user interaction at all (OIDC Core §3.1.2.1): every outcome goes back to the callback.
    if (!session) return errorDecision(ctx, new AuthorizeError('login_required', 'The user is not signed in.', req));
    // A public client is not identified by its client_id (anyone can send it, and any local
    // program can take a loopback port or a private-use scheme): a stored consent never lets it
    // through without the user (RFC 8252 §8.6; SECURITY.md U-12).
    if (client.secretHash === null) {
      return errorDecision(
        ctx,
        new AuthorizeError('consent_required', 'This application is a public client: the user approves each of its requests.', req),
      );
    }
    const consent = await ctx.storage.findConsent(session.account.uuid, client.id);
    // The scope and the resources (RFC 8707) must both have been approved: a consent given for
    // one resource never issues silently for another, nor tokens without an audience.
    if (!consent || !consentCovers(consent, req)) {
      return errorDecision(
        ctx,
        new AuthorizeError('consent_required', 'The user has not authorized this application for the requested scope and resources.', req),
      );
    }
    return authorizationResponse(ctx, client, req, session.account, now, session.authenticatedAt);
  }

  // prompt=login signs in again whatever the session, even one whose sign-in time is later than
  // this request (a host clock ahead of ours), which `sessionMeets` alone would let through.
  if (!session || req.prompt.includes('login')) return askToSignIn(ctx, client, req, now, signInAfter(requirement));
  // select_account (the default): a signed-in user is asked every time.
  return askForConsent(ctx, client, req, now, null, session.account);
}
