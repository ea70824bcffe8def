import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isOAuthError, MemoryStorage, type AuditEvent } from '../../src/index.js';
import { RecentPairs } from '../../src/checks/pkce.js';
import { ADA, json, setup } from '../helpers.js';

/**
 * PKCE, SECURITY.md P-01..P-10 (RFC 7636, RFC 9700 §2.1.1, §4.8), and public clients, SECURITY.md
 * U-12 and R-09 (RFC 8252).
 */
const verifier = () => randomBytes(32).toString('base64url');
const s256 = (v: string) => createHash('sha256').update(v).digest('base64url');

describe('PKCE for confidential clients', () => {
  it('P-01: the right verifier redeems a code issued with an S256 challenge', async () => {
    const t = await setup();
    const v = verifier();
    const code = await t.getCode({ code_challenge: s256(v), code_challenge_method: 'S256' });
    expect((await t.exchange(code, { code_verifier: v })).status).toBe(200);
  });

  it('P-02/P-03: a wrong or missing verifier is invalid_grant and does not use the code up', async () => {
    const t = await setup();
    const v = verifier();
    const code = await t.getCode({ code_challenge: s256(v), code_challenge_method: 'S256' });
    expect(json(await t.exchange(code, { code_verifier: verifier() })).error).toBe('invalid_grant');
    expect(json(await t.exchange(code)).error).toBe('invalid_grant');
    expect((await t.exchange(code, { code_verifier: v })).status).toBe(200);
  });

  it('P-04: a verifier for a code issued without a challenge is refused as a downgrade (invalid_request)', async () => {
    const t = await setup();
    const code = await t.getCode();
    const res = await t.exchange(code, { code_verifier: verifier() });
    expect(res.status).toBe(400);
    expect(json(res).error).toBe('invalid_request');
    expect((await t.exchange(code)).status).toBe(200);
  });

  it.each([
    ['absent (which means plain)', undefined],
    ['plain', 'plain'],
    ['s256', 'S256'.toLowerCase()],
    ['SHA256', 'SHA256'],
  ])('P-05: code_challenge_method %s is refused at the authorization request (invalid_request)', async (_label, method) => {
    const t = await setup();
    const params: Record<string, string> = { code_challenge: s256(verifier()), state: 'p5' };
    if (method !== undefined) params.code_challenge_method = method;
    const d = await t.server.authorize(t.get(t.authorizeUrl(params), t.ada));
    if (d.type !== 'redirect') throw new Error(d.type);
    const url = new URL(d.location);
    expect(url.searchParams.get('error')).toBe('invalid_request');
    expect(url.searchParams.get('state')).toBe('p5');
  });

  it('P-05: plain is accepted only when allowPlainPkce is set', async () => {
    const t = await setup({ allowPlainPkce: true });
    const v = verifier();
    const code = await t.getCode({ code_challenge: v, code_challenge_method: 'plain' });
    expect((await t.exchange(code, { code_verifier: v })).status).toBe(200);
  });

  it('P-06: sending the S256 challenge itself as the verifier fails; a method at the token endpoint changes nothing', async () => {
    const t = await setup();
    const v = verifier();
    const challenge = s256(v);
    const code = await t.getCode({ code_challenge: challenge, code_challenge_method: 'S256' });
    expect(json(await t.exchange(code, { code_verifier: challenge })).error).toBe('invalid_grant');
    expect((await t.exchange(code, { code_verifier: v, code_challenge_method: 'plain' })).status).toBe(200);
  });

  it.each(['short', 'x'.repeat(42), `${'x'.repeat(44)}=`, `${'a'.repeat(43)}+`, ''])(
    'P-07: a malformed S256 challenge %j is invalid_request',
    async (challenge) => {
      const t = await setup();
      const d = await t.server.authorize(t.get(t.authorizeUrl({ code_challenge: challenge || 'x', code_challenge_method: 'S256' }), t.ada));
      expect(d.type === 'redirect' && new URL(d.location).searchParams.get('error')).toBe('invalid_request');
    },
  );

  it.each(['x'.repeat(42), 'x'.repeat(129), `${'x'.repeat(42)}+`, `${'x'.repeat(42)} `, `${'x'.repeat(42)}é`])(
    'P-07: a malformed verifier %j is refused',
    async (bad) => {
      const t = await setup();
      const v = verifier();
      const code = await t.getCode({ code_challenge: s256(v), code_challenge_method: 'S256' });
      const res = await t.exchange(code, { code_verifier: bad });
      expect(res.status).toBe(400);
      expect(['invalid_request', 'invalid_grant']).toContain(json(res).error);
      expect((await t.exchange(code, { code_verifier: v })).status).toBe(200);
    },
  );

  it('P-09: PKCE is not client authentication: a right verifier with a wrong secret is invalid_client', async () => {
    const t = await setup();
    const v = verifier();
    const code = await t.getCode({ code_challenge: s256(v), code_challenge_method: 'S256' });
    const res = await t.exchange(code, { code_verifier: v, client_secret: 'wrong' });
    expect(res.status).toBe(401);
    expect(json(res).error).toBe('invalid_client');
  });

  it('code_challenge_method without code_challenge is invalid_request', async () => {
    const t = await setup();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ code_challenge_method: 'S256' }), t.ada));
    expect(d.type === 'redirect' && new URL(d.location).searchParams.get('error')).toBe('invalid_request');
  });

  it('requirePkce makes PKCE required for confidential clients too', async () => {
    const t = await setup({ requirePkce: true });
    const d = await t.server.authorize(t.get(t.authorizeUrl(), t.ada));
    expect(d.type === 'redirect' && new URL(d.location).searchParams.get('error')).toBe('invalid_request');
  });
});

describe('public clients (RFC 8252)', () => {
  async function publicSetup(redirectUri = 'http://127.0.0.1/callback') {
    const t = await setup();
    const app = await t.server.registerClient({ name: 'CLI', redirectUri, public: true });
    return { t, app };
  }
  const authorizeUrl = (clientId: string, redirectUri: string, extra: Record<string, string> = {}) =>
    `/v1/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', ...extra })}`;

  it('registers without a secret', async () => {
    const { app } = await publicSetup();
    expect(app).toEqual({ clientId: app.clientId, name: 'CLI', redirectUri: 'http://127.0.0.1/callback', public: true });
    expect('clientSecret' in app).toBe(false);
  });

  it('P-08: a public client without a code_challenge gets invalid_request', async () => {
    const { t, app } = await publicSetup();
    const d = await t.server.authorize(t.get(authorizeUrl(app.clientId, 'http://127.0.0.1/callback'), t.ada));
    expect(d.type === 'redirect' && new URL(d.location).searchParams.get('error')).toBe('invalid_request');
  });

  it('full flow: loopback callback on any port, client_id without secret, PKCE verifier', async () => {
    const { t, app } = await publicSetup();
    const v = verifier();
    const redirectUri = 'http://127.0.0.1:51234/callback';
    const d = await t.server.authorize(
      t.get(authorizeUrl(app.clientId, redirectUri, { code_challenge: s256(v), code_challenge_method: 'S256' }), t.ada),
    );
    if (d.type !== 'consent') throw new Error(d.type);
    const approved = await t.server.approve(d.interaction.id, t.get('/', t.ada));
    if (approved.type !== 'redirect') throw new Error(approved.type);
    expect(approved.location.startsWith('http://127.0.0.1:51234/callback?code=')).toBe(true);
    const code = new URL(approved.location).searchParams.get('code')!;
    const form = { grant_type: 'authorization_code', code, client_id: app.clientId, redirect_uri: redirectUri, code_verifier: v };
    // The redirect_uri at the token endpoint must be the one used (port included).
    expect(json(await t.server.token(t.post('/v1/oauth/token', { ...form, redirect_uri: 'http://127.0.0.1:9/callback' }))).error).toBe(
      'invalid_grant',
    );
    // A public client must not send a secret (docs/reference.md#clients).
    expect((await t.server.token(t.post('/v1/oauth/token', { ...form, client_secret: 'anything' }))).status).toBe(401);
    const res = await t.server.token(t.post('/v1/oauth/token', form));
    expect(res.status).toBe(200);
    const body = json(res);
    // Refresh: client_id only.
    expect((await t.refresh(body.refresh_token as string, { client_id: app.clientId })).status).toBe(200);
  });

  it.each([
    'http://127.0.0.1.evil.example/callback',
    'http://127.0.0.1:80@evil.example/callback',
    'http://localhost/callback',
    'http://127.0.0.1:8080/callback/',
    'http://127.0.0.1:8080/other',
    'https://127.0.0.1:8080/callback',
    'http://127.0.0.1:99999/callback',
    'http://[::1]:8080/callback',
  ])('R-09: loopback variant %j that differs in more than the port is an error page', async (redirectUri) => {
    const { t, app } = await publicSetup();
    const d = await t.server.authorize(
      t.get(authorizeUrl(app.clientId, redirectUri, { code_challenge: s256(verifier()), code_challenge_method: 'S256' }), t.ada),
    );
    expect(d).toMatchObject({ type: 'error', error: 'invalid_redirect_uri' });
  });

  // Anyone can send a public client's client_id, and any local program can listen on a loopback
  // port or claim a private-use scheme: a stored consent says nothing about who is asking now
  // (RFC 8252 §8.6; Doorkeeper CVE-2023-34246).
  it.each(['http://127.0.0.1/callback', 'com.example.cli:/oauth'])(
    'U-12: prompt=none never silently re-approves a public client (%s)',
    async (registered) => {
      const { t, app } = await publicSetup(registered);
      const challenge = () => ({ code_challenge: s256(verifier()), code_challenge_method: 'S256' });
      const redirectUri = registered.startsWith('http:') ? 'http://127.0.0.1:40123/callback' : registered;
      const asked = await t.server.authorize(t.get(authorizeUrl(app.clientId, redirectUri, challenge()), t.ada));
      if (asked.type !== 'consent') throw new Error(asked.type);
      expect((await t.server.approve(asked.interaction.id, t.get('/', t.ada))).type).toBe('redirect');
      expect(await t.server.listAuthorizations(ADA.uuid)).toHaveLength(1); // the consent is stored...

      const silent = await t.server.authorize(
        t.get(authorizeUrl(app.clientId, redirectUri, { ...challenge(), prompt: 'none', state: 's' }), t.ada),
      );
      if (silent.type !== 'redirect') throw new Error(silent.type);
      const url = new URL(silent.location);
      expect(url.searchParams.get('error')).toBe('consent_required'); // ...and still asks
      expect(url.searchParams.get('error_description')).toMatch(/public client/);
      expect(url.searchParams.get('state')).toBe('s');
      expect(url.searchParams.has('code')).toBe(false);
      // Without prompt=none the user sees the consent screen again, as every client's user does.
      expect((await t.server.authorize(t.get(authorizeUrl(app.clientId, redirectUri, challenge()), t.ada))).type).toBe('consent');
    },
  );

  it('U-12: a confidential client with a stored consent still gets prompt=none without a screen', async () => {
    const t = await setup();
    await t.authorizeAndApprove();
    const d = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none' }), t.ada));
    expect(d.type === 'redirect' && new URL(d.location).searchParams.has('code')).toBe(true);
  });

  it('R-09: confidential clients get no port leeway on loopback callbacks', async () => {
    const t = await setup();
    const app = await t.server.registerClient({ name: 'Web', redirectUri: 'http://127.0.0.1/callback' });
    const d = await t.server.authorize(t.get(authorizeUrl(app.clientId, 'http://127.0.0.1:8080/callback'), t.ada));
    expect(d).toMatchObject({ type: 'error', error: 'invalid_redirect_uri' });
  });

  it('public clients may register a private-use scheme; confidential clients may not', async () => {
    const t = await setup();
    await expect(t.server.registerClient({ name: 'App', redirectUri: 'com.example.app:/oauth', public: true })).resolves.toMatchObject({
      public: true,
    });
    expect(
      isOAuthError(await t.server.registerClient({ name: 'App', redirectUri: 'com.example.app:/oauth' }).catch((e: unknown) => e)),
    ).toBe(true);
    expect(
      isOAuthError(
        await t.server.registerClient({ name: 'App', redirectUri: 'javascript:alert(1)', public: true }).catch((e: unknown) => e),
      ),
    ).toBe(true);
  });
});

describe('P-10: a constant PKCE challenge (RFC 9700 §2.1.1: "reasonable effort at detecting" it)', () => {
  const reused = (events: AuditEvent[]) => events.filter((e) => e.type === 'pkce.challenge_reused');

  it('a client that starts a new flow with a challenge it already got a code for is flagged (onAudit), and still served by default', async () => {
    const events: AuditEvent[] = [];
    const t = await setup({ onAudit: (e) => events.push(e) });
    const challenge = { code_challenge: s256(verifier()), code_challenge_method: 'S256' };
    await t.getCode(challenge);
    expect(reused(events)).toEqual([]);
    await t.getCode(challenge); // the same challenge again: flagged, not refused
    expect(reused(events)).toEqual([{ type: 'pkce.challenge_reused', clientId: t.client.clientId, at: t.clock.now() }]);
    await t.getCode({ code_challenge: s256(verifier()), code_challenge_method: 'S256' });
    expect(reused(events)).toHaveLength(1); // a fresh challenge is not
  });

  it('reloading the authorization request before any code was issued is not a reuse; another client with the same value is not either', async () => {
    const events: AuditEvent[] = [];
    const t = await setup({ onAudit: (e) => events.push(e) });
    const challenge = { code_challenge: s256(verifier()), code_challenge_method: 'S256' };
    for (let i = 0; i < 3; i++) expect((await t.server.authorize(t.get(t.authorizeUrl(challenge), t.ada))).type).toBe('consent');
    await t.getCode(challenge);
    const other = `/v1/oauth/authorize?${new URLSearchParams({ client_id: t.other.clientId, redirect_uri: 'https://other.example/cb', response_type: 'code', ...challenge })}`;
    expect((await t.server.authorize(t.get(other, t.ada))).type).toBe('consent');
    expect(reused(events)).toEqual([]);
  });

  it('rejectReusedPkceChallenge: the reused challenge is invalid_request at the callback, with state, and no consent is asked', async () => {
    const events: AuditEvent[] = [];
    const t = await setup({ rejectReusedPkceChallenge: true, onAudit: (e) => events.push(e) });
    const challenge = { code_challenge: s256(verifier()), code_challenge_method: 'S256' };
    await t.getCode(challenge);
    const d = await t.server.authorize(t.get(t.authorizeUrl({ ...challenge, state: 's' }), t.ada));
    if (d.type !== 'redirect') throw new Error(d.type);
    const url = new URL(d.location);
    expect(url.searchParams.get('error')).toBe('invalid_request');
    expect(url.searchParams.get('error_description')).toMatch(/code_challenge/);
    expect(url.searchParams.get('state')).toBe('s');
    expect(url.searchParams.has('code')).toBe(false);
    expect(reused(events)).toHaveLength(1);
    // prompt=none is refused the same way, and a fresh challenge goes through.
    const silent = await t.server.authorize(t.get(t.authorizeUrl({ ...challenge, prompt: 'none' }), t.ada));
    expect(silent.type === 'redirect' && new URL(silent.location).searchParams.get('error')).toBe('invalid_request');
    expect(
      (await t.server.authorize(t.get(t.authorizeUrl({ code_challenge: s256(verifier()), code_challenge_method: 'S256' }), t.ada))).type,
    ).toBe('consent');
  });
});

describe('P-10: flows started side by side with the same challenge', () => {
  it.each([false, true])(
    'rejectReusedPkceChallenge %s: of two consents pending with one challenge, the second approval is caught',
    async (reject) => {
      const events: AuditEvent[] = [];
      const t = await setup({ rejectReusedPkceChallenge: reject, onAudit: (e) => events.push(e) });
      const challenge = { code_challenge: s256(verifier()), code_challenge_method: 'S256', state: 's' };
      const first = await t.server.authorize(t.get(t.authorizeUrl(challenge), t.ada));
      const second = await t.server.authorize(t.get(t.authorizeUrl(challenge), t.ada));
      if (first.type !== 'consent' || second.type !== 'consent') throw new Error('expected two consent pages');
      // Both approvals at once: neither waits for the other's storage write.
      const [a, b] = await Promise.all([first, second].map((d) => t.server.approve(d.interaction.id, t.get('/', t.ada))));
      const codes = [a, b].map((d) => (d!.type === 'redirect' ? new URL(d!.location).searchParams.get('code') : null));
      expect(codes[0]).toBeTruthy();
      expect(codes[1] !== null).toBe(!reject);
      if (reject && b!.type === 'redirect') {
        expect(new URL(b!.location).searchParams.get('error')).toBe('invalid_request');
        expect(new URL(b!.location).searchParams.get('state')).toBe('s');
      }
      expect(events.filter((e) => e.type === 'pkce.challenge_reused')).toEqual([
        { type: 'pkce.challenge_reused', clientId: t.client.clientId, at: t.clock.now() },
      ]);
    },
  );

  it('a constant challenge stays noticed however many codes other clients get, as long as its client keeps sending it', async () => {
    const events: AuditEvent[] = [];
    const t = await setup({ onAudit: (e) => events.push(e) });
    const constant = { code_challenge: s256(verifier()), code_challenge_method: 'S256' };
    await t.getCode(constant);
    // The memory holds the last 10 000 pairs of the whole instance: fill it with other pairs...
    for (let i = 0; i < 10_000; i++) await t.getCode({ code_challenge: s256(verifier()), code_challenge_method: 'S256' });
    await t.getCode(constant); // ...and the first pair has been forgotten: not noticed
    expect(events.filter((e) => e.type === 'pkce.challenge_reused')).toHaveLength(0);
    await t.getCode(constant); // remembered again by the last code: noticed from here on
    expect(events.filter((e) => e.type === 'pkce.challenge_reused')).toHaveLength(1);
  });
});

describe('P-10: what counts as a reuse', () => {
  it('a code that storage failed to write leaves nothing behind: the retry is no reuse, even in reject mode', async () => {
    const events: AuditEvent[] = [];
    const inner = new MemoryStorage();
    let failNext = true;
    const storage = new Proxy(inner, {
      // The code's write: createGrant, or approveInteraction where the approval is one write.
      get: (target, name) =>
        name === 'createGrant' || name === 'approveInteraction'
          ? async (...args: unknown[]) => {
              if (failNext) {
                failNext = false;
                throw new Error('db down');
              }
              return (target[name] as (...a: unknown[]) => Promise<unknown>)(...args);
            }
          : Reflect.get(target, name),
    }) as MemoryStorage;
    const t = await setup({ storage, rejectReusedPkceChallenge: true, onAudit: (e) => events.push(e) });
    const challenge = { code_challenge: s256(verifier()), code_challenge_method: 'S256' };
    const first = await t.server.authorize(t.get(t.authorizeUrl(challenge), t.ada));
    if (first.type !== 'consent') throw new Error(first.type);
    expect((await t.server.approve(first.interaction.id, t.get('/', t.ada))).type).toBe('error'); // the 500 page
    expect(await t.getCode(challenge)).toBeTruthy(); // the user starts again with the same URL
    expect(events.filter((e) => e.type === 'pkce.challenge_reused')).toEqual([]);
  });

  it('reject mode: a refused constant challenge stays remembered however many other codes come between', async () => {
    const t = await setup({ rejectReusedPkceChallenge: true });
    const constant = { code_challenge: s256(verifier()), code_challenge_method: 'S256' };
    await t.getCode(constant);
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 2_500; i++) await t.getCode({ code_challenge: s256(verifier()), code_challenge_method: 'S256' });
      const d = await t.server.authorize(t.get(t.authorizeUrl(constant), t.ada));
      expect(d.type === 'redirect' && new URL(d.location).searchParams.get('error')).toBe('invalid_request');
    }
  });
});

describe('RecentPairs: the bounded memory behind P-10', () => {
  it('remembers up to its capacity and forgets the oldest first', () => {
    const recent = new RecentPairs(3);
    for (const v of ['a', 'b', 'c']) recent.add('client', v);
    expect(['a', 'b', 'c'].map((v) => recent.has('client', v))).toEqual([true, true, true]);
    expect(recent.has('other', 'a')).toBe(false);
    recent.add('client', 'a'); // already there: no growth, and it counts as new again
    recent.add('client', 'd'); // full: 'b' is the oldest now
    expect(['a', 'b', 'c', 'd'].map((v) => recent.has('client', v))).toEqual([true, false, true, true]);
    expect(recent.size).toBe(3);
  });

  it('keeps a client id and a value apart (no ambiguous joins)', () => {
    const recent = new RecentPairs(10);
    recent.add('a\u0000b', 'c');
    expect(recent.has('a', 'b\u0000c')).toBe(false);
  });
});
