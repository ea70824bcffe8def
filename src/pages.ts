import type { AuthorizeDecision, Interaction, OAuthRequest, OAuthResponse } from './types.js';
import { isMethod } from './http.js';

/**
 * The HTML the adapters serve by default: the error page and the consent page, and the response
 * for a redirect. Kept in the core so that every adapter serves the same bytes and headers.
 */

/**
 * Escape text for HTML element content and quoted attribute values.
 * @group Adapter kit
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Headers for every HTML page: no framing (clickjacking, RFC 9700 §4.16), no referrer, no
 * caching, no sniffing, and no script at all.
 * @group Adapter kit
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
});

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}
h1{font-size:1.4rem}.box{border:1px solid #d0d7de;border-radius:8px;padding:1rem 1.25rem}
button{font:inherit;padding:.5rem 1.2rem;border-radius:6px;border:1px solid #0069ff;margin-right:.5rem;cursor:pointer}
.site{font-weight:600;color:#57606a;margin:0 0 1rem}.primary{background:#0069ff;color:#fff}.secondary{background:#fff;color:#0069ff}code{background:#f6f8fa;padding:0 .2rem}`;

/**
 * How the built-in pages name the platform, so users can tell which site is asking.
 * @group Adapter kit
 */
export interface PageOptions {
  siteName?: string;
}

export function page(
  status: number,
  title: string,
  content: string,
  options: PageOptions = {},
  headers: Record<string, string> = {},
): OAuthResponse {
  const site = options.siteName ? `<p class="site">${escapeHtml(options.siteName)}</p>` : '';
  const fullTitle = options.siteName ? `${title} · ${options.siteName}` : title;
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(fullTitle)}</title><style>${STYLE}</style></head><body>${site}${content}</body></html>`;
  return { status, headers: { ...PAGE_HEADERS, ...headers }, body };
}

/**
 * The error page for an `error` decision: says what is wrong in plain words; never redirects.
 * @group Adapter kit
 */
export function renderErrorPage(decision: Extract<AuthorizeDecision, { type: 'error' }>, options: PageOptions = {}): OAuthResponse {
  return page(
    decision.status,
    'Authorization error',
    `<h1>This authorization request cannot be completed</h1>
<div class="box"><p>${escapeHtml(decision.description)}</p><p>Error code: <code>${escapeHtml(decision.error)}</code></p></div>
<p>Go back to the application and try again, or contact its developer.</p>`,
    options,
  );
}

/** The resources (RFC 8707) being granted, for the consent page: nothing when none was requested. */
const resourcesShown = (resources: readonly string[] | undefined): string =>
  resources ? `<p>For use at:</p><ul>${resources.map((r) => `<li><code>${escapeHtml(r)}</code></li>`).join('')}</ul>` : '';

/**
 * What the consent page says of a client nobody at the platform reviewed
 * (docs/reference.md#consent-page): that its name is its own claim, where the browser goes after
 * the decision, the host of its client id when that is a URL, and the home page it gave. Its
 * logo is not shown: a remote image tells the client's server who opens the page, and an
 * unverified client could show anyone's logo.
 */
function unverifiedNotice(interaction: Interaction, options: PageOptions): string {
  const { client } = interaction;
  const site = options.siteName ? escapeHtml(options.siteName) : 'This site';
  let facts = '';
  if (interaction.redirectHost) {
    facts += `<li>After you decide, you will be sent to <strong>${escapeHtml(interaction.redirectHost)}</strong>.</li>`;
  }
  if (client.idHost) facts += `<li>Its client ID is published by <strong>${escapeHtml(client.idHost)}</strong>.</li>`;
  if (client.uri) facts += `<li>It gives ${escapeHtml(hostOrSelf(client.uri))} as its home page (not checked).</li>`;
  return `<p>${site} has not verified this application: its name and details are what it says about itself.</p>${
    facts ? `<ul>${facts}</ul>` : ''
  }`;
}

/** The host of a URL (a long URL would not fit the page), or the text itself. */
function hostOrSelf(uri: string): string {
  return URL.canParse(uri) ? new URL(uri).host || uri : uri;
}

/**
 * The default consent page: the application, the scope in plain words, Authorize and Deny. A
 * client nobody reviewed (`interaction.client.verified === false`) is named "(unverified)", with
 * where the browser goes next.
 * @group Adapter kit
 */
export function renderConsentPage(
  interaction: Interaction,
  form: { action: string; csrfToken: string; switchAccountUrl?: string } & PageOptions,
): OAuthResponse {
  const items = interaction.scope.map((s) => `<li>${escapeHtml(interaction.scopeDescriptions?.[s] ?? s)}</li>`).join('');
  const who = interaction.account
    ? `<p>Signed in as <strong>${escapeHtml(interaction.account.name)}</strong> (${escapeHtml(interaction.account.email)}).${
        form.switchAccountUrl ? ` <a href="${escapeHtml(form.switchAccountUrl)}">Use another account</a>` : ''
      }</p>`
    : '';
  const unverified = interaction.client.verified === false;
  const mark = unverified ? ' (unverified)' : '';
  const notice = unverified ? unverifiedNotice(interaction, form) : '';
  return page(
    200,
    `Authorize ${interaction.client.name}${mark}`,
    `<h1>Authorize <strong>${escapeHtml(interaction.client.name)}</strong>${mark}?</h1>
<div class="box">${who}${notice}<p>This application asks to:</p><ul>${items}</ul>${resourcesShown(interaction.resources)}
<form method="post" action="${escapeHtml(form.action)}">
<input type="hidden" name="interaction" value="${escapeHtml(interaction.id)}">
<input type="hidden" name="csrf" value="${escapeHtml(form.csrfToken)}">
<button class="primary" type="submit" name="decision" value="approve">Authorize</button>
<button class="secondary" type="submit" name="decision" value="deny">Deny</button>
</form></div>
<p>You can revoke this access at any time.</p>`,
    form,
  );
}

/**
 * The response for a `redirect` or `error` decision: 302 after a GET, 303 after a POST (so the
 * browser never re-posts the form to the client, RFC 9700 §4.12), or the error page.
 * @group Adapter kit
 */
export function decisionResponse(
  decision: Extract<AuthorizeDecision, { type: 'redirect' | 'error' }>,
  request: Pick<OAuthRequest, 'method'>,
  options: PageOptions = {},
): OAuthResponse {
  if (decision.type === 'error') return renderErrorPage(decision, options);
  return {
    status: isMethod(request, 'POST') ? 303 : 302,
    headers: { location: decision.location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
    body: '',
  };
}
