/**
 * The platform's own browser sessions; nothing here is authgate's. A random session id lives in
 * an HttpOnly, SameSite=Lax cookie; the sessions live in memory. Each session carries a CSRF
 * token that every POST form of the platform sends back (synchronizer token pattern).
 *
 * authgate only asks one question of all this, through `UserSessions`: who is signed in on this
 * request, and when did they last sign in with their password (for `prompt=login` and
 * `max_auth_age`).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { UserSession, UserSessions } from '../../src/index.js';
import { html, sendPage } from './html.js';

export interface BrowserSession {
  id: string;
  /** Sent back by every form of this session. */
  csrf: string;
  /** Who is signed in, and when they signed in; absent before sign-in. */
  user?: UserSession;
  /** A message for the next page, shown once. */
  flash?: string;
  expiresAt: number;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** The signed-in session, set by `requireUser`. */
      session?: BrowserSession & { user: UserSession };
    }
  }
}

const COOKIE = 'nimbus_session'; // the app on another port of the same host gets its own name
const LIFETIME_MS = 8 * 3600 * 1000;
const newToken = () => randomBytes(32).toString('base64url');

export function readCookie(header: string | string[] | undefined, name: string): string | undefined {
  for (const part of (Array.isArray(header) ? header.join(';') : (header ?? '')).split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export class SessionStore {
  private readonly sessions = new Map<string, BrowserSession>();

  /** @param secure add `Secure` to the cookie: set it whenever the platform is served over https. */
  constructor(private readonly secure: boolean) {}

  /** What authgate needs from the platform's sign-in. */
  readonly userSessions: UserSessions = { current: (request) => this.find(request.headers.cookie)?.user ?? null };

  find(cookieHeader: string | string[] | undefined): BrowserSession | undefined {
    const session = this.sessions.get(readCookie(cookieHeader, COOKIE) ?? '');
    if (session && session.expiresAt <= Date.now()) this.sessions.delete(session.id);
    return session && session.expiresAt > Date.now() ? session : undefined;
  }

  /** This browser's session; an anonymous one is started if it has none (the sign-in form needs a CSRF token too). */
  ensure(req: Request, res: Response): BrowserSession {
    return this.find(req.headers.cookie) ?? this.start(res);
  }

  /** A successful sign-in always gets a new session id, so an id planted earlier is worthless (session fixation). */
  signIn(req: Request, res: Response, user: UserSession['account']): BrowserSession {
    this.sessions.delete(readCookie(req.headers.cookie, COOKIE) ?? '');
    return this.start(res, { account: user, authenticatedAt: Date.now() });
  }

  signOut(req: Request, res: Response): void {
    this.sessions.delete(readCookie(req.headers.cookie, COOKIE) ?? '');
    res.clearCookie(COOKIE, { httpOnly: true, sameSite: 'lax', secure: this.secure, path: '/' });
  }

  /**
   * RP-initiated logout (authgate's end-session endpoint calls `openid.signOut` with the request):
   * end the session of this cookie; the `set-cookie` that clears it, for authgate's answer.
   */
  signOutByCookie(cookieHeader: string | string[] | undefined): string {
    this.sessions.delete(readCookie(cookieHeader, COOKIE) ?? '');
    return `${COOKIE}=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax${this.secure ? '; Secure' : ''}`;
  }

  private start(res: Response, user?: UserSession): BrowserSession {
    const now = Date.now();
    for (const [id, old] of this.sessions) if (old.expiresAt <= now) this.sessions.delete(id);
    const session: BrowserSession = { id: newToken(), csrf: newToken(), expiresAt: now + LIFETIME_MS, ...(user && { user }) };
    this.sessions.set(session.id, session);
    res.cookie(COOKIE, session.id, { httpOnly: true, sameSite: 'lax', secure: this.secure, path: '/', maxAge: LIFETIME_MS });
    return session;
  }
}

/** A one-time message for the next page of this session. */
export function takeFlash(session: BrowserSession | undefined): string | undefined {
  const flash = session?.flash;
  if (session) delete session.flash;
  return flash;
}

/**
 * For every POST form of the platform (after a body parser): the `csrf` field must equal the
 * session's token. SameSite=Lax alone is not enough here: the third-party app on another port of
 * the same host is same-site, so its pages could post forms to the platform with our cookie.
 */
export function checkCsrf(sessions: SessionStore) {
  return (req: Request, res: Response, next: NextFunction) => {
    const session = sessions.find(req.headers.cookie);
    const sent = typeof req.body?.csrf === 'string' ? Buffer.from(req.body.csrf) : Buffer.alloc(0);
    const expected = Buffer.from(session?.csrf ?? '');
    if (session && sent.length === expected.length && timingSafeEqual(sent, expected)) return next();
    sendPage(
      res,
      { title: 'This form has expired' },
      html`<div class="error">The form could not be verified: it has expired or
was not sent from a Nimbus page. Go back, reload the page and try again.</div>`,
      403,
    );
  };
}

/** Pages for signed-in users only; others are sent to sign in and brought back afterwards. */
export function requireUser(sessions: SessionStore) {
  return (req: Request, res: Response, next: NextFunction) => {
    const session = sessions.find(req.headers.cookie);
    if (session?.user) {
      res.locals.session = session as BrowserSession & { user: UserSession };
      return next();
    }
    res.redirect(303, `/login?next=${encodeURIComponent(req.method === 'GET' ? req.originalUrl : '/')}`);
  };
}
