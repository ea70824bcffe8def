import type { AuthorizationRequestRecord, ConsentRecord } from '../storage/types.js';
import { covers } from './scope.js';

/**
 * Stored consents (docs/reference.md#stored-consents): what an approval stores,
 * and whether the consent of an account lets a request through without asking the user
 * (`prompt=none`). A consent is every approval of the account for the client, merged by the
 * store: the scope values united, the resources (RFC 8707) united, and `anyResource` once a
 * request without `resource` was approved.
 */

/**
 * The consent an approval of `req` stores (an authorization request's consent step, or a device
 * verification's confirmation): its scope, and its resources, or `anyResource` for a request
 * that named none, whose tokens have no audience and are accepted by every resource.
 */
export function approvedConsent(accountUuid: string, clientId: string, req: AuthorizationRequestRecord, now: number): ConsentRecord {
  const resources = req.resources;
  return {
    accountUuid,
    clientId,
    scope: [...req.scope],
    anyResource: resources === undefined,
    resources: resources === undefined ? [] : [...resources],
    grantedAt: now,
  };
}

/**
 * Whether `consent` covers `req`: every scope value approved, and its resources too. A request
 * without `resource` asks for tokens every resource accepts, the widest there is: only an
 * approval of such a request (`anyResource`) covers it. A request for resources is covered by
 * `anyResource`, or when each of them was approved. A consent from a store that does not keep
 * the resources (a field missing) covers nothing: the user is asked again, never let through on
 * an approval of something else (fail closed).
 */
export function consentCovers(consent: ConsentRecord, req: AuthorizationRequestRecord): boolean {
  if (!covers(consent.scope, req.scope)) return false;
  if (consent.anyResource === true) return true;
  return req.resources !== undefined && Array.isArray(consent.resources) && covers(consent.resources, req.resources);
}
