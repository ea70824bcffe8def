/**
 * @node-oauth/oauth2-server 5 with a minimal in-memory model, written as its documentation's
 * examples are: Maps keyed by the clear code and token values (this library stores tokens as
 * given; hashing them would be the model's job), the client secret compared in clear, and the
 * model's optional synchronous generators (`crypto.randomBytes(32)` without a callback): the
 * library's own default awaits `crypto.randomBytes` through the thread pool, several times
 * slower, and the issue asks for the best of each peer.
 *
 * Each operation starts from the same raw form body authgate gets and parses it with
 * URLSearchParams (the library expects a parsed body; a framework's body parser would do it),
 * and serialises the response body with JSON.stringify (authgate's answer is already serialised).
 * No revocation endpoint in this library: no W4.
 */
import { randomBytes } from 'node:crypto';
import OAuth2Server from '@node-oauth/oauth2-server';
import type { CheckedContender, WorkloadId } from '../authgate.js';
import { ACCOUNT, CALLBACK, codeFrom, FORM, STATE, wire } from '../lib/fixture.js';

const { Request, Response } = OAuth2Server;
export const NODE_OAUTH = '@node-oauth/oauth2-server';

type Model = OAuth2Server.AuthorizationCodeModel & OAuth2Server.RefreshTokenModel;

export function nodeOAuthContenders(): Partial<Record<WorkloadId, CheckedContender>> {
  const client: OAuth2Server.Client = {
    id: 'bench-client',
    secret: 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz',
    grants: ['authorization_code', 'refresh_token'],
    redirectUris: [CALLBACK],
  };
  const clients = new Map([[client.id, client]]);
  const codes = new Map<string, OAuth2Server.AuthorizationCode>();
  const accessTokens = new Map<string, OAuth2Server.Token>();
  const refreshTokens = new Map<string, OAuth2Server.Token>();

  const token = () => randomBytes(32).toString('hex');
  const model: Model = {
    async generateAccessToken() {
      return token();
    },
    async generateRefreshToken() {
      return token();
    },
    async generateAuthorizationCode() {
      return token();
    },
    async getClient(clientId, clientSecret) {
      const found = clients.get(clientId);
      if (!found || (clientSecret != null && clientSecret !== found.secret)) return null;
      return found;
    },
    async saveAuthorizationCode(code, savedClient, user) {
      const saved = { ...code, client: savedClient, user } as OAuth2Server.AuthorizationCode;
      codes.set(saved.authorizationCode, saved);
      return saved;
    },
    async getAuthorizationCode(code) {
      return codes.get(code) ?? null;
    },
    async revokeAuthorizationCode(code) {
      return codes.delete(code.authorizationCode);
    },
    async saveToken(token, savedClient, user) {
      const saved = { ...token, client: savedClient, user };
      accessTokens.set(saved.accessToken, saved);
      if (saved.refreshToken) refreshTokens.set(saved.refreshToken, saved);
      return saved;
    },
    async getAccessToken(accessToken) {
      return accessTokens.get(accessToken) ?? null;
    },
    async verifyScope(token, scope) {
      return scope.every((s) => token.scope?.includes(s));
    },
    async getRefreshToken(refreshToken) {
      return (refreshTokens.get(refreshToken) as OAuth2Server.RefreshToken | undefined) ?? null;
    },
    async revokeToken(token) {
      return refreshTokens.delete(token.refreshToken);
    },
  };
  const oauth = new OAuth2Server({ model, accessTokenLifetime: 2_592_000 });
  const user = { id: ACCOUNT.uuid };
  const authenticateHandler = { handle: () => user };

  const parse = (form: string): Record<string, string> => Object.fromEntries(new URLSearchParams(form));
  const tokenRequest = (form: string) =>
    new Request({ method: 'POST', query: {}, headers: { 'content-type': FORM, 'content-length': String(form.length) }, body: parse(form) });
  const credentials = `client_id=${client.id}&client_secret=${client.secret}`;
  const exchangeForm = (code: string) =>
    `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(CALLBACK)}&${credentials}`;
  const authorizeQuery = `client_id=${client.id}&redirect_uri=${encodeURIComponent(CALLBACK)}&response_type=code&scope=read&state=${STATE}`;

  /** The consent form posted back: the library checks and issues the code in one call. */
  async function issueCode(): Promise<string> {
    const response = new Response();
    await oauth.authorize(new Request({ method: 'GET', query: parse(authorizeQuery), headers: {} }), response, { authenticateHandler });
    return codeFrom(response.get('location'));
  }
  async function exchange(form: string): Promise<OAuth2Server.Token> {
    const response = new Response();
    const token = await oauth.token(tokenRequest(form), response);
    if (response.status !== 200) throw new Error(`${NODE_OAUTH}: token answered ${response.status}`);
    JSON.stringify(response.body);
    return token;
  }

  const name = NODE_OAUTH;
  let pending: string[] = [];
  let current: string | undefined;
  let previous: string | undefined;
  let bearer: string | undefined;
  return {
    W1: { name, kind: 'peer', op: async () => exchange(exchangeForm(await issueCode())) },
    W1x: {
      name,
      kind: 'peer',
      async prepare(count) {
        pending = [];
        for (let i = 0; i < count; i++) pending.push(wire(exchangeForm(await issueCode())));
      },
      op: (i) => exchange(pending[i]!),
    },
    W2: {
      name,
      kind: 'peer',
      async prepare() {
        current ??= (await exchange(exchangeForm(await issueCode()))).refreshToken;
      },
      async op() {
        const token = await exchange(`grant_type=refresh_token&refresh_token=${current}&${credentials}`);
        previous = current;
        current = token.refreshToken;
      },
      async verify() {
        const replay = oauth.token(tokenRequest(`grant_type=refresh_token&refresh_token=${previous}&${credentials}`), new Response());
        if (
          await replay.then(
            () => true,
            () => false,
          )
        )
          throw new Error(`${NODE_OAUTH}: a rotated refresh token was accepted again`);
        current = undefined;
      },
    },
    W3: {
      name,
      kind: 'peer',
      async prepare() {
        bearer ??= (await exchange(exchangeForm(await issueCode()))).accessToken;
      },
      async op() {
        const response = new Response();
        await oauth.authenticate(new Request({ method: 'GET', query: {}, headers: { authorization: `Bearer ${bearer}` } }), response, {
          scope: ['read'],
        });
      },
    },
  };
}
