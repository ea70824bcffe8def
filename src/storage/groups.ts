/**
 * The storage groups at run time: each group's method list, written once and checked complete
 * against its interface (src/storage/types.ts) at compile time, and the one way the core asks
 * whether a store has a group (`hasGroup`) or needs it (`requireGroup`). The server's options,
 * the features that need a group, and the conformance kit all go through these.
 */
import { ConfigError } from '../errors.js';
import type {
  AccountAdministrationStorage,
  ClientAdministrationStorage,
  CombinedApprovalStorage,
  CombinedReadStorage,
  CoreStorage,
  DeviceAuthorizationStorage,
  DpopProofStorage,
  PersonalTokenStorage,
  RefreshRetryStorage,
  Storage,
  StorageGroup,
  StorageGroups,
} from './types.js';

/** The names of the methods `T` requires (its optional ones, such as `readToken`, left out). */
type RequiredMethods<T> = { [K in keyof T]-?: undefined extends T[K] ? never : K }[keyof T];

/** `unknown` when `L` names every method `T` requires; otherwise a type that names the missing ones. */
type Complete<T, L extends readonly unknown[]> = [Exclude<RequiredMethods<T>, L[number]>] extends [never]
  ? unknown
  : { missing: Exclude<RequiredMethods<T>, L[number]> };

/**
 * A method list of `T`, frozen, that names every method `T` requires and nothing else: a list
 * that leaves one out does not compile (the error names it), nor does one with a name `T` does
 * not have. `methodList<T>()([...])`: the first call fixes `T`, the second infers the list.
 */
export function methodList<T>(): <const L extends readonly RequiredMethods<T>[]>(list: L & Complete<T, L>) => L {
  return (list) => {
    Object.freeze(list);
    return list;
  };
}

/**
 * The methods every store must have (`CoreStorage`; `readToken` is optional). The server's
 * constructor checks a store for them.
 * @group Storage
 */
export const CORE_STORAGE_METHODS = methodList<CoreStorage>()([
  'saveClient',
  'findClient',
  'saveInteraction',
  'findInteraction',
  'takeInteraction',
  'saveConsent',
  'findConsent',
  'listConsents',
  'createGrant',
  'findCode',
  'redeemCode',
  'findToken',
  'rotateRefreshToken',
  'findRefreshFamily',
  'revokeGrant',
  'revokeAccess',
  'revokeClientGrants',
]);

/**
 * The methods of the client administration group (`ClientAdministrationStorage`).
 * @group Storage
 */
export const CLIENT_ADMINISTRATION_METHODS = methodList<ClientAdministrationStorage>()([
  'listClients',
  'updateClientFields',
  'deleteClient',
]);

/**
 * The methods of the account administration group (`AccountAdministrationStorage`).
 * @group Storage
 */
export const ACCOUNT_ADMINISTRATION_METHODS = methodList<AccountAdministrationStorage>()(['revokeAccountGrants']);

/**
 * The methods of the personal access tokens group (`PersonalTokenStorage`).
 * @group Storage
 */
export const PERSONAL_TOKEN_METHODS = methodList<PersonalTokenStorage>()(['listPersonalTokens', 'touchPersonalToken']);

/**
 * The methods of the device authorization group (`DeviceAuthorizationStorage`), which the
 * `deviceAuthorization` option needs: a store has all of them or none.
 * @group Storage
 */
export const DEVICE_STORAGE_METHODS = methodList<DeviceAuthorizationStorage>()([
  'createDeviceAuthorization',
  'findDeviceAuthorization',
  'decideDeviceAuthorization',
  'pollDeviceAuthorization',
  'redeemDeviceAuthorization',
]);

/**
 * The methods of the DPoP proof group (`DpopProofStorage`): the replay check of RFC 9449 proofs
 * across instances.
 * @group Storage
 */
export const DPOP_PROOF_METHODS = methodList<DpopProofStorage>()(['rememberDpopProof']);

/**
 * The methods of the refresh retry group (`RefreshRetryStorage`): a just-rotated refresh token
 * presented again gets a sibling pair (`refreshRetryWindowSeconds`).
 * @group Storage
 */
export const REFRESH_RETRY_METHODS = methodList<RefreshRetryStorage>()(['retryRefreshToken']);

/**
 * The methods of the combined reads group (`CombinedReadStorage`): a client with the code or
 * token a request presents, in one read.
 * @group Storage
 */
export const COMBINED_READ_METHODS = methodList<CombinedReadStorage>()(['findClientAndCode', 'findClientAndToken']);

/**
 * The methods of the combined approval group (`CombinedApprovalStorage`): an approval as one read
 * and one atomic write.
 * @group Storage
 */
export const COMBINED_APPROVAL_METHODS = methodList<CombinedApprovalStorage>()(['findInteractionAndClient', 'approveInteraction']);

/**
 * Each storage group's methods, by group name (`StorageGroups`): one entry per group, or this
 * does not compile.
 * @group Storage
 */
export const STORAGE_GROUPS: { readonly [G in StorageGroup]: readonly (keyof StorageGroups[G])[] } = Object.freeze({
  clientAdministration: CLIENT_ADMINISTRATION_METHODS,
  accountAdministration: ACCOUNT_ADMINISTRATION_METHODS,
  personalTokens: PERSONAL_TOKEN_METHODS,
  deviceAuthorization: DEVICE_STORAGE_METHODS,
  dpopProofs: DPOP_PROOF_METHODS,
  refreshRetry: REFRESH_RETRY_METHODS,
  combinedReads: COMBINED_READ_METHODS,
  combinedApproval: COMBINED_APPROVAL_METHODS,
});

/** What each group serves, and where the reference describes it: for the `ConfigError` of a missing group. */
const FEATURES: { readonly [G in StorageGroup]: string } = {
  clientAdministration: 'listClients and deleteClient (docs/reference.md#managing-clients)',
  accountAdministration: 'revokeAllForAccount (docs/reference.md#managing-clients)',
  personalTokens: 'personal access tokens (docs/reference.md#personal-access-tokens)',
  deviceAuthorization: 'the device authorization grant (docs/reference.md#device-authorization-grant-rfc-8628)',
  dpopProofs: 'the replay check of DPoP proofs (docs/reference.md#storage-groups)',
  refreshRetry: 'refreshRetryWindowSeconds (docs/reference.md#refresh-token-rotation-and-families)',
  combinedReads: 'one read instead of two per code exchange, refresh and revocation (docs/reference.md#storage-groups)',
  combinedApproval: 'an approval in one read and one write (docs/reference.md#storage-groups)',
};

/** The methods of `list` that `storage` does not have (as functions). */
export function missingMethods(storage: unknown, list: readonly string[]): string[] {
  const record = typeof storage === 'object' && storage !== null ? (storage as Record<string, unknown>) : {};
  return list.filter((name) => typeof record[name] !== 'function');
}

/** Whether `storage` has the whole of `group`. */
export function hasGroup<G extends StorageGroup>(storage: Storage, group: G): storage is Storage & StorageGroups[G] {
  return missingMethods(storage, STORAGE_GROUPS[group]).length === 0;
}

/**
 * `storage`, when it has the whole of `group`; otherwise a `ConfigError` (for `option`, default
 * `storage`) that names the group, its methods and the ones missing. The one way the core
 * requires a group: at construction for an option that turns a feature on, else in the calls of
 * the feature.
 */
export function requireGroup<G extends StorageGroup>(storage: Storage, group: G, option = 'storage'): Storage & StorageGroups[G] {
  if (hasGroup(storage, group)) return storage;
  const methods = STORAGE_GROUPS[group];
  const missing = missingMethods(storage, methods);
  throw new ConfigError(
    option,
    `expected a storage with the ${group} group (${methods.map((m) => `${String(m)}()`).join(', ')}) for ${FEATURES[group]}; ` +
      `it lacks ${missing.length === methods.length ? 'all of them' : missing.map((m) => `${m}()`).join(', ')}`,
  );
}
