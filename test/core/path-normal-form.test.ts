/**
 * The URL a protected resource's `requiredScope` rule is given (`pathNormalForm`, src/http.ts;
 * docs/reference.md#protected-resources-rfc-9728): its path in the normal form of RFC 3986
 * §6.2.2.1 and §6.2.2.2, so that a rule keyed on the path sees the path Fastify and Hono route
 * (`/r/%61ccount` is `/r/account`), and nothing that would name another resource.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pathNormalForm } from '../../src/http.js';
import type { ResourceRequest } from '../../src/index.js';
import { setup } from '../helpers.js';

/**
 * The reference: RFC 3986 §6.2.2.1 and §6.2.2.2 on the path of `url` split by the regular
 * expression of RFC 3986 appendix B, each triplet decoded when unreserved (§2.3), else upper-cased.
 */
function reference(url: string): string {
  const parts = /^((?:[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*)?)(\/[^?#]*)?(.*)$/s.exec(url);
  if (!parts?.[2] || (parts[1] === '' && !url.startsWith('/'))) return url;
  const path = parts[2].replace(/%[0-9A-Fa-f]{2}/g, (triplet) => {
    const char = String.fromCharCode(Number.parseInt(triplet.slice(1), 16));
    return /^[A-Za-z0-9\-._~]$/.test(char) ? char : triplet.toUpperCase();
  });
  return parts[1] + path + parts[3];
}

describe('pathNormalForm', () => {
  it.each([
    // Unreserved characters decoded (RFC 3986 §6.2.2.2), in either case of hex.
    ['https://api.example/r/%61ccount', 'https://api.example/r/account'],
    ['/r/%61ccount', '/r/account'],
    ['/r/%7Eme/%7e/%2D%2d%5F%2E%30%39', '/r/~me/~/--_.09'],
    // Decoding never lower-cases: RFC 3986 paths are case-sensitive.
    ['/r/%41CCOUNT/Account', '/r/ACCOUNT/Account'],
    // Everything else stays encoded, its hex upper-cased (§6.2.2.1): a `%2F` is no `/`, a `%C3%A9` no `é`.
    ['/r/a%2fb', '/r/a%2Fb'],
    ['/r%2Faccount', '/r%2Faccount'],
    ['/r/%c3%a9', '/r/%C3%A9'],
    ['/r/%25%3f%23%20%00%ff', '/r/%25%3F%23%20%00%FF'],
    // Malformed percent signs are left as they came.
    ['/r/%', '/r/%'],
    ['/r/%zz', '/r/%zz'],
    ['/r/%4', '/r/%4'],
    ['/r/%4g%6', '/r/%4g%6'],
    ['/r/%%61', '/r/%a'],
    // Dot segments stay as Express, Fastify and node:http route them (Hono's URL has them removed).
    ['/r/x/%2e%2e/account', '/r/x/../account'],
    ['/r/x/%2E/account', '/r/x/./account'],
    ['/r/x/../account', '/r/x/../account'],
    // The query and the fragment are not the path: left as they came.
    ['https://api.example/r/%61?q=%61&s=%2f#%62', 'https://api.example/r/a?q=%61&s=%2f#%62'],
    ['https://api.example?q=%61', 'https://api.example?q=%61'],
    ['https://api.example', 'https://api.example'],
    // Nor is the authority.
    ['https://%61pi.example:8443/%61', 'https://%61pi.example:8443/a'],
    // Not a URL the core is given: left alone.
    ['%61', '%61'],
    ['r/%61', 'r/%61'],
    ['', ''],
  ])('%s → %s', (url, normal) => {
    expect(pathNormalForm(url)).toBe(normal);
    expect(reference(url)).toBe(normal);
  });

  it('a path without "%" comes back unchanged (the usual case, nothing built), whatever the query holds', () => {
    for (const url of ['https://api.example/r/account', '/r/account', 'https://api.example/R/Account/?q=%61', '/r/x/../a;b?%2f'])
      expect(pathNormalForm(url)).toBe(url);
  });

  it('is the reference for any URL of path-like characters', () => {
    const chars = fc.constantFrom(...'/%.?#aAeEfF0123679zZ~-_+:;@é');
    const tail = fc.string({ unit: chars, maxLength: 30 });
    const url = fc.oneof(
      tail.map((t) => `/${t}`),
      tail.map((t) => `https://api.example/${t}`),
      tail,
    );
    fc.assert(
      fc.property(url, (u) => {
        expect(pathNormalForm(u)).toBe(reference(u));
      }),
      { seed: 7, numRuns: 5_000 },
    );
  });
});

describe('a resource’s scope rule is given the path in its normal form', () => {
  it('a rule that asks write for /r/account gets it for /r/%61ccount, and refuses a read token (403)', async () => {
    const seen: string[] = [];
    const t = await setup({
      issuer: 'https://as.example',
      protectedResources: [
        {
          resource: 'https://api.example',
          requiredScope: ({ url }: ResourceRequest) => {
            seen.push(url);
            return new URL(url).pathname === '/r/account' ? ['read', 'write'] : ['read'];
          },
        },
      ],
    });
    const check = t.server.resourceCheck('https://api.example');
    const { access_token } = await t.tokens({ scope: 'read' });
    const get = async (url: string) => {
      const result = await check({ method: 'GET', url, headers: { authorization: `Bearer ${access_token}` } });
      return result.ok ? 200 : result.response.status;
    };
    expect(await get('https://api.example/r/%61ccount')).toBe(403);
    expect(seen.at(-1)).toBe('https://api.example/r/account');
    expect(await get('https://api.example/r/acc%6Funt?x=%61')).toBe(403);
    expect(seen.at(-1)).toBe('https://api.example/r/account?x=%61');
    expect(await get('https://api.example/r/acc%2fount')).toBe(200);
    expect(seen.at(-1)).toBe('https://api.example/r/acc%2Fount');
    expect(await get('https://api.example/r/other')).toBe(200);
    expect(seen.at(-1)).toBe('https://api.example/r/other');
    // A 401 names the scope the normal form needs, so a client asks for the right one.
    const anonymous = await check({ method: 'GET', url: 'https://api.example/r/%61ccount', headers: {} });
    expect(anonymous.ok ? '' : anonymous.response.headers['www-authenticate']).toContain('scope="read write"');
  });
});
