import type { Account } from '../types.js';
import type { ClientChanges, ClientRecord } from './types.js';

/**
 * A copy of an account, so that whoever receives it cannot change the one a store keeps. Records
 * are flat apart from the host's extra fields (`info`): a flat account is copied by a spread,
 * one with nested fields is cloned deeply. The fields are looked at in the copy, over the array of
 * its keys: a `for...in` over accounts of every shape weighed on every bearer check (see
 * BENCHMARKS.md).
 */
export function copyAccount(a: Account): Account {
  const copy = { ...a };
  for (const key of Object.keys(copy)) {
    if (typeof (copy as unknown as Record<string, unknown>)[key] === 'object') return structuredClone(a);
  }
  return copy;
}

/**
 * `client` with `changes` applied (`Storage.updateClientFields`): the fields named, `metadata:
 * null` removing it; metadata is copied through JSON, as a store keeps it. A new record: `client`
 * is not changed.
 */
export function withClientChanges(client: ClientRecord, changes: ClientChanges): ClientRecord {
  const updated: ClientRecord = { ...client };
  if (changes.name !== undefined) updated.name = changes.name;
  if (changes.redirectUri !== undefined) updated.redirectUri = changes.redirectUri;
  if (changes.secretHash !== undefined) updated.secretHash = changes.secretHash;
  if (changes.metadata === null) delete updated.metadata;
  else if (changes.metadata !== undefined) updated.metadata = JSON.parse(JSON.stringify(changes.metadata)) as Record<string, unknown>;
  if (changes.openid === null) delete updated.openid;
  else if (changes.openid !== undefined) updated.openid = JSON.parse(JSON.stringify(changes.openid)) as NonNullable<ClientRecord['openid']>;
  return updated;
}
