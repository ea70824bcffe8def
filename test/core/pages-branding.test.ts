/**
 * The brand and languages of the built-in pages (docs/reference.md#branding-and-languages): the
 * `pages` option checked at construction, the CSP per brand, the language per request, escaping
 * of every brand and catalogue value, the site name's default, the authorized-apps link.
 */
import { describe, expect, it } from 'vitest';
import {
  AuthorizationServer,
  ConfigError,
  interactionResponse,
  MemoryStorage,
  negotiateLanguage,
  PAGE_HEADERS,
  type AuthorizationServerOptions,
  type Interaction,
  type OAuthRequest,
  type PagesOptions,
} from '../../src/index.js';
import { FakeSessions } from '../../src/testing/index.js';
import { setup } from '../helpers.js';

const base = { storage: new MemoryStorage(), sessions: new FakeSessions() };
const server = (options: Partial<AuthorizationServerOptions> = {}) => new AuthorizationServer({ ...base, ...options });
const configError = (pages: unknown, issuer?: string) => {
  try {
    server({ pages: pages as PagesOptions, ...(issuer && { issuer }) });
  } catch (error) {
    if (error instanceof ConfigError) return error.option;
    throw error;
  }
  return undefined;
};

const request = (acceptLanguage?: string): OAuthRequest => ({
  method: 'GET',
  url: 'https://nimbus.example/v1/oauth/authorize',
  headers: acceptLanguage === undefined ? {} : { 'accept-language': acceptLanguage },
});
const interaction: Interaction = {
  id: 'interaction-id',
  client: { id: 'c', name: 'StatusBoard' },
  scope: ['read'],
  scopeDescriptions: { read: 'See your account and resources (read-only).' },
  account: { uuid: 'u', name: 'Ada', email: 'ada@example.com' },
  redirectHost: 'status.example',
  expiresAt: 0,
};
const consent = (s: AuthorizationServer, req = request(), i = interaction, ui = {}) =>
  interactionResponse({ type: 'consent', interaction: i }, req, ui, s.options.pages);
const error = (s: AuthorizationServer, req = request(), ui = {}) =>
  interactionResponse(
    { type: 'error', status: 400, error: 'invalid_client', description: 'The client is unknown.' },
    req,
    ui,
    s.options.pages,
  );
const csp = (headers: Record<string, string>) => headers['content-security-policy'];

describe('the pages option is checked at construction', () => {
  it.each([
    ['an http logo on a public host', { brand: { logoUrl: 'http://cdn.example/logo.png' } }, 'pages.brand.logoUrl'],
    ['a javascript: logo', { brand: { logoUrl: 'javascript:alert(1)' } }, 'pages.brand.logoUrl'],
    ['a data: logo', { brand: { logoUrl: 'data:image/svg+xml,<svg/>' } }, 'pages.brand.logoUrl'],
    ['a protocol-relative logo', { brand: { logoUrl: '//evil.example/logo.png' } }, 'pages.brand.logoUrl'],
    ['a logo URL with a user', { brand: { logoUrl: 'https://user:pw@cdn.example/logo.png' } }, 'pages.brand.logoUrl'],
    ['a stylesheet path with a backslash', { brand: { stylesheetUrl: '/\\evil.example/x.css' } }, 'pages.brand.stylesheetUrl'],
    ['an http stylesheet', { brand: { stylesheetUrl: 'http://css.example/x.css' } }, 'pages.brand.stylesheetUrl'],
    ['a colour name', { brand: { accentColor: 'red' } }, 'pages.brand.accentColor'],
    ['CSS after a colour', { brand: { accentColor: '#fff;}body{background:url(https://evil.example)' } }, 'pages.brand.accentColor'],
    ['a four-digit colour', { brand: { accentColor: '#ffff' } }, 'pages.brand.accentColor'],
    ['a name with a newline', { brand: { name: 'Nim\nbus' } }, 'pages.brand.name'],
    ['a name with a bidi override', { brand: { name: 'Nimbus\u202egoogle' } }, 'pages.brand.name'],
    ['an empty name', { brand: { name: '' } }, 'pages.brand.name'],
    ['an unknown brand field', { brand: { font: 'x' } }, 'pages.brand'],
    ['an unknown message key', { messages: { fr: { greeting: 'Salut' } } }, 'pages.messages.fr'],
    [
      'a placeholder the English text has not',
      { messages: { fr: { consentHeading: 'Autoriser {secret} ?' } } },
      'pages.messages.fr.consentHeading',
    ],
    ['a language tag that is not one', { messages: { 'fr fr': {} } }, 'pages.messages.fr fr'],
    ['a locale that is not a function', { locale: 'fr' }, 'pages.locale'],
    ['an http authorized-apps URL', { authorizedAppsUrl: 'http://nimbus.example/apps' }, 'pages.authorizedAppsUrl'],
  ])('%s → ConfigError', (_name, pages, option) => {
    expect(configError(pages)).toBe(option);
  });

  it.each([
    { brand: { name: 'Nimbus', logoUrl: 'https://cdn.example/logo.svg', accentColor: '#0af', stylesheetUrl: 'https://css.example/p.css' } },
    { brand: { logoUrl: '/static/logo.svg', stylesheetUrl: '/static/pages.css?v=2', accentColor: '#0069FF' } },
    { brand: { logoUrl: 'http://127.0.0.1:3000/logo.svg' } },
    { messages: { fr: {}, 'pt-BR': { authorize: 'Autorizar' } }, locale: () => 'fr', authorizedAppsUrl: '/account/applications' },
  ])('accepts %j', (pages) => {
    expect(configError(pages)).toBeUndefined();
  });
});

describe('headers and CSP per brand', () => {
  it('without a brand the pages have exactly PAGE_HEADERS (and no Vary with English only)', () => {
    const s = server();
    expect(s.options.pages.headers).toBe(PAGE_HEADERS);
    expect(consent(s).headers).toEqual({ ...PAGE_HEADERS, 'set-cookie': expect.any(String) });
    expect(error(s).headers).toEqual(PAGE_HEADERS);
  });

  it("the CSP allows exactly the logo's origin for images and the stylesheet's for styles, nothing wider", () => {
    const s = server({
      pages: { brand: { logoUrl: 'https://cdn.example:8443/brand/logo.svg?v=1', stylesheetUrl: 'https://css.example/nimbus/pages.css' } },
    });
    const policy =
      "default-src 'none'; style-src 'unsafe-inline' https://css.example; img-src https://cdn.example:8443; frame-ancestors 'none'; base-uri 'none'";
    expect(csp(consent(s).headers)).toBe(policy);
    expect(csp(error(s).headers)).toBe(policy);
    expect(error(s).headers['x-frame-options']).toBe('DENY');
  });

  it("paths of the host's origin are 'self'; a logo alone opens img-src only", () => {
    const s = server({ pages: { brand: { logoUrl: '/static/logo.svg' } } });
    expect(csp(consent(s).headers)).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    const t = server({ pages: { brand: { stylesheetUrl: '/static/pages.css' } } });
    expect(csp(consent(t).headers)).toBe("default-src 'none'; style-src 'unsafe-inline' 'self'; frame-ancestors 'none'; base-uri 'none'");
  });

  it('the page links the stylesheet after its own style, shows the logo, and sets the accent colour', () => {
    const s = server({
      pages: { brand: { name: 'Nimbus', logoUrl: '/static/logo.svg', accentColor: '#123abc', stylesheetUrl: '/static/p.css' } },
    });
    const body = consent(s).body;
    expect(body).toMatch(/<style>:root\{--accent:#123abc\}.*<\/style><link rel="stylesheet" href="\/static\/p.css">/s);
    expect(body).toContain('<img src="/static/logo.svg" alt="Nimbus logo">');
    expect(body).toContain('<title>Authorize StatusBoard · Nimbus</title>');
  });
});

describe('escaping', () => {
  it('a hostile brand name, host messages and placeholder values are escaped; braces in values are not read as placeholders', () => {
    const s = server({
      pages: {
        brand: { name: '<img src=x onerror=alert(1)>', logoUrl: 'https://cdn.example/logo.svg?a="><script>' },
        messages: { en: { consentHeading: '<script>alert(1)</script> {client}?', asksTo: '"><b>x' } },
      },
    });
    const hostile: Interaction = {
      ...interaction,
      client: { id: 'c', name: '{site} <script>alert(2)</script>' },
      account: { uuid: 'u', name: '<b>Ada</b>', email: '"@x' },
      redirectHost: '<i>h</i>',
    };
    const body = consent(s, request(), hostile).body;
    expect(body).not.toMatch(/<script|<img src=x|<b>|<i>|"><b>/);
    expect(body).toContain('&#60;script&#62;alert(1)&#60;/script&#62; <strong>{site} &#60;script&#62;alert(2)&#60;/script&#62;</strong>?');
    expect(body).toContain('src="https://cdn.example/logo.svg?a=&#34;&#62;&#60;script&#62;"');
    expect(error(s).body).toContain('&#60;img src=x onerror=alert(1)&#62;');
  });
});

describe('language', () => {
  it.each([
    ['fr', 'fr'],
    ['fr-CA', 'fr'],
    ['FR-ca', 'fr'],
    ['de, fr;q=0.5, en;q=0.4', 'fr'],
    ['en;q=0.9, fr', 'fr'],
    ['fr;q=0.5, en;q=0.5', 'fr'],
    ['en, fr', 'en'],
    ['fr;q=0, en;q=0.1', 'en'],
    ['*', 'en'],
    ['de', undefined],
    ['fr;q=0', undefined],
    ['fr;q=2', undefined],
    ['fr;q=abc', undefined],
    ['', undefined],
    ['<script>', undefined],
  ])('Accept-Language %j → %s', (header, expected) => {
    expect(negotiateLanguage(header, ['en', 'fr'])).toBe(expected);
  });

  it('a long header is read up to its 32nd range', () => {
    expect(negotiateLanguage(`${'de,'.repeat(40)}fr`, ['en', 'fr'])).toBeUndefined();
    expect(negotiateLanguage(`${'de,'.repeat(20)}fr`, ['en', 'fr'])).toBe('fr');
  });

  it('English only (no messages option): every page is English, whatever the browser asks, and not Vary', () => {
    const s = server();
    const page = consent(s, request('fr'));
    expect(page.body).toContain('<html lang="en">');
    expect(page.headers['vary']).toBeUndefined();
  });

  it('with French offered: by Accept-Language, English as fallback, Vary: Accept-Language either way', () => {
    const s = server({ pages: { messages: { fr: {} } } });
    const fr = consent(s, request('fr-FR,fr;q=0.9,en;q=0.8'));
    expect(fr.body).toContain('<html lang="fr">');
    expect(fr.body).toContain('Autoriser <strong>StatusBoard</strong> ?');
    expect(fr.headers['vary']).toBe('Accept-Language');
    const fallback = consent(s, request('de'));
    expect(fallback.body).toContain('<html lang="en">');
    expect(fallback.headers['vary']).toBe('Accept-Language');
    expect(error(s, request('fr')).body).toContain('<title>Erreur d&#39;autorisation</title>');
  });

  it("the host's function decides over the header; a language it does not offer, undefined or a throw fall back to the header", () => {
    let choice: () => string | undefined = () => 'fr-BE';
    const s = server({ pages: { messages: { fr: {} }, locale: () => choice() } });
    const chosen = consent(s, request('en'));
    expect(chosen.body).toContain('<html lang="fr">');
    expect(chosen.headers['vary']).toBeUndefined();
    choice = () => 'de';
    expect(consent(s, request('fr')).body).toContain('<html lang="fr">');
    choice = () => undefined;
    expect(consent(s, request('en')).body).toContain('<html lang="en">');
    choice = () => {
      throw new Error('host bug');
    };
    expect(consent(s, request('fr')).body).toContain('<html lang="fr">');
  });

  it("a host's catalogue for another language is layered over English; its own strings win", () => {
    const s = server({ pages: { messages: { 'pt-BR': { authorize: 'Autorizar', deny: 'Negar' }, fr: { deny: 'Non merci' } } } });
    const pt = consent(s, request('pt-BR')).body;
    expect(pt).toContain('<html lang="pt-br">');
    expect(pt).toContain('>Autorizar</button>');
    expect(pt).toContain('This application asks to:');
    const fr = consent(s, request('fr')).body;
    expect(fr).toContain('>Non merci</button>');
    expect(fr).toContain('>Autoriser</button>');
  });

  it("scope words: the server's scopes.descriptions on English pages, the catalogue's per language, else the value", async () => {
    const t = await setup({
      pages: { messages: { fr: { scopes: { 'droplet:create': 'Créer des droplets.' } }, en: {} } },
      scopes: {
        values: ['read', 'droplet:create', 'billing'],
        default: ['read'],
        allows: () => true,
        descriptions: { read: 'Read your droplets.', 'droplet:create': 'Create droplets.' },
      },
    });
    const d = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'read droplet:create billing' }), t.ada));
    if (d.type !== 'consent') throw new Error(d.type);
    const en = consent(t.server, request('en'), d.interaction).body;
    expect(en).toContain('<li>Read your droplets.</li><li>Create droplets.</li><li>billing</li>');
    const fr = consent(t.server, request('fr'), d.interaction).body;
    expect(fr).toContain('<li>Voir votre compte et vos ressources (lecture seule).</li><li>Créer des droplets.</li><li>billing</li>');
  });

  it('scope values named like Object.prototype members (constructor, toString) are words like any other', async () => {
    const t = await setup({
      pages: { messages: { fr: {} } },
      scopes: {
        values: ['constructor', 'toString', '__proto__'],
        default: ['constructor'],
        allows: () => true,
        descriptions: { constructor: 'Build things.' },
      },
    });
    const d = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'constructor toString __proto__' }), t.ada));
    if (d.type !== 'consent') throw new Error(d.type);
    for (const lang of ['en', 'fr']) {
      expect(consent(t.server, request(lang), d.interaction).body).toContain('<li>Build things.</li><li>toString</li><li>__proto__</li>');
    }
  });

  it('the error page in another language: the sentence for the code, the English description marked lang="en"', () => {
    const s = server({ pages: { messages: { fr: {} } } });
    const body = error(s, request('fr')).body;
    expect(body).toContain('<p>L&#39;application est inconnue ou n&#39;existe plus.</p>');
    expect(body).toContain('<p lang="en">Détail technique (en anglais) : The client is unknown.</p>');
    expect(body).toContain('Code d&#39;erreur : <code>invalid_client</code>');
  });
});

describe('site name, callback host, authorized applications', () => {
  it("the site is named by the brand, else the issuer's host; an adapter's siteName names it over both", () => {
    expect(consent(server({ issuer: 'https://auth.nimbus.example:8443' })).body).toContain(
      '<title>Authorize StatusBoard · auth.nimbus.example:8443</title>',
    );
    const branded = server({ issuer: 'https://auth.nimbus.example', pages: { brand: { name: 'Nimbus' } } });
    expect(consent(branded).body).toContain('<span>Nimbus</span>');
    expect(consent(branded, request(), interaction, { siteName: 'Nimbus Cloud' }).body).toContain('<span>Nimbus Cloud</span>');
    expect(consent(server()).body).not.toContain('class="site"');
  });

  it("the unverified notice names the site by the issuer's host when nothing else names it", () => {
    const s = server({ issuer: 'https://auth.nimbus.example' });
    const body = consent(s, request(), { ...interaction, client: { id: 'c', name: 'X', verified: false } }).body;
    expect(body).toContain('auth.nimbus.example has not verified this application');
  });

  it('every consent page says where the browser goes after the decision', () => {
    expect(consent(server()).body).toContain('After you decide, you will be sent to <strong>status.example</strong>.');
  });

  it('"You can revoke this access" links to the authorized-applications page when the host gives it', () => {
    expect(consent(server()).body).toContain('<p>You can revoke this access at any time.</p>');
    const s = server({ pages: { authorizedAppsUrl: '/account/applications', messages: { fr: {} } } });
    expect(consent(s).body).toContain(
      '<p>You can revoke this access at any time in <a href="/account/applications">your authorized applications</a>.</p>',
    );
    expect(consent(s, request('fr')).body).toContain(
      '<p>Vous pouvez révoquer cet accès à tout moment dans <a href="/account/applications">vos applications autorisées</a>.</p>',
    );
  });
});
