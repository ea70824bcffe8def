/**
 * Client management, all of it (docs/reference.md#clients, #managing-clients): registering a
 * client (`registerClient`, and dynamic registration through `register.ts`), reading one, listing
 * a developer's clients, changing a client's name, callback URL or secret, deleting a client with
 * everything it holds, revoking an application's tokens or a user's access to it, listing a
 * user's authorized applications, and revoking every grant of an account; with the checks of a
 * client's fields. `AuthorizationServer` exposes each as a method that only forwards here.
 */
import { findClient, isDocumentClientId } from './checks/clients.js';
import { redirectUriProblem } from './checks/redirect-uri.js';
import { audit, type Context } from './context.js';
import { randomId, randomToken, sha256Base64url } from './crypto.js';
import { isOAuthError, OAuthError } from './errors.js';
import { BIDI_CONTROLS, plainLine, plausibleId } from './rules.js';
import { clientOpenIdSection, type ClientOpenIdInput } from './oidc/client-fields.js';
import { sectorIdentifier } from './oidc/subject.js';
import { withClientChanges } from './storage/copy.js';
import { hasGroup, requireGroup } from './storage/groups.js';
import {
  DEVICE_CODE_GRANT,
  type ClientChanges,
  type ClientGrantType,
  type ClientRecord,
  type ClientResponseType,
  type Storage,
} from './storage/types.js';
import type { AuthorizationInfo, ClientInfo, RegisteredClient, RegisteredPublicClient } from './types.js';

/**
 * What a client may use, as `registerClient` takes it (RFC 7591 §2 `response_types`, `grant_types`).
 * @group Authorization
 */
export interface ClientTypes {
  /** Default: every response type the server allows (`code`, and `token` where the implicit flow is on). */
  responseTypes?: ClientResponseType[];
  /**
   * Default: `authorization_code` and `refresh_token`. One of `authorization_code` and
   * `urn:ietf:params:oauth:grant-type:device_code` is required (how a client gets its first
   * tokens). The device grant (RFC 8628) is never a default: a client may use it only when listed
   * here, and only while the server's `deviceAuthorization` option is on.
   */
  grantTypes?: ClientGrantType[];
  /** Who owns the client in your terms (a developer's account uuid, a team id): `listClients({ owner })` finds it. */
  owner?: string;
  /** Your own fields for the client: a plain JSON object of at most 4 KiB, kept as given. */
  metadata?: Record<string, unknown>;
  /**
   * The client always uses DPoP (RFC 9449 §5.2 `dpop_bound_access_tokens`): its token requests
   * without a proof are refused. Needs the server's `dpop` option. Default false.
   */
  dpopBoundAccessTokens?: boolean;
  /** Its OpenID Connect fields (docs/reference.md#openid-connect); only with the `openid` option. */
  openid?: ClientOpenIdInput;
}

/** What `registerClient` takes. */
export type ClientInput = { name: string; redirectUri: string; public?: boolean } & ClientTypes;

/**
 * What `updateClient` changes: a new name, callback URL or `metadata` (`null` removes it).
 * @group Authorization
 */
export interface ClientUpdate {
  name?: string;
  redirectUri?: string;
  metadata?: Record<string, unknown> | null;
  /** Its OpenID Connect fields, all of them (they replace the section); `null` removes them. Only with the `openid` option. */
  openid?: ClientOpenIdInput | null;
}

/** The fields of a client that registration and `updateClient` check, by their names there. */
export type ClientField =
  | 'name'
  | 'redirectUri'
  | 'owner'
  | 'metadata'
  | 'responseTypes'
  | 'grantTypes'
  | 'dpopBoundAccessTokens'
  | 'openid';

/** An `invalid_request` for one refused field of a client, naming the field (`fieldRefused`). */
type FieldRefusal = OAuthError & { readonly field: ClientField };

/**
 * `invalid_request` for one refused field of a client. To the host it is the `OAuthError` it
 * always was, equal to one made without a field: the field is a property that is not enumerable.
 * It is for dynamic registration, which answers a refused callback URL as `invalid_redirect_uri`
 * and any other refused field as `invalid_client_metadata` (RFC 7591 §3.2.2; `refusedField`).
 */
function fieldRefused(field: ClientField, description: string): FieldRefusal {
  return Object.defineProperty(new OAuthError('invalid_request', description), 'field', { value: field }) as FieldRefusal;
}

/** The field of a client an error refused (`fieldRefused`), or `undefined` for any other error. */
export function refusedField(error: unknown): ClientField | undefined {
  return isOAuthError(error) ? (error as Partial<FieldRefusal>).field : undefined;
}

/** The largest `metadata` a client may carry, as JSON. */
export const MAX_CLIENT_METADATA_BYTES = 4096;

/** The name of a client: 1 to 200 characters without control characters, trimmed. */
export function clientName(value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (!plainLine(name, 200) || BIDI_CONTROLS.test(name)) {
    throw fieldRefused('name', 'The application name must be 1 to 200 characters, without control or bidirectional characters.');
  }
  return name;
}

/** `owner`: the host's id of whoever owns the client, 1 to 200 characters without control characters. */
export function clientOwner(value: unknown): string {
  if (!plausibleId(value)) {
    throw fieldRefused('owner', 'The owner must be a string of 1 to 200 characters, without control characters.');
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
    throw fieldRefused('metadata', `The metadata must be a plain JSON object of at most ${MAX_CLIENT_METADATA_BYTES} bytes.`);
  }
  return JSON.parse(json) as Record<string, unknown>;
}

/**
 * The callback URL of a client, as `registerClient` checks it. A client has exactly one: a list
 * (as `redirectUris`, the name other servers use, or as `redirectUri`) is refused with a
 * description that names the option.
 */
export function clientRedirectUri(value: unknown, isPublic: boolean, input?: object): string {
  if (value === undefined && input !== undefined && 'redirectUris' in input) {
    throw fieldRefused(
      'redirectUri',
      'registerClient takes one callback URL as redirectUri (a string), not redirectUris: a client has exactly one callback URL.',
    );
  }
  if (typeof value !== 'string') {
    throw fieldRefused(
      'redirectUri',
      value === undefined
        ? 'The callback URL (redirectUri) is missing: a client has exactly one callback URL, a string.'
        : 'The callback URL (redirectUri) must be a string: a client has exactly one callback URL.',
    );
  }
  const problem = redirectUriProblem(value, isPublic);
  if (problem) throw fieldRefused('redirectUri', `The callback URL ${problem}.`);
  return value;
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
  if (client.openid !== undefined) info.openid = structuredClone(client.openid);
  return info;
}

const RESPONSE_TYPES: readonly ClientResponseType[] = ['code', 'token'];
const GRANT_TYPES: readonly ClientGrantType[] = ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT];

/** A non-empty list of known values, de-duplicated in canonical order; `null` for anything else. */
function typeList<T extends string>(value: unknown, known: readonly T[]): T[] | null {
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => known.includes(v as T))) return null;
  return known.filter((k) => value.includes(k));
}

/** What marks a client that registered itself (dynamic registration): `registration` and the https `client_uri` / `logo_uri` it stated. */
type Unreviewed = Pick<ClientRecord, 'registration' | 'clientUri' | 'logoUri'>;

/**
 * Register a client (`registerClient`): its fields checked, a new id, and for a confidential
 * client a secret returned once, of which only the hash is stored; `unreviewed` for a client
 * that registered itself.
 */
export function createClient(ctx: Context, input: ClientInput & { public: true }, unreviewed?: Unreviewed): Promise<RegisteredPublicClient>;
export function createClient(ctx: Context, input: ClientInput, unreviewed?: Unreviewed): Promise<RegisteredClient | RegisteredPublicClient>;
export async function createClient(
  ctx: Context,
  input: ClientInput,
  unreviewed?: Unreviewed,
): Promise<RegisteredClient | RegisteredPublicClient> {
  const name = clientName(input?.name);
  const isPublic = input.public === true;
  const redirectUri = clientRedirectUri(input.redirectUri, isPublic, input);
  const owner = input.owner === undefined ? undefined : clientOwner(input.owner);
  const metadata = input.metadata === undefined ? undefined : clientMetadata(input.metadata);
  const responseTypes = input.responseTypes === undefined ? undefined : typeList(input.responseTypes, RESPONSE_TYPES);
  if (responseTypes === null) throw fieldRefused('responseTypes', "responseTypes must list one or both of 'code' and 'token'.");
  const grantTypes = input.grantTypes === undefined ? undefined : typeList(input.grantTypes, GRANT_TYPES);
  if (grantTypes === null || (grantTypes && !grantTypes.includes('authorization_code') && !grantTypes.includes(DEVICE_CODE_GRANT))) {
    throw fieldRefused(
      'grantTypes',
      `grantTypes must list 'authorization_code' or '${DEVICE_CODE_GRANT}' (or both), and may add 'refresh_token'.`,
    );
  }
  if (input.dpopBoundAccessTokens !== undefined && typeof input.dpopBoundAccessTokens !== 'boolean') {
    throw fieldRefused('dpopBoundAccessTokens', 'dpopBoundAccessTokens must be true or false.');
  }
  if (input.dpopBoundAccessTokens && !ctx.dpop) {
    throw fieldRefused('dpopBoundAccessTokens', 'dpopBoundAccessTokens needs DPoP, which this server does not support.');
  }
  const openid = input.openid === undefined ? undefined : clientOpenIdSection(ctx.openid, input.openid);
  if (typeof openid === 'string') throw fieldRefused('openid', openid);
  const clientId = randomId() + randomId();
  const clientSecret = isPublic ? null : randomToken();
  const record: ClientRecord = {
    id: clientId,
    name,
    redirectUri,
    secretHash: clientSecret === null ? null : sha256Base64url(clientSecret),
    createdAt: ctx.clock.now(),
  };
  if (responseTypes) record.responseTypes = responseTypes;
  if (grantTypes) record.grantTypes = grantTypes;
  if (unreviewed?.registration) record.registration = unreviewed.registration;
  if (unreviewed?.clientUri) record.clientUri = unreviewed.clientUri;
  if (unreviewed?.logoUri) record.logoUri = unreviewed.logoUri;
  if (owner !== undefined) record.owner = owner;
  if (metadata !== undefined) record.metadata = metadata;
  if (input.dpopBoundAccessTokens === true) record.dpopBoundAccessTokens = true;
  if (openid !== undefined) record.openid = openid;
  await ctx.storage.saveClient(record);
  audit(ctx, { type: 'client.registered', clientId, public: isPublic });
  return clientSecret === null ? { clientId, name, redirectUri, public: true } : { clientId, clientSecret, name, redirectUri };
}

/**
 * Write `changes` of a stored client and answer the client as it now is:
 * `updateClientFields` when the store has the client administration group (`invalid_client`
 * when the client was deleted meanwhile), else the whole record, read before, with the changes.
 */
export async function saveClientChanges(storage: Storage, client: ClientRecord, changes: ClientChanges): Promise<ClientRecord> {
  const updated = withClientChanges(client, changes);
  if (!hasGroup(storage, 'clientAdministration')) await storage.saveClient(updated);
  else if (!(await storage.updateClientFields(client.id, changes))) throw new OAuthError('invalid_client', 'The application is unknown.');
  return updated;
}

/** A registered client by id, or `invalid_client`. Clients of metadata documents are not stored, so never found here. */
async function registered(ctx: Context, clientId: unknown): Promise<ClientRecord> {
  const client = plausibleId(clientId) ? await ctx.storage.findClient(clientId) : null;
  if (!client) throw new OAuthError('invalid_client', 'The application is unknown.');
  return client;
}

/** A registered client without its secret, or `null`. */
export async function getClient(ctx: Context, clientId: string): Promise<ClientInfo | null> {
  const client = plausibleId(clientId) ? await ctx.storage.findClient(clientId) : null;
  return client ? clientInfo(client) : null;
}

/** The registered clients, those of `owner` when given, oldest first. */
export async function listClients(ctx: Context, filter: { owner?: string } = {}): Promise<ClientInfo[]> {
  const store = requireGroup(ctx.storage, 'clientAdministration');
  const owner = filter?.owner === undefined ? undefined : clientOwner(filter.owner);
  const clients = await store.listClients(owner === undefined ? {} : { owner });
  return clients.map(clientInfo);
}

/**
 * Change a client's name, callback URL or metadata. A new callback URL takes effect at once: an
 * authorization started before it, and a code issued to the old URL, are refused from then on
 * (`currentClient` in checks/authorization-request.ts, the code exchange in grants/authorization-code.ts).
 */
export async function updateClient(ctx: Context, clientId: string, changes: ClientUpdate): Promise<ClientInfo> {
  const client = await registered(ctx, clientId);
  if (typeof changes !== 'object' || changes === null) throw new OAuthError('invalid_request', 'Expected the changes as an object.');
  const fields: ClientChanges = {};
  if (changes.name !== undefined) fields.name = clientName(changes.name);
  if (changes.redirectUri !== undefined) fields.redirectUri = clientRedirectUri(changes.redirectUri, client.secretHash === null);
  if (changes.metadata !== undefined) fields.metadata = changes.metadata === null ? null : clientMetadata(changes.metadata);
  if (changes.openid !== undefined) {
    const openid = changes.openid === null ? null : clientOpenIdSection(ctx.openid, changes.openid);
    if (typeof openid === 'string') throw fieldRefused('openid', openid);
    fields.openid = openid ?? null;
  }
  // A pairwise client's sector is its callback's host (Core §8.1): another host would give every
  // user another `sub` at once, and a refresh an ID token naming someone else than its sign-in
  // did (Core §12.2). Refused while the client stays pairwise; choosing the subject type again
  // (`openid`) is the explicit way to change its subs.
  const pairwise = client.openid?.subjectType === 'pairwise' && (fields.openid === undefined || fields.openid?.subjectType === 'pairwise');
  if (pairwise && fields.redirectUri !== undefined && sectorIdentifier(fields.redirectUri) !== sectorIdentifier(client.redirectUri)) {
    throw fieldRefused(
      'redirectUri',
      "The callback URL's host is this pairwise client's sector (OpenID Connect Core section 8.1): another host would give every user another sub. Keep the host, or register a new client.",
    );
  }
  // Only the changed fields, and never an insert: a concurrent deleteClient or resetClientSecret is not undone.
  const updated = await saveClientChanges(ctx.storage, client, fields);
  audit(ctx, { type: 'client.updated', clientId: client.id, callbackChanged: updated.redirectUri !== client.redirectUri });
  return clientInfo(updated);
}

/** A new client secret, returned once; the old one stops working at once. `invalid_client` for an unknown or public client. */
export async function resetClientSecret(ctx: Context, clientId: string): Promise<{ clientId: string; clientSecret: string }> {
  const client = plausibleId(clientId) ? await ctx.storage.findClient(clientId) : null;
  if (!client || client.secretHash === null) throw new OAuthError('invalid_client', 'The application is unknown or has no client secret.');
  const clientSecret = randomToken();
  const secretHash = sha256Base64url(clientSecret);
  await saveClientChanges(ctx.storage, client, { secretHash });
  audit(ctx, { type: 'client.secret_reset', clientId: client.id });
  return { clientId: client.id, clientSecret };
}

/** Delete a client: every code and token of it, for every user, is dead at once; its consents go too. */
export async function deleteClient(ctx: Context, clientId: string): Promise<void> {
  const store = requireGroup(ctx.storage, 'clientAdministration');
  const client = await registered(ctx, clientId);
  await store.deleteClient(client.id, ctx.clock.now());
  audit(ctx, { type: 'client.deleted', clientId: client.id });
}

/** Revoke every grant of an account, to every client, and forget its consents. */
export async function revokeAllForAccount(ctx: Context, accountUuid: string): Promise<void> {
  const store = requireGroup(ctx.storage, 'accountAdministration');
  if (!plausibleId(accountUuid)) throw new OAuthError('invalid_request', 'The account uuid must be a string of 1 to 200 characters.');
  await store.revokeAccountGrants(accountUuid, ctx.clock.now());
  audit(ctx, { type: 'account.grants_revoked', accountUuid });
}

/** Revoke every code and token of a client, for every user; users' consents stay. */
export async function revokeClientTokens(ctx: Context, clientId: string): Promise<void> {
  // A value no client id can be (the empty string among them) names no application: nothing to revoke.
  if (!plausibleId(clientId)) return;
  await ctx.storage.revokeClientGrants(clientId, ctx.clock.now());
  audit(ctx, { type: 'client.tokens_revoked', clientId });
}

/** A user revokes an application: its consent, and every grant, code and token it holds for this user. */
export async function revokeAccess(ctx: Context, input: { accountUuid: string; clientId: string }): Promise<void> {
  // A value no client id can be (the empty string among them) names no application: nothing to revoke.
  if (!plausibleId(input?.clientId)) return;
  await ctx.storage.revokeAccess(input.accountUuid, input.clientId, ctx.clock.now());
  audit(ctx, { type: 'access.revoked', clientId: input.clientId, accountUuid: input.accountUuid });
}

/** The applications a user has authorized, with scope and date, newest first. */
export async function listAuthorizations(ctx: Context, accountUuid: string): Promise<AuthorizationInfo[]> {
  const consents = await ctx.storage.listConsents(accountUuid);
  const out: AuthorizationInfo[] = [];
  for (const consent of consents) {
    // A client ID metadata document client is listed even when its document is gone, named by
    // its host then, so the user can always see and revoke it.
    const client = isDocumentClientId(ctx, consent.clientId)
      ? ((await findClient(ctx, consent.clientId)) ?? {
          id: consent.clientId,
          name: URL.canParse(consent.clientId) ? new URL(consent.clientId).host : consent.clientId,
        })
      : await ctx.storage.findClient(consent.clientId);
    if (client)
      out.push({
        client: { id: client.id, name: client.name },
        scope: ctx.scopes.format(consent.scope).split(' ').filter(Boolean),
        grantedAt: consent.grantedAt,
      });
  }
  return out.sort((a, b) => b.grantedAt - a.grantedAt);
}
