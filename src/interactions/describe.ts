import { findClient } from '../checks/clients.js';
import type { Context } from '../context.js';
import { sha256Base64url } from '../crypto.js';
import { plausibleId } from '../rules.js';

/**
 * What a pending interaction is about, as `describeInteraction` answers it.
 * @group Authorization
 */
export interface InteractionDescription {
  kind: 'login' | 'consent';
  /** `verified: false` for a client nobody at the platform reviewed, as on `Interaction`. */
  client: { id: string; name: string; verified?: false };
  scope: string[];
  accountHint?: string;
  expiresAt: number;
}

/**
 * What a pending interaction is about, without using it up (`describeInteraction`): for a
 * sign-in page that names the application and pre-fills the `i` hint. `null` when unknown or
 * expired.
 */
export async function describeInteraction(ctx: Context, interactionId: string): Promise<InteractionDescription | null> {
  if (!plausibleId(interactionId)) return null;
  const record = await ctx.storage.findInteraction(sha256Base64url(interactionId));
  if (!record || ctx.clock.now() >= record.expiresAt) return null;
  const client = await findClient(ctx, record.request.clientId);
  if (!client) return null;
  return {
    kind: record.kind,
    client:
      client.registration === undefined ? { id: client.id, name: client.name } : { id: client.id, name: client.name, verified: false },
    scope: [...record.request.scope],
    ...(record.request.accountHint !== undefined && { accountHint: record.request.accountHint }),
    expiresAt: record.expiresAt,
  };
}
