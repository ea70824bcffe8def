import { findClient } from '../checks/clients.js';
import type { Context } from '../context.js';
import { sha256Base64url } from '../crypto.js';
import { plausibleId } from '../rules.js';
import type { InteractionRecord } from '../storage/types.js';

/**
 * What the public values of a step (the `Interaction` of a decision, `describeInteraction`, the
 * `interaction.started` event) say of it, whatever it is for. Below ask.ts and
 * pending-anonymous.ts, which both need it.
 */

/**
 * What a pending interaction is about, as `describeInteraction` answers it.
 * @group Authorization
 */
export interface InteractionDescription {
  kind: 'login' | 'consent';
  /**
   * `'device'` for a step of a device verification (RFC 8628 §3.3), as on `Interaction`; absent
   * for one of an authorization request. A device verification's sign-in step names no
   * application: its `client` is `{ id: '', name: '' }` (kept only because this type requires
   * one) and its `scope` is empty; say "Sign in to connect a device" rather than naming it.
   */
  purpose?: 'device';
  /** `verified: false` for a client nobody at the platform reviewed, as on `Interaction`. */
  client: { id: string; name: string; verified?: false };
  scope: string[];
  accountHint?: string;
  /** OpenID Connect `login_hint` (Core §3.1.2.1), to pre-fill the sign-in form: a hint, never checked. */
  loginHint?: string;
  expiresAt: number;
}

/**
 * The `client` the public values of a device sign-in step show: none is known before the user
 * enters a code (and naming the client of a code in the URL would tell anyone who is not signed
 * in whether a guessed code is live, RFC 8628 §5.1). The documented `Interaction` type (and
 * `describeInteraction`'s answer) requires a client, so this one place gives it an empty id and
 * name; `purpose: 'device'` tells the step apart. The records never carry it. TODO(v2): no
 * client at all on this step.
 */
export const noClientShown = (): { id: string; name: string } => ({ id: '', name: '' });

/** The client id a step's public values name: its request's, its device's, or none shown (a device sign-in). */
export function shownClientId(record: InteractionRecord): string {
  if (record.purpose !== 'device') return record.request.clientId;
  return record.kind === 'consent' ? record.device.clientId : noClientShown().id;
}

/**
 * `AuthorizationServer.describeInteraction`: what a pending step is about, without using it up;
 * `null` when unknown or expired, or when its client is gone. A device verification's step says
 * `purpose: 'device'`; its sign-in names no client (`noClientShown`) and no scope.
 */
export async function describeInteraction(ctx: Context, interactionId: string): Promise<InteractionDescription | null> {
  if (!plausibleId(interactionId)) return null;
  const record = await ctx.storage.findInteraction(sha256Base64url(interactionId));
  if (!record || ctx.clock.now() >= record.expiresAt) return null;
  if (record.purpose === 'device' && record.kind === 'login') {
    return { kind: 'login', purpose: 'device', client: noClientShown(), scope: [], expiresAt: record.expiresAt };
  }
  const client = await findClient(ctx, shownClientId(record));
  if (!client) return null;
  const described: InteractionDescription = {
    kind: record.kind,
    client:
      client.registration === undefined ? { id: client.id, name: client.name } : { id: client.id, name: client.name, verified: false },
    scope: [...(record.purpose === 'device' ? record.device.scope : record.request.scope)],
    expiresAt: record.expiresAt,
  };
  if (record.purpose === 'device') described.purpose = 'device';
  else if (record.request.accountHint !== undefined) described.accountHint = record.request.accountHint;
  if (record.purpose === 'authorization' && record.request.openid?.loginHint !== undefined)
    described.loginHint = record.request.openid.loginHint;
  return described;
}
