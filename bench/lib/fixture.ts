/**
 * The common ground of every in-process workload: one registered confidential client, one
 * signed-in user who approves, and the plain requests a framework adapter would hand the core.
 * The host's sign-in is a constant (the user is signed in), so its cost is not the core's.
 */
import type { AuthorizationServer, OAuthRequest, Storage } from '../../src/index.js';
import type { CoreModule } from './load.js';

export const ACCOUNT = { uuid: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', name: 'Ada Lovelace', email: 'ada@example.com' };
export const CALLBACK = 'https://client.example/cb';
export const FORM = 'application/x-www-form-urlencoded';
export const STATE = 'af0ifjsldkj';

/**
 * The `code` parameter of a redirect to the client's callback, as the client reads it. Read by
 * hand rather than through `new URL(...).searchParams` (about 2 µs, which is the client's cost,
 * not the server's); every contender's redirect goes through this same function.
 */
export function codeFrom(location: string): string {
  const query = location.indexOf('?');
  const hash = location.indexOf('#');
  const end = hash < 0 ? location.length : hash;
  let start = query < 0 || query > end ? end : query + 1;
  while (start < end) {
    let next = location.indexOf('&', start);
    if (next < 0 || next > end) next = end;
    if (location.startsWith('code=', start)) {
      const value = location.slice(start + 5, next);
      let code: string;
      try {
        code = decodeURIComponent(value.replace(/\+/g, ' '));
      } catch {
        code = new URLSearchParams(`code=${value}`).get('code')!; // a bad escape, kept as written
      }
      if (!code) break;
      return code;
    }
    start = next + 1;
  }
  throw new Error(`no code in the redirect: ${location}`);
}

/**
 * A body as a server receives it: one flat string decoded from bytes. A body built with `+` or
 * a template is a V8 rope, which the first read flattens, a cost a body from a socket never
 * has. Inputs made in `prepare` go through this, for every contender alike.
 */
export function wire(body: string): string {
  return Buffer.from(body, 'utf8').toString('utf8');
}

/** A string field of a JSON body, read the cheap way (the values are base64url: no escapes). */
export function jsonField(body: string, name: string): string {
  const key = `"${name}":"`;
  const start = body.indexOf(key);
  if (start < 0) throw new Error(`no ${name} in ${body.slice(0, 200)}`);
  const from = start + key.length;
  return body.slice(from, body.indexOf('"', from));
}

export interface AuthgateFixture {
  /** The authgate module the server comes from (another version's, in bench:ab). */
  core: CoreModule;
  server: AuthorizationServer;
  storage: Storage;
  clientId: string;
  clientSecret: string;
  /** GET /v1/oauth/authorize of the signed-in user, asking for `read` (or the variant's scope). */
  authorizeRequest(): OAuthRequest;
  /** The consent form the user posts back. */
  decisionRequest(): OAuthRequest;
  /** A form POST to `path` with the client's credentials in the body. */
  post(path: string, form: string): OAuthRequest;
  exchangeForm(code: string): string;
  refreshForm(refreshToken: string): string;
  /** authorize → approve: a fresh code. */
  issueCode(): Promise<string>;
  /** authorize → approve → exchange: a fresh token pair of its own grant. */
  issuePair(): Promise<{ accessToken: string; refreshToken: string }>;
}

/**
 * A fixture on a server with more options (the OpenID Connect and DPoP workloads): the options
 * added to the server's, and the authorization request's parameters over `scope=read&state=…`.
 */
export interface FixtureVariant {
  options?: Record<string, unknown>;
  params?: Record<string, string>;
}

export async function authgateFixture(core: CoreModule, storage: Storage, variant: FixtureVariant = {}): Promise<AuthgateFixture> {
  const session = { account: ACCOUNT, authenticatedAt: Date.now() };
  const server = new core.AuthorizationServer({ storage, sessions: { current: () => session }, ...variant.options });
  const { clientId, clientSecret } = await server.registerClient({ name: 'Bench App', redirectUri: CALLBACK });
  const authorizeUrl = `/v1/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'read', state: STATE, ...variant.params })}`;
  const credentials = `client_id=${clientId}&client_secret=${clientSecret}`;
  const redirect = encodeURIComponent(CALLBACK);

  const fixture: AuthgateFixture = {
    core,
    server,
    storage,
    clientId,
    clientSecret,
    authorizeRequest: () => ({ method: 'GET', url: authorizeUrl, headers: { cookie: 'sid=bench' } }),
    decisionRequest: () => ({ method: 'POST', url: '/v1/oauth/authorize/decision', headers: { cookie: 'sid=bench' } }),
    post: (path, form) => ({
      method: 'POST',
      url: path,
      headers: { 'content-type': FORM, 'content-length': String(form.length) },
      body: form,
    }),
    exchangeForm: (code) => `grant_type=authorization_code&code=${code}&redirect_uri=${redirect}&${credentials}`,
    refreshForm: (refreshToken) => `grant_type=refresh_token&refresh_token=${refreshToken}&${credentials}`,
    async issueCode() {
      const decision = await server.authorize(fixture.authorizeRequest());
      if (decision.type !== 'consent') throw new Error(`expected a consent decision, got ${JSON.stringify(decision)}`);
      const approved = await server.approve(decision.interaction.id, fixture.decisionRequest());
      if (approved.type !== 'redirect') throw new Error(`expected a redirect, got ${JSON.stringify(approved)}`);
      return codeFrom(approved.location);
    },
    async issuePair() {
      const response = await server.token(fixture.post('/v1/oauth/token', fixture.exchangeForm(await fixture.issueCode())));
      if (response.status !== 200) throw new Error(`exchange failed: ${response.status} ${response.body}`);
      return { accessToken: jsonField(response.body, 'access_token'), refreshToken: jsonField(response.body, 'refresh_token') };
    },
  };
  return fixture;
}
