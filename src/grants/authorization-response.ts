import { randomId } from '../crypto.js';
import { currentClient, errorDecision } from '../checks/authorization-request.js';
import type { Context } from '../context.js';
import { AuthorizeError } from '../errors.js';
import type { AuthorizationRequestRecord, ClientRecord, OAuthGrantRecord } from '../storage/types.js';
import type { Account, AuthorizeDecision } from '../types.js';
import { issueImplicit } from './implicit.js';
import { issueCode } from './issue-code.js';
import type { PendingApproval } from './store-grant.js';

/**
 * The authorization response to a request `account` approved (RFC 6749 §4.1.2, §4.2.2), at
 * `approve` or, for `prompt=none`, at once: a new grant, and what the request's `response_type`
 * asks for (a code in the query, or an access token in the fragment). `approval`: the approval to
 * store with the grant in one step (`storeGrant`), when the store can.
 */
export function authorizationResponse(
  ctx: Context,
  client: ClientRecord,
  req: AuthorizationRequestRecord,
  account: Account,
  now: number,
  signedInAt?: number,
  approval?: PendingApproval,
): Promise<AuthorizeDecision> {
  const grant: OAuthGrantRecord = {
    id: randomId(),
    kind: 'oauth',
    clientId: client.id,
    account,
    scope: req.scope,
    createdAt: now,
    revokedAt: null,
  };
  // An OpenID Connect request: its ID tokens' `auth_time`, the sign-in of the session that decided.
  if (req.openid) grant.openid = { authTime: signedInAt ?? now };
  // A code is checked against the client's callback again at the exchange. Not an async
  // function: the code flow's promise is issueCode's own, without one more tick (W1).
  return req.responseType === 'code' ? issueCode(ctx, grant, req, now, approval) : implicitResponse(ctx, client, grant, req, now, approval);
}

/**
 * The implicit response: a token leaves in the redirect itself, so if the callback changed
 * (updateClient) or the client went (deleteClient) while it was issued, it is revoked and nothing
 * is sent there.
 */
async function implicitResponse(
  ctx: Context,
  _client: ClientRecord,
  grant: OAuthGrantRecord,
  req: AuthorizationRequestRecord,
  now: number,
  approval: PendingApproval | undefined,
): Promise<AuthorizeDecision> {
  const decision = await issueImplicit(ctx, grant, req, now, approval);
  const current = await currentClient(ctx, req);
  if (current instanceof AuthorizeError) {
    await ctx.storage.revokeGrant(grant.id, ctx.clock.now());
    return errorDecision(ctx, current);
  }
  return decision;
}
