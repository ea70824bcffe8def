/**
 * authgate's contenders for the in-process workloads, on any Storage (MemoryStorage, or
 * PostgresStorage for the database section). Each operation checks its answer, so a fast wrong
 * answer can never pass for a fast right one.
 */
import type { OAuthRequest } from '../src/index.js';
import { ACCOUNT, codeFrom, jsonField, wire, type AuthgateFixture } from './lib/fixture.js';
import type { Contender, ContenderKind } from './lib/measure.js';

export type WorkloadId = 'W1' | 'W1x' | 'W2' | 'W3' | 'W4' | 'W5';
export const WORKLOADS: Record<WorkloadId, string> = {
  W1: 'code flow: authorize → approve → token exchange',
  W1x: 'token exchange alone (codes issued beforehand)',
  W2: 'refresh with rotation (chained)',
  W3: 'bearer check of a live access token',
  W4: 'revocation of a live access token',
  W5: 'bearer check of a live personal access token',
};
export const WORKLOAD_IDS = Object.keys(WORKLOADS) as WorkloadId[];

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

  return { W1: w1, W1x: w1x, W2: w2, W3: w3, W4: w4, W5: w5 };
}
