import { escapeHtml, renderPage, type PageOptions } from './pages.js';
import type { Interaction, OAuthResponse } from './types.js';

/**
 * The built-in pages of the device verification (RFC 8628 §3.3;
 * docs/reference.md#device-authorization-grant-rfc-8628): the code entry, the confirmation, the
 * outcome. Every word they show is in `DEVICE_TEXT`, with `{placeholders}` filled in escaped.
 */

/**
 * Every user-visible string of the device verification pages, in English. `{name}` stands for a
 * value filled in (HTML-escaped) when the page is made.
 * @group Adapter kit
 */
export const DEVICE_TEXT = Object.freeze({
  entryTitle: 'Connect a device',
  entryHeading: 'Connect a device',
  entryIntro: 'Enter the code shown on your device (a TV, a command-line tool, another app).',
  codeLabel: 'Code',
  continue: 'Continue',
  wrongCode: 'That code is not valid: it may be mistyped, expired or already used. Check the code on your device and try again.',
  lockedTitle: 'Too many wrong codes',
  locked: 'Too many wrong codes were entered. Try again after {time} (UTC).',
  confirmTitle: 'Connect {app}',
  confirmHeading: 'Connect <strong>{app}</strong>{mark}?',
  unverifiedMark: ' (unverified)',
  unverified: '{site} has not verified this application: its name is what it says about itself.',
  thisSite: 'This site',
  signedInAs: 'Signed in as <strong>{name}</strong> ({email}).',
  codeShown: 'Code: <code>{code}</code>',
  warning:
    'Only continue if you started this on your own device and the code above matches the code it shows. If someone else sent you this code or link, deny: they would get access to your account.',
  asks: 'The device asks to:',
  forUseAt: 'For use at:',
  approve: 'Connect',
  deny: 'Deny',
  approvedTitle: 'Device connected',
  approved: 'Your device is connected. You can return to it now; it may take a few seconds to continue.',
  deniedTitle: 'Device not connected',
  denied: 'You denied access. The device was not connected.',
});

/** A text of `DEVICE_TEXT` with its placeholders filled: each value escaped unless marked as HTML already. */
function text(key: keyof typeof DEVICE_TEXT, values: Record<string, string> = {}, html: Record<string, string> = {}): string {
  return escapeHtml(DEVICE_TEXT[key]).replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in html ? html[name]! : name in values ? escapeHtml(values[name]!) : whole,
  );
}

// The templates that hold markup (`<strong>`, `<code>`) are trusted text of ours: kept as written.
function markup(
  key: 'confirmHeading' | 'signedInAs' | 'codeShown',
  values: Record<string, string>,
  html: Record<string, string> = {},
): string {
  return DEVICE_TEXT[key].replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in html ? html[name]! : name in values ? escapeHtml(values[name]!) : whole,
  );
}

/**
 * The code entry page: a form posting `user_code` and `csrf` to `action`, with the code the user
 * came with (from `verification_uri_complete`) filled in, and a note after a wrong code.
 * @group Adapter kit
 */
export function renderDeviceEntryPage(
  form: { action: string; csrfToken: string; userCode?: string; wrong?: boolean } & PageOptions,
  status = 200,
): OAuthResponse {
  const wrong = form.wrong ? `<p role="alert"><strong>${text('wrongCode')}</strong></p>` : '';
  return renderPage(
    status,
    DEVICE_TEXT.entryTitle,
    `<h1>${text('entryHeading')}</h1>
<div class="box">${wrong}<p>${text('entryIntro')}</p>
<form method="post" action="${escapeHtml(form.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(form.csrfToken)}">
<p><label for="user_code">${text('codeLabel')}</label> <input id="user_code" name="user_code" value="${escapeHtml(form.userCode ?? '')}" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="20" required></p>
<button class="primary" type="submit">${text('continue')}</button>
</form></div>`,
    form,
  );
}

/**
 * The page after too many wrong codes (RFC 8628 §5.1): 429, until `until` (ms since epoch; `now` from the server's clock).
 * @group Adapter kit
 */
export function renderDeviceLockedPage(until: number, now: number, options: PageOptions = {}): OAuthResponse {
  const time = new Date(until).toISOString().slice(11, 16);
  return renderPage(
    429,
    DEVICE_TEXT.lockedTitle,
    `<h1>${text('lockedTitle')}</h1>\n<div class="box"><p>${text('locked', { time })}</p></div>`,
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
  const unverified = interaction.client.verified === false;
  const mark = unverified ? text('unverifiedMark') : '';
  const notice = unverified ? `<p>${text('unverified', { site: form.siteName ?? DEVICE_TEXT.thisSite })}</p>` : '';
  const who = interaction.account
    ? `<p>${markup('signedInAs', { name: interaction.account.name, email: interaction.account.email })}</p>`
    : '';
  const items = interaction.scope.map((s) => `<li>${escapeHtml(interaction.scopeDescriptions?.[s] ?? s)}</li>`).join('');
  const resources = interaction.resources
    ? `<p>${text('forUseAt')}</p><ul>${interaction.resources.map((r) => `<li><code>${escapeHtml(r)}</code></li>`).join('')}</ul>`
    : '';
  return renderPage(
    200,
    DEVICE_TEXT.confirmTitle.replace('{app}', interaction.client.name) + (unverified ? DEVICE_TEXT.unverifiedMark : ''),
    `<h1>${markup('confirmHeading', { app: interaction.client.name }, { mark })}</h1>
<div class="box">${who}${notice}<p>${markup('codeShown', { code: interaction.device?.userCode ?? '' })}</p>
<p role="alert"><strong>${text('warning')}</strong></p>
<p>${text('asks')}</p><ul>${items}</ul>${resources}
<form method="post" action="${escapeHtml(form.action)}">
<input type="hidden" name="interaction" value="${escapeHtml(interaction.id)}">
<input type="hidden" name="csrf" value="${escapeHtml(form.csrfToken)}">
<button class="primary" type="submit" name="decision" value="approve">${text('approve')}</button>
<button class="secondary" type="submit" name="decision" value="deny">${text('deny')}</button>
</form></div>`,
    form,
  );
}

/**
 * The page the verification ends on (`?result=approved|denied`).
 * @group Adapter kit
 */
export function renderDeviceResultPage(result: 'approved' | 'denied', options: PageOptions = {}): OAuthResponse {
  const title = result === 'approved' ? DEVICE_TEXT.approvedTitle : DEVICE_TEXT.deniedTitle;
  return renderPage(200, title, `<h1>${escapeHtml(title)}</h1>\n<div class="box"><p>${text(result)}</p></div>`, options);
}
