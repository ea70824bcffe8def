import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderConsentPage, renderErrorPage, type AuditEvent } from '../../src/index.js';
import { createHash } from 'node:crypto';
import { portableRandomToken, portableSha256Base64url, randomId, randomToken, sha256Base64url, timingSafeEqual } from '../../src/crypto.js';
import { json, setup } from '../helpers.js';

/**
 * SECURITY.md S-01, S-03, S-04, S-06, CA-07..CA-09, U-13..U-15, R-03: secrets, randomness, audit,
 * pages.
 */
afterEach(() => vi.restoreAllMocks());

describe('secrets', () => {
  it('S-03/S-04: audit events and error descriptions never carry a token, code, secret or verifier', async () => {
    const events: AuditEvent[] = [];
    const t = await setup({ onAudit: (e) => events.push(e) });
    const secrets: string[] = [t.client.clientSecret, t.other.clientSecret];
    const code = await t.getCode();
    secrets.push(code);
    const tokens = json(await t.exchange(code));
    secrets.push(tokens.access_token as string, tokens.refresh_token as string);
    await t.exchange(code); // replay
    const wrong = await t.exchange(code, { client_secret: `${t.client.clientSecret}x` });
    secrets.push(`${t.client.clientSecret}x`);
    await t.refresh(tokens.refresh_token as string);
    await t.server.revoke(t.post('/v1/oauth/revoke', { token: tokens.access_token as string }));
    await t.server.revokeClientTokens(t.client.clientId);
    // An interaction started by a browser that is not signed in: its id is a credential too.
    const login = await t.server.authorize(t.get(t.authorizeUrl()));
    if (login.type === 'login') secrets.push(login.interaction.id);
    expect(login.type).toBe('login');
    expect(new Set(events.map((e) => e.type))).toEqual(
      new Set([
        'client.registered',
        'consent.granted',
        'token.issued',
        'code.reused',
        'client.authentication_failed',
        'token.revoked',
        'client.tokens_revoked',
        'interaction.started',
      ]),
    );
    const text = JSON.stringify(events) + wrong.body;
    for (const secret of secrets) expect(text).not.toContain(secret);
  });

  it('every failed client authentication is reported with the claimed client id, for rate limiting', async () => {
    const events: AuditEvent[] = [];
    const t = await setup({ onAudit: (e) => events.push(e) });
    await t.exchange('x', { client_secret: 'bad' });
    await t.exchange('x', { client_id: 'nobody', client_secret: 'bad' });
    expect(events.filter((e) => e.type === 'client.authentication_failed').map((e) => (e as { clientId: string }).clientId)).toEqual([
      t.client.clientId,
      'nobody',
    ]);
  });

  it('an onAudit hook that changes the event it gets changes nothing issued or stored', async () => {
    const grow = (e: AuditEvent) => {
      if ('scope' in e) e.scope.push('write');
    };
    const t = await setup({ onAudit: grow });
    const code = await t.getCode({ scope: 'read' });
    const tokens = JSON.parse((await t.exchange(code)).body) as { access_token: string; refresh_token: string; scope: string };
    expect(tokens.scope).toBe('read');
    expect((await t.api('POST', tokens.access_token)).ok).toBe(false);
    const refreshed = JSON.parse((await t.refresh(tokens.refresh_token)).body) as { scope: string };
    expect(refreshed.scope).toBe('read');
    const implicit = await setup({ onAudit: grow, allowImplicit: true });
    const d = await implicit.server.authorize(implicit.get(implicit.authorizeUrl({ response_type: 'token', scope: 'read' }), implicit.ada));
    if (d.type !== 'consent') throw new Error(d.type);
    const approved = await implicit.server.approve(d.interaction.id, implicit.get('/', implicit.ada));
    if (approved.type !== 'redirect') throw new Error(approved.type);
    expect(new URLSearchParams(new URL(approved.location).hash.slice(1)).get('scope')).toBe('read');
  });

  it('a throwing onAudit hook does not change the answer', async () => {
    const t = await setup({
      onAudit: () => {
        throw new Error('log pipeline down');
      },
    });
    expect((await t.exchange(await t.getCode())).status).toBe(200);
  });

  it('CA-08: constant-time comparison compares whole values', () => {
    expect(timingSafeEqual('abcd', 'abcd')).toBe(true);
    expect(timingSafeEqual('abcd', 'abcd\u0000')).toBe(false);
    expect(timingSafeEqual('abcd', 'abcdé')).toBe(false);
    expect(timingSafeEqual('abcd', 'abce')).toBe(false);
    expect(timingSafeEqual('', 'a')).toBe(false);
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => timingSafeEqual(a, b) === (a === b)),
      { seed: 1, numRuns: 500 },
    );
  });

  it('the hash of a secret is SHA-256, natively and in the portable fallback alike, for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (value) => {
        const expected = createHash('sha256').update(value).digest('base64url');
        expect(sha256Base64url(value)).toBe(expected);
        expect(portableSha256Base64url(value)).toBe(expected);
      }),
      { seed: 3, numRuns: 500 },
    );
  });

  it('pooled random tokens are 43 base64url characters and never repeat', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) seen.add(randomToken());
    expect(seen.size).toBe(20_000);
    for (const token of seen) expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('the native and the JavaScript encoders draw from one pool and never hand out the same bytes twice', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5_000; i++) {
      // Interleaved, so a native encoder reading the wrong window of the pool would repeat a value.
      seen.add(randomToken());
      seen.add(portableRandomToken());
      seen.add(randomId());
    }
    expect(seen.size).toBe(15_000);
    for (const value of seen) expect(value).toMatch(/^(?:[A-Za-z0-9_-]{43}|[0-9a-f]{32})$/);
    // Both encoders are the same function of the bytes: decoding gives 32 bytes back either way.
    for (const token of [randomToken(), portableRandomToken()]) expect(Buffer.from(token, 'base64url').toString('base64url')).toBe(token);
  });

  it('every pooled random byte is handed out once and in order, whichever encoder draws it', () => {
    // Each refill gets a counting pattern (a 16-bit counter, big-endian): every window is unique,
    // so a value built from the wrong or an overlapping window cannot match.
    let counter = 0;
    const spy = vi.spyOn(globalThis.crypto, 'getRandomValues').mockImplementation(<T extends ArrayBufferView | null>(array: T): T => {
      const bytes = array as unknown as Uint8Array;
      for (let i = 0; i < bytes.length; i += 2, counter++) [bytes[i], bytes[i + 1]] = [(counter >> 8) & 255, counter & 255];
      return array;
    });
    const expected = (offset: number, length: number) =>
      Buffer.from(Array.from({ length }, (_, i) => ((offset + i) % 2 === 0 ? ((offset + i) / 2) >> 8 : (offset + i - 1) / 2) & 255));
    try {
      while (spy.mock.calls.length === 0) randomId(); // use up the current pool: the next one is patterned
      let offset = 16; // the randomId that triggered the refill took the first 16 bytes
      // Where the next `length` bytes come from: a request that does not fit in the 4 KiB pool
      // starts a new one (the rest of the old one is dropped, never handed out).
      const take = (length: number) => {
        if ((offset % 4096) + length > 4096) offset += 4096 - (offset % 4096);
        offset += length;
        return expected(offset - length, length);
      };
      for (let i = 0; i < 300; i++) {
        // 24 000 bytes: several refills
        expect(Buffer.from(randomToken(), 'base64url')).toEqual(take(32));
        expect(Buffer.from(randomId(), 'hex')).toEqual(take(16));
        expect(Buffer.from(portableRandomToken(), 'base64url')).toEqual(take(32));
      }
      expect(spy.mock.calls.length).toBeGreaterThan(5);
    } finally {
      vi.restoreAllMocks();
      for (let i = 0; i < 256; i++) randomId(); // leave no patterned bytes in the pool for later tests
    }
  });

  it('S-06: codes and tokens come from the CSPRNG; the core never reads Math.random or the system clock', async () => {
    const t = await setup();
    vi.spyOn(Math, 'random').mockImplementation(() => {
      throw new Error('Math.random used');
    });
    vi.spyOn(Date, 'now').mockImplementation(() => {
      throw new Error('Date.now used');
    });
    const tokens = await t.tokens();
    expect((await t.refresh(tokens.refresh_token)).status).toBe(200);
  });
});

describe('pages', () => {
  const payload = '"><script>alert(1)</script><img src=x onerror=alert(1)>\'`';

  /** The tag structure of a page: every tag name and attribute name, with values removed. */
  const structure = (html: string) => (html.replace(/"[^"]*"/g, '""').match(/<[^>]*>/g) ?? []).join('');
  const consent = (value: string) =>
    renderConsentPage(
      {
        id: value,
        client: { id: 'c', name: value },
        scope: ['read', value],
        account: { uuid: 'u', name: value, email: value },
        expiresAt: 0,
      },
      { action: '/x', csrfToken: value, switchAccountUrl: `/login?interaction=${value}` },
    ).body;

  it('U-15: the consent page escapes the client name, account and every reflected value', () => {
    const page = consent(payload);
    expect(page).not.toContain('<script>');
    expect(page).not.toContain('<img');
    // Hostile values change no tag and add no attribute.
    expect(structure(page)).toBe(structure(consent('harmless')));
  });

  it('U-15: the error page escapes the description', () => {
    const page = renderErrorPage({ type: 'error', status: 400, error: payload, description: payload });
    expect(page.body).not.toContain('<script>');
    expect(page.status).toBe(400);
  });

  it('U-13/U-14: every page forbids framing, referrers, caching, sniffing and scripts', () => {
    for (const page of [
      renderErrorPage({ type: 'error', status: 400, error: 'invalid_scope', description: 'x' }),
      renderConsentPage({ id: 'i', client: { id: 'c', name: 'n' }, scope: ['read'], expiresAt: 0 }, { action: '/x', csrfToken: 't' }),
    ]) {
      expect(page.headers).toMatchObject({
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      });
      expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    }
  });
});

describe('redirect URI mutations (R-03, property)', () => {
  it('any single-character change of the registered URI is an error page, never a redirect', async () => {
    const t = await setup();
    const registered = 'https://client.example/cb';
    const mutation = fc
      .tuple(
        fc.nat({ max: registered.length }),
        fc.constantFrom('insert', 'delete', 'flip', 'encode'),
        fc.string({ minLength: 1, maxLength: 1 }),
      )
      .map(([i, kind, ch]) => {
        switch (kind) {
          case 'insert':
            return registered.slice(0, i) + ch + registered.slice(i);
          case 'delete':
            return registered.slice(0, i) + registered.slice(i + 1);
          case 'flip': {
            const c = registered[i] ?? 'x';
            return registered.slice(0, i) + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + registered.slice(i + 1);
          }
          default:
            return (
              registered.slice(0, i) +
              encodeURIComponent(registered[i] ?? '').replace(/^([^%])$/, (c) => `%${c.charCodeAt(0).toString(16)}`) +
              registered.slice(i + 1)
            );
        }
      })
      .filter((uri) => uri !== registered);
    await fc.assert(
      fc.asyncProperty(mutation, async (uri) => {
        const d = await t.server.authorize(t.get(t.authorizeUrl({ redirect_uri: uri }), t.ada));
        expect(d).toMatchObject({ type: 'error', error: 'invalid_redirect_uri' });
      }),
      { seed: 42, numRuns: 300 },
    );
  });
});
