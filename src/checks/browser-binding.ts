/**
 * Browser binding of interactions: an interaction belongs to the browser that started it
 * (docs/reference.md#browser-binding; SECURITY.md U-10).
 *
 * Interaction ids travel in URLs (the sign-in redirect, the resume link, "Use another account").
 * Whoever learns one (a Referer, an analytics script on the login page, history, logs) could
 * otherwise finish the flow in their own browser, signed in as themselves, and the victim's
 * client would get a code for the attacker's account with the victim's valid `state`: a session
 * swap that `state` cannot catch (RFC 9700 §4.7 and §4.2.4 describe the family).
 *
 * So the authorization route gives the browser a random secret in an `HttpOnly`,
 * `SameSite=Lax` cookie scoped to `{basePath}/authorize` (as node-oidc-provider does), and the
 * request record keeps only its SHA-256 (`browserHash`). Resume and decision compare, in
 * constant time, the hash of the cookie the browser sends with the stored one. The secret is
 * derived from nothing in any URL: a cookie holding the interaction id would prove nothing,
 * since an attacker controls their own browser's cookies.
 *
 * One cookie per browser, reused by every interaction it starts: several tabs with flows in
 * flight all carry it, and the browser keeps one cookie, not one per interaction (which would
 * grow its Cookie header with every flow and could clobber each other at the same path).
 *
 * An interaction created without a binding (a host calling `authorize()` directly with a
 * request that carries no binding cookie) is unbound, and any browser may continue it: that is
 * the host's own page's business, and the host can bind with `bindBrowser` and check with
 * `AuthorizationServer.checkBrowserBinding`.
 */
import { randomToken, sha256Base64url, timingSafeEqual } from '../crypto.js';
import type { Context } from '../context.js';
import { errorPage, pageFailure } from '../failure.js';
import { DEFAULT_BASE_PATH, plausibleId } from '../rules.js';
import type { AuthorizationRequestRecord, InteractionRecord } from '../storage/types.js';
import type { AuthorizeDecision, OAuthRequest } from '../types.js';

/**
 * The name of the browser-binding cookie.
 * @group Adapter kit
 */
export const BROWSER_COOKIE = 'authgate_browser';

/** What `randomToken()` produces: 32 random bytes, base64url. Anything else is not ours. */
const SECRET = /^[A-Za-z0-9_-]{43}$/;

/**
 * The first value of cookie `name` in the request's Cookie header(s) (RFC 6265 §5.4) that
 * `accept` takes, if any. Header values of an `OAuthRequest` are `string | string[] | undefined`
 * (Node gives repeated headers as an array): this reads every form, so a host's `UserSessions`
 * can find its session cookie with it.
 *
 * @example
 * const sessions: UserSessions = { current: (request) => mySessions.get(readCookie(request, 'sid') ?? '') ?? null };
 * @group Adapter kit
 */
export function readCookie(
  request: Pick<OAuthRequest, 'headers'>,
  name: string,
  accept: (value: string) => boolean = () => true,
): string | undefined {
  const raw = request.headers['cookie'];
  for (const line of Array.isArray(raw) ? raw : raw ? [raw] : []) {
    for (const part of line.split(';')) {
      const eq = part.indexOf('=');
      if (eq > 0 && part.slice(0, eq).trim() === name) {
        const value = part.slice(eq + 1).trim();
        if (accept(value)) return value;
      }
    }
  }
  return undefined;
}

const wellFormed = (value: string) => SECRET.test(value);

/** The browser's binding secret: the first well-formed one its request carries (a stray malformed one is skipped). */
const browserSecret = (request: Pick<OAuthRequest, 'headers'>): string | undefined => readCookie(request, BROWSER_COOKIE, wellFormed);

/**
 * Record on a new authorization request the browser it came from: the hash of the binding
 * cookie its request carries, if any (none: the request stays unbound). Every interaction of the
 * request carries it on, `resume` included.
 */
export function bindRequest(req: AuthorizationRequestRecord, request: Pick<OAuthRequest, 'headers'>): void {
  const secret = browserSecret(request);
  if (secret !== undefined) req.browserHash = sha256Base64url(secret);
}

/**
 * The hash of the browser secret a step is bound to, if any: its authorization request's
 * (`authgate_browser`), or its device confirmation's (the device pages' CSRF cookie); a device
 * sign-in, which issues nothing, is bound to none.
 */
function boundTo(record: InteractionRecord): string | undefined {
  if (record.purpose !== 'device') return record.request.browserHash;
  return record.kind === 'consent' ? record.device.browserHash : undefined;
}

/**
 * Whether the browser that holds `secret` (its binding secret as a value; `undefined` when it
 * has none) may continue `record`: always for an unbound step; otherwise only with the secret
 * whose hash the step keeps, compared in constant time. The secret of a step of an
 * authorization request is the `authgate_browser` cookie (`checkBrowserBinding` reads it from
 * the request); that of a device confirmation is the device pages' CSRF cookie, which their
 * route passes (`AuthorizationServer.checkDeviceBinding`).
 */
export function checkBinding(record: InteractionRecord, secret: string | undefined): boolean {
  const bound = boundTo(record);
  if (bound === undefined) return true;
  return secret !== undefined && timingSafeEqual(sha256Base64url(secret), bound);
}

/** What the page of another browser says (an `invalid_request` error page, status 400). */
export const ANOTHER_BROWSER =
  'This authorization was started in another browser. Open the application in this browser and start again from there.';

/**
 * Options of `bindBrowser`.
 * @group Adapter kit
 */
export interface BrowserBindingOptions {
  /**
   * The cookie's `Path`: every route that continues the interaction must be under it. The
   * adapters use `{basePath}/authorize` (mount path included), which covers `/authorize`,
   * `/authorize/resume` and `/authorize/decision`. Default `/v1/oauth/authorize`.
   */
  path?: string;
  /** Add `Secure`. Default: when `request.url` is an absolute `https:` URL. */
  secure?: boolean;
}

/**
 * The result of `bindBrowser`.
 * @group Adapter kit
 */
export interface BrowserBinding {
  /**
   * The request to pass to `server.authorize()`: the original one when the browser already had
   * its cookie, otherwise a copy whose Cookie header carries the new one.
   */
  request: OAuthRequest;
  /**
   * The `Set-Cookie` header value to send with the response when the binding is new;
   * `undefined` when the browser already has it. Send it only with a `login` or `consent`
   * decision (nothing is stored otherwise).
   */
  setCookie: string | undefined;
}

/**
 * Bind the authorization request to the browser that sends it, as the adapters do on
 * `GET {basePath}/authorize`: for hosts that serve the authorization endpoint, or the
 * interaction pages, themselves. Reuses the browser's binding cookie when it has one, otherwise
 * makes a new random secret (never derived from anything in a URL). Pair it with
 * `server.checkBrowserBinding(interactionId, request)` on every page that continues the
 * interaction (resume, the consent form's POST): those pages must be under the cookie's `path`.
 *
 * @example
 * // The host's own authorization route:
 * const binding = bindBrowser(request, { path: '/oauth' });
 * const decision = await server.authorize(binding.request);
 * if (binding.setCookie && (decision.type === 'login' || decision.type === 'consent')) {
 *   res.append('Set-Cookie', binding.setCookie);
 * }
 * // ... and on its consent page's POST (under /oauth):
 * const refused = await server.checkBrowserBinding(interactionId, request);
 * if (refused) return render(refused); // an error page: started in another browser
 * const result = await server.approve(interactionId, request);
 * @group Adapter kit
 */
export function bindBrowser(request: OAuthRequest, options: BrowserBindingOptions = {}): BrowserBinding {
  if (browserSecret(request) !== undefined) return { request, setCookie: undefined };
  const secret = randomToken();
  const pair = `${BROWSER_COOKIE}=${secret}`;
  const raw = request.headers['cookie'];
  // The browser will send it from now on; the request the core sees already does.
  const cookie = Array.isArray(raw) ? [...raw, pair] : raw ? `${raw}; ${pair}` : pair;
  const secure = options.secure ?? request.url.startsWith('https:');
  return {
    request: { ...request, headers: { ...request.headers, cookie } },
    setCookie: `${pair}; Path=${options.path ?? `${DEFAULT_BASE_PATH}/authorize`}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`,
  };
}

/**
 * The check of `AuthorizationServer.checkBrowserBinding`: `null` when `request` may continue
 * the interaction (the browser that started it, or an unbound interaction, or one that is
 * unknown or expired: the step itself then says so); otherwise the "started in another browser"
 * error page. Reads the interaction without using it up, so a refused attempt leaves it to the
 * browser it belongs to.
 */
export async function checkBrowserBinding(ctx: Context, interactionId: string, request: OAuthRequest): Promise<AuthorizeDecision | null> {
  let secret: string | undefined;
  try {
    secret = browserSecret(request);
  } catch (error) {
    return pageFailure(ctx, error); // a request whose headers cannot be read, as any failure of the check
  }
  return checkSecret(ctx, interactionId, secret);
}

/**
 * `checkBrowserBinding` with the browser's secret given as a value (`undefined`: it has none),
 * as the device pages give theirs (`AuthorizationServer.checkDeviceBinding`).
 */
export async function checkSecret(ctx: Context, interactionId: string, secret: string | undefined): Promise<AuthorizeDecision | null> {
  try {
    if (!plausibleId(interactionId)) return null;
    const record = await ctx.storage.findInteraction(sha256Base64url(interactionId));
    if (!record || checkBinding(record, secret)) return null;
    return errorPage('invalid_request', ANOTHER_BROWSER);
  } catch (error) {
    return pageFailure(ctx, error);
  }
}
