import { en } from './messages/index.js';
import { escapeHtml, isEnglish, Markup, renderPage, say, type PageOptions } from './pages.js';
import type { Account, OAuthResponse } from '../types.js';

/**
 * The built-in pages of the end-session endpoint (OpenID Connect RP-Initiated Logout 1.0;
 * docs/reference.md#rp-initiated-logout): the confirmation, the "signed out" page and the error
 * page. Every word is in the catalogue of `options.messages` (the `logout…` keys of
 * src/ui/messages/en.ts), with the brand and headers of `options`, as the consent page.
 */

/** The application that asked for the sign-out, as the confirmation names it. */
export interface LogoutClient {
  name: string;
  /** `false` for a client nobody at the platform reviewed: its name is its own claim. */
  verified?: false;
}

const strong = (text: string) => new Markup(`<strong>${escapeHtml(text)}</strong>`);

/**
 * The confirmation page: who is signed in, which application asks (when one is known), and a
 * Sign out button posting `fields` (the request's own parameters, checked again on the POST) and
 * `csrf` to `action`.
 * @group Adapter kit
 */
export function renderLogoutConfirmPage(
  form: {
    action: string;
    csrfToken: string;
    fields: Readonly<Record<string, string>>;
    client?: LogoutClient | undefined;
    account?: Account | undefined;
  } & PageOptions,
): OAuthResponse {
  const m = form.messages ?? en;
  const site = form.siteName || m.thisSite;
  const who = form.account ? `<p>${say(m.signedInAs, { name: strong(form.account.name), email: form.account.email })}</p>` : '';
  const asker = form.client
    ? `<p>${say(form.client.verified === false ? m.logoutAskedByUnverified : m.logoutAskedBy, { client: strong(form.client.name) })}</p>`
    : '';
  const hidden = Object.entries(form.fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  return renderPage(
    200,
    m.logoutTitle,
    `<h1>${say(m.logoutHeading, { site })}</h1>
<div class="box">${who}${asker}
<form method="post" action="${escapeHtml(form.action)}">
${hidden}
<input type="hidden" name="csrf" value="${escapeHtml(form.csrfToken)}">
<button class="primary" type="submit">${say(m.logoutConfirm)}</button>
</form></div>
<p>${say(m.logoutAdvice)}</p>`,
    form,
  );
}

/**
 * The page a sign-out ends on when no `post_logout_redirect_uri` was given.
 * @group Adapter kit
 */
export function renderSignedOutPage(options: PageOptions = {}, headers: Record<string, string> = {}): OAuthResponse {
  const m = options.messages ?? en;
  return renderPage(
    200,
    m.signedOutTitle,
    `<h1>${say(m.signedOutTitle)}</h1>\n<div class="box"><p>${say(m.signedOut, { site: options.siteName || m.thisSite })}</p></div>`,
    options,
    headers,
  );
}

/**
 * The error page of a sign-out request that cannot proceed (an unregistered
 * `post_logout_redirect_uri`, a hint for another application, a form without its CSRF token):
 * never a redirect. In English the server's description; in another language the catalogue's
 * sentence for the code, and the English description marked as such.
 * @group Adapter kit
 */
export function renderLogoutErrorPage(
  error: { status: number; error: string; description: string },
  options: PageOptions = {},
): OAuthResponse {
  const m = options.messages ?? en;
  const own = (key: string) => (Object.hasOwn(m.errors, key) ? m.errors[key] : undefined);
  const what = isEnglish(options)
    ? `<p>${escapeHtml(error.description)}</p>`
    : `<p>${say(own(error.error) ?? own('default') ?? '')}</p><p lang="en">${say(m.errorDetail, { description: error.description })}</p>`;
  return renderPage(
    error.status,
    m.logoutErrorTitle,
    `<h1>${say(m.logoutErrorHeading)}</h1>
<div class="box">${what}<p>${say(m.errorCode, { code: new Markup(`<code>${escapeHtml(error.error)}</code>`) })}</p></div>`,
    options,
  );
}
