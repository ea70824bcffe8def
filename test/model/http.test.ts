/**
 * The model-based test over HTTP, through the Express adapter: the same model and commands as
 * `core.test.ts`, with the browser-facing steps (authorize, resume, the consent form's decision)
 * sent by "browsers" that each keep their own cookie jar, and the token, revocation and resource
 * endpoints reached over HTTP too. On top of the core invariants: an interaction resumed or decided
 * in another browser never yields a consent page or a code (`browserBinding`), and nothing answers
 * 5xx or leaks a stack trace.
 *
 * An attacker's browser that learned an interaction id brings its own CSRF cookie and form
 * value (it controls its own cookies), so only the binding to the browser can refuse it.
 *
 * A long local run:
 *   MODEL_RUNS=1000 MODEL_SEED=random npx vitest run test/model/http.test.ts
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type {
  AuthenticateResult,
  AuthorizationServer,
  AuthorizeDecision,
  Interaction,
  OAuthRequest,
  OAuthResponse,
  PersonalTokenInput,
} from '../../src/index.js';
import { formValue, LOGIN_URL, startApp, type Reply, type TestApp } from '../adapters/app.js';
import { fail } from './invariants.js';
import {
  ADA,
  BOB,
  BROWSERS,
  CONF_CALLBACK,
  LIFETIMES,
  GRANT_TYPES,
  PUBLIC_CALLBACK,
  RES_A,
  SERVER_OPTIONS,
  type BrowserSteps,
  type Model,
  type Real,
  type RefreshLifetime,
} from './model.js';
import { reportRun, runModelOn, settings } from './run.js';

const s = settings(100);

/** Looks like a stack trace or a source path leaked into a body (as in test/adapters/app.ts). */
const STACK = /\n\s+at\s|\bat\s\S+\s\(|node_modules|\.ts:\d+:\d+|\.js:\d+:\d+/;

/** One cookie jar per browser: what `Set-Cookie` gave it, sent back on every request. */
class Jar {
  private readonly cookies = new Map<string, string>();

  header(sessionCookie: string | undefined): string {
    const parts = [...this.cookies].map(([k, v]) => `${k}=${v}`);
    if (sessionCookie) parts.push(sessionCookie);
    return parts.join('; ');
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  set(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  /** Take every `Set-Cookie` of a reply (a cleared or expired cookie is dropped). */
  take(reply: Reply): void {
    for (const line of reply.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const cleared = !value || attributes.some((a) => /^\s*max-age\s*=\s*0\s*$/i.test(a) || /^\s*expires\s*=.*1970/i.test(a));
      if (cleared) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

/** An adapter's answer to a browser, read back as the core's decision. */
function toDecision(app: TestApp, reply: Reply, what: string): AuthorizeDecision {
  if (reply.status >= 500) fail('noFaults', `${what} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
  if ((reply.status === 302 || reply.status === 303) && reply.location) {
    const target = new URL(reply.location, app.base);
    if (target.pathname === LOGIN_URL) {
      const id = target.searchParams.get('interaction') ?? fail('modelAgreement', `${what}: sign-in redirect without an interaction`);
      return { type: 'login', interaction: { id } as Interaction };
    }
    return { type: 'redirect', location: reply.location };
  }
  const interaction = formValue(reply.text, 'interaction');
  if (reply.status === 200 && interaction) {
    const account = reply.text.includes(ADA.name) ? ADA : reply.text.includes(BOB.name) ? BOB : undefined;
    const shown = { id: interaction, csrf: formValue(reply.text, 'csrf'), ...(account && { account }) };
    return { type: 'consent', interaction: shown as unknown as Interaction };
  }
  if (reply.status >= 400 && reply.status < 500 && /^text\/html/.test(reply.headers.get('content-type') ?? '')) {
    return { type: 'error', status: reply.status, error: /<code>([^<]+)<\/code>/.exec(reply.text)?.[1] ?? '?', description: '' };
  }
  return fail('modelAgreement', `${what}: unexpected answer ${reply.status} ${reply.location ?? ''} ${reply.text.slice(0, 200)}`);
}

/** The browser steps over HTTP, each browser with its jar and its current session cookie. */
function browserSteps(app: TestApp, model: () => Model, jars: Jar[]): BrowserSteps {
  const send = async (browser: number, method: string, path: string, body?: Record<string, string>) => {
    const jar = jars[browser]!;
    const cookie = jar.header(model().browsers[browser]?.cookie);
    const reply = body
      ? // browser: null: the harness's own jar stays out of it; this browser's jar holds every cookie.
        await app.postForm(path, body, { cookie, browser: null })
      : await app.request(method, path, { cookie, browser: null });
    jar.take(reply);
    return toDecision(app, reply, `${method} ${path.split('?')[0]}`);
  };
  return {
    authorize: (browser, url) => send(browser, 'GET', url),
    resume: (browser, id) => send(browser, 'GET', `/v1/oauth/authorize/resume?interaction=${encodeURIComponent(id)}`),
    decide: (browser, id, csrf, decision) => {
      // Another browser brings its own CSRF cookie and the same value in the form.
      const jar = jars[browser]!;
      let value = csrf ?? jar.get('authgate_csrf');
      if (value === undefined) {
        value = randomBytes(32).toString('base64url');
        jar.set('authgate_csrf', value);
      }
      return send(browser, 'POST', '/v1/oauth/authorize/decision', { interaction: id, csrf: value, decision });
    },
  };
}

function asResponse(reply: Reply): OAuthResponse {
  const headers: Record<string, string> = {};
  reply.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { status: reply.status, headers, body: reply.text };
}

/** The `DPoP` header of a request, if it has one. */
const dpopHeader = (request: OAuthRequest): Record<string, string> =>
  typeof request.headers['dpop'] === 'string' ? { dpop: request.headers['dpop'] } : {};

/** The app's route a resource check of the model reaches (resource A or none; B is the core's). */
const resourcePath = (method: 'GET' | 'POST', resource: string | undefined): string =>
  resource === undefined ? (method === 'GET' ? '/v2/account' : '/v2/things') : method === 'GET' ? '/r/account' : '/r/echo';

/** The server's token, revocation and resource endpoints, reached over HTTP. */
function httpServer(app: TestApp): AuthorizationServer {
  const form = async (path: string, request: OAuthRequest) =>
    asResponse(
      await app.request('POST', path, {
        // A DPoP proof (RFC 9449) names the token endpoint on the issuer, whatever the app's address.
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...dpopHeader(request) },
        body: String(request.body ?? ''),
      }),
    );
  const facade = {
    token: (request: OAuthRequest) => form('/v1/oauth/token', request),
    revoke: (request: OAuthRequest) => form('/v1/oauth/revoke', request),
    async authenticate(request: OAuthRequest, options?: { resource: string }): Promise<AuthenticateResult> {
      // Resource B has no route of the app: the core's check, as a host's own route would call it.
      if (options !== undefined && options.resource !== RES_A) return app.server.authenticate(request, options);
      // Resource A: `requireToken(server, { resource })` on `/r`; none: `requireToken(server)` on
      // `/v2`. The scheme and the DPoP proof (which names this route: `resourceUrl`) go as they are.
      const headers = { authorization: String(request.headers['authorization'] ?? ''), ...dpopHeader(request) };
      const path = resourcePath(request.method as 'GET' | 'POST', options?.resource);
      const reply =
        path === '/r/echo'
          ? await app.request('POST', path, { headers: { ...headers, 'content-type': 'application/json' }, body: '{}' })
          : await app.request(request.method, path, { headers });
      if (reply.status === 200 || reply.status === 201) return { ok: true, token: reply.json<{ oauth: never }>().oauth };
      return { ok: false, response: asResponse(reply) };
    },
    // The host's own calls (no endpoint): straight to the server.
    revokeAccess: (input: { accountUuid: string; clientId: string }) => app.server.revokeAccess(input),
    revokeAllForAccount: (accountUuid: string) => app.server.revokeAllForAccount(accountUuid),
    revokeClientTokens: (clientId: string) => app.server.revokeClientTokens(clientId),
    listAuthorizations: (accountUuid: string) => app.server.listAuthorizations(accountUuid),
    createPersonalToken: (input: PersonalTokenInput) => app.server.createPersonalToken(input),
    listPersonalTokens: (accountUuid: string) => app.server.listPersonalTokens(accountUuid),
    revokePersonalToken: (accountUuid: string, id: string) => app.server.revokePersonalToken(accountUuid, id),
    // The device endpoint over HTTP; the verification page's steps through the core (the page's
    // own binding to the browser and its CSRF are test/adapters' matter).
    deviceAuthorization: (request: OAuthRequest) => form('/v1/oauth/device', request),
    enterUserCode: (...args: Parameters<AuthorizationServer['enterUserCode']>) => app.server.enterUserCode(...args),
    approve: (id: string, request: OAuthRequest) => app.server.approve(id, request),
    deny: (id: string, request: OAuthRequest) => app.server.deny(id, request),
  };
  return facade as unknown as AuthorizationServer;
}

describe('model-based: the browser flow over HTTP (Express)', () => {
  it(`keeps every invariant over ${s.runs} runs of up to ${s.maxCommands} steps (seed ${s.seed ?? 'random'})`, async () => {
    let current: Model | undefined;
    const known = await runModelOn(
      async (refreshLifetime: RefreshLifetime) => {
        const onError: unknown[] = [];
        const app = await startApp({
          framework: 'express',
          server: { lifetimes: { ...LIFETIMES, refreshToken: refreshLifetime }, onError: (e) => onError.push(e), ...SERVER_OPTIONS },
          resource: RES_A,
        });
        const pub = await app.server.registerClient({
          name: 'Public App',
          redirectUri: PUBLIC_CALLBACK,
          public: true,
          grantTypes: GRANT_TYPES,
        });
        // The harness's client has no device grant: a confidential client of the model's own, at the same callback.
        const conf = await app.server.registerClient({ name: 'Confidential App', redirectUri: CONF_CALLBACK, grantTypes: GRANT_TYPES });
        const jars = Array.from({ length: BROWSERS }, () => new Jar());
        let seen = 0;
        /** onError calls, and replies since the last step that were 5xx or leaked a stack trace. */
        const faults = (): unknown[] => {
          const fresh = app.replies.slice(seen);
          seen = app.replies.length;
          const bad = fresh
            .filter((r) => r.reply.status >= 500 || STACK.test(r.reply.text))
            .map((r) => `${r.method} ${r.path} -> ${r.reply.status}: ${r.reply.text.slice(0, 200)}`);
          return [...onError.splice(0), ...bad];
        };
        const real = {
          server: httpServer(app),
          clock: app.clock,
          sessions: app.sessions,
          clients: { conf: conf as { clientId: string; clientSecret: string }, pub, other: app.other },
          prune: (now: number) => app.storage.prune(now),
          get faults() {
            return faults();
          },
          browserSteps: browserSteps(app, () => current!, jars),
          // A named resource's proof names its configured origin (RFC 9449 §4.3 point 9), whatever
          // the app's address: A's route on the app, B (no route: the core's check) `/v2/things`.
          // Without a resource, the app's own URL.
          resourceUrl: (method, resource) =>
            resource === undefined
              ? `${app.base}${resourcePath(method, resource)}`
              : `${new URL(resource).origin}${resource === RES_A ? resourcePath(method, resource) : '/v2/things'}`,
          close: () => app.close(),
        } satisfies Real & { close: () => Promise<void> };
        return real;
      },
      s,
      (model) => {
        current = model;
      },
    );
    // Every invariant is checked inside the run (a violation throws); here: the runs got far.
    const reached = reportRun(known);
    expect(reached.exchanged).toBeGreaterThan(0);
    expect(reached.refreshed).toBeGreaterThan(0);
    expect(reached.dpopBound).toBeGreaterThan(0); // DPoP-bound tokens over HTTP (RFC 9449)
    expect(reached.dpopThief).toBeGreaterThan(0);
  }, 600_000);
});
