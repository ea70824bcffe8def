import type { Context } from '../context.js';
import { jsonString } from '../http.js';
import type { GrantRecord } from '../storage/types.js';
import type { Account } from '../types.js';
import { accessTokenValue, type IssuedPair } from './mint.js';
import { DPOP_TOKEN_TYPE } from '../dpop/binding.js';

/**
 * The `info` object of a token response (docs/reference.md#token-response): the account's
 * `name`, `email` and `uuid`, which the host's `info` option adds to and cannot replace.
 */
export function infoOf(ctx: Context, account: Account): Record<string, unknown> {
  const extra = ctx.options.info?.(account) ?? {};
  return { ...extra, name: account.name, email: account.email, uuid: account.uuid };
}

/**
 * The JSON text of a successful token response (RFC 6749 §5.1, plus `info`:
 * docs/reference.md#token-response), written out directly rather than through `JSON.stringify` of
 * an object, on the endpoint a refresh storm hits (see BENCHMARKS.md). A promise only when the
 * access token is a JWT still to be signed.
 */
export function tokenResponseJson(ctx: Context, grant: GrantRecord, pair: IssuedPair): string | Promise<string> {
  const accessToken = accessTokenValue(ctx, pair.access, grant);
  return typeof accessToken === 'string'
    ? tokenJson(ctx, grant, pair, accessToken)
    : accessToken.then((jwt) => tokenJson(ctx, grant, pair, jwt));
}

function tokenJson(ctx: Context, grant: GrantRecord, pair: IssuedPair, accessToken: string): string {
  const { account } = grant;
  const scope = ctx.scopes.format(pair.scope);
  // The configured lifetime, or less where the family ends sooner (`lifetimes.grant`).
  const expiresIn = Math.ceil((pair.access.record.expiresAt - pair.access.record.issuedAt) / 1000);
  // Exactly what JSON.stringify writes. A host `info` hook, or an account whose fields are not
  // all strings (a JavaScript host may hand over a null email), takes JSON.stringify itself.
  if (ctx.options.info || typeof account.name !== 'string' || typeof account.email !== 'string' || typeof account.uuid !== 'string') {
    const body: Record<string, unknown> = { access_token: accessToken, token_type: tokenType(pair), expires_in: expiresIn };
    if (pair.refreshToken !== null) body.refresh_token = pair.refreshToken;
    return JSON.stringify({ ...body, scope, info: infoOf(ctx, account) });
  }
  const refresh = pair.refreshToken === null ? '' : `"refresh_token":${jsonString(pair.refreshToken)},`;
  return (
    `{"access_token":${jsonString(accessToken)},"token_type":"${tokenType(pair)}","expires_in":${expiresIn},` +
    `${refresh}"scope":${jsonString(scope)},` +
    `"info":{"name":${jsonString(account.name)},"email":${jsonString(account.email)},"uuid":${jsonString(account.uuid)}}}`
  );
}

/** `DPoP` for an access token bound to a key (RFC 9449 §5), else `bearer`. */
const tokenType = (pair: IssuedPair): string => (pair.access.record.dpop === undefined ? 'bearer' : DPOP_TOKEN_TYPE);
