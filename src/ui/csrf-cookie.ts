import { timingSafeEqual } from '../crypto.js';

/**
 * The double-submit cookie of the built-in forms, the consent page and the device pages
 * (docs/reference.md#interaction-routes): a random token in an `HttpOnly`, `SameSite=Lax`
 * cookie scoped to the form's routes, which the form's `csrf` field must repeat. One name; each
 * page sets it at its own path.
 */

/**
 * The double-submit cookie of the consent form (and, at their own path, of the device pages).
 * @group Adapter kit
 */
export const CSRF_COOKIE = 'authgate_csrf';

/** What `randomToken()` makes: a token this server could have issued. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** Whether a cookie value is a token this server could have issued (a stray or foreign value is not reused). */
export const isCsrfToken = (value: string): boolean => TOKEN.test(value);

/**
 * The `Set-Cookie` of `token` for the forms under `path`, `Secure` when `secure` (the adapters
 * pass `secureCookies(issuer, request)`, docs/reference.md#behind-a-proxy).
 */
export const csrfCookie = (token: string, path: string, secure: boolean): string =>
  `${CSRF_COOKIE}=${token}; Path=${path}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;

/** Whether a form's `csrf` field repeats the cookie (compared in constant time); a missing one never does. */
export const csrfMatches = (field: string | undefined, cookie: string | undefined): boolean =>
  !!field && !!cookie && timingSafeEqual(field, cookie);
