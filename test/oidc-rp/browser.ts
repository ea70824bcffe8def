/**
 * A scripted user agent for the relying-party harness: follows redirects with a cookie jar until
 * the provider sends it to one of the relying party's URIs. A page on the way (a sign-in form, a
 * consent or logout confirmation) goes to `onPage`, which says what the user does next.
 */
import type { Browser } from './driver.js';

/** A page the browser stopped on: not a redirect, not yet back at the relying party. */
export interface Page {
  url: URL;
  status: number;
  headers: Headers;
  body: string;
}

/** What the user does on a page: follow a link, or submit a form. */
export interface NextRequest {
  url: string | URL;
  /** Sent as `application/x-www-form-urlencoded` with POST; without it, a GET. */
  form?: Record<string, string>;
}

export interface CookieBrowserOptions {
  /** The relying party's URIs (redirect, post-logout redirect): a redirect to one of them ends the trip. */
  stopAt: string[];
  /** What to do on a page; without it (or when it returns undefined) a page is an error. */
  onPage?: (page: Page) => NextRequest | undefined | Promise<NextRequest | undefined>;
  /** Most requests per trip (default 20): a redirect loop fails instead of hanging. */
  maxRequests?: number;
}

/** A new user agent, with an empty cookie jar that its trips share. */
export function cookieBrowser(options: CookieBrowserOptions): Browser {
  // host -> cookie name -> value; every test provider lives on one host, at path /.
  const jar = new Map<string, Map<string, string>>();
  const store = (url: URL, headers: Headers) => {
    const cookies = jar.get(url.hostname) ?? new Map<string, string>();
    jar.set(url.hostname, cookies);
    for (const line of headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const name = pair.slice(0, pair.indexOf('=')).trim();
      const expires = attributes.map((a) => a.trim().toLowerCase()).find((a) => a.startsWith('expires=') || a.startsWith('max-age='));
      const gone = expires?.startsWith('max-age=')
        ? Number(expires.slice(8)) <= 0
        : expires
          ? Date.parse(expires.slice(8)) <= Date.now()
          : false;
      if (gone) cookies.delete(name);
      else cookies.set(name, pair.slice(pair.indexOf('=') + 1).trim());
    }
  };
  const cookieHeader = (url: URL) => [...(jar.get(url.hostname) ?? [])].map(([name, value]) => `${name}=${value}`).join('; ');

  return async (start) => {
    let next: NextRequest = { url: start };
    for (let sent = 0; sent < (options.maxRequests ?? 20); sent++) {
      const url = new URL(next.url);
      const headers: Record<string, string> = { accept: 'text/html', cookie: cookieHeader(url) };
      if (next.form) headers['content-type'] = 'application/x-www-form-urlencoded';
      const response = await fetch(url, {
        method: next.form ? 'POST' : 'GET',
        headers,
        redirect: 'manual',
        ...(next.form && { body: new URLSearchParams(next.form).toString() }),
      });
      store(url, response.headers);
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        const to = new URL(location, url).href;
        if (options.stopAt.some((uri) => to.startsWith(uri))) return to;
        next = { url: to };
        continue;
      }
      const page: Page = { url, status: response.status, headers: response.headers, body: await response.text() };
      const action = await options.onPage?.(page);
      if (!action) throw new Error(`the browser stopped at ${url.href} (${response.status}): ${page.body.slice(0, 500)}`);
      next = action;
    }
    throw new Error(`no way back to the relying party after ${options.maxRequests ?? 20} requests from ${start}`);
  };
}
