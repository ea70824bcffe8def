import { en } from './messages/index.js';
import { escapeHtml, Markup, renderPage, say, scopeWords, fill, isEnglish, type PageOptions } from './pages.js';
import type { Interaction, OAuthResponse } from '../types.js';

/**
 * The built-in pages of the device verification (RFC 8628 §3.3;
 * docs/reference.md#device-authorization-grant-rfc-8628): the code entry, the confirmation, the
 * outcome. Every word they show is in the catalogue of `options.messages` (the `device…` keys of
 * src/ui/messages/en.ts), with the brand and headers of `options`, as the consent page
 * (docs/reference.md#branding-and-languages).
 */

/**
 * The code entry page: a form posting `user_code` and `csrf` to `action`, with the code the user
 * came with (from `verification_uri_complete`) filled in, and a note after a wrong code.
 * @group Adapter kit
 */
export function renderDeviceEntryPage(
  form: { action: string; csrfToken: string; userCode?: string; wrong?: boolean } & PageOptions,
  status = 200,
): OAuthResponse {
  const m = form.messages ?? en;
  const wrong = form.wrong ? `<p role="alert" class="error">${say(m.deviceWrongCode)}</p>` : '';
  return renderPage(
    status,
    m.deviceEntryTitle,
    `<h1>${say(m.deviceEntryTitle)}</h1>
<div class="box">${wrong}<p>${say(m.deviceEntryIntro)}</p>
<form method="post" action="${escapeHtml(form.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(form.csrfToken)}">
<p><label for="user_code">${say(m.deviceCodeLabel)}</label> <input id="user_code" name="user_code" value="${escapeHtml(form.userCode ?? '')}" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="20" required></p>
<button class="primary" type="submit">${say(m.deviceContinue)}</button>
</form></div>`,
    form,
  );
}

/**
 * The page after too many wrong codes (RFC 8628 §5.1): 429, until `until` (ms since epoch; `now` from the server's clock).
 * @group Adapter kit
 */
export function renderDeviceLockedPage(until: number, now: number, options: PageOptions = {}): OAuthResponse {
  const m = options.messages ?? en;
  const time = `${new Date(until).toISOString().slice(11, 16)} UTC`;
  return renderPage(
    429,
    m.deviceLockedTitle,
    `<h1>${say(m.deviceLockedTitle)}</h1>\n<div class="box"><p>${say(m.deviceLocked, { time })}</p></div>`,
    options,
    {
      'retry-after': String(Math.max(1, Math.ceil((until - now) / 1000))),
    },
  );
}

/**
 * The confirmation of a device verification step (`interaction.device`): the application (marked
 * unverified as on the consent page), the code to compare, the RFC 8628 §5.4 warning, the scope,
 * and Connect / Deny posting `interaction`, `csrf` and `decision` to `action`.
 * @group Adapter kit
 */
export function renderDeviceConfirmPage(
  interaction: Interaction,
  form: { action: string; csrfToken: string } & PageOptions,
): OAuthResponse {
  const m = form.messages ?? en;
  const client = interaction.client.name;
  const unverified = interaction.client.verified === false;
  const english = isEnglish(form);
  const notice = unverified ? `<p>${say(m.deviceUnverifiedNotice, { site: form.siteName || m.thisSite })}</p>` : '';
  const who = interaction.account
    ? `<p>${say(m.signedInAs, { name: new Markup(`<strong>${escapeHtml(interaction.account.name)}</strong>`), email: interaction.account.email })}</p>`
    : '';
  const items = interaction.scope.map((s) => `<li>${escapeHtml(scopeWords(s, interaction, m, english))}</li>`).join('');
  const resources = interaction.resources
    ? `<p>${say(m.forUseAt)}</p><ul>${interaction.resources.map((r) => `<li><code>${escapeHtml(r)}</code></li>`).join('')}</ul>`
    : '';
  const code = new Markup(`<code>${escapeHtml(interaction.device?.userCode ?? '')}</code>`);
  return renderPage(
    200,
    fill(unverified ? m.deviceConfirmTitleUnverified : m.deviceConfirmTitle, { client }),
    `<h1>${say(unverified ? m.deviceConfirmHeadingUnverified : m.deviceConfirmHeading, { client: new Markup(`<strong>${escapeHtml(client)}</strong>`) })}</h1>
<div class="box">${who}${notice}<p>${say(m.deviceCodeShown, { code })}</p>
<p role="alert"><strong>${say(m.deviceWarning)}</strong></p>
<p>${say(m.deviceAsksTo)}</p><ul>${items}</ul>${resources}
<form method="post" action="${escapeHtml(form.action)}">
<input type="hidden" name="interaction" value="${escapeHtml(interaction.id)}">
<input type="hidden" name="csrf" value="${escapeHtml(form.csrfToken)}">
<button class="primary" type="submit" name="decision" value="approve">${say(m.deviceApprove)}</button>
<button class="secondary" type="submit" name="decision" value="deny">${say(m.deny)}</button>
</form></div>`,
    form,
  );
}

/**
 * The page the verification ends on (`?result=approved|denied`).
 * @group Adapter kit
 */
export function renderDeviceResultPage(result: 'approved' | 'denied', options: PageOptions = {}): OAuthResponse {
  const m = options.messages ?? en;
  const [title, sentence] = result === 'approved' ? [m.deviceApprovedTitle, m.deviceApproved] : [m.deviceDeniedTitle, m.deviceDenied];
  return renderPage(200, title, `<h1>${say(title)}</h1>\n<div class="box"><p>${say(sentence)}</p></div>`, options);
}
