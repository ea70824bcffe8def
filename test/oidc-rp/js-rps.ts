/**
 * The two JavaScript relying parties, run in this process: openid-client (v6, an OpenID
 * Certified relying party) and oauth4webapi (the library under it, used directly). Both go
 * through one sequence (`runJsRp`), so their steps mean the same: sign in (code, PKCE S256,
 * nonce, state), userinfo, refresh, a silent sign-in (`prompt=none` with `id_token_hint`),
 * RP-initiated logout, and a silent sign-in after it, which must come back `login_required`.
 */
import { readFileSync } from 'node:fs';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { type Browser, type Claims, message, type RpConfig, type RpReport, type StepName } from './driver.js';

interface Tokens {
  accessToken: string;
  refreshToken?: string | undefined;
  idToken: string;
  /** The ID token's claims, as the library validated them. */
  claims: Claims;
}

/** One library behind the common sequence. */
interface JsRp {
  library: string;
  discover(): Promise<void>;
  /** An authorization URL with a fresh state, nonce and PKCE pair, and how to finish from the callback URL. */
  authorize(extra: Record<string, string>): Promise<{ url: string; finish(callback: string): Promise<Tokens> }>;
  userinfo(accessToken: string, sub: string): Promise<Claims>;
  refresh(refreshToken: string): Promise<Tokens>;
  endSessionUrl(idToken: string, state: string): string;
}

function version(name: string): string {
  const pkg = JSON.parse(readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8')) as { version: string };
  return `${name} ${pkg.version}`;
}

function openidClient(config: RpConfig): JsRp {
  let server!: client.Configuration;
  const tokens = (response: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers): Tokens => {
    const claims = response.claims();
    if (!response.id_token || !claims) throw new Error('no id_token in the token response');
    return { accessToken: response.access_token, refreshToken: response.refresh_token, idToken: response.id_token, claims };
  };
  return {
    library: version('openid-client'),
    async discover() {
      const http = new URL(config.issuer).protocol === 'http:' ? [client.allowInsecureRequests] : [];
      server = await client.discovery(new URL(config.issuer), config.clientId, config.clientSecret, undefined, { execute: http });
      // Also check ID token signatures against the provider's JWKS (openid-client skips it by default).
      client.enableNonRepudiationChecks(server);
    },
    async authorize(extra) {
      const [verifier, nonce, state] = [client.randomPKCECodeVerifier(), client.randomNonce(), client.randomState()];
      const code_challenge = await client.calculatePKCECodeChallenge(verifier);
      const { redirectUri: redirect_uri, scope } = config;
      const url = client.buildAuthorizationUrl(server, {
        redirect_uri,
        scope,
        code_challenge,
        code_challenge_method: 'S256',
        nonce,
        state,
        ...extra,
      });
      return {
        url: url.href,
        finish: async (callback) =>
          tokens(
            await client.authorizationCodeGrant(server, new URL(callback), {
              pkceCodeVerifier: verifier,
              expectedNonce: nonce,
              expectedState: state,
              idTokenExpected: true,
            }),
          ),
      };
    },
    userinfo: async (accessToken, sub) => ({ ...(await client.fetchUserInfo(server, accessToken, sub)) }),
    refresh: async (refreshToken) => tokens(await client.refreshTokenGrant(server, refreshToken)),
    endSessionUrl: (id_token_hint, state) =>
      client.buildEndSessionUrl(server, { id_token_hint, post_logout_redirect_uri: config.postLogoutRedirectUri, state }).href,
  };
}

function oauth4webapi(config: RpConfig): JsRp {
  const issuer = new URL(config.issuer);
  const http = { [oauth.allowInsecureRequests]: issuer.protocol === 'http:' };
  const rp: oauth.Client = { client_id: config.clientId };
  const auth = oauth.ClientSecretBasic(config.clientSecret);
  let as!: oauth.AuthorizationServer;
  // The ID token's claims are validated in processing; its signature (against the JWKS) here.
  const tokens = async (response: Response, result: oauth.TokenEndpointResponse): Promise<Tokens> => {
    const claims = oauth.getValidatedIdTokenClaims(result);
    if (!result.id_token || !claims) throw new Error('no id_token in the token response');
    await oauth.validateApplicationLevelSignature(as, response, http);
    return { accessToken: result.access_token, refreshToken: result.refresh_token, idToken: result.id_token, claims: { ...claims } };
  };
  return {
    library: version('oauth4webapi'),
    async discover() {
      as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, http));
    },
    async authorize(extra) {
      const [verifier, nonce, state] = [oauth.generateRandomCodeVerifier(), oauth.generateRandomNonce(), oauth.generateRandomState()];
      // oauth4webapi builds no authorization URL: its users set the parameters themselves.
      const url = new URL(as.authorization_endpoint!);
      const params = { client_id: config.clientId, redirect_uri: config.redirectUri, response_type: 'code', scope: config.scope };
      const pkce = { code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' };
      for (const [name, value] of Object.entries({ ...params, ...pkce, nonce, state, ...extra })) url.searchParams.set(name, value);
      return {
        url: url.href,
        async finish(callback) {
          const answer = oauth.validateAuthResponse(as, rp, new URL(callback), state);
          const response = await oauth.authorizationCodeGrantRequest(as, rp, auth, answer, config.redirectUri, verifier, http);
          return tokens(
            response,
            await oauth.processAuthorizationCodeResponse(as, rp, response, { expectedNonce: nonce, requireIdToken: true }),
          );
        },
      };
    },
    userinfo: async (accessToken, sub) => ({
      ...(await oauth.processUserInfoResponse(as, rp, sub, await oauth.userInfoRequest(as, rp, accessToken, http))),
    }),
    async refresh(refreshToken) {
      const response = await oauth.refreshTokenGrantRequest(as, rp, auth, refreshToken, http);
      return tokens(response, await oauth.processRefreshTokenResponse(as, rp, response));
    },
    endSessionUrl(id_token_hint, state) {
      // Nor an end-session URL.
      const url = new URL(as.end_session_endpoint!);
      const params = { client_id: config.clientId, id_token_hint, post_logout_redirect_uri: config.postLogoutRedirectUri, state };
      for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
      return url.href;
    },
  };
}

class Stop extends Error {}

/** Which claims a step shows in the report: the value itself, or a token response's ID token claims. */
const itself = (claims: Claims) => claims;
const ofTokens = (tokens: Tokens) => tokens.claims;

/** Run openid-client or oauth4webapi through every step of `STEPS`, stopping at the first failure. */
export async function runJsRp(name: 'openid-client' | 'oauth4webapi', config: RpConfig, browser: Browser): Promise<RpReport> {
  const rp = name === 'openid-client' ? openidClient(config) : oauth4webapi(config);
  const report: RpReport = { rp: name, library: rp.library, browsed: [], steps: {} };
  const step = async <T>(step: StepName, run: () => Promise<T>, claims?: (value: T) => Claims): Promise<T> => {
    try {
      const value = await run();
      report.steps[step] = { ok: true, ...(claims && { claims: claims(value) }) };
      return value;
    } catch (error) {
      if (error instanceof Stop) throw error; // the browser failed: report.error says how
      report.steps[step] = { ok: false, error: message(error) };
      throw new Stop();
    }
  };
  const browse = async (url: string) => {
    report.browsed.push(url);
    try {
      return await browser(url);
    } catch (error) {
      report.error = `browser: ${message(error)}`;
      throw new Stop();
    }
  };
  const silentSignIn = async (idToken: string) => {
    const request = await rp.authorize({ prompt: 'none', id_token_hint: idToken });
    return request.finish(await browse(request.url));
  };
  try {
    await step('discovery', () => rp.discover());
    const request = await rp.authorize({});
    const callback = await step('authorize', () => browse(request.url));
    const signedIn = await step('token', () => request.finish(callback));
    const claims = await step('id_token', async () => signedIn.claims, itself);
    await step('userinfo', () => rp.userinfo(signedIn.accessToken, String(claims.sub)), itself);
    const refreshed = await step('refresh', () =>
      signedIn.refreshToken ? rp.refresh(signedIn.refreshToken) : Promise.reject(new Error('no refresh_token in the token response')),
    );
    await step('refresh_id_token', async () => refreshed.claims, itself);
    const silent = await step('silent', () => silentSignIn(refreshed.idToken), ofTokens);
    // A provider without RP-initiated logout: the logout steps are left out, not failed.
    if (config.logout === false) return report;
    const logoutState = oauth.generateRandomState();
    await step('logout', async () => {
      const back = new URL(await browse(rp.endSessionUrl(silent.idToken, logoutState)));
      const expected = new URL(config.postLogoutRedirectUri);
      if (back.origin + back.pathname !== expected.origin + expected.pathname) throw new Error(`logout ended at ${back.href}`);
      if (back.searchParams.get('state') !== logoutState) throw new Error('logout state mismatch');
    });
    await step('silent_after_logout', async () => {
      const error = await silentSignIn(silent.idToken).then(
        () => new Error('signed in silently after logout'),
        (error: unknown) => (error instanceof Stop || (error as { error?: unknown }).error !== 'login_required' ? error : undefined),
      );
      if (error) throw error;
    });
  } catch (error) {
    if (!(error instanceof Stop)) report.error = message(error);
  }
  return report;
}
