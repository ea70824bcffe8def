import { ClientMetadataDocuments } from '../client-metadata/metadata-documents.js';
import type { Context } from '../context.js';
import { plausibleId } from '../rules.js';
import type { ClientRecord } from '../storage/types.js';

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
