/**
 * authgate's contenders for the in-process workloads, on any Storage (MemoryStorage, or
 * PostgresStorage for the database section). Each operation checks its answer, so a fast wrong
 * answer can never pass for a fast right one.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AuthorizationServer, OAuthRequest } from '../src/index.js';
import { BENCH_ISSUER, proof, proofKey, RESOURCE_URL, TOKEN_URL, type ProofKey } from './lib/dpop.js';
import { ACCOUNT, authgateFixture, CALLBACK, codeFrom, jsonField, wire, type AuthgateFixture } from './lib/fixture.js';
import type { CoreModule } from './lib/load.js';
import type { Contender, ContenderKind } from './lib/measure.js';

export type WorkloadId = 'W1' | 'W1x' | 'W1o' | 'W2' | 'W2d' | 'W3' | 'W4' | 'W5' | 'W6';
export const WORKLOADS: Record<WorkloadId, string> = {
  W1: 'code flow: authorize → approve → token exchange',
  W1x: 'token exchange alone (codes issued beforehand)',
  W1o: 'code flow with openid: W1 plus an ID token (RS256)',
  W2: 'refresh with rotation (chained)',
  W2d: "refresh with rotation of a DPoP-bound public client's token (fresh ES256 proof per op)",
  W3: 'bearer check of a live access token',
  W4: 'revocation of a live access token',
  W5: 'bearer check of a live personal access token',
  W6: 'DPoP-bound access token check (fresh ES256 proof per op: verify, replay check, lookup)',
};
export const WORKLOAD_IDS = Object.keys(WORKLOADS) as WorkloadId[];

/**
 * Why a version of authgate (another one's sources, in bench:ab) cannot run a workload, or
 * `undefined` when it can: the workloads of a feature that version does not have.
 */
export function unsupported(id: WorkloadId, core: CoreModule): string | undefined {
  if (id === 'W5' && typeof (core.AuthorizationServer.prototype as { createPersonalToken?: unknown }).createPersonalToken !== 'function')
    return 'this version of authgate has no personal access tokens';
  // The option itself, not an export: a version may ship a feature's building blocks before the option.
  if (id === 'W1o' && !acceptsOption(core, { openid: {} })) return 'this version of authgate has no OpenID Connect (openid option)';
  if ((id === 'W6' || id === 'W2d') && !acceptsOption(core, { dpop: {} })) return 'this version of authgate has no DPoP (dpop option)';
  return undefined;
}

/** Whether this version's constructor takes `options` (an unknown option is a ConfigError). */
function acceptsOption(core: CoreModule, options: Record<string, unknown>): boolean {
  try {
    new core.AuthorizationServer({
      storage: new core.MemoryStorage(),
      sessions: { current: () => null },
      issuer: BENCH_ISSUER,
      ...options,
    } as ConstructorParameters<CoreModule['AuthorizationServer']>[0]);
    return true;
  } catch {
    return false;
  }
}

/** The fixture of the OpenID Connect workload: the same store, a server with `openid` (one generated RS256 key). */
const openidFixture = (fx: AuthgateFixture) =>
  authgateFixture(fx.core, fx.storage, {
    options: { issuer: BENCH_ISSUER, openid: {} },
    params: { scope: 'read openid', nonce: 'n-0S6_WzA2Mj' },
  });

/** The fixture of the DPoP workloads: the same store, a server with `dpop: {}`. */
const dpopFixture = (fx: AuthgateFixture) => authgateFixture(fx.core, fx.storage, { options: { issuer: BENCH_ISSUER, dpop: {} } });

/** A token request as the token endpoint receives it, with a DPoP proof. */
function dpopPost(fx: AuthgateFixture, form: string, dpop: string): OAuthRequest {
  const request = fx.post('/v1/oauth/token', wire(form));
  request.headers.dpop = dpop;
  return request;
}

/** A public client of `server` and a refresh token bound to `key` (code flow with PKCE, exchanged with a proof). */
async function boundPublicRefresh(fx: AuthgateFixture, key: ProofKey): Promise<{ clientId: string; refreshToken: string }> {
  const server: AuthorizationServer = fx.server;
  const { clientId } = await server.registerClient({ name: 'Bench CLI', redirectUri: CALLBACK, public: true });
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const url = `/v1/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'read', code_challenge: challenge, code_challenge_method: 'S256' })}`;
  const decision = await server.authorize({ method: 'GET', url, headers: { cookie: 'sid=bench' } });
  if (decision.type !== 'consent') throw new Error(`W2d: expected consent, got ${decision.type}`);
  const approved = await server.approve(decision.interaction.id, fx.decisionRequest());
  if (approved.type !== 'redirect') throw new Error(`W2d: expected a redirect, got ${approved.type}`);
  const form = `grant_type=authorization_code&code=${codeFrom(approved.location)}&redirect_uri=${encodeURIComponent(CALLBACK)}&client_id=${clientId}&code_verifier=${verifier}`;
  const response = await server.token(dpopPost(fx, form, proof(key, 'POST', TOKEN_URL)));
  if (response.status !== 200 || jsonField(response.body, 'token_type') !== 'DPoP')
    throw new Error(`W2d: the exchange did not bind the tokens: ${response.status} ${response.body}`);
  return { clientId, refreshToken: jsonField(response.body, 'refresh_token') };
}

/** A contender that also knows how to check, after its runs, that the work was really done. */
export interface CheckedContender extends Contender {
  verify?(): Promise<void>;
}

export function authgateContenders(
  fx: AuthgateFixture,
  name = 'authgate',
  kind: ContenderKind = 'authgate',
): Record<WorkloadId, CheckedContender> {
  const { server } = fx;

  const w1: CheckedContender = {
    name,
    kind,
    async op() {
      const decision = await server.authorize(fx.authorizeRequest());
      if (decision.type !== 'consent') throw new Error(`W1: expected consent, got ${decision.type}`);
      const approved = await server.approve(decision.interaction.id, fx.decisionRequest());
      if (approved.type !== 'redirect') throw new Error(`W1: expected a redirect, got ${approved.type}`);
      const response = await server.token(fx.post('/v1/oauth/token', fx.exchangeForm(codeFrom(approved.location))));
      if (response.status !== 200) throw new Error(`W1: exchange answered ${response.status} ${response.body}`);
    },
  };

  let exchanges: OAuthRequest[] = [];
  const w1x: CheckedContender = {
    name,
    kind,
    async prepare(count) {
      exchanges = [];
      for (let i = 0; i < count; i++) exchanges.push(fx.post('/v1/oauth/token', wire(fx.exchangeForm(await fx.issueCode()))));
    },
    async op(i) {
      const response = await server.token(exchanges[i]!);
      if (response.status !== 200) throw new Error(`W1x: exchange answered ${response.status} ${response.body}`);
    },
  };

  let current: string | undefined;
  let previous: string | undefined;
  const w2: CheckedContender = {
    name,
    kind,
    async prepare() {
      current ??= (await fx.issuePair()).refreshToken;
    },
    async op() {
      const response = await server.token(fx.post('/v1/oauth/token', fx.refreshForm(current!)));
      if (response.status !== 200) throw new Error(`W2: refresh answered ${response.status} ${response.body}`);
      previous = current;
      current = jsonField(response.body, 'refresh_token');
    },
    async verify() {
      // The rotated token is single use: presenting it again is refused (and revokes the family).
      const replay = await server.token(fx.post('/v1/oauth/token', fx.refreshForm(previous!)));
      if (replay.status !== 400) throw new Error(`W2: a rotated refresh token was accepted again (${replay.status})`);
      current = undefined;
    },
  };

  let bearer: OAuthRequest | undefined;
  const w3: CheckedContender = {
    name,
    kind,
    async prepare() {
      bearer ??= { method: 'GET', url: '/v2/account', headers: { authorization: `Bearer ${(await fx.issuePair()).accessToken}` } };
    },
    async op() {
      const result = await server.authenticate(bearer!);
      if (!result.ok) throw new Error(`W3: the live token was refused: ${result.response.body}`);
    },
  };

  let revocations: OAuthRequest[] = [];
  let revoked: string[] = [];
  const w4: CheckedContender = {
    name,
    kind,
    async prepare(count) {
      revocations = [];
      revoked = [];
      for (let i = 0; i < count; i++) {
        const { accessToken } = await fx.issuePair();
        revoked.push(accessToken);
        revocations.push(
          fx.post(
            '/v1/oauth/revoke',
            wire(`token=${accessToken}&token_type_hint=access_token&client_id=${fx.clientId}&client_secret=${fx.clientSecret}`),
          ),
        );
      }
    },
    async op(i) {
      const response = await server.revoke(revocations[i]!);
      if (response.status !== 200) throw new Error(`W4: revocation answered ${response.status} ${response.body}`);
    },
    async verify() {
      for (const token of revoked) {
        const result = await server.authenticate({ method: 'GET', url: '/v2/account', headers: { authorization: `Bearer ${token}` } });
        if (result.ok) throw new Error('W4: a revoked access token still authenticates');
      }
    },
  };

  // W3 with a personal access token (docs/reference.md#personal-access-tokens): the same request,
  // the same check, its last use written at most once a minute (so not in the timed loop).
  let personal: OAuthRequest | undefined;
  const w5: CheckedContender = {
    name,
    kind,
    async prepare() {
      if (typeof server.createPersonalToken !== 'function') throw new Error('W5: this version of authgate has no personal access tokens');
      personal ??= {
        method: 'GET',
        url: '/v2/account',
        headers: {
          authorization: `Bearer ${(await server.createPersonalToken({ account: ACCOUNT, name: 'bench', scope: ['read'] })).token}`,
        },
      };
    },
    async op() {
      const result = await server.authenticate(personal!);
      if (!result.ok) throw new Error(`W5: the live personal token was refused: ${result.response.body}`);
    },
    async verify() {
      const result = await server.authenticate(personal!);
      if (!result.ok || result.token.kind !== 'personal') throw new Error('W5: the bearer check did not see a personal token');
    },
  };

  // W1 on a server with `openid`: the same flow asking `read openid` with a nonce, so the
  // exchange also signs an ID token (RS256, the default key).
  let oidc: AuthgateFixture | undefined;
  const w1o: CheckedContender = {
    name,
    kind,
    async prepare() {
      const missing = unsupported('W1o', fx.core);
      if (missing) throw new Error(`W1o: ${missing}`);
      oidc ??= await openidFixture(fx);
    },
    async op() {
      const o = oidc!;
      const decision = await o.server.authorize(o.authorizeRequest());
      if (decision.type !== 'consent') throw new Error(`W1o: expected consent, got ${decision.type}`);
      const approved = await o.server.approve(decision.interaction.id, o.decisionRequest());
      if (approved.type !== 'redirect') throw new Error(`W1o: expected a redirect, got ${approved.type}`);
      const response = await o.server.token(o.post('/v1/oauth/token', o.exchangeForm(codeFrom(approved.location))));
      if (response.status !== 200) throw new Error(`W1o: exchange answered ${response.status} ${response.body}`);
      if (response.body.lastIndexOf('"id_token":"ey') < 0) throw new Error(`W1o: no ID token in ${response.body}`);
    },
  };

  // A DPoP-bound access token checked at a resource, each request with a proof of its own
  // (made in `prepare`, untimed): the proof's signature, its jti remembered, the token looked up.
  let dpop: AuthgateFixture | undefined;
  let w6Key: ProofKey | undefined;
  let bound: string | undefined;
  let resourceRequests: OAuthRequest[] = [];
  const w6: CheckedContender = {
    name,
    kind,
    async prepare(count) {
      const missing = unsupported('W6', fx.core);
      if (missing) throw new Error(`W6: ${missing}`);
      dpop ??= await dpopFixture(fx);
      w6Key ??= proofKey();
      if (bound === undefined) {
        const response = await dpop.server.token(
          dpopPost(dpop, dpop.exchangeForm(await dpop.issueCode()), proof(w6Key, 'POST', TOKEN_URL)),
        );
        if (response.status !== 200 || jsonField(response.body, 'token_type') !== 'DPoP')
          throw new Error(`W6: not bound: ${response.body}`);
        bound = jsonField(response.body, 'access_token');
      }
      resourceRequests = [];
      for (let i = 0; i < count; i++) {
        resourceRequests.push({
          method: 'GET',
          url: '/v2/account',
          headers: { authorization: `DPoP ${bound}`, dpop: proof(w6Key, 'GET', RESOURCE_URL, bound) },
        });
      }
    },
    async op(i) {
      const result = await dpop!.server.authenticate(resourceRequests[i]!);
      if (!result.ok) throw new Error(`W6: the bound token and its proof were refused: ${result.response.body}`);
    },
    async verify() {
      // Each proof is single use: the last one again is refused; so is the token as a bearer token.
      const replay = await dpop!.server.authenticate(resourceRequests[resourceRequests.length - 1]!);
      if (replay.ok) throw new Error('W6: a DPoP proof was accepted twice');
      const asBearer = await dpop!.server.authenticate({
        method: 'GET',
        url: '/v2/account',
        headers: { authorization: `Bearer ${bound}` },
      });
      if (asBearer.ok) throw new Error('W6: a DPoP-bound token passed as a bearer token');
    },
  };

  // W2 for a public client whose refresh token is bound to its key: each refresh with a fresh
  // proof of the token endpoint (made in `prepare`), the proof's key checked against the binding.
  let w2dFixture: AuthgateFixture | undefined;
  let w2dKey: ProofKey | undefined;
  let w2dClient = '';
  let w2dCurrent: string | undefined;
  let w2dProofs: string[] = [];
  const w2d: CheckedContender = {
    name,
    kind,
    async prepare(count) {
      const missing = unsupported('W2d', fx.core);
      if (missing) throw new Error(`W2d: ${missing}`);
      w2dFixture ??= await dpopFixture(fx);
      w2dKey ??= proofKey();
      if (w2dCurrent === undefined) ({ clientId: w2dClient, refreshToken: w2dCurrent } = await boundPublicRefresh(w2dFixture, w2dKey));
      w2dProofs = [];
      for (let i = 0; i < count; i++) w2dProofs.push(proof(w2dKey, 'POST', TOKEN_URL));
    },
    async op(i) {
      const d = w2dFixture!;
      const request = d.post('/v1/oauth/token', `grant_type=refresh_token&refresh_token=${w2dCurrent}&client_id=${w2dClient}`);
      request.headers.dpop = w2dProofs[i]!;
      const response = await d.server.token(request);
      if (response.status !== 200) throw new Error(`W2d: refresh answered ${response.status} ${response.body}`);
      w2dCurrent = jsonField(response.body, 'refresh_token');
    },
    async verify() {
      // The refresh token is bound: without a proof, or with another key's, it is refused.
      const d = w2dFixture!;
      const form = `grant_type=refresh_token&refresh_token=${w2dCurrent}&client_id=${w2dClient}`;
      const bare = await d.server.token(d.post('/v1/oauth/token', form));
      const stolen = await d.server.token(dpopPost(d, form, proof(proofKey(), 'POST', TOKEN_URL)));
      if (bare.status !== 400 || stolen.status !== 400)
        throw new Error(`W2d: the bound refresh token was accepted (${bare.status}, ${stolen.status})`);
      w2dCurrent = undefined;
    },
  };

  return { W1: w1, W1x: w1x, W1o: w1o, W2: w2, W2d: w2d, W3: w3, W4: w4, W5: w5, W6: w6 };
}
