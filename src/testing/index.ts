/**
 * Helpers for testing code that uses authgate: a controllable clock and a fake sign-in.
 * @packageDocumentation
 * @module authgate/testing
 */
import type { Account, Clock, OAuthRequest, UserSession, UserSessions } from '../types.js';

/**
 * A clock that only moves when told to.
 *
 * @example
 * const clock = new FakeClock();
 * const server = new AuthorizationServer({ storage, sessions, clock });
 * clock.advance(10 * 60 * 1000); // ten minutes later: the code has expired
 * @group Testing
 */
export class FakeClock implements Clock {
  private current: number;

  /** @param startMs ms since epoch; default 2026-01-01T00:00:00Z. */
  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  /** Move forward by `ms` milliseconds. */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('FakeClock.advance(ms) needs a non-negative number');
    this.current += ms;
  }

  /** Jump to `ms` since epoch. */
  set(ms: number): void {
    if (!Number.isFinite(ms)) throw new RangeError('FakeClock.set(ms) needs a finite number');
    this.current = ms;
  }
}

/**
 * A fake sign-in for tests: sessions are keyed by the `sid` cookie.
 *
 * @example
 * const sessions = new FakeSessions(clock);
 * const cookie = sessions.signIn({ uuid: 'a1b2c3d4e5f6', name: 'Ada', email: 'ada@example.com' });
 * await server.authorize({ method: 'GET', url, headers: { cookie } });
 * @group Testing
 */
export class FakeSessions implements UserSessions {
  private readonly sessions = new Map<string, UserSession>();
  private next = 1;

  constructor(private readonly clock: Clock = { now: () => Date.now() }) {}

  /** Sign an account in (now, or at `authenticatedAt`); returns the `cookie` header value. */
  signIn(account: Account, authenticatedAt = this.clock.now()): string {
    return this.setSession({ account, authenticatedAt });
  }

  /**
   * Put a session of your choosing behind a cookie: a new cookie, or (with `cookie`, a value
   * returned by `signIn`) the one a browser already holds, as when that browser signs in again
   * or its session is swapped. `authenticatedAt` is kept exactly as given, even when it is not a
   * number, so a test can play a host whose sign-in reports a broken time. Returns the `cookie`
   * header value.
   *
   * @example
   * const sid = sessions.signIn(ada);
   * sessions.setSession({ account: ada, authenticatedAt: clock.now() - 86_400_000 }, sid); // a day-old sign-in now
   */
  setSession(session: { account: Account; authenticatedAt: unknown }, cookie?: string): string {
    const sid = cookie === undefined ? `s${this.next++}` : cookie.replace(/^sid=/, '');
    this.sessions.set(sid, { account: session.account, authenticatedAt: session.authenticatedAt as number });
    return `sid=${sid}`;
  }

  /** End the session behind a cookie value returned by `signIn`. */
  signOut(cookie: string): void {
    this.sessions.delete(cookie.replace(/^sid=/, ''));
  }

  current(request: OAuthRequest): UserSession | null {
    const raw = request.headers['cookie'];
    const line = Array.isArray(raw) ? raw.join('; ') : (raw ?? '');
    const match = /(?:^|;\s*)sid=([^;]+)/.exec(line);
    return (match && this.sessions.get(match[1]!)) ?? null;
  }
}
export * from './conformance/index.js';
