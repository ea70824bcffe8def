/**
 * Through every adapter: the device authorization grant (RFC 8628;
 * docs/reference.md#device-authorization-grant-rfc-8628), driven by a real RFC 8628 client,
 * openid-client (discovery, `initiateDeviceAuthorization`, `pollDeviceAuthorizationGrant`), while a
 * browser-less "user" signs in through the host's contract (`loginUrl?interaction=…`, then
 * `authorize/resume`), enters the code and confirms on the built-in pages. The server's issuer is
 * `http://127.0.0.1` (no port): openid-client's `customFetch` sends each request to the app under
 * test, and moves the server's FakeClock by the polling interval before each poll, as the real
 * time openid-client waits passes.
 */
import * as oidc from 'openid-client';
import { describe, expect, it } from 'vitest';
import { DEVICE_CODE_GRANT } from '../../src/index.js';
import { ADA, expectErrorPage, expectJsonError, formValue, FRAMEWORKS, IN_PROCESS, setCookieValue, useApp, type TestApp } from './app.js';

const ISSUER = 'http://127.0.0.1';
const VERIFY = '/v1/oauth/device/verify';
const SERVER = { issuer: ISSUER, deviceAuthorization: { interval: 1, maxUserCodeAttempts: 3 } };

/** A public CLI client allowed the device grant (and refresh). */
const registerCli = (app: TestApp) =>
  app.server.registerClient({
    name: 'Terminal CLI',
    redirectUri: 'http://127.0.0.1/cb',
    public: true,
    grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'],
  });

/** openid-client, configured by discovery, every request going to `app` over HTTP. */
async function openidClient(app: TestApp, clientId: string) {
  const customFetch: oidc.CustomFetch = async (input, init) => {
    const url = new URL(input);
    if (url.origin !== ISSUER) throw new Error(`unexpected request to ${url.href}`);
    const body = init.body;
    // The time openid-client waited passes on the server's clock too.
    if (url.pathname.endsWith('/token')) app.clock.advance(SERVER.deviceAuthorization.interval * 1000);
    const reply = await app.request(init.method, url.pathname + url.search, {
      headers: init.headers,
      ...(body != null && { body: body instanceof URLSearchParams ? body.toString() : (body as string) }),
      browser: null,
    });
    return new Response(reply.text, { status: reply.status, headers: reply.headers });
  };
  const config = await oidc.discovery(new URL(ISSUER), clientId, undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
    [oidc.customFetch]: customFetch,
    algorithm: 'oauth2',
  });
  config[oidc.customFetch] = customFetch;
  return config;
}

/** The path and query of a URL the server answered (an absolute verification URI, a Location). */
const local = (url: string) => {
  const u = new URL(url, ISSUER);
  return u.pathname + u.search;
};

/** The user at the browser: sign in through the host's contract, enter the code, and see the confirmation page. */
async function openConfirmation(app: TestApp, verificationUriComplete: string) {
  const first = await app.get(local(verificationUriComplete));
  expect(first.status, first.text).toBe(302);
  const login = new URL(first.location!, ISSUER);
  expect(login.pathname).toBe('/login');
  const sid = app.signIn(ADA);
  // The host signed the user in: back to authgate's resume route, which leads to the verification page.
  const resumed = await app.get(`/v1/oauth/authorize/resume?interaction=${login.searchParams.get('interaction')}`, sid);
  expect(resumed.status, resumed.text).toBe(302);
  const entry = await app.get(local(resumed.location!), sid);
  expect(entry.status, entry.text).toBe(200);
  const csrf = formValue(entry.text, 'csrf')!;
  expect(setCookieValue(entry.headers, 'authgate_csrf')?.value).toBe(csrf);
  expect(setCookieValue(entry.headers, 'authgate_csrf')?.attributes).toMatch(/Path=\/v1\/oauth\/device;.*HttpOnly; SameSite=Lax/);
  const userCode = formValue(entry.text, 'user_code')!;
  const cookie = `${sid}; authgate_csrf=${csrf}`;
  const confirm = await app.postForm(VERIFY, { csrf, user_code: userCode }, { cookie });
  return { sid, csrf, cookie, userCode, confirm };
}

describe.each(FRAMEWORKS)('%s: device authorization grant, driven by openid-client', (framework) => {
  const app = useApp({ framework, server: SERVER });

  it('discovery, initiateDeviceAuthorization, sign-in + code + Connect, then pollDeviceAuthorizationGrant gets tokens once', async () => {
    const a = app();
    const cli = await registerCli(a);
    const config = await openidClient(a, cli.clientId);
    expect(config.serverMetadata().device_authorization_endpoint).toBe(`${ISSUER}/v1/oauth/device`);
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'read' });
    expect(started.verification_uri).toBe(`${ISSUER}${VERIFY}`);
    expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(started.interval).toBe(1);
    const polling = oidc.pollDeviceAuthorizationGrant(config, started);

    const { confirm, csrf, cookie, userCode } = await openConfirmation(a, started.verification_uri_complete!);
    expect(userCode).toBe(started.user_code);
    expect(confirm.status, confirm.text).toBe(200);
    expect(confirm.text).toContain('Terminal CLI');
    expect(confirm.text).toContain(`<code>${started.user_code}</code>`);
    expect(confirm.text).toContain('Only continue if you started this on your own device');
    const decided = await a.postForm(
      VERIFY,
      { interaction: formValue(confirm.text, 'interaction')!, csrf, decision: 'approve' },
      { cookie },
    );
    expect(decided.status, decided.text).toBe(303);
    expect(decided.location).toBe(`${VERIFY}?result=approved`);
    expect((await a.get(decided.location!)).text).toContain('Device connected');

    const tokens = await polling;
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope).toBe('read');
    expect(tokens.refresh_token).toBeTruthy();
    expect((await a.api('GET', '/v2/account', tokens.access_token)).status).toBe(200);
    // The device code again: invalid_grant.
    const replay = await a.postForm('/v1/oauth/token', {
      grant_type: DEVICE_CODE_GRANT,
      device_code: started.device_code,
      client_id: cli.clientId,
    });
    expectJsonError(replay, 400, 'invalid_grant');
  });

  it('denied on the confirmation page: openid-client ends with access_denied', async () => {
    const a = app();
    const cli = await registerCli(a);
    const config = await openidClient(a, cli.clientId);
    const started = await oidc.initiateDeviceAuthorization(config, {});
    const polling = oidc.pollDeviceAuthorizationGrant(config, started).then(
      () => 'tokens',
      (error: { error?: string }) => error.error,
    );
    const { confirm, csrf, cookie } = await openConfirmation(a, started.verification_uri_complete!);
    const decided = await a.postForm(VERIFY, { interaction: formValue(confirm.text, 'interaction')!, csrf, decision: 'deny' }, { cookie });
    expect(decided.location).toBe(`${VERIFY}?result=denied`);
    expect(await polling).toBe('access_denied');
  });

  it('polling sooner than the interval is slow_down; pending after waiting; expired_token after expires_in', async () => {
    const a = app();
    const cli = await registerCli(a);
    const started = (await a.postForm('/v1/oauth/device', { client_id: cli.clientId, scope: 'read' })).json<{
      device_code: string;
      interval: number;
      expires_in: number;
    }>();
    const poll = () =>
      a.postForm('/v1/oauth/token', { grant_type: DEVICE_CODE_GRANT, device_code: started.device_code, client_id: cli.clientId });
    expectJsonError(await poll(), 400, 'authorization_pending');
    expectJsonError(await poll(), 400, 'slow_down');
    a.clock.advance(6000);
    expectJsonError(await poll(), 400, 'authorization_pending');
    a.clock.advance(started.expires_in * 1000);
    expectJsonError(await poll(), 400, 'expired_token');
  });

  it("another client's device code is invalid_grant and leaves the request to its own client", async () => {
    const a = app();
    const cli = await registerCli(a);
    const other = await registerCli(a);
    const started = await openidClient(a, cli.clientId).then((config) => oidc.initiateDeviceAuthorization(config, {}));
    const { confirm, csrf, cookie } = await openConfirmation(a, started.verification_uri_complete!);
    await a.postForm(VERIFY, { interaction: formValue(confirm.text, 'interaction')!, csrf, decision: 'approve' }, { cookie });
    const poll = (clientId: string) =>
      a.postForm('/v1/oauth/token', { grant_type: DEVICE_CODE_GRANT, device_code: started.device_code, client_id: clientId });
    expectJsonError(await poll(other.clientId), 400, 'invalid_grant');
    expect((await poll(cli.clientId)).status).toBe(200);
  });

  it('the forms need the CSRF cookie; wrong codes are counted and lock the account out (429)', async () => {
    const a = app();
    const cli = await registerCli(a);
    const started = (await a.postForm('/v1/oauth/device', { client_id: cli.clientId })).json<{ user_code: string }>();
    const sid = a.signIn(ADA);
    const entry = await a.get(VERIFY, sid);
    const csrf = formValue(entry.text, 'csrf')!;
    expectErrorPage(await a.postForm(VERIFY, { csrf, user_code: started.user_code }, { cookie: sid }), 'invalid_request', 403);
    const cookie = `${sid}; authgate_csrf=${csrf}`;
    const wrong = await a.postForm(VERIFY, { csrf, user_code: 'BBBB-BBBB' }, { cookie });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('That code is not valid');
    await a.postForm(VERIFY, { csrf, user_code: 'CCCC-CCCC' }, { cookie });
    const locked = await a.postForm(VERIFY, { csrf, user_code: 'DDDD-DDDD' }, { cookie });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBe(900);
    expect(locked.text).toContain('Too many wrong codes');
    // Even the right code is refused while locked.
    expect((await a.postForm(VERIFY, { csrf, user_code: started.user_code }, { cookie })).status).toBe(429);
  });

  it('GET at the device endpoint and DELETE at the verification page are 405; a confidential client without its secret is invalid_client', async () => {
    const a = app();
    const cli = await registerCli(a);
    expectJsonError(await a.get(`/v1/oauth/device?client_id=${cli.clientId}`), 405, 'invalid_request');
    expectErrorPage(await a.request('DELETE', VERIFY), 'invalid_request', 405);
    expectJsonError(await a.postForm('/v1/oauth/device', { client_id: a.client.clientId }), 401, 'invalid_client');
    expectJsonError(
      await a.postForm('/v1/oauth/device', { client_id: a.client.clientId, client_secret: a.client.clientSecret }),
      400,
      'unauthorized_client',
    );
  });
});

describe.each(FRAMEWORKS)('%s: device authorization grant off (the default)', (framework) => {
  const app = useApp({ framework, server: { issuer: ISSUER } });

  it('404 at both routes; no device endpoint in the metadata', async () => {
    const a = app();
    expectJsonError(await a.postForm('/v1/oauth/device', { client_id: a.client.clientId }), 404, 'not_found');
    expectErrorPage(await a.get(VERIFY, a.signIn(ADA)), 'not_found', 404);
    const metadata = (await a.get('/.well-known/oauth-authorization-server')).json();
    expect(metadata).not.toHaveProperty('device_authorization_endpoint');
  });
});

describe.each(IN_PROCESS)('%s: onDeviceVerification replaces the confirmation page', (framework) => {
  const app = useApp({ framework, server: SERVER, customInteractions: true });

  it('the host hook gets the step with the code; onConsent does not', async () => {
    const a = app();
    const cli = await registerCli(a);
    const started = (await a.postForm('/v1/oauth/device', { client_id: cli.clientId })).json<{ user_code: string }>();
    const sid = a.signIn(ADA);
    const entry = await a.get(VERIFY, sid);
    const csrf = formValue(entry.text, 'csrf')!;
    const reply = await a.postForm(VERIFY, { csrf, user_code: started.user_code }, { cookie: `${sid}; authgate_csrf=${csrf}` });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.text).toMatch(new RegExp(`^custom device [A-Za-z0-9_-]{43} ${started.user_code}$`));
  });
});

/** The brand of test/adapters/consent-and-error-pages.test.ts: a logo and a stylesheet on other origins, French offered. */
const BRANDED = {
  ...SERVER,
  pages: {
    brand: {
      name: 'Nimbus',
      logoUrl: 'https://cdn.nimbus.example/logo.svg',
      accentColor: '#0069ff',
      stylesheetUrl: 'https://static.nimbus.example/oauth.css',
    },
    messages: { fr: {} },
  },
};
const BRANDED_CSP =
  "default-src 'none'; style-src 'unsafe-inline' https://static.nimbus.example; img-src https://cdn.nimbus.example; frame-ancestors 'none'; base-uri 'none'";

describe.each(FRAMEWORKS)('%s: the device pages with the brand, in the language the browser asks for', (framework) => {
  const app = useApp({ framework, server: BRANDED });
  const fr = { 'accept-language': 'fr-CA,fr;q=0.9,en;q=0.5' };
  /** A page of the brand in French: the language, the logo, the brand's CSP, Vary. */
  const expectFrench = (reply: { text: string; headers: Headers }) => {
    expect(reply.text).toContain('<html lang="fr">');
    expect(reply.text).toContain('<img src="https://cdn.nimbus.example/logo.svg" alt="Logo de Nimbus">');
    expect(reply.text).toContain(':root{--accent:#0069ff}');
    expect(reply.headers.get('content-security-policy')).toBe(BRANDED_CSP);
    expect(reply.headers.get('vary')).toBe('Accept-Language');
    expect(reply.headers.get('x-frame-options')).toBe('DENY');
    expect(reply.headers.get('cache-control')).toBe('no-store');
  };

  it('Accept-Language: fr → code entry, wrong code, confirmation (hostile name escaped), Connecter, outcome: all French; the form still decides', async () => {
    const a = app();
    const cli = await a.server.registerClient({
      name: '<img src=x onerror=alert(1)>CLI',
      redirectUri: 'http://127.0.0.1/cb',
      public: true,
      grantTypes: [DEVICE_CODE_GRANT],
    });
    const started = (await a.postForm('/v1/oauth/device', { client_id: cli.clientId, scope: 'read' })).json<{ user_code: string }>();
    const sid = a.signIn(ADA);
    // A hostile ?user_code= is only ever an escaped attribute value.
    const entry = await a.get(`${VERIFY}?user_code=${encodeURIComponent('"><script>x</script>')}`, sid, { headers: fr });
    expect(entry.status).toBe(200);
    expectFrench(entry);
    expect(entry.text).toContain('<h1>Connecter un appareil</h1>');
    expect(entry.text).toContain('>Continuer</button>');
    expect(entry.text).not.toContain('<script>');
    expect(entry.text).toContain('value="&#34;&#62;&#60;script&#62;x&#60;/script&#62;"');
    const csrf = formValue(entry.text, 'csrf')!;
    const cookie = `${sid}; authgate_csrf=${csrf}`;

    const wrong = await a.postForm(VERIFY, { csrf, user_code: 'BBBB-BBBB' }, { cookie, headers: fr });
    expect(wrong.status).toBe(400);
    expectFrench(wrong);
    expect(wrong.text).toContain('Ce code n&#39;est pas valide');

    const confirm = await a.postForm(VERIFY, { csrf, user_code: started.user_code }, { cookie, headers: fr });
    expect(confirm.status, confirm.text).toBe(200);
    expectFrench(confirm);
    expect(confirm.text).toContain('<strong>&#60;img src=x onerror=alert(1)&#62;CLI</strong>');
    expect(confirm.text).not.toContain('<img src=x');
    expect(confirm.text).toContain(`Votre code : <code>${started.user_code}</code>`);
    expect(confirm.text).toContain('Ne continuez que si vous avez lancé cette opération sur votre propre appareil');
    expect(confirm.text).toContain('<li>Voir votre compte et vos ressources (lecture seule).</li>');
    expect(confirm.text).not.toContain('Only continue');
    const interaction = formValue(confirm.text, 'interaction')!;

    // The decision still needs the CSRF cookie, in French too.
    const refused = await a.postForm(VERIFY, { interaction, csrf, decision: 'approve' }, { cookie: sid, headers: fr });
    expectErrorPage(refused, 'invalid_request', 403);
    expect(refused.text).toContain('<html lang="fr">');
    const decided = await a.postForm(VERIFY, { interaction, csrf, decision: 'approve' }, { cookie, headers: fr });
    expect(decided.status, decided.text).toBe(303);
    const result = await a.get(decided.location!, undefined, { headers: fr });
    expectFrench(result);
    expect(result.text).toContain('<h1>Appareil connecté</h1>');
  });

  it('no Accept-Language → the English device pages, same brand and CSP; the lock page in French says when, in UTC', async () => {
    const a = app();
    const sid = a.signIn(ADA);
    const entry = await a.get(VERIFY, sid);
    expect(entry.text).toContain('<html lang="en">');
    expect(entry.text).toContain('<h1>Connect a device</h1>');
    expect(entry.text).toContain('<img src="https://cdn.nimbus.example/logo.svg" alt="Nimbus logo">');
    expect(entry.headers.get('content-security-policy')).toBe(BRANDED_CSP);
    expect((await a.get(`${VERIFY}?result=denied`)).text).toContain('<h1>Device not connected</h1>');
    const csrf = formValue(entry.text, 'csrf')!;
    const cookie = `${sid}; authgate_csrf=${csrf}`;
    for (const code of ['BBBB-BBBB', 'CCCC-CCCC']) await a.postForm(VERIFY, { csrf, user_code: code }, { cookie });
    const locked = await a.postForm(VERIFY, { csrf, user_code: 'DDDD-DDDD' }, { cookie, headers: fr });
    expect(locked.status).toBe(429);
    expectFrench(locked);
    expect(locked.text).toContain('<h1>Trop de codes erronés</h1>');
    expect(locked.text).toMatch(/Réessayez après \d\d:\d\d UTC\./);
    const denied = await a.get(`${VERIFY}?result=denied`, undefined, { headers: fr });
    expect(denied.text).toContain('L&#39;appareil n&#39;a pas été connecté.');
  });
});

describe.each(FRAMEWORKS)('%s: the device pages behind a TLS proxy (an https issuer)', (framework) => {
  const app = useApp({ framework, server: { ...SERVER, issuer: 'https://auth.example' } });

  it("the device pages' CSRF cookie is Secure, as the consent page's (docs/reference.md#behind-a-proxy)", async () => {
    const a = app();
    const entry = await a.get(VERIFY, a.signIn(ADA));
    expect(entry.status).toBe(200);
    expect(setCookieValue(entry.headers, 'authgate_csrf')?.attributes).toMatch(/HttpOnly; SameSite=Lax; Secure$/);
  });
});
