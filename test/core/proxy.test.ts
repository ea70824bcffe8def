/**
 * What a trusted reverse proxy says about the scheme (docs/reference.md#behind-a-proxy): the
 * reading of `X-Forwarded-Proto` and RFC 7239 `Forwarded` behind the Hono and node adapters'
 * `trustProxy`, and when the interaction cookies get `Secure`.
 */
import { describe, expect, it } from 'vitest';
import { forwardedScheme, fromTrustedProxy, secureCookies } from '../../src/index.js';

describe('forwardedScheme', () => {
  it.each([
    [{}, undefined],
    [{ 'x-forwarded-proto': 'https' }, 'https'],
    [{ 'x-forwarded-proto': 'HTTPS' }, 'https'],
    [{ 'x-forwarded-proto': 'http' }, 'http'],
    // Several hops: the last value, the one the proxy next to the app wrote (a client can put
    // anything in front of it).
    [{ 'x-forwarded-proto': 'https, http' }, 'http'],
    [{ 'x-forwarded-proto': 'http,https' }, 'https'],
    [{ 'x-forwarded-proto': ['http', 'https'] }, 'https'],
    // Anything but http or https: not believed, whatever else there is.
    [{ 'x-forwarded-proto': 'wss' }, undefined],
    [{ 'x-forwarded-proto': '' }, undefined],
    [{ 'x-forwarded-proto': 'ftp', forwarded: 'proto=https' }, undefined],
    // Forwarded (RFC 7239): only when X-Forwarded-Proto is absent; the last element's proto.
    [{ forwarded: 'for=192.0.2.60;proto=https;by=203.0.113.43' }, 'https'],
    [{ forwarded: 'proto="https"' }, 'https'],
    [{ forwarded: 'For="[2001:db8:cafe::17]:4711";Proto=HTTPS' }, 'https'],
    [{ forwarded: 'for=192.0.2.43;proto=https, for=198.51.100.17;proto=http' }, 'http'],
    [{ forwarded: 'for=192.0.2.43;proto=http, for=198.51.100.17;proto=https' }, 'https'],
    [{ forwarded: 'for="a,b";proto=http, for="c, d";proto=https' }, 'https'],
    [{ forwarded: ['proto=http', 'for=x;proto=https'] }, 'https'],
    // The last hop says nothing of the scheme: the earlier ones are not believed either.
    [{ forwarded: 'proto=https, for=198.51.100.17' }, undefined],
    [{ forwarded: 'protocol=https' }, undefined],
    [{ forwarded: 'for=x;xproto=https' }, undefined],
  ] as Array<[Record<string, string | string[]>, string | undefined]>)('%o → %s', (headers, expected) => {
    expect(forwardedScheme(headers)).toBe(expected);
  });
});

describe('fromTrustedProxy', () => {
  const at = (url: string, headers: Record<string, string>) => fromTrustedProxy({ method: 'GET', url, headers }).url;

  it('gives the absolute URL the scheme the proxy reports, host, path and query untouched', () => {
    expect(at('http://app.example:8080/v1/oauth/authorize?a=http://x', { 'x-forwarded-proto': 'https' })).toBe(
      'https://app.example:8080/v1/oauth/authorize?a=http://x',
    );
    expect(at('https://app.example/x', { 'x-forwarded-proto': 'http' })).toBe('http://app.example/x');
    expect(at('http://app.example/x', { forwarded: 'proto=https' })).toBe('https://app.example/x');
  });

  it('leaves the URL alone without a believable scheme, or when it is a bare path', () => {
    expect(at('http://app.example/x', {})).toBe('http://app.example/x');
    expect(at('http://app.example/x', { 'x-forwarded-proto': 'javascript' })).toBe('http://app.example/x');
    expect(at('/x?u=http://y', { 'x-forwarded-proto': 'https' })).toBe('/x?u=http://y');
  });

  it('the host stays the Host header’s: X-Forwarded-Host is not read', () => {
    expect(at('http://app.example/x', { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' })).toBe('https://app.example/x');
  });
});

describe('secureCookies', () => {
  it('an https issuer: always; otherwise an https request URL', () => {
    expect(secureCookies('https://auth.example', { url: 'http://127.0.0.1/x' })).toBe(true);
    expect(secureCookies('http://localhost:3000', { url: 'http://localhost:3000/x' })).toBe(false);
    expect(secureCookies('http://localhost:3000', { url: 'https://localhost:3000/x' })).toBe(true);
    expect(secureCookies(undefined, { url: 'https://app.example/x' })).toBe(true);
    expect(secureCookies(undefined, { url: '/x' })).toBe(false);
  });
});
