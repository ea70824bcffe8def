import type { AuthorizeDecision, Interaction, OAuthRequest, OAuthResponse } from '../types.js';
import { isMethod } from '../http.js';
import { sha256Base64url } from '../crypto.js';
import { en, type MessageKey, type Messages } from './messages/index.js';
import { PAGE_HEADERS, pageLanguage, type ResolvedPages } from './page-settings.js';

export { PAGE_HEADERS };

/**
 * The HTML the adapters serve by default: the error page and the consent page, and the response
 * for a redirect. Kept in the core so that every adapter serves the same bytes and headers. Every
 * user-visible string comes from a catalogue (src/ui/messages/, docs/reference.md#branding-and-languages).
 */

/**
 * Escape text for HTML element content and quoted attribute values.
 * @group Adapter kit
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Markup the page made itself (its values already escaped), put in a message as it is. */
export class Markup {
  constructor(readonly html: string) {}
}

/**
 * A catalogue string as HTML: the text escaped, each `{placeholder}` replaced by its value,
 * escaped too unless it is `Markup`. One pass: a value's own braces are never read as placeholders.
 * For any built-in page of the core (a new page's strings go in src/ui/messages/).
 */
export function say(text: string, values: Record<string, string | Markup> = {}): string {
  return escapeHtml(text).replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = values[name];
    return value === undefined ? whole : value instanceof Markup ? value.html : escapeHtml(value);
  });
}

/** A catalogue string as plain text (a title, escaped later): each `{placeholder}` replaced, in one pass. */
export const fill = (text: string, values: Record<string, string>): string =>
  text.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);

const strong = (text: string) => new Markup(`<strong>${escapeHtml(text)}</strong>`);

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1b1f24;overflow-wrap:anywhere}
h1{font-size:1.4rem}.box{border:1px solid #d0d7de;border-radius:8px;padding:1rem 1.25rem}.box>:first-child{margin-top:0}.box>:last-child{margin-bottom:0}
button{font:inherit;padding:.5rem 1.2rem;border-radius:6px;border:1px solid var(--accent);margin:0 .5rem .5rem 0;cursor:pointer}
.site{display:flex;align-items:center;gap:.5rem;font-weight:600;color:#57606a;margin:0 0 1rem}.site img{height:2rem;width:auto}
.primary{background:var(--accent);color:#fff}.secondary{background:#fff;color:var(--accent)}a{color:var(--accent)}code{background:#f6f8fa;padding:0 .2rem}
.error{background:#ffebe9;border:1px solid #ff8182;border-radius:6px;padding:.5rem .75rem;color:#1b1f24}
input{font:inherit;padding:.35rem .6rem;border:1px solid #8c959f;border-radius:6px;max-width:100%;box-sizing:border-box}#user_code{font-family:ui-monospace,monospace;letter-spacing:.08em;text-transform:uppercase}`;

/**
 * How the built-in pages look and speak: the platform's name, the brand, the language and its
 * catalogue, the headers. `interactionResponse` fills it from the `pages` server option
 * (docs/reference.md#branding-and-languages); every field is optional (English, no brand).
 * @group Adapter kit
 */
export interface PageOptions {
  /** The platform's name, so users can tell which site is asking. */
  siteName?: string;
  /** The page's language tag (`<html lang>`). Default `en`. */
  lang?: string;
  /** The catalogue of that language. Default: English. */
  messages?: Messages;
  /** The brand's logo URL (the CSP of `headers` must allow it). */
  logoUrl?: string;
  /** `#rgb` or `#rrggbb`, checked by the `pages` option: the primary button and links. */
  accentColor?: string;
  /** The host's stylesheet URL (the CSP of `headers` must allow it). */
  stylesheetUrl?: string;
  /** The host's page of authorized applications: the consent page links "revoke this access" to it. */
  authorizedAppsUrl?: string;
  /** The page's headers. Default `PAGE_HEADERS`. */
  headers?: Readonly<Record<string, string>>;
}

/**
 * What a page for `request` looks like and says: the brand of `pages` (the `pages` server
 * option, resolved: `server.options.pages`), the language chosen for the request and its
 * catalogue, and the headers (`Vary: Accept-Language` when the language was negotiated).
 * The adapter's `siteName`, when set, names the site over the brand's name.
 * @group Adapter kit
 */
export function pageOptions(
  pages: ResolvedPages | undefined,
  request: OAuthRequest,
  siteName?: string,
  uiLocales?: readonly string[],
): PageOptions {
  const name = siteName ?? pages?.siteName;
  if (!pages) return name === undefined ? {} : { siteName: name };
  const { lang, messages, negotiated } = pageLanguage(pages, request, uiLocales);
  return {
    ...(name !== undefined && { siteName: name }),
    lang,
    messages,
    ...(pages.logoUrl !== undefined && { logoUrl: pages.logoUrl }),
    ...(pages.accentColor !== undefined && { accentColor: pages.accentColor }),
    ...(pages.stylesheetUrl !== undefined && { stylesheetUrl: pages.stylesheetUrl }),
    ...(pages.authorizedAppsUrl !== undefined && { authorizedAppsUrl: pages.authorizedAppsUrl }),
    headers: negotiated ? { ...pages.headers, vary: 'Accept-Language' } : pages.headers,
  };
}

/** Only a colour the option checked reaches the style: nothing else can close the rule. */
const accent = (color: string | undefined) => (color !== undefined && /^#(?:[0-9a-fA-F]{3}){1,2}$/.test(color) ? color : '#0069ff');

/**
 * A whole built-in page: the site's header (logo, name), the brand's style and stylesheet, the
 * language, the headers of `options` (PAGE_HEADERS by default). `title` is plain text; `content`
 * is HTML the caller escaped. For any built-in page of the core (consent, error, and new ones).
 */
export function renderPage(
  status: number,
  title: string,
  content: string,
  options: PageOptions = {},
  headers: Record<string, string> = {},
): OAuthResponse {
  const m = options.messages ?? en;
  const name = options.siteName;
  const logo = options.logoUrl ? `<img src="${escapeHtml(options.logoUrl)}" alt="${say(m.logoAlt, { site: name ?? '' })}">` : '';
  const site = name || logo ? `<header class="site">${logo}${name ? `<span>${escapeHtml(name)}</span>` : ''}</header>` : '';
  const fullTitle = escapeHtml(name ? fill(m.titleWithSite, { title, site: name }) : title);
  const sheet = options.stylesheetUrl ? `<link rel="stylesheet" href="${escapeHtml(options.stylesheetUrl)}">` : '';
  const body = `<!doctype html><html lang="${escapeHtml(options.lang ?? 'en')}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${fullTitle}</title><style>:root{--accent:${accent(options.accentColor)}}${STYLE}</style>${sheet}</head><body>${site}<main>${content}</main></body></html>`;
  return { status, headers: { ...(options.headers ?? PAGE_HEADERS), ...headers }, body };
}

/**
 * The error page for an `error` decision: says what is wrong in plain words; never redirects.
 * In English it shows the decision's description; in another language the catalogue's sentence
 * for the error code, and the (English) description marked as such.
 * @group Adapter kit
 */
export function renderErrorPage(decision: Extract<AuthorizeDecision, { type: 'error' }>, options: PageOptions = {}): OAuthResponse {
  const m = options.messages ?? en;
  const what = isEnglish(options)
    ? `<p>${escapeHtml(decision.description)}</p>`
    : `<p>${say(own(m.errors, decision.error) ?? own(m.errors, 'default') ?? '')}</p><p lang="en">${say(m.errorDetail, { description: decision.description })}</p>`;
  return renderPage(
    decision.status,
    m.errorTitle,
    `<h1>${say(m.errorHeading)}</h1>
<div class="box">${what}<p>${say(m.errorCode, { code: new Markup(`<code>${escapeHtml(decision.error)}</code>`) })}</p></div>
<p>${say(m.errorAdvice)}</p>`,
    options,
  );
}

/** The resources (RFC 8707) being granted, for the consent page: nothing when none was requested. */
const resourcesShown = (resources: readonly string[] | undefined, m: Messages): string =>
  resources ? `<p>${say(m.forUseAt)}</p><ul>${resources.map((r) => `<li><code>${escapeHtml(r)}</code></li>`).join('')}</ul>` : '';

/**
 * What the consent page says of a client nobody at the platform reviewed
 * (docs/reference.md#consent-page): that its name is its own claim, the host of its client id
 * when that is a URL, and the home page it gave. Its logo is not shown: a remote image tells the
 * client's server who opens the page, and an unverified client could show anyone's logo.
 */
function unverifiedNotice(interaction: Interaction, options: PageOptions, m: Messages): string {
  const { client } = interaction;
  let facts = '';
  if (client.idHost) facts += `<li>${say(m.clientIdPublishedBy, { host: strong(client.idHost) })}</li>`;
  if (client.uri) facts += `<li>${say(m.homePage, { uri: hostOrSelf(client.uri) })}</li>`;
  return `<p>${say(m.unverifiedNotice, { site: options.siteName || m.thisSite })}</p>${facts ? `<ul>${facts}</ul>` : ''}`;
}

/** The host of a URL (a long URL would not fit the page), or the text itself. */
function hostOrSelf(uri: string): string {
  return URL.canParse(uri) ? new URL(uri).host || uri : uri;
}

/** A record's own entry: a scope value or error code may be named `constructor` or `toString`. */
const own = (record: Readonly<Record<string, string>>, key: string): string | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined;

/** Whether a page is in English (`en`, `en-GB`): the server's own words (descriptions of scopes and errors) are English. */
export const isEnglish = (options: PageOptions) => /^en(?:-|$)/i.test(options.lang ?? 'en');

/**
 * What a scope value means in the page's language: the catalogue's words, else the server's
 * (`scopes.descriptions`), else the value. On an English page the server's words come before the
 * shipped catalogue's (a host vocabulary may reuse `read`), after the host's own English ones.
 */
export function scopeWords(scope: string, interaction: Interaction, m: Messages, english: boolean): string {
  const described = interaction.scopeDescriptions ? own(interaction.scopeDescriptions, scope) : undefined;
  const words = own(m.scopes, scope);
  if (english && (words === undefined || words === own(en.scopes, scope))) return described ?? words ?? scope;
  return words ?? described ?? scope;
}

/**
 * The default consent page: the application, where the browser goes after the decision, the
 * scope in plain words, Authorize and Deny. A client nobody reviewed
 * (`interaction.client.verified === false`) is named "(unverified)", with what it said of itself.
 * @group Adapter kit
 */
export function renderConsentPage(
  interaction: Interaction,
  form: { action: string; csrfToken: string; switchAccountUrl?: string } & PageOptions,
): OAuthResponse {
  const m = form.messages ?? en;
  const client = interaction.client.name;
  const english = isEnglish(form);
  const items = interaction.scope.map((s) => `<li>${escapeHtml(scopeWords(s, interaction, m, english))}</li>`).join('');
  const who = interaction.account
    ? `<p>${say(m.signedInAs, { name: strong(interaction.account.name), email: interaction.account.email })}${
        form.switchAccountUrl ? ` <a href="${escapeHtml(form.switchAccountUrl)}">${say(m.useAnotherAccount)}</a>` : ''
      }</p>`
    : '';
  const unverified = interaction.client.verified === false;
  const key = (plain: MessageKey, marked: MessageKey) => m[unverified ? marked : plain];
  const notice = unverified ? unverifiedNotice(interaction, form, m) : '';
  const sentTo = interaction.redirectHost ? `<p>${say(m.sentTo, { host: strong(interaction.redirectHost) })}</p>` : '';
  const revoke = form.authorizedAppsUrl
    ? say(m.revokeAnyTimeLinked, { link: new Markup(`<a href="${escapeHtml(form.authorizedAppsUrl)}">${say(m.authorizedAppsLink)}</a>`) })
    : say(m.revokeAnyTime);
  return renderPage(
    200,
    fill(key('consentTitle', 'consentTitleUnverified'), { client }),
    `<h1>${say(key('consentHeading', 'consentHeadingUnverified'), { client: strong(client) })}</h1>
<div class="box">${who}${notice}${sentTo}<p>${say(m.asksTo)}</p><ul>${items}</ul>${resourcesShown(interaction.resources, m)}
<form method="post" action="${escapeHtml(form.action)}">
<input type="hidden" name="interaction" value="${escapeHtml(interaction.id)}">
<input type="hidden" name="csrf" value="${escapeHtml(form.csrfToken)}">
<button class="primary" type="submit" name="decision" value="approve">${say(m.authorize)}</button>
<button class="secondary" type="submit" name="decision" value="deny">${say(m.deny)}</button>
</form></div>
<p>${revoke}</p>`,
    form,
  );
}

/** The one script of a `form_post` page: it sends the form (the CSP allows it by its hash, nothing else). */
const FORM_POST_SCRIPT = 'document.forms[0].submit()';
const FORM_POST_SCRIPT_HASH = `'sha256-${sha256Base64url(FORM_POST_SCRIPT).replace(/-/g, '+').replace(/_/g, '/')}='`;

/**
 * The page of a `form_post` decision (OAuth 2.0 Form Post Response Mode §2): a form of hidden
 * fields to the callback, sent by an inline script the CSP allows by its hash, with a button for
 * a browser without scripts. Not cached, not framed, no referrer, no `<base>`, no other script.
 *
 * No CSP `form-action`: Chromium checks it against every redirect that follows the submission
 * too (w3c/webappsec-csp issue 8), so a callback that answers the post with a redirect to another
 * origin (its application's) left the user on this page; and where the callback redirects is the
 * client's to decide, not ours to know. It guarded against nothing that can happen here: the one
 * form is ours, its action the callback verified at the authorization request and every value
 * escaped, so no markup can be injected, and no script but the hashed one runs, so nothing can
 * change the form or send another (test/e2e/form-post.test.ts).
 * @group Adapter kit
 */
export function formPostResponse(decision: Extract<AuthorizeDecision, { type: 'form_post' }>): OAuthResponse {
  const inputs = Object.entries(decision.fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  const body = `<!doctype html><html><head><meta charset="utf-8"><title>Submit This Form</title></head><body><form method="post" action="${escapeHtml(decision.action)}">${inputs}<noscript><button type="submit">Continue</button></noscript></form><script>${FORM_POST_SCRIPT}</script></body></html>`;
  return {
    status: 200,
    headers: {
      ...PAGE_HEADERS,
      'content-security-policy': `default-src 'none'; script-src ${FORM_POST_SCRIPT_HASH}; frame-ancestors 'none'; base-uri 'none'`,
    },
    body,
  };
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
