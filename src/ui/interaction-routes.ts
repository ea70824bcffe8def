import { bindBrowser, readCookie } from '../checks/browser-binding.js';
import { randomToken } from '../crypto.js';
import { errorPage } from '../failure.js';
import { isMethod, queryParams, requestParams, single } from '../http.js';
import type { ResolvedPages } from './page-settings.js';
import { decisionResponse, formPostResponse, pageOptions, renderConsentPage } from './pages.js';
import { secureCookies } from '../proxy.js';
import { DEFAULT_BASE_PATH, DEFAULT_LOGIN_URL } from '../rules.js';
import { CSRF_COOKIE, csrfCookie, csrfMatches, isCsrfToken } from './csrf-cookie.js';
import { deviceDecisionResponse } from './device-routes.js';
import type { AuthorizationServer } from '../server.js';
import type { AuthorizeDecision, OAuthRequest, OAuthResponse } from '../types.js';

/**
 * The default handling of `login` and `consent` decisions that every adapter shares, so the
 * adapters only translate requests and responses:
 * - `login`: 302 to the host's `loginUrl` with `?interaction=<id>`; after signing the user in the
 *   host sends the browser to `GET {basePath}/authorize/resume?interaction=<id>`.
 * - `consent`: the built-in consent page, which posts to `POST {basePath}/authorize/decision`,
 *   with a "Use another account" link to `loginUrl?interaction=<id>` (resuming a consent
 *   interaction asks the consent anew of whoever is signed in then).
 *   The form is protected against CSRF twice: the unguessable interaction id only ever appears
 *   in the page body, and a double-submit cookie must match the form's `csrf` field. `approve`
 *   and `deny` also check that the signed-in user is the one the page was shown to.
 * - Every interaction is bound to the browser that started it (`handleAuthorize` sets the
 *   `authgate_browser` cookie, see `checks/browser-binding.ts`); `handleResume` and
 *   `handleDecisionForm` answer any other browser with an error page.
 */

/**
 * Where the interaction routes send users and what their pages show: the options of
 * `handleAuthorize` and `interactionResponse`, and part of every adapter's (`AdapterOptions`).
 * @group Adapter kit
 */
export interface InteractionUiOptions {
  /** Where the host signs users in. Default `/login`. */
  loginUrl?: string;
  /** Where the OAuth routes are mounted. Default `/v1/oauth`. */
  basePath?: string;
  /**
   * The platform's name, shown on the consent and error pages. Default: the server's
   * `pages.brand.name`, else the issuer's host (docs/reference.md#branding-and-languages).
   */
  siteName?: string;
  /**
   * `Path` of the browser-binding cookie (`authgate_browser`). Default `{basePath}/authorize`,
   * which covers the resume and decision routes. Widen it only if pages of your own outside
   * that path check the binding (`server.checkBrowserBinding`).
   */
  browserCookiePath?: string;
}

export { CSRF_COOKIE, pageOptions };

/**
 * Default response for any decision. `pages` (`server.options.pages`) brands the pages and
 * picks their language (docs/reference.md#branding-and-languages); without it they are English
 * and unbranded. The consent page's CSRF cookie gets `Secure` when `secure` says so; by default
 * when `request.url` is an absolute `https:` URL (adapters pass an absolute URL when they know the
 * scheme; proxy headers are not read here). The adapters pass
 * `secureCookies(server.options.issuer, request)`, so an https `issuer` makes it `Secure` too
 * (docs/reference.md#behind-a-proxy).
 * @group Adapter kit
 */
export function interactionResponse(
  decision: AuthorizeDecision,
  request: OAuthRequest,
  options: InteractionUiOptions = {},
  pages?: ResolvedPages,
  secure: boolean = secureCookies(undefined, request),
): OAuthResponse {
  const basePath = options.basePath ?? DEFAULT_BASE_PATH;
  switch (decision.type) {
    case 'redirect':
      return decisionResponse(decision, request);
    case 'error':
      return decisionResponse(decision, request, pageOptions(pages, request, options.siteName));
    case 'form_post':
      return formPostResponse(decision);
    case 'login': {
      return {
        status: 302,
        headers: {
          location: signInUrl(options, decision.interaction.id),
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
        },
        body: '',
      };
    }
    case 'consent': {
      // The confirmation of a device verification (RFC 8628 §3.3): its own page, at its own path.
      if (decision.interaction.device) {
        return deviceDecisionResponse(decision, request, { basePath }, pageOptions(pages, request, options.siteName), secure);
      }
      const existing = readCookie(request, CSRF_COOKIE);
      const csrfToken = existing && isCsrfToken(existing) ? existing : randomToken();
      const switchAccountUrl = signInUrl(options, decision.interaction.id);
      const response = renderConsentPage(decision.interaction, {
        action: `${basePath}/authorize/decision`,
        csrfToken,
        switchAccountUrl,
        ...pageOptions(pages, request, options.siteName, decision.interaction.openid?.uiLocales),
      });
      response.headers['set-cookie'] = csrfCookie(csrfToken, `${basePath}/authorize`, secure);
      return response;
    }
  }
}

/** The host's sign-in page for an interaction: `loginUrl` with `interaction=<id>` added to its query. */
function signInUrl(options: InteractionUiOptions, interactionId: string): string {
  const loginUrl = options.loginUrl ?? DEFAULT_LOGIN_URL;
  return `${loginUrl}${loginUrl.includes('?') ? '&' : '?'}interaction=${encodeURIComponent(interactionId)}`;
}

/**
 * What `handleAuthorize` decided, and what the adapter sends with it.
 * @group Adapter kit
 */
export interface AuthorizeHandling {
  decision: AuthorizeDecision;
  /** The request as the core saw it (with the binding cookie): pass it to `interactionResponse`. */
  request: OAuthRequest;
  /** A `Set-Cookie` value the response must carry (a new browser binding), or `undefined`. */
  setCookie: string | undefined;
}

/**
 * `GET {basePath}/authorize`, bound to the browser that sends it: the browser's binding cookie
 * (a new one when it has none) goes with the request, and a new one is set with a `login` or
 * `consent` decision, the ones that store an interaction.
 * @group Adapter kit
 */
export async function handleAuthorize(
  server: AuthorizationServer,
  request: OAuthRequest,
  options: InteractionUiOptions = {},
): Promise<AuthorizeHandling> {
  const binding = bindBrowser(request, {
    path: options.browserCookiePath ?? `${options.basePath ?? DEFAULT_BASE_PATH}/authorize`,
    // An https issuer means an https public URL, whatever the hop to the app was.
    secure: secureCookies(server.options.issuer, request),
  });
  const decision = await server.authorize(binding.request);
  const stored = decision.type === 'login' || decision.type === 'consent';
  return { decision, request: binding.request, setCookie: stored ? binding.setCookie : undefined };
}

/**
 * `GET {basePath}/authorize/resume?interaction=<id>`, from the browser that started the interaction only.
 * @group Adapter kit
 */
export async function handleResume(server: AuthorizationServer, request: OAuthRequest): Promise<AuthorizeDecision> {
  let interaction: string | undefined;
  try {
    ({ interaction } = single(queryParams(request), ['interaction'] as const));
  } catch {
    return errorPage('invalid_request', 'The interaction parameter is missing or was sent more than once.');
  }
  const refused = await server.checkBrowserBinding(interaction ?? '', request);
  return refused ?? server.resume(interaction ?? '', request);
}

/**
 * `POST {basePath}/authorize/decision` with `interaction`, `csrf` and `decision=approve|deny`,
 * from the browser that started the interaction only.
 * @group Adapter kit
 */
export async function handleDecisionForm(server: AuthorizationServer, request: OAuthRequest): Promise<AuthorizeDecision> {
  let form: Partial<Record<'interaction' | 'csrf' | 'decision', string>>;
  try {
    if (!isMethod(request, 'POST')) throw new Error('method');
    form = single(requestParams(request), ['interaction', 'csrf', 'decision'] as const);
  } catch {
    return errorPage('invalid_request', 'The authorization form was malformed. Start again from the application.');
  }
  // Any value the cookie holds: a host's own page (`renderConsentPage`) may set a token of its own.
  if (!csrfMatches(form.csrf, readCookie(request, CSRF_COOKIE))) {
    return errorPage(
      'invalid_request',
      'The authorization form could not be verified (missing or wrong CSRF token). Start again from the application.',
      403,
    );
  }
  if (form.decision !== 'approve' && form.decision !== 'deny')
    return errorPage('invalid_request', "The decision must be 'approve' or 'deny'.");
  const refused = await server.checkBrowserBinding(form.interaction ?? '', request);
  if (refused) return refused;
  return form.decision === 'approve' ? server.approve(form.interaction ?? '', request) : server.deny(form.interaction ?? '', request);
}
