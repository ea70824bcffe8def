/**
 * Which audit events (`onAudit`) to alert on, next to the rate limits: the ones that mean a
 * stolen or replayed credential alert at once; the ones that are normal one at a time alert
 * when one client has many of them in a short time (a guessed secret, a flood of authorization
 * requests, an app users keep refusing).
 */
import type { AuditEvent } from '../../src/index.js';

/**
 * Alert on the first one: a refresh token used after it was rotated (RFC 9700 §4.14.2; the
 * family was revoked unless it was a retry within the grace period), an authorization code
 * replayed (RFC 6749 §4.1.2; its tokens were revoked), a PKCE challenge seen twice (a replayed
 * authorization request).
 */
export const ALERT_AT_ONCE: ReadonlySet<AuditEvent['type']> = new Set(['refresh_token.reused', 'code.reused', 'pkce.challenge_reused']);

/**
 * Alert when one client has `threshold` of them within `windowMs`: wrong secrets (guessing, or a
 * leaked id; the limiter slows it, this says it happens), authorization requests that stored an
 * interaction (a flood, or a phishing campaign through a real client), denied consents, tokens
 * refused for a deactivated account, dynamic registrations.
 */
export const ALERT_ON_SPIKE: ReadonlySet<AuditEvent['type']> = new Set([
  'client.authentication_failed',
  'interaction.started',
  'consent.denied',
  'account.inactive',
  'client.registered',
]);

export interface AlertOptions {
  /** Events of one type and client within `windowMs` that make a spike. Default 20. */
  threshold?: number;
  /** Default one minute. */
  windowMs?: number;
}

/**
 * An `onAudit` hook that calls `alert` for each event of `ALERT_AT_ONCE` (a refresh-token reuse
 * only when it revoked the family: one within the grace period is a client's retry), and once
 * per window when a type of `ALERT_ON_SPIKE` reaches `threshold` for one client.
 */
export function alertingAudit(alert: (event: AuditEvent, why: string) => void, { threshold = 20, windowMs = 60_000 }: AlertOptions = {}) {
  let windowStart = 0;
  let counts = new Map<string, number>();
  return (event: AuditEvent): void => {
    if (ALERT_AT_ONCE.has(event.type)) {
      if (event.type !== 'refresh_token.reused' || event.familyRevoked) alert(event, event.type);
      return;
    }
    if (!ALERT_ON_SPIKE.has(event.type)) return;
    // Fixed windows, one map per window: memory stays bounded by what one window sees.
    if (event.at - windowStart >= windowMs) {
      windowStart = event.at;
      counts = new Map();
    }
    // A registration is a new client id every time: its spike is counted over all clients.
    const key = event.type === 'client.registered' ? event.type : `${event.type} ${'clientId' in event ? event.clientId : ''}`;
    const count = (counts.get(key) ?? 0) + 1;
    counts.set(key, count);
    if (count === threshold) alert(event, `${threshold} × ${event.type} within ${windowMs / 1000} s`);
  };
}
