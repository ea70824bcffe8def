import type { AuthorizationRequestRecord, ConsentApproval, ConsentRecord } from '../storage/types.js';
import { covers } from './scope.js';

/**
 * Stored consents (docs/reference.md#stored-consents): what an approval stores, and whether the
 * consent of an account lets a request through without asking the user (`prompt=none`). A
 * consent is every approval of the account for the client, merged by the store resource by
 * resource: what a user approved is a scope *for* a resource (RFC 8707), so the scope approved
 * for one resource never stands for another's.
 */

/**
 * The consent an approval of `req` stores (an authorization request's consent step, or a device
 * verification's confirmation): its scope for each of its resources, or for `resource: null`
 * when it named none (its tokens have no audience and are accepted by every resource).
 */
export function approvedConsent(
  accountUuid: string,
  clientId: string,
  req: Pick<AuthorizationRequestRecord, 'scope' | 'resources'>,
  now: number,
): ConsentRecord {
  const resources: ReadonlyArray<string | null> = req.resources ?? [null];
  return {
    accountUuid,
    clientId,
    scope: [...req.scope],
    approvals: resources.map((resource) => ({ resource, scope: [...req.scope] })),
    grantedAt: now,
  };
}

/** Whether `approvals` hold an approval for exactly `resource` whose scope covers `scope`. */
function approved(approvals: readonly ConsentApproval[], resource: string | null, scope: readonly string[]): boolean {
  // A malformed entry (no resource, a scope that is not an array) approves nothing: an entry
  // whose resource is missing is never taken for the broadest, `null`.
  const approval = approvals.find((a) => a?.resource === resource);
  return approval !== undefined && Array.isArray(approval.scope) && covers(approval.scope, scope);
}

/**
 * Whether `consent` covers `req`. A request without `resource` asks for tokens every resource
 * accepts: only an approval without resource (`null`) whose scope covers the requested scope
 * covers it. A request for resources is covered when that approval does, or when each resource
 * was approved with a scope covering the requested scope: never by the scope approved for another
 * resource, nor by the scope without resource and the resource's own put together (read without
 * resource and write for A cover read for A and write for A, not read write for A). A consent
 * from a store that does not keep the approvals covers nothing: the user is asked again, never
 * let through (fail closed).
 */
export function consentCovers(consent: ConsentRecord, req: AuthorizationRequestRecord): boolean {
  const approvals = consent.approvals;
  if (!Array.isArray(approvals)) return false;
  if (approved(approvals, null, req.scope)) return true;
  return req.resources !== undefined && req.resources.every((resource) => approved(approvals, resource, req.scope));
}
