/**
 * The shipped catalogues of the built-in pages (docs/reference.md#branding-and-languages): every
 * catalogue has every key of the English one, with the same placeholders, and a French page
 * carries no English sentence.
 */
import { describe, expect, it } from 'vitest';
import {
  interactionResponse,
  pageOptions,
  renderDeviceEntryPage,
  renderDeviceLockedPage,
  renderDeviceResultPage,
  SHIPPED_MESSAGES,
  type Interaction,
} from '../../src/index.js';
import { en, fr } from '../../src/ui/messages/index.js';
import { placeholders } from '../../src/ui/messages/index.js';
import { resolvePages } from '../../src/ui/page-settings.js';
import { phrases, showsPhrase, values } from '../catalogue-phrases.js';

const keys = (record: object) => Object.keys(record).sort();

describe('shipped catalogues', () => {
  it.each(Object.entries(SHIPPED_MESSAGES))('%s has every key of English, the same placeholders, nothing empty', (_lang, messages) => {
    expect(keys(messages)).toEqual(keys(en));
    expect(keys(messages.scopes)).toEqual(keys(en.scopes));
    expect(keys(messages.errors)).toEqual(keys(en.errors));
    for (const key of keys(en) as (keyof typeof en)[]) {
      const value = messages[key];
      if (typeof value !== 'string') continue;
      expect(value.trim(), key).not.toBe('');
      expect(placeholders(value), key).toEqual(placeholders(en[key] as string));
    }
    for (const group of ['scopes', 'errors'] as const) {
      for (const [k, v] of Object.entries(messages[group])) expect(v.trim(), `${group}.${k}`).not.toBe('');
    }
  });

  it('French translates every phrase: no English phrase is left in it', () => {
    const french = values(fr).join('\n');
    for (const text of values(en)) for (const phrase of phrases(text)) expect(showsPhrase(french, phrase), phrase).toBe(false);
  });

  it('a French consent page and error page carry French and no English phrase of the catalogue', () => {
    const pages = resolvePages({ messages: { fr: {} }, authorizedAppsUrl: '/account/apps' }, 'https://nimbus.example');
    const request = { method: 'GET', url: 'https://nimbus.example/v1/oauth/authorize', headers: { 'accept-language': 'fr' } };
    const interaction: Interaction = {
      id: 'i',
      client: { id: 'c', name: 'StatusBoard', verified: false, idHost: 'app.example', uri: 'https://app.example/' },
      scope: ['read', 'write'],
      scopeDescriptions: { read: en.scopes.read!, write: en.scopes.write! },
      account: { uuid: 'u', name: 'Ada', email: 'ada@example.com' },
      resources: ['https://api.example/'],
      redirectHost: 'app.example',
      expiresAt: 0,
    };
    const consent = interactionResponse({ type: 'consent', interaction }, request, {}, pages).body;
    const error = interactionResponse({ type: 'error', status: 400, error: 'invalid_scope', description: 'x' }, request, {}, pages).body;
    const english = values(en)
      .flatMap(phrases)
      // The one English sentence an error page in another language keeps, marked lang="en".
      .filter((p) => !en.errorDetail.includes(p));
    for (const body of [consent, error]) {
      expect(body).toContain('<html lang="fr">');
      for (const phrase of english) expect(showsPhrase(body, phrase), phrase).toBe(false);
    }
    expect(consent).toContain('Voir votre compte et vos ressources (lecture seule).');
    expect(consent).toContain('n&#39;a pas vérifié cette application');
    expect(error).toContain('L&#39;application demande un accès qui n&#39;existe pas.');
  });

  it('the device pages in French carry French and no English phrase; in English, every device string', () => {
    const pages = resolvePages({ messages: { fr: {} } }, 'https://nimbus.example');
    const interaction: Interaction = {
      id: 'i',
      client: { id: 'c', name: 'Nimbus CLI', verified: false },
      scope: ['read', 'write'],
      scopeDescriptions: { read: en.scopes.read!, write: en.scopes.write! },
      account: { uuid: 'u', name: 'Ada', email: 'ada@example.com' },
      resources: ['https://api.example/'],
      expiresAt: 0,
      device: { userCode: 'WDJB-MJHT' },
    };
    const bodies = (lang: string) => {
      const request = { method: 'GET', url: 'https://nimbus.example/v1/oauth/device/verify', headers: { 'accept-language': lang } };
      const page = pageOptions(pages, request);
      const form = { action: '/v1/oauth/device/verify', csrfToken: 't', ...page };
      return [
        renderDeviceEntryPage({ ...form, wrong: true }, 400),
        renderDeviceLockedPage(Date.UTC(2026, 0, 1, 14, 5), Date.UTC(2026, 0, 1, 14, 0), page),
        interactionResponse({ type: 'consent', interaction }, request, {}, pages),
        interactionResponse(
          { type: 'consent', interaction: { ...interaction, client: { id: 'c', name: 'Nimbus CLI' } } },
          request,
          {},
          pages,
        ),
        renderDeviceResultPage('approved', page),
        renderDeviceResultPage('denied', page),
      ].map((r) => r.body);
    };
    const device = (m: typeof en) =>
      (Object.keys(m) as (keyof typeof en)[]).filter((k) => k.startsWith('device')).flatMap((k) => phrases(m[k] as string));
    const french = bodies('fr');
    for (const body of french) {
      expect(body).toContain('<html lang="fr">');
      for (const phrase of values(en).flatMap(phrases)) expect(showsPhrase(body, phrase), phrase).toBe(false);
    }
    const all = (list: string[]) => list.join('\n').replaceAll('&#39;', "'");
    // Every device string of each catalogue is shown by one of the pages (the catalogue covers the pages).
    for (const phrase of device(fr)) expect(all(french), phrase).toContain(phrase);
    for (const phrase of device(en)) expect(all(bodies('en')), phrase).toContain(phrase);
    expect(all(french)).toContain('Réessayez après 14:05 UTC.');
    expect(all(french)).toContain('Voir votre compte et vos ressources (lecture seule).');
  });
});
