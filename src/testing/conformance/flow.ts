/**
 * A full flow through `AuthorizationServer` on the storage under test: it works, and no clear
 * secret (client secret, code, token, interaction id, PKCE verifier) ever reaches a storage method.
 */
import { AuthorizationServer } from '../../server.js';
import { base64url, randomToken } from '../../crypto.js';
import type { OAuthRequest, OAuthResponse, UserSession } from '../../types.js';
import { conformanceCase, type StorageConformanceCase } from './case.js';
import { check, canonical } from './check.js';
import { T0, CALLBACK, makeAccount } from './fixtures.js';

/** The end-to-end case. */
export const flowCases: readonly StorageConformanceCase[] = [
  conformanceCase(
    'hashing: a full flow through AuthorizationServer works on the storage, and no clear secret ever reaches a storage method',
    async (make) => {
      const inner = await make();
      const calls: string[] = [];
      const storage = new Proxy(inner, {
        get(target, name, receiver) {
          const value: unknown = Reflect.get(target, name, receiver);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            calls.push(`${String(name)}(${JSON.stringify(args)})`);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      let now = T0;
      const clock = { now: () => now };
      const sessions = new Map<string, UserSession>();
      const server = new AuthorizationServer({
        storage,
        clock,
        sessions: {
          current: (request) => sessions.get(/(?:^|;\s*)sid=([^;]+)/.exec(String(request.headers['cookie'] ?? ''))?.[1] ?? '') ?? null,
        },
      });
      const secrets: Array<[string, string]> = [];
      const keep = (what: string, value: string | undefined | null) => {
        check(typeof value === 'string' && value.length > 0, `the flow did not produce ${what}`);
        secrets.push([what, value]);
        return value;
      };
      const ada = makeAccount();
      sessions.set('ada', { account: ada, authenticatedAt: T0 });
      const cookie = 'sid=ada';
      const get = (url: string, withCookie = true): OAuthRequest => ({ method: 'GET', url, headers: withCookie ? { cookie } : {} });
      const post = (url: string, form: Record<string, string>): OAuthRequest => ({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      });
      const body = (res: OAuthResponse) => JSON.parse(res.body) as Record<string, string>;
      const api = async (token: string) =>
        (await server.authenticate({ method: 'GET', url: '/v2/me', headers: { authorization: `Bearer ${token}` } })).ok;

      const client = await server.registerClient({ name: 'Conformance App', redirectUri: CALLBACK });
      keep('a client secret', client.clientSecret);
      const authorizeUrl = (params: Record<string, string> = {}) =>
        `/v1/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'read write', state: 's', ...params })}`;
      const exchange = (code: string, extra: Record<string, string> = {}) =>
        server.token(
          post('/v1/oauth/token', {
            grant_type: 'authorization_code',
            code,
            redirect_uri: CALLBACK,
            client_id: client.clientId,
            client_secret: client.clientSecret,
            ...extra,
          }),
        );
      const codeFrom = (decision: { type: string; location?: string }) => {
        check(decision.type === 'redirect' && decision.location, `expected a redirect with a code, got ${canonical(decision)}`);
        return keep('a code', new URL(decision.location).searchParams.get('code'));
      };

      // Sign-in interaction, then consent interaction, then the code.
      const login = await server.authorize(get(authorizeUrl(), false));
      check(login.type === 'login', `authorize without a session gives a login decision, got ${canonical(login)}`);
      keep('a login interaction id', login.interaction.id);
      const consent = await server.resume(login.interaction.id, get('/'));
      check(consent.type === 'consent', `resume after sign-in gives a consent decision, got ${canonical(consent)}`);
      keep('a consent interaction id', consent.interaction.id);
      const code = codeFrom(await server.approve(consent.interaction.id, get('/')));

      now += 1000;
      const first = await exchange(code);
      check(first.status === 200, `the code exchange on this storage must succeed, got ${first.status} ${first.body}`);
      const t1 = body(first);
      const access1 = keep('an access token', t1['access_token']);
      const refresh1 = keep('a refresh token', t1['refresh_token']);
      check(await api(access1), 'the issued access token is accepted by the resource check');

      now += 1000;
      const refreshed = await server.token(post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: refresh1 }));
      check(refreshed.status === 200, `refresh on this storage must succeed, got ${refreshed.status} ${refreshed.body}`);
      const t2 = body(refreshed);
      const access2 = keep('a refreshed access token', t2['access_token']);
      keep('a refreshed refresh token', t2['refresh_token']);
      check(!(await api(access1)), 'the access token issued with the rotated refresh token no longer works');
      check(await api(access2), 'the new access token works');
      const reuse = await server.token(post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: refresh1 }));
      check(
        reuse.status === 400 && body(reuse)['error'] === 'invalid_grant',
        `reusing a rotated refresh token gives invalid_grant, got ${reuse.status} ${reuse.body}`,
      );
      check(
        !(await api(access2)),
        'reusing a rotated refresh token revokes the family: the newest access token stops working (the storage must report "used" with the grantId)',
      );

      // prompt=none reuses the stored consent; a replayed code revokes what it issued.
      const code2 = codeFrom(await server.authorize(get(authorizeUrl({ prompt: 'none' }))));
      const second = await exchange(code2);
      check(second.status === 200, `the second code exchange succeeds, got ${second.status} ${second.body}`);
      const t3 = body(second);
      const access3 = keep('an access token', t3['access_token']);
      keep('a refresh token', t3['refresh_token']);
      const replay = await exchange(code2);
      check(
        replay.status === 400 && body(replay)['error'] === 'invalid_grant',
        `a replayed code gives invalid_grant, got ${replay.status} ${replay.body}`,
      );
      check(
        !(await api(access3)),
        'a replayed code revokes the tokens it issued (the storage must keep used codes and report "used" with the grantId)',
      );

      // PKCE: the verifier is a secret too; only its challenge may be stored.
      const verifier = keep('a PKCE code verifier', randomToken() + randomToken());
      const challenge = base64url(new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
      const code3 = codeFrom(
        await server.authorize(get(authorizeUrl({ prompt: 'none', code_challenge: challenge, code_challenge_method: 'S256' }))),
      );
      const pkce = await exchange(code3, { code_verifier: verifier });
      check(pkce.status === 200, `a PKCE code exchange succeeds, got ${pkce.status} ${pkce.body}`);
      const pkceAccess = keep('an access token', body(pkce)['access_token']);
      keep('a refresh token', body(pkce)['refresh_token']);

      // Implicit flow, then revocation.
      const implicit = await server.authorize(get(authorizeUrl({ prompt: 'none', response_type: 'token' })));
      check(implicit.type === 'redirect', `the implicit flow redirects, got ${canonical(implicit)}`);
      const implicitToken = keep(
        'an implicit access token',
        new URLSearchParams(new URL(implicit.location).hash.slice(1)).get('access_token'),
      );
      check(await api(implicitToken), 'the implicit access token works');
      const revoked = await server.revoke(post('/v1/oauth/revoke', { token: implicitToken }));
      check(revoked.status === 200, `revocation succeeds, got ${revoked.status} ${revoked.body}`);
      check(!(await api(implicitToken)), 'a revoked token no longer works');

      const reset = await server.resetClientSecret(client.clientId);
      keep('a reset client secret', reset.clientSecret);
      check((await server.listAuthorizations(ada.uuid)).length === 1, 'listAuthorizations shows the authorized application');
      await server.revokeAccess({ accountUuid: ada.uuid, clientId: client.clientId });
      const after = await server.authorize(get(authorizeUrl({ prompt: 'none' })));
      check(
        after.type === 'redirect' && new URL(after.location).searchParams.get('error') === 'consent_required',
        `after revokeAccess, prompt=none answers consent_required, got ${canonical(after)}`,
      );
      check(!(await api(pkceAccess)), "after revokeAccess, the application's tokens no longer work");

      check(calls.length > 30, `the flow went through the storage (${calls.length} calls)`);
      for (const [what, secret] of secrets) {
        const leak = calls.find((call) => call.includes(secret));
        check(!leak, `${what} reached the storage in clear: ${leak?.slice(0, 200)}`);
      }
    },
  ),
];
