/**
 * The MCP SDK's client side of the end-to-end test, unmodified: an in-memory `OAuthClientProvider`
 * (the interface of @modelcontextprotocol/sdk/client/auth.js) whose `redirectToAuthorization`
 * plays the user's browser against the host (signed in by a session cookie, approving on
 * authgate's built-in consent page with its CSRF value and browser-binding cookie), and a `fetch`
 * that records every request the SDK sends, body included, so the test can state what the SDK
 * sent at each step.
 */
import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { expect } from 'vitest';
import { formValue, setCookieValue } from '../adapters/app.js';

/** One request the SDK sent, and the status it got. */
export interface SentRequest {
  method: string;
  url: URL;
  headers: Headers;
  body: string | undefined;
  status: number;
  /** The answer's `WWW-Authenticate`, or null. */
  challenge: string | null;
}

/** A `fetch` for the SDK that records every request (bodies are strings or absent in what the SDK sends). */
export function recordingFetch(log: SentRequest[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const body = init?.body === undefined || init.body === null ? undefined : String(init.body);
    const response = await fetch(input, init);
    log.push({
      method: request.method,
      url: new URL(request.url),
      headers: request.headers,
      body,
      status: response.status,
      challenge: response.headers.get('www-authenticate'),
    });
    // MCP_DEBUG=1 prints each request and answer (what the report of issue 16 quotes).
    if (process.env['MCP_DEBUG']) {
      const detail = response.status >= 400 ? await response.clone().text() : '';
      console.log(request.method, request.url, body ?? '', '→', response.status, response.headers.get('www-authenticate') ?? '', detail);
    }
    return response;
  };
}

/** What the simulated browser saw in one authorization. */
export interface BrowserVisit {
  authorizationUrl: URL;
  consentStatus: number;
  consentPage: string;
  callback: URL;
}

/**
 * An `OAuthClientProvider` that keeps everything in memory, stores what the SDK hands it
 * unchanged, and approves each authorization as the signed-in user `sid` (a `cookie` value).
 */
export class InMemoryOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier: string | undefined;
  /** The code of the last authorization, for `transport.finishAuth(code)`. */
  code: string | undefined;
  readonly visits: BrowserVisit[] = [];
  private expectedState: string | undefined;

  constructor(
    private readonly base: string,
    private readonly sid: string,
    readonly redirectUrl = 'http://localhost:8976/callback',
    private readonly metadata: Partial<OAuthClientMetadata> = {},
  ) {}

  /** What a desktop MCP client registers: a public client with a loopback callback. */
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'MCP SDK end-to-end test',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...this.metadata,
    };
  }

  state(): string {
    this.expectedState = randomBytes(16).toString('base64url');
    return this.expectedState;
  }

  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }

  /**
   * The user's browser: open the authorization URL signed in, approve on the consent page the
   * way a browser posts the form, and read the code off the redirect to our callback.
   */
  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    expect(authorizationUrl.origin).toBe(this.base);
    const page = await fetch(authorizationUrl, { headers: { cookie: this.sid }, redirect: 'manual' });
    const html = await page.text();
    expect(page.status, html).toBe(200);
    const browserCookie = setCookieValue(page.headers, 'authgate_browser');
    const csrfCookie = setCookieValue(page.headers, 'authgate_csrf');
    const interaction = formValue(html, 'interaction');
    const csrf = formValue(html, 'csrf');
    expect(interaction && csrf && browserCookie && csrfCookie, 'consent page with its form and cookies').toBeTruthy();
    const action = /<form[^>]*\baction="([^"]*)"/.exec(html)?.[1] ?? '/v1/oauth/authorize/decision';
    const decision = await fetch(new URL(action.replaceAll('&amp;', '&'), this.base), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: `${this.sid}; authgate_csrf=${csrfCookie!.value}; authgate_browser=${browserCookie!.value}`,
      },
      body: new URLSearchParams({ interaction: interaction!, csrf: csrf!, decision: 'approve' }),
      redirect: 'manual',
    });
    const location = decision.headers.get('location');
    expect(decision.status, await decision.text()).toBe(303);
    const callback = new URL(location!);
    expect(`${callback.origin}${callback.pathname}`).toBe(this.redirectUrl);
    expect(callback.searchParams.get('state')).toBe(this.expectedState);
    this.code = callback.searchParams.get('code') ?? undefined;
    this.visits.push({ authorizationUrl, consentStatus: page.status, consentPage: html, callback });
  }
}
