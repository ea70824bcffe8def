import { readCookie } from '../checks/browser-binding.js';
import { randomToken } from '../crypto.js';
import { renderDeviceConfirmPage, renderDeviceEntryPage, renderDeviceLockedPage, renderDeviceResultPage } from './device-pages.js';
import { errorPage } from '../failure.js';
import { isMethod, queryParams, requestParams, single } from '../http.js';
import { pageOptions, type PageOptions } from './pages.js';
import { secureCookies } from '../proxy.js';
import { CSRF_COOKIE, csrfCookie, csrfMatches, isCsrfToken } from './csrf-cookie.js';
import type { AuthorizationServer } from '../server.js';
import type { AuthorizeDecision, OAuthRequest, OAuthResponse } from '../types.js';

/**
 * The routes of the device authorization grant every adapter shares
 * (docs/reference.md#device-authorization-grant-rfc-8628):
 * - `POST {basePath}/device`, the device authorization endpoint, with its `verification_uri`;
 * - `GET|POST {basePath}/device/verify`, the verification page: sign-in through the host's
 *   `loginUrl` (the contract of authorization requests: `?interaction=<id>`, then
 *   `authorize/resume`), then the code entry, then the confirmation (the host's
 *   `onDeviceVerification`, or the built-in page), then the outcome.
 *
 * The forms are protected like the consent form: a double-submit cookie (`authgate_csrf`, scoped
 * to `{basePath}/device`) must match the form's `csrf` field. That cookie is also the browser's
 * secret for these pages: wrong codes are counted per browser by it, and the confirmation step is
 * bound to it (its hash is the step's `browserHash`), so only the browser that entered the code
 * can decide it.
 */

/** The verification page, under the mounted `basePath`. */
export const deviceVerificationPath = (basePath: string): string => `${basePath}/device/verify`;

/**
 * The browser's token of the device pages: only one this server could have issued, as it is also
 * the browser's secret (its wrong codes, its binding).
 */
const ownToken = (request: OAuthRequest): string | undefined => readCookie(request, CSRF_COOKIE, isCsrfToken);

/** Where the routes' pages link, and what they are called. */
interface DeviceUiOptions {
  basePath: string;
  siteName?: string;
}

/**
 * `POST {basePath}/device`: `verification_uri` is absolute (RFC 8628 §3.2), built as the metadata
 * builds every endpoint URL: the `issuer` (its path included) and the mounted `basePath`; without
 * an issuer, the request's origin and the `basePath`.
 */
export function handleDeviceAuthorization(server: AuthorizationServer, request: OAuthRequest, basePath: string): Promise<OAuthResponse> {
  const issuer = server.options.issuer;
  const base =
    issuer !== undefined ? issuer.replace(/\/$/, '') : URL.canParse(request.url) ? new URL(request.url).origin : 'http://localhost';
  return server.deviceAuthorization(request, base + deviceVerificationPath(basePath));
}

/**
 * The built-in confirmation page for the `consent` step of a device verification
 * (`interaction.device`), with the device pages' CSRF cookie; `interactionResponse` hands such a
 * step here with the brand and language of the consent page (`page`, from `pageOptions`). A
 * host's `onDeviceVerification` gets the step first (`answerRoute`).
 */
export function deviceDecisionResponse(
  decision: AuthorizeDecision & { type: 'consent' },
  request: OAuthRequest,
  options: { basePath: string },
  page: PageOptions = {},
  secure: boolean = secureCookies(undefined, request),
): OAuthResponse {
  const existing = ownToken(request);
  const token = existing ?? randomToken();
  const response = renderDeviceConfirmPage(decision.interaction, {
    action: deviceVerificationPath(options.basePath),
    csrfToken: token,
    ...page,
  });
  if (!existing) response.headers['set-cookie'] = csrfCookie(token, `${options.basePath}/device`, secure);
  return response;
}

/**
 * `GET|POST {basePath}/device/verify`. GET: the outcome page (`?result=`), or the sign-in step, or
 * the code entry (the code of `?user_code=` filled in). POST with `user_code`: the code is
 * checked (a wrong one shows the entry again, too many the lock page); POST with `interaction`
 * and `decision=approve|deny`: the confirmation is decided. Both forms need the CSRF cookie.
 */
export async function handleDeviceVerification(
  server: AuthorizationServer,
  request: OAuthRequest,
  options: DeviceUiOptions,
): Promise<OAuthResponse | AuthorizeDecision> {
  const verifyPath = deviceVerificationPath(options.basePath);
  // The brand and language of the server's `pages` option, as on the consent page (docs/reference.md#branding-and-languages).
  const page = pageOptions(server.options.pages, request, options.siteName);
  if (!server.options.deviceAuthorization) {
    return errorPage('not_found', 'The device authorization grant is not enabled on this server.', 404);
  }
  const existing = ownToken(request);
  const entry = (userCode: string | undefined, wrong: boolean) => {
    const token = existing ?? randomToken();
    const response = renderDeviceEntryPage(
      { action: verifyPath, csrfToken: token, ...page, ...(userCode && { userCode }), wrong },
      wrong ? 400 : 200,
    );
    if (!existing)
      response.headers['set-cookie'] = csrfCookie(token, `${options.basePath}/device`, secureCookies(server.options.issuer, request));
    return response;
  };

  const post = isMethod(request, 'POST');
  if (!post && !isMethod(request, 'GET') && !isMethod(request, 'HEAD')) {
    return errorPage('invalid_request', 'This page only answers GET and POST.', 405);
  }
  if (!post) {
    let query: Partial<Record<'user_code' | 'result', string>>;
    try {
      query = single(queryParams(request), ['user_code', 'result'] as const);
    } catch {
      return errorPage('invalid_request', 'A parameter was sent more than once.');
    }
    if (query.result === 'approved' || query.result === 'denied') return renderDeviceResultPage(query.result, page);
    const signIn = await server.deviceVerification(request, verifyPath, query.user_code);
    return signIn ?? entry(query.user_code?.slice(0, 20), false);
  }

  let form: Partial<Record<'csrf' | 'user_code' | 'interaction' | 'decision', string>>;
  try {
    form = single(requestParams(request), ['csrf', 'user_code', 'interaction', 'decision'] as const);
  } catch {
    return errorPage('invalid_request', 'The form was malformed. Start again.');
  }
  if (!csrfMatches(form.csrf, existing)) {
    return errorPage('invalid_request', 'The form could not be verified (missing or wrong CSRF token). Start again.', 403);
  }
  if (form.interaction !== undefined) {
    if (form.decision !== 'approve' && form.decision !== 'deny')
      return errorPage('invalid_request', "The decision must be 'approve' or 'deny'.");
    // The confirmation step is bound to this browser's CSRF cookie (see above), its secret here.
    const refused = await server.checkDeviceBinding(form.interaction, existing);
    if (refused) return refused;
    return form.decision === 'approve' ? server.approve(form.interaction, request) : server.deny(form.interaction, request);
  }
  const outcome = await server.enterUserCode(form.user_code ?? '', request, verifyPath, existing);
  if (outcome.type === 'decision') return outcome.decision;
  if (outcome.type === 'locked') return renderDeviceLockedPage(outcome.until, server.options.clock.now(), page);
  return entry(form.user_code?.slice(0, 20), true);
}
