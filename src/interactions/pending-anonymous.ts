/**
 * What an anonymous flood may cost (docs/reference.md#interactions: pending sign-in steps are
 * capped). Every authorization request for a valid client from a browser that is not signed in
 * stores a `login` interaction until it expires (`lifetimes.interaction`); nothing about such a
 * request identifies who sent it, and a script can send as many as it likes, with or without
 * cookies (a binding cookie is handed out to anyone who asks, so waiting for one would stop only
 * clients that keep no cookies).
 *
 * So each server instance remembers the anonymous interactions it stored, in order, and keeps
 * at most `maxPendingAnonymousInteractions` of them pending: storing one more forgets the oldest
 * that has not expired yet (deleted from storage). Forgetting the oldest, not refusing the
 * newest: a flood then has to outpace real sign-ins (a full window of requests in the time a
 * user takes to sign in) to cost anyone a flow, while refusing new ones would let a small
 * flood lock everyone out for a whole interaction lifetime. Consent steps (a signed-in account)
 * are neither counted nor forgotten: the host knows who sends them and can rate-limit per
 * account. Sign-in steps count whether or not some session was there: if it did not meet the
 * request, the requester has proven nothing for it yet.
 *
 * Memory: one entry (a hash and a time) per remembered interaction, at most the cap of them.
 * The `interaction.started` audit event lets a host rate-limit before any of this matters.
 */
import { BoundedMap } from '../bounded-map.js';
import { audit, type Context } from '../context.js';
import type { InteractionRecord } from '../storage/types.js';
import { shownClientId } from './describe.js';

/** The anonymous interactions one server instance stored, oldest first: id hash → expiry. */
export class PendingAnonymous {
  private readonly pending: BoundedMap<string, number>;

  constructor(readonly capacity: number) {
    this.pending = new BoundedMap(capacity);
  }

  /**
   * Remember a newly stored interaction; returns the id hash of the one it displaces when that
   * one has not expired by `now` (the caller deletes it), otherwise undefined.
   */
  add(idHash: string, expiresAt: number, now: number): string | undefined {
    const displaced = this.pending.set(idHash, expiresAt);
    return displaced !== undefined && now < displaced[1] ? displaced[0] : undefined;
  }
}

/**
 * After an interaction was stored: report it (`interaction.started`, no secrets) and keep the
 * instance's anonymous ones within the cap. Anonymous: a `login` step, whose browser is not
 * signed in as the request needs (signed out, or its sign-in is not fresh enough or not the
 * hinted account). A `consent` step is shown to a known, signed-in account.
 */
export async function interactionStarted(ctx: Context, record: InteractionRecord): Promise<void> {
  if (record.kind === 'consent') {
    audit(ctx, {
      type: 'interaction.started',
      clientId: shownClientId(record),
      kind: 'consent',
      signedIn: true,
      accountUuid: record.account.uuid,
    });
    return;
  }
  audit(ctx, { type: 'interaction.started', clientId: shownClientId(record), kind: 'login', signedIn: false });
  if (!ctx.pendingAnonymous) return;
  const now = ctx.clock.now();
  const displaced = ctx.pendingAnonymous.add(record.idHash, record.expiresAt, now);
  // Taking it is deleting it; one already resumed is simply not there any more.
  if (displaced !== undefined) await ctx.storage.takeInteraction(displaced, now);
}
