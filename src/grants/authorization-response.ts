import { randomId } from '../crypto.js';
import type { Context } from '../context.js';
import type { AuthorizationRequestRecord, ClientRecord, GrantRecord } from '../storage/types.js';
import type { Account, AuthorizeDecision } from '../types.js';
import { issueImplicit } from './implicit.js';
import { issueCode } from './issue-code.js';

/**
 * The authorization response to a request `account` approved (RFC 6749 §4.1.2, §4.2.2), at
 * `approve` or, for `prompt=none`, at once: a new grant, and what the request's `response_type`
 * asks for (a code in the query, or an access token in the fragment).
 */
export function authorizationResponse(
  ctx: Context,
  client: ClientRecord,
  req: AuthorizationRequestRecord,
  account: Account,
  now: number,
): Promise<AuthorizeDecision> {
  const grant: GrantRecord = { id: randomId(), clientId: client.id, account, scope: req.scope, createdAt: now, revokedAt: null };
  return req.responseType === 'code' ? issueCode(ctx, grant, req, now) : issueImplicit(ctx, grant, req, now);
}
