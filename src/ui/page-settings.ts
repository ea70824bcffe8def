/**
 * The brand and languages of the built-in pages (docs/reference.md#branding-and-languages): the
 * `pages` server option, checked once at construction, and the choice of a language per request.
 * Everything a page needs per request is resolved here once: the catalogues merged, the
 * Content-Security-Policy widened for the brand's logo and stylesheet, the site name defaulted.
 */
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { header } from '../http.js';
import { isHttpsOrLoopback, PAGE_TEXT } from '../rules.js';
import { en, MESSAGE_KEYS, placeholders, SHIPPED_MESSAGES, type Messages, type MessagesInput } from './messages/index.js';
import type { OAuthRequest } from '../types.js';

/** A path of the host's own origin: `/…`, never `//…` (another host) nor a backslash. */
const isLocalPath = (value: string) => /^\/(?![/\\])[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*$/.test(value);

/** An https URL (http only for loopback development) without user information, or a path of the host's origin. */
const pageUrl = z
  .string()
  .max(2000)
  .refine((value) => {
    if (isLocalPath(value)) return true;
    if (!URL.canParse(value)) return false;
    const url = new URL(value);
    return isHttpsOrLoopback(url) && !url.username && !url.password;
  }, 'expected an https URL (http only for localhost) or a path starting with a single /');

/** Text without control characters and bidirectional overrides, which could disguise a name (`PAGE_TEXT`). */
const plainText = (max: number) => z.string().max(max).regex(PAGE_TEXT, 'expected text without control characters');

/** A host's strings for one language: known keys only, plain text (typed as `MessagesInput`, which the keys of `en` make). */
const messagesInput = z
  .object(Object.fromEntries(MESSAGE_KEYS.map((key) => [key, plainText(1000).optional()])) as Record<string, z.ZodOptional<z.ZodString>>)
  .extend({
    scopes: z.record(z.string(), plainText(1000)).optional(),
    errors: z.record(z.string(), plainText(1000)).optional(),
  })
  .strict() as unknown as z.ZodType<MessagesInput, MessagesInput>;

/** The `pages` option's schema (src/options.ts). */
export const pagesSchema = z
  .object({
    brand: z
      .object({
        name: plainText(100).min(1).optional(),
        logoUrl: pageUrl.optional(),
        accentColor: z
          .string()
          .regex(/^#(?:[0-9a-fA-F]{3}){1,2}$/, 'expected #rgb or #rrggbb')
          .optional(),
        stylesheetUrl: pageUrl.optional(),
      })
      .strict()
      .optional(),
    messages: z
      .record(z.string().regex(/^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$/, 'expected language tags as keys'), messagesInput)
      .optional(),
    locale: z.custom<(request: OAuthRequest) => string | undefined>((v) => typeof v === 'function', 'expected a function').optional(),
    authorizedAppsUrl: pageUrl.optional(),
  })
  .strict();

/**
 * The `pages` option: the brand and languages of the built-in consent and error pages
 * (docs/reference.md#branding-and-languages).
 * @group Pages
 */
export interface PagesOptions {
  brand?: {
    /** The platform's name, shown at the top of every page and in its title. Default: the issuer's host. */
    name?: string;
    /** The platform's logo: an https URL (http for loopback) or a path of the host's origin. The CSP allows its origin only. */
    logoUrl?: string;
    /** The colour of the primary button and links: `#rgb` or `#rrggbb`. */
    accentColor?: string;
    /** A stylesheet of the host's, loaded after the built-in style: an https URL or a path. The CSP allows its origin only. */
    stylesheetUrl?: string;
  };
  /**
   * Catalogues by language tag (`en`, `fr`, `pt-BR`): strings layered over the shipped catalogue
   * of that language, or over English. Each language named here is offered; English always is.
   */
  messages?: Record<string, MessagesInput>;
  /** The host's choice of language for a request; `undefined` (or a language not offered): by `Accept-Language`. */
  locale?: (request: OAuthRequest) => string | undefined;
  /** The host's page listing the applications a user authorized: "You can revoke this access" links to it. */
  authorizedAppsUrl?: string;
}

/**
 * The `pages` option resolved (`server.options.pages`): what the page renderers need.
 * @group Pages
 */
export interface ResolvedPages {
  /** The brand's name, or the issuer's host; absent without both. */
  readonly siteName?: string;
  readonly logoUrl?: string;
  readonly accentColor?: string;
  readonly stylesheetUrl?: string;
  readonly authorizedAppsUrl?: string;
  /** Every language offered, lower case, English first. */
  readonly languages: readonly string[];
  /** The catalogue of each language offered, complete (shipped or English strings under the host's). */
  readonly catalogues: Readonly<Record<string, Messages>>;
  readonly locale?: (request: OAuthRequest) => string | undefined;
  /** The page headers: `PAGE_HEADERS`, with the CSP widened for the logo's and the stylesheet's origins. */
  readonly headers: Readonly<Record<string, string>>;
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

/** The CSP source of a brand URL: `'self'` for a path, else its origin (scheme, host, port: never a wildcard nor a path). */
const source = (url: string) => (isLocalPath(url) ? "'self'" : new URL(url).origin);

/** `PAGE_HEADERS`, with exactly the logo's origin in `img-src` and the stylesheet's in `style-src`. */
function pageHeaders(logoUrl: string | undefined, stylesheetUrl: string | undefined): Readonly<Record<string, string>> {
  if (logoUrl === undefined && stylesheetUrl === undefined) return PAGE_HEADERS;
  const style = stylesheetUrl === undefined ? "style-src 'unsafe-inline'" : `style-src 'unsafe-inline' ${source(stylesheetUrl)}`;
  const img = logoUrl === undefined ? '' : `; img-src ${source(logoUrl)}`;
  return Object.freeze({
    ...PAGE_HEADERS,
    'content-security-policy': `default-src 'none'; ${style}${img}; frame-ancestors 'none'; base-uri 'none'`,
  });
}

/** A host's strings over a complete catalogue; each of its templates may use only the placeholders of the English one. */
function merge(language: string, base: Messages, input: MessagesInput): Messages {
  const merged = { ...base, scopes: { ...base.scopes, ...input.scopes }, errors: { ...base.errors, ...input.errors } } as Messages;
  for (const key of MESSAGE_KEYS) {
    const text = input[key];
    if (text === undefined) continue;
    const allowed = new Set(placeholders(en[key]));
    const unknown = placeholders(text).find((p) => !allowed.has(p));
    if (unknown !== undefined) {
      throw new ConfigError(`pages.messages.${language}.${key}`, `expected only the placeholders of the English text, not {${unknown}}`);
    }
    merged[key] = text;
  }
  return Object.freeze(merged);
}

/** The options' `pages`, resolved; `issuer` names the site when the brand does not. */
export function resolvePages(options: z.output<typeof pagesSchema> | undefined, issuer: string | undefined): ResolvedPages {
  const brand = options?.brand ?? {};
  const catalogues: Record<string, Messages> = { en };
  for (const [tag, input] of Object.entries(options?.messages ?? {})) {
    const language = tag.toLowerCase();
    catalogues[language] = merge(tag, catalogues[language] ?? SHIPPED_MESSAGES[language] ?? en, input);
  }
  const siteName = brand.name ?? (issuer ? new URL(issuer).host : undefined);
  return Object.freeze({
    ...(siteName !== undefined && { siteName }),
    ...(brand.logoUrl !== undefined && { logoUrl: brand.logoUrl }),
    ...(brand.accentColor !== undefined && { accentColor: brand.accentColor }),
    ...(brand.stylesheetUrl !== undefined && { stylesheetUrl: brand.stylesheetUrl }),
    ...(options?.authorizedAppsUrl !== undefined && { authorizedAppsUrl: options.authorizedAppsUrl }),
    ...(options?.locale !== undefined && { locale: options.locale }),
    languages: Object.freeze(Object.keys(catalogues)),
    catalogues: Object.freeze(catalogues),
    headers: pageHeaders(brand.logoUrl, brand.stylesheetUrl),
  });
}

/** The offered language a tag falls back to (RFC 4647 §3.4 lookup: drop subtags from the end), if any. */
function lookup(tag: string, languages: readonly string[]): string | undefined {
  let range = tag.toLowerCase();
  for (;;) {
    if (languages.includes(range)) return range;
    const cut = range.lastIndexOf('-');
    if (cut < 0) return undefined;
    range = range.slice(0, cut);
  }
}

/**
 * The language of `Accept-Language` (RFC 9110 §12.5.4) among `languages`: the ranges by
 * descending weight (in their order at equal weight), `q=0` never, `*` the first offered; each
 * looked up by dropping subtags (`fr-CA` finds `fr`). `undefined` when none matches. Only the
 * first 32 ranges are read: the header is the client's.
 * @group Pages
 */
export function negotiateLanguage(acceptLanguage: string | undefined, languages: readonly string[]): string | undefined {
  if (!acceptLanguage) return undefined;
  const ranges: { tag: string; q: number; i: number }[] = [];
  for (const [i, part] of acceptLanguage.split(',').slice(0, 32).entries()) {
    const [tag = '', ...params] = part.split(';').map((s) => s.trim());
    if (!/^(?:\*|[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)$/.test(tag)) continue;
    const qParam = params.find((p) => /^q=/i.test(p));
    const q = qParam === undefined ? 1 : /^q=(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/i.test(qParam) ? Number(qParam.slice(2)) : -1;
    if (q > 0) ranges.push({ tag, q, i });
  }
  ranges.sort((a, b) => b.q - a.q || a.i - b.i);
  for (const { tag } of ranges) {
    const found = tag === '*' ? languages[0] : lookup(tag, languages);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The language of a page for `request`, its catalogue, and whether it was negotiated on `Accept-Language`. */
export function pageLanguage(
  pages: ResolvedPages,
  request: OAuthRequest,
  uiLocales?: readonly string[],
): { lang: string; messages: Messages; negotiated: boolean } {
  let lang: string | undefined;
  if (pages.locale) {
    try {
      const chosen = pages.locale(request);
      if (typeof chosen === 'string') lang = lookup(chosen, pages.languages);
    } catch {
      // A failing host function must not turn a page into a 500: fall back to the header.
    }
  }
  // OpenID Connect `ui_locales` (Core §3.1.2.1), in the user's order, before Accept-Language.
  if (uiLocales) for (const tag of uiLocales) lang ??= lookup(tag, pages.languages);
  const negotiated = lang === undefined && pages.languages.length > 1;
  if (negotiated) lang = negotiateLanguage(header(request, 'accept-language'), pages.languages);
  lang ??= 'en';
  return { lang, messages: pages.catalogues[lang] ?? en, negotiated };
}
