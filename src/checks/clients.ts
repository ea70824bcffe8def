import { ClientMetadataDocuments } from '../client-metadata/metadata-documents.js';
import type { Context } from '../context.js';
import { plausibleId } from '../rules.js';
import type { ClientRecord, CodeRecord, GrantRecord, TokenRecord } from '../storage/types.js';

/**
 * Finding the client a `client_id` names: in storage, or, when `clientMetadataDocuments` is on
 * and the id is an https URL, in the client ID metadata document at that URL
 * (docs/reference.md#client-id-metadata-documents). Every endpoint and management method that
 * looks a client up by id comes here.
 */

// One document cache per server instance, created at its first metadata-document client.
const documents = new WeakMap<Context, ClientMetadataDocuments>();

/**
 * The client `clientId` names, or `null` when there is none (or the id is one no store can hold:
 * too long, control characters, a NUL that would break SQL). A stored client costs exactly the
 * store's `findClient` call, whose promise is returned as it is (no extra `await` on the hot
 * paths; see BENCHMARKS.md).
 */
export function findClient(ctx: Context, clientId: string): Promise<ClientRecord | null> | null {
  if (!plausibleId(clientId)) return null;
  const options = ctx.options.clientMetadataDocuments;
  if (options === undefined || !clientId.startsWith('https://')) return ctx.storage.findClient(clientId);
  let cache = documents.get(ctx);
  if (!cache) {
    cache = new ClientMetadataDocuments(ctx, options);
    documents.set(ctx, cache);
  }
  return cache.find(clientId);
}

/**
 * What a token request presents besides its client credentials, by its hash: read together with
 * the client (`findClientWith`) where the store can, its record left in `found` (`null`: there
 * is none). `found` stays `undefined` when it was not read: the caller reads it itself.
 */
export type Presented = PresentedCode | PresentedToken;
/** A code presented at the token endpoint (`grant_type=authorization_code`). */
export interface PresentedCode {
  kind: 'code';
  hash: string;
  found?: CodeRecord | null;
}
/** A refresh token presented at the token endpoint, or a token presented for revocation. */
export interface PresentedToken {
  kind: 'token';
  hash: string;
  found?: { token: TokenRecord; grant: GrantRecord } | null;
}

/**
 * `findClient`, with what the request presents read in the same store call when the store has
 * the `combinedReads` group (one round trip instead of two on SQL): its record is left in
 * `presented.found`. A client ID metadata document client, or no such group, reads the client
 * alone.
 */
export function findClientWith(ctx: Context, clientId: string, presented: Presented | undefined): Promise<ClientRecord | null> | null {
  const store = ctx.combined;
  if (presented === undefined || store === undefined || !plausibleId(clientId) || isDocumentClientId(ctx, clientId))
    return findClient(ctx, clientId);
  if (presented.kind === 'code') {
    return store.findClientAndCode(clientId, presented.hash).then((read) => {
      presented.found = read.code;
      return read.client;
    });
  }
  return store.findClientAndToken(clientId, presented.hash).then((read) => {
    presented.found = read.token;
    return read.client;
  });
}

/**
 * Whether a client was described by a client ID metadata document rather than registered: such a
 * client's name and callbacks are its own words, which nobody at the platform reviewed.
 */
export function isMetadataDocumentClient(client: ClientRecord): boolean {
  return client.registration === 'metadata-document';
}

/**
 * Whether `clientId` names a client ID metadata document client (the feature is on and the id is
 * an https URL): such a client is never in storage, so a missing one is refused, not ignored.
 */
export function isDocumentClientId(ctx: Context, clientId: string): boolean {
  return ctx.options.clientMetadataDocuments !== undefined && clientId.startsWith('https://');
}
