import { RecentPairs } from './checks/pkce.js';
import { ScopePolicy } from './checks/scope.js';
import type { Context } from './context.js';
import { ConfigError } from './errors.js';
import { GuessLimiter } from './device/user-code.js';
import { dpopProofs } from './dpop/proofs.js';
import { PendingAnonymous } from './interactions/pending-anonymous.js';
import type { ResolvedOptions } from './options.js';
import { personalMemory } from './personal/personal-tokens.js';
import { hasGroup, requireGroup } from './storage/groups.js';
import { JwtAccessTokens } from './tokens/jwt.js';
import { publicJwk } from './keys/jwk.js';
import { OpenIdScopes, openIdProvider } from './oidc/provider.js';

/**
 * The `Context` of one `AuthorizationServer`: its resolved options, the three seams, and the
 * per-instance parts each made in its own room (context.ts names them by what the core asks of
 * them, so the base layer imports none of these modules).
 */
export function instanceContext(options: ResolvedOptions): Context {
  const openid = options.openid && openIdProvider(options.openid);
  if (openid && options.accessTokenFormat === 'jwt') checkSharedKids(options.jwt.keys, options.openid?.signingKeys);
  const scopes = new ScopePolicy(options.scopes);
  return {
    options,
    storage: options.storage,
    sessions: options.sessions,
    // Whole milliseconds, whatever the injected clock returns (stores keep integers).
    clock: { now: () => Math.floor(options.clock.now()) },
    // With `openid`, the OpenID Connect scopes join the vocabulary for requests that have `openid`.
    scopes: openid ? new OpenIdScopes(scopes, openid.claimScopes) : scopes,
    challenges: new RecentPairs(10_000),
    personal: personalMemory(),
    ...(options.maxPendingAnonymousInteractions !== null && {
      pendingAnonymous: new PendingAnonymous(options.maxPendingAnonymousInteractions),
    }),
    ...(options.deviceAuthorization && {
      // The one way a group is required at construction: the option that turns its feature on.
      devices: requireGroup(options.storage, 'deviceAuthorization', 'deviceAuthorization'),
      deviceGuesses: new GuessLimiter(options.deviceAuthorization.maxUserCodeAttempts, options.deviceAuthorization.lockSeconds * 1000),
    }),
    ...(options.accessTokenFormat === 'jwt' && { jwt: jwtAccessTokens(options) }),
    ...refreshRetry(options),
    ...(options.dpop && { dpop: dpopProofs(options.dpop, requireGroup(options.storage, 'dpopProofs', 'dpop')) }),
    ...(openid && { openid }),
    ...(hasGroup(options.storage, 'combinedReads') && { combined: options.storage }),
    ...(hasGroup(options.storage, 'combinedApproval') && { approval: options.storage }),
  };
}

/** The window of a public client's retry when `refreshRetryWindowSeconds` is not set and the store can retry. */
export const DEFAULT_REFRESH_RETRY_SECONDS = 60;

/**
 * Refresh retries: by default on for public clients (60 s) with a store that has the refresh
 * retry group, off without one; a window set explicitly is for every client and requires the
 * group; 0 turns retries off.
 */
function refreshRetry(options: ResolvedOptions): Pick<Context, 'refreshRetry'> {
  const seconds = options.refreshRetryWindowSeconds;
  if (seconds === 0) return {};
  if (seconds === undefined) {
    const storage = options.storage;
    if (!hasGroup(storage, 'refreshRetry')) return {};
    return { refreshRetry: { store: storage, windowMs: DEFAULT_REFRESH_RETRY_SECONDS * 1000, publicOnly: true } };
  }
  const store = requireGroup(options.storage, 'refreshRetry', 'refreshRetryWindowSeconds');
  return { refreshRetry: { store, windowMs: seconds * 1000, publicOnly: false } };
}

/** The signer of JWT access tokens, whose `iss` (and default `aud`) is the issuer. */
function jwtAccessTokens(options: ResolvedOptions): JwtAccessTokens {
  const { issuer } = options;
  // resolveOptions already refuses JWT access tokens without an issuer: checked again, not asserted.
  if (!issuer) throw new ConfigError('issuer', 'expected an https URL: JWT access tokens carry it as `iss` (RFC 9068)');
  return new JwtAccessTokens({
    ...(options.jwt.keys && { keys: options.jwt.keys }),
    algorithm: options.jwt.algorithm,
    issuer,
    audience: options.jwt.audience ?? issuer,
  });
}

/**
 * One JWKS publishes the keys of ID tokens and of JWT access tokens, a `kid` given to both once
 * (`publishedKeys`): so a `kid` in both lists must name the same key, or the tokens of one list
 * would carry a `kid` whose published key is the other's, and verify nowhere (RFC 7517 §4.5).
 * Both lists are checked already (`SigningKeys.from`); generated keys have random kids.
 * @throws ConfigError naming the `jwt.keys` entry.
 */
function checkSharedKids(jwtKeys: readonly unknown[] | undefined, idKeys: readonly unknown[] | undefined): void {
  if (!jwtKeys || !idKeys) return;
  const published = new Map<unknown, string>();
  for (const key of idKeys) published.set((key as { kid?: unknown }).kid, JSON.stringify(publicJwk(key as Record<string, unknown>)));
  jwtKeys.forEach((key, i) => {
    const kid = (key as { kid?: unknown }).kid;
    const other = published.get(kid);
    if (other !== undefined && other !== JSON.stringify(publicJwk(key as Record<string, unknown>)))
      throw new ConfigError(
        `jwt.keys.${i}`,
        `kid ${JSON.stringify(kid)} names another key in openid.signingKeys: a kid given to both lists must be the same key`,
      );
  });
}
