/**
 * What a platform's own pages do with clients and accounts besides the OAuth endpoints
 * (docs/reference.md#managing-clients): list a developer's clients, change a client's name or
 * callback URL, delete a client with everything it holds, and revoke every grant of an account.
 * `AuthorizationServer` exposes each as a method.
 */
import { redirectUriProblem } from './checks/redirect-uri.js';
import { audit, type Context } from './context.js';
import { ConfigError, OAuthError } from './errors.js';
import { BIDI_CONTROLS, plainLine, plausibleId } from './rules.js';
import { withClientChanges } from './storage/copy.js';
import type { ClientChanges, ClientRecord, Storage } from './storage/types.js';
import type { ClientInfo } from './types.js';

/** The largest `metadata` a client may carry, as JSON. */
export const MAX_CLIENT_METADATA_BYTES = 4096;

/** The name of a client: 1 to 200 characters without control characters, trimmed. */
export function clientName(value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (!plainLine(name, 200) || BIDI_CONTROLS.test(name)) {
    throw new OAuthError(
      'invalid_request',
      'The application name must be 1 to 200 characters, without control or bidirectional characters.',
    );
  }
  return name;
}

/** `owner`: the host's id of whoever owns the client, 1 to 200 characters without control characters. */
export function clientOwner(value: unknown): string {
  if (!plausibleId(value)) {
    throw new OAuthError('invalid_request', 'The owner must be a string of 1 to 200 characters, without control characters.');
  }
  return value;
}

/**
 * `metadata`: a plain JSON object of at most 4 KiB, kept as its JSON (so what a store gives back
 * equals what was given, and nothing the caller holds is shared).
 */
export function clientMetadata(value: unknown): Record<string, unknown> {
  const plain = typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
  let json: string | undefined;
  try {
    json = plain ? JSON.stringify(value) : undefined;
  } catch {
    json = undefined; // a cycle, a BigInt
  }
  if (json === undefined || new TextEncoder().encode(json).length > MAX_CLIENT_METADATA_BYTES) {
    throw new OAuthError('invalid_request', `The metadata must be a plain JSON object of at most ${MAX_CLIENT_METADATA_BYTES} bytes.`);
  }
  return JSON.parse(json) as Record<string, unknown>;
}

/** The callback URL of a client, as `registerClient` checks it. */
export function clientRedirectUri(value: unknown, isPublic: boolean): string {
  const problem = typeof value === 'string' ? redirectUriProblem(value, isPublic) : 'is not a string';
  if (problem) throw new OAuthError('invalid_request', `The callback URL ${problem}.`);
  return value as string;
}

/**
 * A registered client as the host may show it (never its secret).
 * @group Authorization
 */
export function clientInfo(client: ClientRecord): ClientInfo {
  const info: ClientInfo = {
    clientId: client.id,
    name: client.name,
    redirectUri: client.redirectUri,
    public: client.secretHash === null,
    createdAt: client.createdAt,
  };
  if (client.registration !== undefined) info.verified = false;
  if (client.clientUri !== undefined) info.clientUri = client.clientUri;
  if (client.logoUri !== undefined) info.logoUri = client.logoUri;
  if (client.owner !== undefined) info.owner = client.owner;
  if (client.metadata !== undefined) info.metadata = client.metadata;
  return info;
}

/**
 * Write `changes` of a stored client and answer the client as it now is:
 * `updateClientFields` when the store has it (`invalid_client` when the client was deleted
 * meanwhile), else the whole record, read before, with the changes.
 */
export async function saveClientChanges(storage: Storage, client: ClientRecord, changes: ClientChanges): Promise<ClientRecord> {
  const updated = withClientChanges(client, changes);
  if (typeof storage.updateClientFields !== 'function') await storage.saveClient(updated);
  else if (!(await storage.updateClientFields(client.id, changes))) throw new OAuthError('invalid_client', 'The application is unknown.');
  return updated;
}

/** The optional storage method a management call needs, or a `ConfigError` naming it. */
function needs<K extends 'listClients' | 'deleteClient' | 'revokeAccountGrants'>(storage: Storage, method: K): NonNullable<Storage[K]> {
  const fn = storage[method];
  if (typeof fn !== 'function') {
    throw new ConfigError('storage', `expected a Storage with ${method}() for this call (docs/reference.md#managing-clients)`);
  }
  return fn.bind(storage) as NonNullable<Storage[K]>;
}

/** A registered client by id, or `invalid_client`. Clients of metadata documents are not stored, so never found here. */
async function registered(ctx: Context, clientId: unknown): Promise<ClientRecord> {
  const client = plausibleId(clientId) ? await ctx.storage.findClient(clientId) : null;
  if (!client) throw new OAuthError('invalid_client', 'The application is unknown.');
  return client;
}

/** The registered clients, those of `owner` when given, oldest first. */
export async function listClients(ctx: Context, filter: { owner?: string } = {}): Promise<ClientInfo[]> {
  const list = needs(ctx.storage, 'listClients');
  const owner = filter?.owner === undefined ? undefined : clientOwner(filter.owner);
  const clients = await list(owner === undefined ? {} : { owner });
  return clients.map(clientInfo);
}

/**
 * Change a client's name, callback URL or metadata. A new callback URL takes effect at once: an
 * authorization started before it, and a code issued to the old URL, are refused from then on
 * (`currentClient` in checks/authorization-request.ts, the code exchange in grants/authorization-code.ts).
 */
export async function updateClient(
  ctx: Context,
  clientId: string,
  changes: { name?: string; redirectUri?: string; metadata?: Record<string, unknown> | null },
): Promise<ClientInfo> {
  const client = await registered(ctx, clientId);
  if (typeof changes !== 'object' || changes === null) throw new OAuthError('invalid_request', 'Expected the changes as an object.');
  const fields: ClientChanges = {};
  if (changes.name !== undefined) fields.name = clientName(changes.name);
  if (changes.redirectUri !== undefined) fields.redirectUri = clientRedirectUri(changes.redirectUri, client.secretHash === null);
  if (changes.metadata !== undefined) fields.metadata = changes.metadata === null ? null : clientMetadata(changes.metadata);
  // Only the changed fields, and never an insert: a concurrent deleteClient or resetClientSecret is not undone.
  const updated = await saveClientChanges(ctx.storage, client, fields);
  audit(ctx, { type: 'client.updated', clientId: client.id, callbackChanged: updated.redirectUri !== client.redirectUri });
  return clientInfo(updated);
}

/** Delete a client: every code and token of it, for every user, is dead at once; its consents go too. */
export async function deleteClient(ctx: Context, clientId: string): Promise<void> {
  const remove = needs(ctx.storage, 'deleteClient');
  const client = await registered(ctx, clientId);
  await remove(client.id, ctx.clock.now());
  audit(ctx, { type: 'client.deleted', clientId: client.id });
}

/** Revoke every grant of an account, to every client, and forget its consents. */
export async function revokeAllForAccount(ctx: Context, accountUuid: string): Promise<void> {
  const revoke = needs(ctx.storage, 'revokeAccountGrants');
  if (!plausibleId(accountUuid)) throw new OAuthError('invalid_request', 'The account uuid must be a string of 1 to 200 characters.');
  await revoke(accountUuid, ctx.clock.now());
  audit(ctx, { type: 'account.grants_revoked', accountUuid });
}
