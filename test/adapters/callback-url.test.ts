/**
 * Over HTTP (docs/reference.md#clients): a callback URL that is not ASCII is refused at (dynamic)
 * registration, and one that an earlier version stored redirects in its ASCII form from every
 * step (authorize, the consent POST, deny, prompt=none), never a 500 with the code lost.
 */
import { describe, expect, it } from 'vitest';
import { expectJsonError, FRAMEWORKS, useApp, type TestApp } from './app.js';

const UNICODE = 'https://例え.example/コールバック?x=ü';
const ASCII_FORM = 'https://xn--r8jz45g.example/%E3%82%B3%E3%83%BC%E3%83%AB%E3%83%90%E3%83%83%E3%82%AF?x=%C3%BC';
const HEADER_SAFE = /^[\x21-\x7e]+$/;

/** Store the test client's callback as an earlier version could have: not ASCII. */
async function legacyCallback(t: TestApp): Promise<void> {
  const stored = await t.storage.findClient(t.client.clientId);
  await t.storage.saveClient({ ...stored!, redirectUri: UNICODE });
}

describe.each(FRAMEWORKS)('%s: non-ASCII callback URLs', (framework) => {
  const app = useApp({ framework, server: { allowDynamicRegistration: true } });

  it('dynamic registration → 400 invalid_redirect_uri naming the ASCII form; that form registers', async () => {
    const t = app();
    const register = (uri: string) =>
      t.request('POST', '/v1/oauth/register', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [uri] }),
      });
    const refused = await register(UNICODE);
    expectJsonError(refused, 400, 'invalid_redirect_uri');
    expect(refused.json<{ error_description: string }>().error_description).toContain(ASCII_FORM);
    const accepted = await register(ASCII_FORM);
    expect(accepted.status, accepted.text).toBe(201);
    expect(accepted.json<{ redirect_uris: string[] }>().redirect_uris).toEqual([ASCII_FORM]);
  });

  it('a stored non-ASCII callback: the consent POST redirects (303) to its ASCII form, and the code exchanges', async () => {
    const t = app();
    await legacyCallback(t);
    const sid = t.signIn();
    const consent = await t.openConsent({ redirect_uri: UNICODE }, sid);
    const reply = await t.decide(consent, 'approve', sid);
    expect(reply.status, reply.text).toBe(303);
    expect(reply.location).toMatch(HEADER_SAFE);
    const url = new URL(reply.location!);
    expect(url.href.startsWith(`${ASCII_FORM}&`)).toBe(true);
    const code = url.searchParams.get('code')!;
    expect(url.searchParams.get('state')).toBe('st-123');
    const exchanged = await t.exchange(code, { redirect_uri: UNICODE });
    expect(exchanged.status, exchanged.text).toBe(200);
  });

  it('a stored non-ASCII callback: deny, prompt=none and an error redirect from GET /authorize are ASCII too', async () => {
    const t = app();
    await legacyCallback(t);
    const sid = t.signIn();
    const denied = await t.decide(await t.openConsent({ redirect_uri: UNICODE }, sid), 'deny', sid);
    expect(denied.status).toBe(303);
    expect(denied.location).toMatch(HEADER_SAFE);
    expect(new URL(denied.location!).searchParams.get('error')).toBe('access_denied');

    const cases: Record<string, string>[] = [{ prompt: 'none' }, { response_type: 'bogus' }, { response_type: 'token', prompt: 'none' }];
    for (const params of cases) {
      const reply = await t.get(t.authorizeUrl({ redirect_uri: UNICODE, ...params }));
      expect(reply.status, JSON.stringify(params)).toBe(302);
      expect(reply.location).toMatch(HEADER_SAFE);
      expect(reply.location!.startsWith(ASCII_FORM)).toBe(true);
    }
  });

  it('a stored non-ASCII callback: the implicit flow puts the token in the fragment of the ASCII form', async () => {
    const t = app();
    await legacyCallback(t);
    const sid = t.signIn();
    const reply = await t.decide(await t.openConsent({ redirect_uri: UNICODE, response_type: 'token' }, sid), 'approve', sid);
    expect(reply.status).toBe(303);
    expect(reply.location).toMatch(HEADER_SAFE);
    const access = new URLSearchParams(new URL(reply.location!).hash.slice(1)).get('access_token')!;
    expect((await t.api('GET', '/v2/account', access)).status).toBe(200);
  });
});
