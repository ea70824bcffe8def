/**
 * The end-session endpoint (OpenID Connect RP-Initiated Logout 1.0;
 * docs/reference.md#rp-initiated-logout), `GET|POST {basePath}/logout`. Sessions belong to the
 * host: this endpoint decides whether to end one, the host's `openid.signOut` ends it.
 *
 * - The application is the one the `id_token_hint` was issued to (its `aud`), or `client_id`,
 *   which must then be among the hint's audiences.
 * - A `post_logout_redirect_uri` is followed only when it is one of that application's
 *   `postLogoutRedirectUris`, exactly; anything else (unregistered, no application known, a hint
 *   this server did not sign) is an error page, never a redirect: the endpoint is no open
 *   redirector. `state` is echoed only on that redirect.
 * - The host's session ends without a question only when the hint names the signed-in account
 *   (or nobody is signed in, so nothing can be lost); otherwise the user confirms on a built-in
 *   page, whose form is protected like the consent form (a double-submit CSRF cookie scoped to
 *   `{basePath}/logout`). A cross-site request without a valid hint can end nobody's session.
 * - The confirmation form carries the request's own parameters; the POST checks them all again.
 */
import { readCookie } from '../checks/browser-binding.js';
import { findClient } from '../checks/clients.js';
import { redirectTo } from '../checks/redirect-uri.js';
import type { Context } from '../context.js';
import { randomToken } from '../crypto.js';
import { isOAuthError } from '../errors.js';
import { isMethod, queryParams, requestParams, single } from '../http.js';
import { secureCookies } from '../proxy.js';
import { CONTROL, plausibleId } from '../rules.js';
import type { ClientRecord } from '../storage/types.js';
import type { Account, OAuthRequest, OAuthResponse, SignOutResult, UserSession } from '../types.js';
import { CSRF_COOKIE, csrfCookie, csrfMatches, isCsrfToken } from '../ui/csrf-cookie.js';
import { renderLogoutConfirmPage, renderLogoutErrorPage, renderSignedOutPage } from '../ui/logout-pages.js';
import { pageOptions, type PageOptions } from '../ui/pages.js';
import { checkIdTokenHint } from './id-token-hint.js';

/** Where the end-session endpoint is mounted, and what its pages call the site. */
export interface EndSessionUi {
  /** The mounted `basePath` (the form posts to `{basePath}/logout`, its cookie is scoped there). */
  basePath: string;
  /** The adapter's `siteName`, over the brand's name. */
  siteName?: string | undefined;
}

/** The end-session endpoint under `basePath`, for the discovery document's `end_session_endpoint`. */
export const endSessionPath = (basePath: string): string => `${basePath}/logout`;

/** The request parameters (RP-Initiated Logout 1.0 §2), and the confirmation form's `csrf`. */
const NAMES = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'ui_locales', 'csrf'] as const;
type Name = (typeof NAMES)[number];

/** Space-separated BCP 47 tags, as at the authorization endpoint. */
const TOKENS = /^[\x21-\x7e]+( [\x21-\x7e]+)*$/;

/** Headers a host's `signOut` cannot set: the answer's own. */
const OWN_HEADERS = new Set([
  'location',
  'content-type',
  'content-length',
  'cache-control',
  'content-security-policy',
  'x-frame-options',
  'referrer-policy',
  'x-content-type-options',
  'vary',
  'transfer-encoding',
  'connection',
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

interface Refusal {
  status: number;
  error: string;
  description: string;
}
const refused = (description: string, status = 400, error = 'invalid_request'): Refusal => ({ status, error, description });

/**
 * Answer one request to the end-session endpoint: an error page, the confirmation page, or the
 * sign-out (the host's `openid.signOut`) followed by the redirect to the registered
 * `post_logout_redirect_uri` (with `state`) or the "signed out" page. Never throws: a failure of
 * the store, of the host's sessions or of its hook is reported and answered with a 500 page.
 */
export async function endSession(
  ctx: Context,
  request: OAuthRequest,
  report: (error: unknown) => void,
  ui: EndSessionUi,
): Promise<OAuthResponse> {
  let page: PageOptions = pageOptions(ctx.options.pages, request, ui.siteName);
  const fail = (r: Refusal) => renderLogoutErrorPage(r, page);
  try {
    const provider = ctx.openid;
    if (!provider || ctx.options.issuer === undefined)
      return fail(refused('OpenID Connect is not enabled on this server.', 404, 'not_found'));
    const post = isMethod(request, 'POST');
    if (!post && !isMethod(request, 'GET')) {
      const response = fail(refused('The end-session endpoint takes GET and POST.', 405));
      response.headers.allow = 'GET, POST';
      return response;
    }
    let v: Partial<Record<Name, string>>;
    try {
      v = single(post ? requestParams(request) : queryParams(request), NAMES);
    } catch (error) {
      if (isOAuthError(error)) return fail(refused(error.description));
      throw error;
    }
    const uiLocales =
      v.ui_locales !== undefined && v.ui_locales.length <= 256 && TOKENS.test(v.ui_locales) ? v.ui_locales.split(' ') : undefined;
    if (uiLocales) page = pageOptions(ctx.options.pages, request, ui.siteName, uiLocales);
    if (v.state !== undefined && (v.state.length > 2048 || CONTROL.test(v.state)))
      return fail(refused('The state must be at most 2048 characters, without control characters.'));
    if (v.client_id !== undefined && !plausibleId(v.client_id)) return fail(refused('The client_id is not a known application.'));

    // The hint: ours (our key, our issuer, an ID token), expired or not.
    const hint =
      v.id_token_hint === undefined
        ? undefined
        : await checkIdTokenHint(provider.keys, v.id_token_hint, { issuer: ctx.options.issuer, now: ctx.clock.now() });
    const validHint = hint?.valid ? hint : undefined;
    if (validHint && v.client_id !== undefined && !validHint.aud.includes(v.client_id))
      return fail(refused('The id_token_hint was not issued to the application named by client_id.'));
    const clientId = v.client_id ?? (validHint?.aud.length === 1 ? validHint.aud[0] : undefined);
    const client: ClientRecord | null = clientId === undefined ? null : await findClient(ctx, clientId);
    if (v.client_id !== undefined && !client) return fail(refused('The client_id is not a known application.'));

    const target = v.post_logout_redirect_uri;
    if (target !== undefined) {
      if (hint && !hint.valid)
        return fail(refused('The id_token_hint is not an ID token this server issued, so the post_logout_redirect_uri cannot be checked.'));
      if (!client) return fail(refused('A post_logout_redirect_uri needs the application: send id_token_hint or client_id with it.'));
      if (!client.openid?.postLogoutRedirectUris?.includes(target))
        return fail(refused('The post_logout_redirect_uri is not registered for this application.'));
    }

    const session: UserSession | null = await ctx.sessions.current(request);
    const confirmed = post && v.csrf !== undefined;
    if (confirmed && !csrfMatches(v.csrf, readCookie(request, CSRF_COOKIE, isCsrfToken))) {
      return fail(refused('The sign-out form could not be verified (missing or wrong CSRF token). Start again from the application.', 403));
    }
    const named = !!session && !!validHint && !!client && provider.subject(session.account, client) === validHint.sub;
    if (session && !confirmed && !named) {
      // Someone is signed in and the request does not prove it comes from their application: ask.
      const fields: Record<string, string> = {};
      for (const name of NAMES) {
        const value = v[name];
        if (name !== 'csrf' && value !== undefined) fields[name] = value;
      }
      const existing = readCookie(request, CSRF_COOKIE, isCsrfToken);
      const token = existing ?? randomToken();
      const response = renderLogoutConfirmPage({
        action: endSessionPath(ui.basePath),
        csrfToken: token,
        fields,
        client: client ? { name: client.name, ...(client.registration !== undefined && { verified: false as const }) } : undefined,
        account: session.account,
        ...page,
      });
      if (!existing)
        response.headers['set-cookie'] = csrfCookie(token, endSessionPath(ui.basePath), secureCookies(ctx.options.issuer, request));
      return response;
    }

    const extra = await signOut(ctx, request, session?.account ?? null, report);
    if (target === undefined) return renderSignedOutPage(page, extra);
    return {
      status: post ? 303 : 302,
      headers: {
        ...extra,
        location: v.state === undefined ? target : redirectTo(target, { state: v.state }, 'query'),
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      },
      body: '',
    };
  } catch (error) {
    report(error);
    return fail(refused('The server could not complete the sign-out. Try again later.', 500, 'server_error'));
  }
}

/** Call the host's `openid.signOut`, and keep the headers of its answer the answer may carry. */
async function signOut(
  ctx: Context,
  request: OAuthRequest,
  account: Account | null,
  report: (error: unknown) => void,
): Promise<Record<string, string>> {
  const hook = ctx.options.openid?.signOut;
  if (!hook) return {};
  const result: SignOutResult = await hook(request, account);
  const headers: Record<string, string> = {};
  const given = result?.headers;
  if (given === undefined) return headers;
  for (const [key, value] of Object.entries(given)) {
    const name = key.toLowerCase();
    if (typeof value !== 'string' || !HEADER_NAME.test(name) || !HEADER_VALUE.test(value) || OWN_HEADERS.has(name)) {
      report(new Error(`openid.signOut returned a header the answer cannot carry: ${JSON.stringify(key.slice(0, 60))}`));
      continue;
    }
    headers[name] = value;
  }
  return headers;
}
