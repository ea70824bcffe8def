import { mayUseGrant } from '../checks/client-auth.js';
import { audit, type Context } from '../context.js';
import type { ClientRecord, OAuthGrantRecord } from '../storage/types.js';
import { mintAccessOnly, mintPair, type IssuedPair, type IssuedTokens, type PairOptions, type RefreshFamilyPart } from '../tokens/mint.js';
import { invalidGrant } from './invalid-grant.js';

/**
 * The one issuing tail of every grant that issues tokens: the authorization code, refresh and
 * device code grants at the token endpoint, and the implicit flow at the authorization endpoint.
 * A grant does its own checks, then:
 *
 * 1. `mintTokens`: the tokens, with the refresh-token choice;
 * 2. its own atomic storage step, which stores them while it uses up what it redeems (`redeemCode`,
 *    `rotateRefreshToken`, `redeemDeviceAuthorization`; `createGrant` for the implicit flow);
 * 3. `issued`: the account check (`isAccountActive`) and the `token.issued` audit event.
 *
 * The storage step sits between the two halves, in the grant, because each grant uses up
 * something different and answers its own failures (a code used twice, a refresh token replayed).
 * Neither half awaits anything unless the host's `isAccountActive` is set.
 */

/**
 * What a grant issues: the tokens' options (`PairOptions`, every one of them given, in this
 * order, so each grant's object has the same shape for the minting code) and the grant type
 * `token.issued` names.
 */
export interface Issue extends PairOptions {
  grantType: 'authorization_code' | 'refresh_token' | 'device_code' | 'implicit';
  end: number | null;
  audience: string[] | undefined;
  refreshAudience: string[] | undefined;
  refreshFamily: RefreshFamilyPart | null;
  /** DPoP (RFC 9449 §5): the key the tokens are bound to; absent: bearer tokens. */
  dpop?: KeyBinding | undefined;
}

/**
 * The DPoP key of an issue: the access token is bound to `jkt`, and so is the refresh token when
 * `refresh` (a public client's, RFC 9449 §5; a confidential client's is protected by its
 * authentication instead).
 */
export interface KeyBinding {
  jkt: string;
  refresh: boolean;
}

/**
 * The tokens `issue` asks for, not stored yet: an access token, and a refresh token unless the
 * grant may not have one.
 */
export function mintTokens(ctx: Context, issue: Issue, client: ClientRecord | null): IssuedPair {
  const pair = getsRefreshToken(issue, client) ? mintPair(ctx, issue) : mintAccessOnly(ctx, issue);
  if (issue.dpop !== undefined) bind(pair, issue.dpop);
  return pair;
}

/** Binds the minted records to a DPoP key (RFC 9449 §6): each its own copy of the binding. */
function bind(pair: IssuedPair, binding: KeyBinding): void {
  for (const record of pair.records) {
    if (record.kind === 'access' || binding.refresh) record.dpop = { jkt: binding.jkt };
  }
}

/** The binding of tokens issued with a proof of key `jkt` to `client`: its refresh token too when the client is public. */
export function keyBinding(jkt: string | undefined, client: ClientRecord): KeyBinding | undefined {
  return jkt === undefined ? undefined : { jkt, refresh: client.secretHash === null };
}

/** Whether a grant issues a refresh token with its access token. */
function getsRefreshToken(issue: Issue, client: ClientRecord | null): boolean {
  switch (issue.grantType) {
    case 'implicit':
      return false; // RFC 6749 §4.2.2: MUST NOT
    case 'refresh_token':
      // A rotation: the token endpoint checked that the client may use the grant (or, without
      // credentials, the refresh grant checked it for the token's client).
      return true;
    default:
      // A client not allowed to refresh gets no refresh token: one it may not use is only a risk
      // (RFC 6749 §5.1: a refresh token is optional; RFC 7591 §2 `grant_types`).
      return client !== null && mayUseGrant(client, 'refresh_token');
  }
}

/**
 * The tail after the grant's storage step stored `pair` with `grant`: the host's `isAccountActive`
 * check at every use of a grant at the token endpoint (the implicit flow issues at the
 * authorization endpoint, to the account signed in there, and has no `invalid_grant` to answer),
 * then the `token.issued` event. Synchronous unless the check is set.
 */
export function issued(
  ctx: Context,
  issue: Issue,
  grant: OAuthGrantRecord,
  pair: IssuedPair,
  openid?: IssuedTokens['openid'],
): IssuedTokens | Promise<IssuedTokens> {
  if (ctx.options.isAccountActive && issue.grantType !== 'implicit') {
    return checkAccountActive(ctx, grant, issue.now).then(() => announce(ctx, issue, grant, pair, openid));
  }
  return announce(ctx, issue, grant, pair, openid);
}

function announce(ctx: Context, issue: Issue, grant: OAuthGrantRecord, pair: IssuedPair, openid?: IssuedTokens['openid']): IssuedTokens {
  audit(ctx, {
    type: 'token.issued',
    grantType: issue.grantType,
    clientId: issue.clientId,
    accountUuid: grant.account.uuid,
    grantId: grant.id,
    scope: pair.scope,
  });
  // OpenID Connect: the code's ID token facts (`openid`), or on a refresh the grant's `auth_time`
  // without a nonce (Core §12.2); the token endpoint adds the ID token while the scope keeps `openid`.
  const facts = openid ?? (issue.grantType === 'refresh_token' && grant.openid ? { authTime: grant.openid.authTime } : undefined);
  return facts === undefined ? { grant, pair } : { grant, pair, openid: facts };
}

/**
 * The host's `isAccountActive` check after a grant was used: a disabled or deleted account gets
 * `invalid_grant` and its grant is revoked, so nothing issued for it keeps working.
 */
async function checkAccountActive(ctx: Context, grant: OAuthGrantRecord, now: number): Promise<void> {
  const check = ctx.options.isAccountActive;
  if (!check || (await check(grant.account.uuid))) return;
  await ctx.storage.revokeGrant(grant.id, now);
  audit(ctx, { type: 'account.inactive', clientId: grant.clientId, accountUuid: grant.account.uuid, grantId: grant.id });
  throw invalidGrant();
}
