import {
  AuthorizationServer,
  generateSigningKey,
  MemoryStorage,
  type Account,
  type AuthorizationServerOptions,
  type OAuthRequest,
  type OAuthResponse,
} from '../src/index.js';
import { FakeClock, FakeSessions } from '../src/testing/index.js';
import { ADA, BOB, CALLBACK, OTHER_CALLBACK } from './fixtures.js';

/** The shared accounts and callback (test/fixtures.ts), where the core tests have always found them. */
export { ADA, BOB, CALLBACK };

/**
 * One RS256 key for the test servers with an `openid` option that names no `signingKeys`: a server
 * without any generates its own, and a 2048-bit RSA key takes about half a second, which over
 * the OpenID Connect suites' hundred servers was a quarter of a minute. A test of that default
 * passes `signingKeys: undefined`; a test that needs keys apart from other servers names its own.
 */
let sharedKey: ReturnType<typeof generateSigningKey> | undefined;
export function sharedSigningKey(): ReturnType<typeof generateSigningKey> {
  sharedKey ??= generateSigningKey('RS256', 'shared-test-rs256');
  return sharedKey;
}

/** The options with the shared key (`sharedSigningKey`) where `openid` names no keys. */
export async function withSharedKey(options: Partial<AuthorizationServerOptions>): Promise<Partial<AuthorizationServerOptions>> {
  const openid = options.openid;
  if (!openid || 'signingKeys' in openid) return options;
  return { ...options, openid: { ...openid, signingKeys: [await sharedSigningKey()] } };
}

/** A server on memory storage, a fake clock and fake sessions, with one registered client. */
export async function setup(given: Partial<AuthorizationServerOptions> = {}) {
  const options = await withSharedKey(given);
  const clock = new FakeClock();
  const sessions = new FakeSessions(clock);
  const storage = new MemoryStorage();
  const server = new AuthorizationServer({ storage, sessions, clock, ...options });
  const client = await server.registerClient({ name: 'Example App', redirectUri: CALLBACK });
  const other = await server.registerClient({ name: 'Other App', redirectUri: OTHER_CALLBACK });
  const ada = sessions.signIn(ADA);

  const get = (url: string, cookie?: string): OAuthRequest => ({ method: 'GET', url, headers: cookie ? { cookie } : {} });
  const post = (url: string, form: Record<string, string> | string, headers: Record<string, string> = {}): OAuthRequest => ({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: typeof form === 'string' ? form : new URLSearchParams(form).toString(),
  });
  const authorizeUrl = (params: Record<string, string> = {}) =>
    `/v1/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: CALLBACK, response_type: 'code', ...params })}`;

  /** Run authorize → consent → approve for the signed-in cookie; returns the redirect URL. */
  async function authorizeAndApprove(params: Record<string, string> = {}, cookie = ada): Promise<URL> {
    const decision = await server.authorize(get(authorizeUrl(params), cookie));
    if (decision.type !== 'consent') throw new Error(`expected consent, got ${JSON.stringify(decision)}`);
    const approved = await server.approve(decision.interaction.id, get('/', cookie));
    if (approved.type !== 'redirect') throw new Error(`expected redirect, got ${JSON.stringify(approved)}`);
    return new URL(approved.location);
  }

  async function getCode(params: Record<string, string> = {}, cookie = ada): Promise<string> {
    const url = await authorizeAndApprove(params, cookie);
    return url.searchParams.get('code')!;
  }

  const exchange = (code: string, extra: Record<string, string> = {}) =>
    server.token(
      post('/v1/oauth/token', {
        grant_type: 'authorization_code',
        code,
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uri: CALLBACK,
        ...extra,
      }),
    );

  const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
    server.token(post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra }));

  const api = (method: string, token: string) =>
    server.authenticate({ method, url: '/v2/account', headers: { authorization: `Bearer ${token}` } });

  /** A full code flow: returns the token response body. */
  async function tokens(params: Record<string, string> = {}) {
    const res = await exchange(await getCode(params));
    if (res.status !== 200) throw new Error(res.body);
    return json(res) as {
      access_token: string;
      refresh_token: string;
      scope: string;
      expires_in: number;
      token_type: string;
      info: Account;
    };
  }

  return {
    clock,
    sessions,
    storage,
    server,
    client,
    other,
    ada,
    get,
    post,
    authorizeUrl,
    authorizeAndApprove,
    getCode,
    exchange,
    refresh,
    api,
    tokens,
  };
}

export const json = (res: OAuthResponse) => JSON.parse(res.body) as Record<string, unknown>;

/**
 * For comparing two transcripts that differ only in random values: every run of 20 or more token
 * characters (ids, secrets, tokens, codes, hashes) becomes `<random N>`, N its order of first
 * appearance, so a value that moves, appears or disappears still shows.
 */
export function randomValuesNamed(): (text: string) => string {
  const seen = new Map<string, string>();
  return (text: string) =>
    text.replace(/[A-Za-z0-9_-]{20,}/g, (value) => {
      const name = seen.get(value) ?? `<random ${seen.size}>`;
      seen.set(value, name);
      return name;
    });
}
