import type { Context } from '../context.js';
import type { CodeRecord, CombinedApprovalStorage, ConsentRecord, OAuthGrantRecord, Storage, TokenRecord } from '../storage/types.js';

/**
 * The user's approval that an authorization response comes from, when the store writes it
 * together with the grant (the `combinedApproval` group): the interaction to take, the consent
 * to save, and what to do once both are stored (the `consent.granted` audit event).
 */
export interface PendingApproval {
  store: Storage & CombinedApprovalStorage;
  idHash: string;
  consent: ConsentRecord;
  stored: () => void;
}

/** The interaction of a `PendingApproval` was taken meanwhile (a second approval or a deny won): nothing was written. */
export class ApprovalTaken extends Error {
  constructor() {
    super('The interaction was taken by another decision.');
    this.name = 'ApprovalTaken';
  }
}

/**
 * Store a new grant with its code or tokens (`createGrant`), or, for an approval whose store has
 * the `combinedApproval` group, take the interaction, save the consent and store the grant in one
 * atomic step (`approveInteraction`).
 * @throws ApprovalTaken when that step found the interaction taken or expired.
 */
export async function storeGrant(
  ctx: Context,
  grant: OAuthGrantRecord,
  issued: { code?: CodeRecord; tokens?: TokenRecord[] },
  approval: PendingApproval | undefined,
): Promise<void> {
  if (approval === undefined) return ctx.storage.createGrant(grant, issued);
  if (!(await approval.store.approveInteraction(approval.idHash, ctx.clock.now(), approval.consent, grant, issued)))
    throw new ApprovalTaken();
  approval.stored();
}
