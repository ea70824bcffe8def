/**
 * Callback URLs are ASCII on the wire (docs/reference.md#clients). A URL that is not ASCII is
 * refused at registration with the ASCII form to register instead, and a non-ASCII URL that an
 * earlier version stored still redirects (in its ASCII form), never a 500.
 */
import { describe, expect, it } from 'vitest';
import { isOAuthError, type OAuthError } from '../../src/index.js';
import { redirectTo } from '../../src/checks/redirect-uri.js';
import { json, setup } from '../helpers.js';

const UNICODE = 'https://例え.example/コールバック?x=ü';
const ASCII_FORM = 'https://xn--r8jz45g.example/%E3%82%B3%E3%83%BC%E3%83%AB%E3%83%90%E3%83%83%E3%82%AF?x=%C3%BC';
/** What a header value and RFC 6749 §5.2 allow. */
const HEADER_SAFE = /^[\x21-\x7e]+$/;

describe('registration refuses a callback URL that is not ASCII', () => {
  it.each([
    'https://例え.example/cb',
    'https://client.example/コールバック',
    'https://client.example/cb?name=ü',
    UNICODE,
    'http://127.0.0.1/ü',
  ])('%s → invalid_request naming the ASCII form to register', async (redirectUri) => {
    const t = await setup();
    const error = await t.server.registerClient({ name: 'x', redirectUri }).catch((e: unknown) => e);
    expect(isOAuthError(error)).toBe(true);
    const { code, description } = error as OAuthError;
    expect(code).toBe('invalid_request');
    expect(description).toMatch(/^[\x20-\x21\x23-\x5B\x5D-\x7E]*$/);
    expect(description).toContain(new URL(redirectUri).href);
    // ...and that form is accepted as it is, and stored exactly so.
    const client = await t.server.registerClient({ name: 'x', redirectUri: new URL(redirectUri).href });
    expect(client.redirectUri).toBe(new URL(redirectUri).href);
  });

  it('a public client too; dynamic registration answers invalid_redirect_uri with an ASCII description', async () => {
    const t = await setup({ allowDynamicRegistration: true });
    expect(
      isOAuthError(await t.server.registerClient({ name: 'x', redirectUri: 'http://127.0.0.1/ü', public: true }).catch((e: unknown) => e)),
    ).toBe(true);
    const reply = await t.server.registerDynamic({
      method: 'POST',
      url: '/v1/oauth/register',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [UNICODE] }),
    });
    expect(reply.status).toBe(400);
    expect(json(reply).error).toBe('invalid_redirect_uri');
    expect(json(reply).error_description).toContain(ASCII_FORM);
  });

  it('an already percent-encoded, punycode URL is accepted unchanged', async () => {
    const t = await setup();
    expect((await t.server.registerClient({ name: 'x', redirectUri: ASCII_FORM })).redirectUri).toBe(ASCII_FORM);
  });
});

describe('a non-ASCII callback URL stored by an earlier version still redirects, in ASCII', () => {
  it('redirectTo never puts anything but visible ASCII into a Location, nor throws', () => {
    for (const registered of [
      UNICODE,
      'https://client.example/a b',
      'https://client.example/\ud800x',
      'not a url ü',
      'https://xn--.example/ü',
    ]) {
      for (const mode of ['query', 'fragment'] as const) {
        const location = redirectTo(registered, { code: 'c', state: 'ß tate' }, mode);
        expect(location, registered).toMatch(HEADER_SAFE);
      }
    }
    const location = new URL(redirectTo(UNICODE, { code: 'abc', state: 'ü' }, 'query'));
    expect(location.href).toBe(`${ASCII_FORM}&code=abc&state=%C3%BC`);
    expect(location.searchParams.get('x')).toBe('ü');
  });

  it('authorize, approve, deny and the code exchange, through the core', async () => {
    const t = await setup();
    const stored = await t.storage.findClient(t.client.clientId);
    await t.storage.saveClient({ ...stored!, redirectUri: UNICODE });
    const params = { redirect_uri: UNICODE, state: 'st' };
    const asked = await t.server.authorize(t.get(t.authorizeUrl(params), t.ada));
    if (asked.type !== 'consent') throw new Error(asked.type);
    const approved = await t.server.approve(asked.interaction.id, t.get('/', t.ada));
    expect(approved.type === 'redirect' && approved.location).toMatch(HEADER_SAFE);
    const url = new URL(approved.type === 'redirect' ? approved.location : '');
    expect(`${url.origin}${url.pathname}`).toBe(ASCII_FORM.split('?')[0]);
    const code = url.searchParams.get('code')!;
    expect((await t.exchange(code, { redirect_uri: UNICODE })).status).toBe(200);

    const none = await t.server.authorize(t.get(t.authorizeUrl({ ...params, prompt: 'none' })));
    expect(none.type === 'redirect' && none.location).toMatch(HEADER_SAFE);
    const consent = await t.server.authorize(t.get(t.authorizeUrl(params), t.ada));
    if (consent.type !== 'consent') throw new Error(consent.type);
    const denied = await t.server.deny(consent.interaction.id, t.get('/', t.ada));
    expect(denied.type === 'redirect' && denied.location).toMatch(HEADER_SAFE);
  });
});
