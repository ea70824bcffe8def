/**
 * `response_modes_supported` and `response_mode` agree (docs/reference.md#discovery): every mode
 * the discovery document lists is accepted on an OpenID Connect request and answers where it
 * says (OAuth 2.0 Multiple Response Types §2.1, Form Post Response Mode §2), the code and every
 * error of the valid request; a mode it does not list is `invalid_request`.
 */
import { describe, expect, it } from 'vitest';
import { sha256Base64url } from '../../src/crypto.js';
import type { AuthorizeDecision } from '../../src/index.js';
import { CALLBACK, json, setup } from '../helpers.js';

const ISSUER = 'https://auth.example.com';
/** PKCE on every request: the strict profile requires it of every client. */
const VERIFIER = 'v'.repeat(43);
const PKCE = { code_challenge: sha256Base64url(VERIFIER), code_challenge_method: 'S256' };

/** Where a decision put its parameters: the query, the fragment or a posted form, and what they are. */
function delivered(decision: AuthorizeDecision): { mode: string; params: Record<string, string> } {
  if (decision.type === 'form_post') return { mode: 'form_post', params: decision.fields };
  if (decision.type !== 'redirect') throw new Error(`redirect or form_post expected: ${JSON.stringify(decision)}`);
  const url = new URL(decision.location);
  expect(`${url.origin}${url.pathname}`).toBe(CALLBACK);
  if (url.hash !== '') {
    expect(url.search).toBe(''); // nothing in the query when the fragment carries the response
    return { mode: 'fragment', params: Object.fromEntries(new URLSearchParams(url.hash.slice(1))) };
  }
  return { mode: 'query', params: Object.fromEntries(url.searchParams) };
}

const modes = (t: Awaited<ReturnType<typeof setup>>) =>
  (json(t.server.openidConfiguration({ method: 'GET' })) as { response_modes_supported: string[] }).response_modes_supported;

describe.each([
  ['the compatible profile (implicit flow allowed)', {}, ['query', 'fragment', 'form_post']],
  ['the strict profile (no implicit flow)', { profile: 'strict' }, ['query', 'form_post']],
  ['allowImplicit: false', { allowImplicit: false }, ['query', 'form_post']],
] as const)('%s', (_name, options, listed) => {
  it(`lists ${listed.join(', ')}; each is accepted with openid, answers the code there, and the code exchanges for an ID token`, async () => {
    const t = await setup({ issuer: ISSUER, openid: {}, ...options });
    expect(modes(t)).toEqual(listed);
    for (const mode of modes(t)) {
      const consent = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', response_mode: mode, state: 's', ...PKCE }), t.ada));
      if (consent.type !== 'consent') throw new Error(`consent expected for ${mode}: ${JSON.stringify(consent)}`);
      const answer = delivered(await t.server.approve(consent.interaction.id, t.get('/', t.ada)));
      expect(answer.mode, mode).toBe(mode);
      expect(Object.keys(answer.params), mode).toEqual(['code', 'state', 'iss']);
      expect(answer.params).toMatchObject({ state: 's', iss: ISSUER });
      const body = json(await t.exchange(answer.params.code!, { code_verifier: VERIFIER }));
      expect(body.id_token, mode).toBeTypeOf('string');
    }
  });

  it('a mode it does not list is invalid_request, in the query (the request is not valid, so neither is its mode)', async () => {
    const t = await setup({ issuer: ISSUER, openid: {}, ...options });
    for (const mode of ['fragment', 'jwt', 'web_message', 'query.jwt', 'FRAGMENT']) {
      if ((listed as readonly string[]).includes(mode)) continue;
      const decision = await t.server.authorize(
        t.get(t.authorizeUrl({ scope: 'openid', response_mode: mode, state: 's', ...PKCE }), t.ada),
      );
      const answer = delivered(decision);
      expect(answer.mode, mode).toBe('query');
      expect(answer.params, mode).toMatchObject({ error: 'invalid_request', state: 's' });
      expect(answer.params.error_description).toBe(
        `The request is malformed: response_mode must be ${listed.length === 3 ? 'query, fragment or form_post' : 'query or form_post'}.`,
      );
    }
    // An empty one is none (RFC 6749 §3.1): the default, the query.
    const consent = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', response_mode: '', ...PKCE }), t.ada));
    if (consent.type !== 'consent') throw new Error('consent expected');
    expect(delivered(await t.server.approve(consent.interaction.id, t.get('/', t.ada))).mode).toBe('query');
  });
});

describe('response_mode=fragment (implicit flow allowed)', () => {
  it('every error of the valid request goes in the fragment too: login_required, consent_required, access_denied', async () => {
    const t = await setup({ issuer: ISSUER, openid: {} });
    const silent = delivered(
      await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', prompt: 'none', response_mode: 'fragment', state: 's1' }))),
    );
    expect(silent).toEqual({
      mode: 'fragment',
      params: { error: 'login_required', error_description: 'The user is not signed in.', state: 's1', iss: ISSUER },
    });
    const noConsent = delivered(
      await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', prompt: 'none', response_mode: 'fragment' }), t.ada)),
    );
    expect(noConsent).toMatchObject({ mode: 'fragment', params: { error: 'consent_required' } });
    const consent = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', response_mode: 'fragment', state: 's2' }), t.ada));
    if (consent.type !== 'consent') throw new Error('consent expected');
    expect(delivered(await t.server.deny(consent.interaction.id, t.get('/', t.ada)))).toMatchObject({
      mode: 'fragment',
      params: { error: 'access_denied', state: 's2', iss: ISSUER },
    });
  });

  it('kept across the sign-in (the interaction stores it), and prompt=none issues there once consent is stored', async () => {
    const t = await setup({ issuer: ISSUER, openid: {} });
    const login = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', response_mode: 'fragment', nonce: 'n' })));
    if (login.type !== 'login') throw new Error('login expected');
    const consent = await t.server.resume(login.interaction.id, t.get('/', t.ada));
    if (consent.type !== 'consent') throw new Error('consent expected');
    const first = delivered(await t.server.approve(consent.interaction.id, t.get('/', t.ada)));
    expect(first.mode).toBe('fragment');
    expect((await t.exchange(first.params.code!)).status).toBe(200);
    // The consent stored: prompt=none answers at once, in the fragment.
    const silent = delivered(
      await t.server.authorize(t.get(t.authorizeUrl({ scope: 'openid', prompt: 'none', response_mode: 'fragment' }), t.ada)),
    );
    expect(silent.mode).toBe('fragment');
    expect((await t.exchange(silent.params.code!)).status).toBe(200);
  });

  it('a request without openid still ignores response_mode (an unknown parameter there): the code in the query', async () => {
    const t = await setup({ issuer: ISSUER, openid: {} });
    const consent = await t.server.authorize(t.get(t.authorizeUrl({ scope: 'read', response_mode: 'fragment' }), t.ada));
    if (consent.type !== 'consent') throw new Error('consent expected');
    expect(delivered(await t.server.approve(consent.interaction.id, t.get('/', t.ada))).mode).toBe('query');
  });
});
