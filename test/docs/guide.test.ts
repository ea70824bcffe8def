/**
 * docs/guide.md is true: every code block it takes from examples/guide/platform.ts is that file's
 * region word for word, and the platform those regions make works, over HTTP, from the first
 * authorization request to a refresh: the sign-in page names the application, the host's own
 * consent page checks its CSRF cookie and the browser binding, the custom scopes decide what a
 * token may do, and a refresh revokes the access token it replaces.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuidePlatform } from '../../examples/guide/platform.js';
import { ADA, CALLBACK } from '../fixtures.js';

const GUIDE = new URL('../../docs/guide.md', import.meta.url);
const SOURCE = new URL('../../examples/guide/platform.ts', import.meta.url);

/** The `// #region name` ... `// #endregion name` parts of the example, dedented. */
function regions(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of text.matchAll(/^[ \t]*\/\/ #region ([\w-]+)\n([\s\S]*?)^[ \t]*\/\/ #endregion \1$/gm)) {
    // The region's first line sets the indent to take off (template literal lines may start further left).
    const lines = m[2]!.replace(/\n$/, '').split('\n');
    const indent = /^ */.exec(lines[0]!)![0];
    found.set(m[1]!, lines.map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l)).join('\n'));
  }
  return found;
}

describe('docs/guide.md', () => {
  it('shows each region of examples/guide/platform.ts as it is (a block after <!-- region: name -->)', () => {
    const guide = readFileSync(GUIDE, 'utf8');
    const source = regions(readFileSync(SOURCE, 'utf8'));
    const shown = [...guide.matchAll(/<!-- region: ([\w-]+) -->\n+```ts\n([\s\S]*?)\n```/g)];
    expect(shown.map((m) => m[1]).sort()).toEqual([...source.keys()].sort());
    for (const [, name, code] of shown) expect(code, `region ${name}`).toBe(source.get(name!));
  });
});

describe('the guide platform, over HTTP', () => {
  let base = '';
  let close = () => {};
  let platform: Awaited<ReturnType<typeof createGuidePlatform>>;
  let client: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    platform = await createGuidePlatform([ADA]);
    client = await platform.server.registerClient({ name: 'Droplet Dashboard', redirectUri: CALLBACK });
    const listening = platform.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => listening.once('listening', resolve));
    base = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
    close = () => listening.close();
  });
  afterAll(() => close());

  /** A browser: a cookie jar (name → value) and requests that never follow redirects. */
  function browser() {
    const jar = new Map<string, string>();
    return {
      jar,
      async go(path: string, init: { method?: string; form?: Record<string, string>; cookies?: Map<string, string> } = {}) {
        const cookies = init.cookies ?? jar;
        const res = await fetch(new URL(path, base), {
          method: init.method ?? (init.form ? 'POST' : 'GET'),
          redirect: 'manual',
          headers: {
            cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
            ...(init.form && { 'content-type': 'application/x-www-form-urlencoded' }),
          },
          ...(init.form && { body: new URLSearchParams(init.form).toString() }),
        });
        for (const line of res.headers.getSetCookie()) {
          const [pair] = line.split(';');
          const eq = pair!.indexOf('=');
          jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
        }
        return { status: res.status, location: res.headers.get('location') ?? '', body: await res.text() };
      },
    };
  }

  const authorizeUrl = (scope: string) =>
    `/v1/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: CALLBACK, response_type: 'code', scope, state: 's1' })}`;

  /** Sign in through the guide's pages and reach its consent page; returns the form's hidden fields. */
  async function toConsent(b: ReturnType<typeof browser>, scope: string) {
    const start = await b.go(authorizeUrl(scope));
    expect(start.status).toBe(302);
    const login = new URL(start.location, base);
    const signIn = await b.go(login.pathname + login.search);
    expect(signIn.body).toContain('Sign in to continue to Droplet Dashboard');
    const signedIn = await b.go('/login', { form: { email: ADA.email, interaction: login.searchParams.get('interaction')! } });
    expect(signedIn.status).toBe(303);
    const consent = await b.go(signedIn.location);
    expect(consent.status).toBe(200);
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(consent.body)?.[1] ?? '';
    return { browser: b, body: consent.body, interaction: field('interaction'), csrf: field('csrf') };
  }

  const token = (form: Record<string, string>) =>
    fetch(`${base}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: client.clientId, client_secret: client.clientSecret, ...form }).toString(),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, string> }));

  const api = (method: string, path: string, accessToken: string) =>
    fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${accessToken}` } }).then((res) => res.status);

  it('sign in, the own consent page (CSRF and browser checked), code, custom scopes, refresh revoking the old access token', async () => {
    const ada = browser();
    const consent = await toConsent(ada, 'droplet:read droplet:write');
    expect(consent.body).toContain('See your droplets');
    expect(consent.body).toContain('Create, change and delete your droplets');

    // Without the CSRF value, or from a browser that did not start the authorization: refused.
    expect((await ada.go('/consent', { form: { interaction: consent.interaction, decision: 'approve' } })).status).toBe(403);
    const elsewhere = new Map([...ada.jar].filter(([name]) => name !== 'authgate_browser'));
    const stranger = await ada.go('/consent', {
      form: { interaction: consent.interaction, csrf: consent.csrf, decision: 'approve' },
      cookies: elsewhere,
    });
    expect(stranger.body).toContain('started in another browser');

    // The right browser: the code, then tokens with the custom scope.
    const approved = await ada.go('/consent', { form: { interaction: consent.interaction, csrf: consent.csrf, decision: 'approve' } });
    expect(approved.status).toBe(303);
    const callback = new URL(approved.location);
    expect(callback.searchParams.get('state')).toBe('s1');
    const first = await token({ grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: CALLBACK });
    expect(first.status).toBe(200);
    expect(first.body['scope']).toBe('droplet:read droplet:write');
    expect(await api('GET', '/v2/droplets', first.body['access_token']!)).toBe(200);
    expect(await api('POST', '/v2/droplets', first.body['access_token']!)).toBe(201);
    expect(await api('GET', '/v2/account', first.body['access_token']!)).toBe(403);

    // A refresh revokes the access token it replaces, at once.
    const second = await token({ grant_type: 'refresh_token', refresh_token: first.body['refresh_token']! });
    expect(second.status).toBe(200);
    expect(await api('GET', '/v2/droplets', first.body['access_token']!)).toBe(401);
    expect(await api('GET', '/v2/droplets', second.body['access_token']!)).toBe(200);
  });

  it('droplet:read alone may read droplets and not change them; Deny on the own page sends access_denied', async () => {
    const ada = browser();
    const consent = await toConsent(ada, 'droplet:read');
    const approved = await ada.go('/consent', { form: { interaction: consent.interaction, csrf: consent.csrf, decision: 'approve' } });
    const code = new URL(approved.location).searchParams.get('code')!;
    const { body } = await token({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK });
    expect(await api('GET', '/v2/droplets', body['access_token']!)).toBe(200);
    expect(await api('DELETE', '/v2/droplets', body['access_token']!)).toBe(403);

    const again = await toConsent(browser(), 'droplet:write');
    const denied = await again.browser.go('/consent', { form: { interaction: again.interaction, csrf: again.csrf, decision: 'deny' } });
    expect(denied.status).toBe(303);
    expect(new URL(denied.location).searchParams.get('error')).toBe('access_denied');
  });
});
