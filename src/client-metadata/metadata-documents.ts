import { type MetadataFetcher, type MetadataFetchLimits, nodeMetadataFetcher } from './metadata-fetcher.js';
import { redirectUriProblem } from '../checks/redirect-uri.js';
import { BoundedMap } from '../bounded-map.js';
import { BIDI_CONTROLS, plainLine } from '../rules.js';
import type { Context } from '../context.js';
import type { ClientGrantType, ClientRecord } from '../storage/types.js';
import type { OpenIdProvider } from '../context.js';
import { clientOpenIdSection, openIdRegistrationInput } from '../oidc/client-fields.js';

/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document): a client whose
 * `client_id` is an https URL is described by the JSON document at that URL instead of a
 * registration. This module decides which URLs qualify, validates a fetched document into a
 * `ClientRecord`, and keeps the cache. The rules are listed in
 * docs/reference.md#client-id-metadata-documents.
 */

/** Fixed limits of every fetch: a document is small, and a slow one holds up a sign-in. */
export const FETCH_LIMITS = { maxBytes: 5120, timeoutMs: 3000 } as const;
/** Fetches under way at once per server instance; beyond it a new URL is refused, not queued. */
export const MAX_CONCURRENT_FETCHES = 32;
const MAX_REDIRECT_URIS = 20;
const MAX_NAME = 100;
const utf8 = new TextEncoder();

/**
 * Why a `client_id` cannot be a metadata document's URL, or `null` when it can: https, a path
 * other than `/`, no `.` or `..` segment, no fragment, no user information, no port but the
 * default, and written exactly as WHATWG URL serializes it (lower-case host, no default port),
 * so the exact comparison with the document's `client_id` has one spelling to compare.
 */
export function clientIdUrlProblem(clientId: string): string | null {
  if (!clientId.startsWith('https://')) return 'is not an https URL';
  if (clientId.length > 200) return 'is longer than 200 characters';
  if (clientId.includes('#')) return 'has a fragment';
  if (!URL.canParse(clientId)) return 'is not a URL';
  const authority = before(clientId.slice('https://'.length), /[/?]/);
  if (authority.includes('@')) return 'has user information';
  const path = before(clientId.slice('https://'.length + authority.length), /\?/);
  if (
    path
      .split('/')
      .some((segment) => segment === '.' || segment === '..' || /^%2e(%2e)?$/i.test(segment) || /^(\.%2e|%2e\.)$/i.test(segment))
  )
    return 'has a dot segment';
  const url = new URL(clientId);
  if (url.port !== '') return 'has a port';
  if (url.pathname === '/' || url.pathname === '') return 'has no path';
  if (url.href !== clientId) return 'is not in normal form';
  return null;
}

/** `text` up to the first match of `separator`, or all of it when there is none (`split(separator)[0]`). */
function before(text: string, separator: RegExp): string {
  const at = text.search(separator);
  return at < 0 ? text : text.slice(0, at);
}

/** A client a metadata document describes: its lists of redirect URIs and grant types are always there. */
export type DocumentClient = ClientRecord & { redirectUris: string[]; grantTypes: ClientGrantType[] };

/** Why a fetched response is not a usable document, or the client it describes. */
export function documentClient(
  clientId: string,
  status: number,
  contentType: string | null,
  body: string,
  openid?: OpenIdProvider,
): DocumentClient | string {
  if (status !== 200) return `answered ${status}`;
  const type = before(contentType ?? '', /;/)
    .trim()
    .toLowerCase();
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) return 'is not served as JSON';
  if (body.length > FETCH_LIMITS.maxBytes || utf8.encode(body).length > FETCH_LIMITS.maxBytes) return 'is too large';
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return 'is not JSON';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'is not a JSON object';
  const doc = parsed as Record<string, unknown>;
  // The document names itself: exactly the URL it was fetched from (simple string comparison).
  if (doc.client_id !== clientId) return 'names another client_id';
  // No shared secret can exist with a public document (the draft forbids client_secret in it): public clients only, for now.
  if ('client_secret' in doc || 'client_secret_expires_at' in doc) return 'carries a client secret';
  if (doc.token_endpoint_auth_method !== undefined && doc.token_endpoint_auth_method !== 'none')
    return 'asks for a token endpoint authentication method other than none';
  const uris = doc.redirect_uris;
  if (!Array.isArray(uris) || uris.length > MAX_REDIRECT_URIS) return 'has no valid redirect_uris';
  const redirectUris: string[] = [];
  for (const uri of uris) {
    if (typeof uri !== 'string' || redirectUriProblem(uri, true) !== null) return 'has an invalid redirect URI';
    redirectUris.push(uri);
  }
  const [redirectUri] = redirectUris;
  if (redirectUri === undefined) return 'has no valid redirect_uris';
  const responseTypes = doc.response_types;
  if (
    responseTypes !== undefined &&
    !(Array.isArray(responseTypes) && responseTypes.length > 0 && responseTypes.every((t) => t === 'code'))
  )
    return "has response_types other than 'code'";
  // RFC 7591 §2: without grant_types, the client uses the authorization code grant only.
  const grantTypes = doc.grant_types ?? ['authorization_code'];
  if (
    !Array.isArray(grantTypes) ||
    !grantTypes.includes('authorization_code') ||
    !grantTypes.every((t) => t === 'authorization_code' || t === 'refresh_token')
  )
    return "has grant_types other than 'authorization_code' and 'refresh_token'";
  const name = doc.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '' || !plainLine(name, MAX_NAME) || BIDI_CONTROLS.test(name)))
    return 'has an invalid client_name';
  // OpenID Connect's client fields, with the option on (ignored without, as any other metadata).
  const oidcInput = openid ? openIdRegistrationInput(doc) : undefined;
  const oidc = oidcInput === undefined ? undefined : clientOpenIdSection(openid, oidcInput);
  if (typeof oidc === 'string') return 'has invalid OpenID Connect fields';
  const client: DocumentClient = {
    ...(oidc !== undefined && { openid: oidc }),
    id: clientId,
    // Unverified: the client's own words, or its host when it gave none.
    name: typeof name === 'string' ? name : new URL(clientId).host,
    redirectUri,
    redirectUris,
    secretHash: null,
    createdAt: 0,
    responseTypes: ['code'],
    grantTypes: [...new Set(grantTypes as ClientGrantType[])],
    // Nobody at the platform reviewed it: the consent page says so (docs/reference.md#consent-page).
    registration: 'metadata-document',
  };
  // RFC 9449 §5.2: a client that uses DPoP always (applied where the server has DPoP on).
  if (doc.dpop_bound_access_tokens === true) client.dpopBoundAccessTokens = true;
  return client;
}

/**
 * How long a response may be kept, in seconds, from its `Cache-Control` (`max-age`, less `Age`),
 * capped at `max`; 0 (not kept) for `no-store`, `no-cache` or without `max-age`.
 */
export function cacheSeconds(cacheControl: string | null, age: string | null, max: number): number {
  if (!cacheControl) return 0;
  const directives = cacheControl
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache' || d.startsWith('no-cache='))) return 0;
  const maxAge = directives.find((d) => d.startsWith('max-age='));
  const seconds = maxAge && /^max-age="?(\d{1,10})"?$/.exec(maxAge);
  if (!seconds) return 0;
  const elapsed = age && /^\d{1,10}$/.test(age.trim()) ? Number(age.trim()) : 0;
  return Math.max(0, Math.min(Number(seconds[1]) - elapsed, max));
}

/** The options of `clientMetadataDocuments`, as resolved. */
export interface ClientMetadataOptions {
  fetch?: MetadataFetcher;
  allow?: (clientId: string) => boolean | Promise<boolean>;
  maxCacheSeconds: number;
  maxEntries: number;
}

/** The documents one server instance fetched: the cache, and the fetches under way. */
export class ClientMetadataDocuments {
  private readonly cache: BoundedMap<string, { client: DocumentClient; until: number }>;
  private readonly pending = new Map<string, Promise<DocumentClient | null>>();
  private readonly fetcher: MetadataFetcher;

  constructor(
    private readonly ctx: Context,
    private readonly options: ClientMetadataOptions,
  ) {
    this.fetcher = options.fetch ?? nodeMetadataFetcher();
    this.cache = new BoundedMap(options.maxEntries);
  }

  /**
   * The client a URL `client_id` names, from the cache or a fresh fetch; `null` when the URL
   * does not qualify, the host's `allow` refuses it, or the document cannot be fetched or is
   * invalid (none of which is cached), or when `MAX_CONCURRENT_FETCHES` other fetches are under
   * way. Concurrent requests for one URL share one fetch.
   */
  async find(clientId: string): Promise<ClientRecord | null> {
    if (clientIdUrlProblem(clientId) !== null) return null;
    if (this.options.allow && !(await this.options.allow(clientId))) return null;
    const cached = this.cache.get(clientId);
    if (cached) {
      if (this.ctx.clock.now() < cached.until) return copy(cached.client);
      this.cache.delete(clientId);
    }
    let fetching = this.pending.get(clientId);
    if (!fetching) {
      // A flood of distinct URLs (each slow, or never cacheable) holds no more than this many.
      if (this.pending.size >= MAX_CONCURRENT_FETCHES) return null;
      fetching = this.load(clientId).finally(() => this.pending.delete(clientId));
      this.pending.set(clientId, fetching);
    }
    const client = await fetching;
    return client && copy(client);
  }

  private async load(clientId: string): Promise<DocumentClient | null> {
    const signal = AbortSignal.timeout(FETCH_LIMITS.timeoutMs);
    const limits: MetadataFetchLimits = { ...FETCH_LIMITS, signal };
    let response: Awaited<ReturnType<MetadataFetcher>>;
    try {
      // A fetcher that ignores the signal still cannot hold the request past the time limit.
      response = await Promise.race([this.fetcher(clientId, limits), aborted(signal)]);
    } catch {
      return null;
    }
    const client = documentClient(clientId, response.status, response.headers.get('content-type'), response.body, this.ctx.openid);
    if (typeof client === 'string') return null;
    const seconds = cacheSeconds(response.headers.get('cache-control'), response.headers.get('age'), this.options.maxCacheSeconds);
    if (seconds > 0) this.cache.set(clientId, { client, until: this.ctx.clock.now() + seconds * 1000 });
    return client;
  }
}

/** Rejects when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
}

/** A copy a caller may change without changing the cached record. */
function copy(client: DocumentClient): DocumentClient {
  return {
    ...client,
    redirectUris: [...client.redirectUris],
    grantTypes: [...client.grantTypes],
    responseTypes: ['code'],
    ...(client.openid && { openid: structuredClone(client.openid) }),
  };
}
