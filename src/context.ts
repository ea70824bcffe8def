import type { PendingAnonymous } from './interactions/pending-anonymous.js';
import type { RecentPairs } from './checks/pkce.js';
import type { GuessLimiter } from './device/user-code.js';
import type { ScopePolicy } from './checks/scope.js';
import type { ResolvedOptions } from './options.js';
import type { JwtAccessTokens } from './tokens/jwt.js';
import type { Storage } from './storage/types.js';
import type { AuditEventInput, Clock, UserSessions } from './types.js';

/** What every endpoint needs: the resolved options and the three seams. */
export interface Context {
  options: ResolvedOptions;
  storage: Storage;
  sessions: UserSessions;
  clock: Clock;
  scopes: ScopePolicy;
  /** Present when `accessTokenFormat` is `jwt`. */
  jwt?: JwtAccessTokens;
  /** The (client, PKCE challenge) pairs this instance issued codes for, or refused, lately (P-10). */
  challenges: RecentPairs;
  /** The anonymous interactions this instance stored, when `maxPendingAnonymousInteractions` caps them. */
  pendingAnonymous?: PendingAnonymous;
  /**
   * Personal access tokens whose last use this instance wrote lately, and expired ones whose use it
   * reported lately: each at most once a minute (`RecentWrites`, personal/personal-tokens.ts).
   */
  personal: { uses: WriteThrottle; expiredUses: WriteThrottle };
  /** Wrong user codes per account and per browser, when `deviceAuthorization` is on (RFC 8628 §5.1). */
  deviceGuesses?: GuessLimiter;
}

/** Whether something of an id is due to be written at `now` (and if so, it counts as written). */
export interface WriteThrottle {
  due(id: string, now: number): boolean;
}

/** Report a security event to the host's `onAudit` hook. A failing hook never fails the request. */
export function audit(ctx: Context, event: AuditEventInput): void {
  const hook = ctx.options.onAudit;
  if (!hook) return;
  try {
    const stamped = { ...event, at: ctx.clock.now() } as Parameters<typeof hook>[0];
    // The hook gets its own scope array: the event's is the one being issued or stored.
    if ('scope' in stamped) stamped.scope = [...stamped.scope];
    hook(stamped);
  } catch {
    // The audit log is the host's; its failure must not change the protocol's answer.
  }
}
