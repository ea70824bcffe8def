/**
 * @jmondi/oauth2-server 4 with minimal in-memory repositories, as its documentation's examples
 * write them: Maps keyed by the clear values, the client secret compared in clear, tokens from
 * the library's `generateRandomToken` (synchronous `crypto.randomBytes`). Configuration: opaque
 * authorization codes and refresh tokens (`useOpaqueAuthorizationCodes`,
 * `useOpaqueRefreshTokens`: one JWT fewer to sign and verify per request than its JWT default,
 * so its faster setting), PKCE not required (as in authgate's default profile). Access tokens
 * are always JWTs signed with HS256 (jsonwebtoken).
 *
 * Each operation parses the same raw form body authgate gets with URLSearchParams and serialises
 * the response body with JSON.stringify. This library has no bearer check for a resource API
 * (a resource server verifies the JWT itself): no W3.
 */
import {
  AuthorizationServer,
  DateInterval,
  generateRandomToken,
  OAuthRequest,
  type OAuthAuthCode,
  type OAuthAuthCodeRepository,
  type OAuthClient,
  type OAuthClientRepository,
  type OAuthScope,
  type OAuthScopeRepository,
  type OAuthToken,
  type OAuthTokenRepository,
  type OAuthUser,
  type OAuthUserRepository,
} from '@jmondi/oauth2-server';
import type { CheckedContender, WorkloadId } from '../authgate.js';
import { ACCOUNT, CALLBACK, codeFrom, STATE, wire } from '../lib/fixture.js';

export const JMONDI = '@jmondi/oauth2-server';

export function jmondiContenders(): Partial<Record<WorkloadId, CheckedContender>> {
  const read: OAuthScope = { name: 'read' };
  const client: OAuthClient = {
    id: 'bench-client',
    name: 'Bench App',
    secret: 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz',
    redirectUris: [CALLBACK],
    allowedGrants: ['authorization_code', 'refresh_token', 'client_credentials'],
    scopes: [read],
  };
  const user: OAuthUser = { id: ACCOUNT.uuid };
  const codes = new Map<string, OAuthAuthCode>();
  const accessTokens = new Map<string, OAuthToken>();
  const refreshTokens = new Map<string, OAuthToken>();
  const hour = 3600_000;

  const clientRepository: OAuthClientRepository = {
    async getByIdentifier(clientId) {
      if (clientId !== client.id) throw new Error('unknown client');
      return client;
    },
    async isClientValid(grantType, found, clientSecret) {
      return found.allowedGrants.includes(grantType) && found.secret === clientSecret;
    },
  };
  const scopeRepository: OAuthScopeRepository = {
    async getAllByIdentifiers(names) {
      return names.filter((n) => n === 'read').map(() => read);
    },
    async finalize(scopes) {
      return scopes;
    },
  };
  const tokenRepository: OAuthTokenRepository = {
    async issueToken(issuedTo, scopes, owner) {
      return {
        accessToken: generateRandomToken(),
        accessTokenExpiresAt: new Date(Date.now() + hour),
        client: issuedTo,
        user: owner ?? null,
        scopes,
      };
    },
    async issueRefreshToken(token) {
      token.refreshToken = generateRandomToken();
      token.refreshTokenExpiresAt = new Date(Date.now() + 30 * 24 * hour);
      refreshTokens.set(token.refreshToken, token);
      return token;
    },
    async persist(token) {
      accessTokens.set(token.accessToken, token);
      if (token.refreshToken) refreshTokens.set(token.refreshToken, token);
    },
    async revoke(token) {
      token.accessTokenExpiresAt = new Date(0);
      token.refreshTokenExpiresAt = new Date(0);
    },
    async revokeDescendantsOf(authCodeId) {
      for (const token of accessTokens.values()) if (token.originatingAuthCodeId === authCodeId) await tokenRepository.revoke(token);
    },
    async isRefreshTokenRevoked(token) {
      return Date.now() > (token.refreshTokenExpiresAt?.getTime() ?? 0);
    },
    async getByRefreshToken(refreshToken) {
      const token = refreshTokens.get(refreshToken);
      if (!token) throw new Error('unknown refresh token');
      return token;
    },
    async getByAccessToken(accessToken) {
      const token = accessTokens.get(accessToken);
      if (!token) throw new Error('unknown access token');
      return token;
    },
  };
  const authCodeRepository: OAuthAuthCodeRepository = {
    async getByIdentifier(code) {
      const found = codes.get(code);
      if (!found) throw new Error('unknown code');
      return found;
    },
    issueAuthCode(issuedTo, owner, scopes) {
      return {
        code: generateRandomToken(),
        user: owner ?? null,
        client: issuedTo,
        redirectUri: null,
        codeChallenge: null,
        codeChallengeMethod: null,
        expiresAt: new Date(Date.now() + 600_000),
        scopes,
      };
    },
    async persist(code) {
      codes.set(code.code, code);
    },
    async isRevoked(code) {
      const found = codes.get(code);
      return !found || Date.now() > found.expiresAt.getTime();
    },
    async revoke(code) {
      const found = codes.get(code);
      if (found) found.expiresAt = new Date(0);
    },
  };
  const userRepository: OAuthUserRepository = {
    async getUserByCredentials(id) {
      return id === user.id ? user : undefined;
    },
  };

  const server = new AuthorizationServer(
    clientRepository,
    tokenRepository,
    scopeRepository,
    'bench-jwt-secret-0123456789abcdefghijklmnop',
    {
      requiresPKCE: false,
      useOpaqueAuthorizationCodes: true,
      useOpaqueRefreshTokens: true,
    },
  );
  server.enableGrantTypes(
    ['refresh_token', new DateInterval('30d')],
    [{ grant: 'authorization_code', authCodeRepository, userRepository }, new DateInterval('30d')],
  );

  const parse = (form: string): Record<string, string> => Object.fromEntries(new URLSearchParams(form));
  const credentials = `client_id=${client.id}&client_secret=${client.secret}`;
  const exchangeForm = (code: string) =>
    `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(CALLBACK)}&${credentials}`;
  const authorizeQuery = `client_id=${client.id}&redirect_uri=${encodeURIComponent(CALLBACK)}&response_type=code&scope=read&state=${STATE}`;

  /** GET /authorize validated, the user signed in and approving, then the redirect with the code. */
  async function issueCode(): Promise<string> {
    const request = await server.validateAuthorizationRequest(new OAuthRequest({ query: parse(authorizeQuery) }));
    request.user = user;
    request.isAuthorizationApproved = true;
    const response = await server.completeAuthorizationRequest(request);
    return codeFrom(response.headers.location as string);
  }
  async function token(form: string): Promise<Record<string, unknown>> {
    const response = await server.respondToAccessTokenRequest(new OAuthRequest({ body: parse(form) }));
    if (response.status !== 200) throw new Error(`${JMONDI}: token answered ${response.status}`);
    JSON.stringify(response.body);
    return response.body;
  }

  const name = JMONDI;
  let pending: string[] = [];
  let current: string | undefined;
  let previous: string | undefined;
  let revocations: string[] = [];
  let revoked: string[] = [];
  return {
    W1: { name, kind: 'peer', op: async () => token(exchangeForm(await issueCode())) },
    W1x: {
      name,
      kind: 'peer',
      async prepare(count) {
        pending = [];
        for (let i = 0; i < count; i++) pending.push(wire(exchangeForm(await issueCode())));
      },
      op: (i) => token(pending[i]!),
    },
    W2: {
      name,
      kind: 'peer',
      async prepare() {
        current ??= (await token(exchangeForm(await issueCode()))).refresh_token as string;
      },
      async op() {
        const body = await token(`grant_type=refresh_token&refresh_token=${current}&${credentials}`);
        previous = current;
        current = body.refresh_token as string;
      },
      async verify() {
        const replay = server.respondToAccessTokenRequest(
          new OAuthRequest({ body: parse(`grant_type=refresh_token&refresh_token=${previous}&${credentials}`) }),
        );
        if (
          await replay.then(
            () => true,
            () => false,
          )
        )
          throw new Error(`${JMONDI}: a rotated refresh token was accepted again`);
        current = undefined;
      },
    },
    W4: {
      name,
      kind: 'peer',
      async prepare(count) {
        revocations = [];
        revoked = [];
        for (let i = 0; i < count; i++) {
          const accessToken = (await token(exchangeForm(await issueCode()))).access_token as string;
          revoked.push(accessToken);
          revocations.push(wire(`token=${accessToken}&token_type_hint=access_token&${credentials}`));
        }
      },
      async op(i) {
        const response = await server.revoke(new OAuthRequest({ body: parse(revocations[i]!) }));
        if (response.status !== 200) throw new Error(`${JMONDI}: revoke answered ${response.status}`);
        JSON.stringify(response.body);
      },
      async verify() {
        // jmondi answers 200 whatever happens (RFC 7009): check the repository instead.
        for (const jwt of revoked) {
          const jti = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()).jti as string;
          if ((accessTokens.get(jti)?.accessTokenExpiresAt.getTime() ?? 0) > Date.now())
            throw new Error(`${JMONDI}: a revoked access token is still live`);
        }
      },
    },
  };
}
