import { z } from 'zod';
import { systemClock } from './clock.js';
import { ConfigError } from './errors.js';
import { CORE_STORAGE_METHODS, missingMethods } from './storage/groups.js';
import type { Storage } from './storage/types.js';
import type { MetadataFetcher } from './client-metadata/metadata-fetcher.js';
import type { JWK } from 'jose';
import { isHttpsOrLoopback, plainLine } from './rules.js';
import { pagesSchema, resolvePages, type ResolvedPages } from './ui/page-settings.js';
import type { Account, AuditEvent, Clock, OAuthRequest, ProtectedResource, ResourceRequest, SignOutResult, UserSessions } from './types.js';

/** An object with these methods: the seams (`storage`'s core, `sessions`, `clock`) as the options take them. */
const hasMethods = (value: unknown, names: readonly string[]) =>
  typeof value === 'object' && value !== null && missingMethods(value, names).length === 0;

/** What the `storage` option lacks, and what to pass instead: a newcomer's first error. */
function storageProblem(value: unknown): string {
  if (value === undefined || value === null) {
    return (
      "none given: pass new MemoryStorage() (from 'authgate': one process, for development and tests), " +
      "a PostgresStorage (openPostgresStorage from 'authgate/postgres') or your own store " +
      '(docs/guide.md, "The Storage interface, method by method")'
    );
  }
  const missing = missingMethods(value, CORE_STORAGE_METHODS);
  if (typeof value !== 'object' || missing.length === CORE_STORAGE_METHODS.length) {
    return `expected a Storage (an object with ${CORE_STORAGE_METHODS.join(', ')}), such as new MemoryStorage() or a PostgresStorage`;
  }
  return `expected a Storage: it lacks ${missing.join(', ')} (the core methods, CORE_STORAGE_METHODS, are ${CORE_STORAGE_METHODS.join(', ')}: docs/reference.md#storage-groups)`;
}

const seconds = z
  .number()
  .int()
  .positive()
  .max(10 * 365 * 24 * 3600);

const prefix = z
  .string()
  .regex(/^[A-Za-z0-9_]{0,24}$/, 'expected up to 24 characters of A-Z, a-z, 0-9 and _')
  .default('');

const isSigningJwk = (v: unknown): boolean => {
  if (typeof v !== 'object' || v === null) return false;
  const jwk = v as Record<string, unknown>;
  return typeof jwk.kid === 'string' && (jwk.alg === 'EdDSA' || jwk.alg === 'ES256') && typeof jwk.d === 'string';
};

/** RFC 8414 §2: https, no query, no fragment. http is allowed for loopback development only. */
const issuer = z.string().refine((value) => {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return isHttpsOrLoopback(url) && !url.search && !url.hash && !value.includes('#') && !value.includes('?') && !url.username;
}, 'expected an https URL with no query or fragment (http only for localhost)');

/**
 * A protected resource identifier (RFC 9728 §1.2, RFC 8707 §2): https (http only for loopback
 * development), no fragment, no query, no user information. Its path is served as a route of
 * every framework (RFC 9728 §3.1), so it is kept to unreserved characters and `/`.
 */
const resourceIdentifier = z.string().refine((value) => {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (
    isHttpsOrLoopback(url) &&
    !url.search &&
    !url.hash &&
    !/[#?]/.test(value) &&
    !url.username &&
    !url.password &&
    /^[A-Za-z0-9\-._~/]*$/.test(url.pathname)
  );
}, 'expected an https URL with no query or fragment (http only for localhost), its path of A-Z, a-z, 0-9, -._~ and /');

const scopeToken = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,64}$/, 'expected scope tokens (RFC 6749 section 3.3)');

const schema = z
  .object({
    /** Its core (`CoreStorage`); a group is required where its feature is used (`requireGroup`). */
    storage: z.custom<Storage>((v) => hasMethods(v, CORE_STORAGE_METHODS), { error: (issue) => storageProblem(issue.input) }),
    sessions: z.custom<UserSessions>(
      (v) => hasMethods(v, ['current']),
      'expected a UserSessions (an object with a current(request) method)',
    ),
    /** Default: the system clock. Inject `FakeClock` from `authgate/testing` to move time in tests. */
    clock: z.custom<Clock>((v) => hasMethods(v, ['now']), 'expected a Clock (an object with a now() method)').default(systemClock),
    /** When set, `iss` is added to every authorization response (RFC 9207). */
    issuer: issuer.optional(),
    /**
     * Lifetimes in seconds. Defaults: docs/reference.md#lifetimes; refresh tokens never expire
     * unless set. `grant`: an absolute lifetime of a whole token family, from the authorization on
     * (no refresh after it, no token issued to outlive it); default none.
     */
    lifetimes: z
      .object({
        code: seconds.default(600),
        accessToken: seconds.default(2_592_000),
        refreshToken: seconds.nullable().default(null),
        interaction: seconds.default(600),
        grant: seconds.nullable().default(null),
      })
      .strict()
      .prefault({}),
    /**
     * `compatible` (default): docs/reference.md#profiles. `strict` applies OAuth 2.1 / RFC 9700 defaults:
     * no implicit flow, PKCE for every client, client authentication on refresh, no client
     * credentials in the query string, and an `issuer` (so `iss` is always sent). Each of those
     * knobs can still be set on its own below.
     */
    profile: z.enum(['compatible', 'strict']).default('compatible'),
    /** `response_type=token` (RFC 6749 §4.2). Default: on in `compatible`, off in `strict` (RFC 9700 §2.1.2). */
    allowImplicit: z.boolean().optional(),
    /** PKCE (RFC 7636) for every code request, not only public clients'. Default: off in `compatible`, on in `strict`. */
    requirePkce: z.boolean().optional(),
    /** `code_challenge_method=plain`. Default off: S256 only (RFC 9700 §2.1.1). */
    allowPlainPkce: z.boolean().default(false),
    /**
     * A client that starts a flow with a PKCE challenge it already got a code for is always
     * reported (`onAudit`: `pkce.challenge_reused`); `true` also refuses the request
     * (`invalid_request` at the callback). Default off: a user going back to an earlier
     * authorization page would be refused too. Each server instance remembers the last 10 000
     * (client, challenge) pairs it issued codes for or refused, all clients together.
     */
    rejectReusedPkceChallenge: z.boolean().default(false),
    /** Without it a refresh needs no client credentials (docs/reference.md#refresh-token-grant); `true` makes them required (RFC 6749 §6). Default: off in `compatible`, on in `strict`. */
    requireClientAuthOnRefresh: z.boolean().optional(),
    /** `client_secret` in the query string, as some clients send it (docs/reference.md#profiles; RFC 6749 §2.3.1 forbids it). Default: on in `compatible`, off in `strict`. */
    allowCredentialsInQuery: z.boolean().optional(),
    /**
     * Seconds after a refresh during which presenting the just-rotated refresh token again is
     * refused WITHOUT revoking the family (two tabs refreshing at once need not log the user out).
     * Default 0: every reuse revokes the family (RFC 9700 §4.14.2). A larger window lets a thief
     * who replays a stolen token within it go undetected for that one attempt.
     */
    refreshReuseGraceSeconds: z.number().int().min(0).max(300).default(0),
    /**
     * Seconds after a refresh during which the just-rotated refresh token, presented again while
     * no refresh token minted from it has been used, gets another working pair (a sibling) instead
     * of counting as a replay: a client whose response was lost, or several processes refreshing
     * with one token at once, keep their sign-in. The first sibling used revokes the others; a
     * replay after that, or after the window, revokes the family (RFC 9700 §4.14.2).
     * Default: 60 for public clients (confidential clients: off) with a store that has the
     * refresh retry group (`MemoryStorage`, `PostgresStorage`), off without one. A number set here
     * is the window of every client and requires the group; 0 turns retries off
     * (docs/reference.md#refresh-token-rotation-and-families, SECURITY.md).
     */
    refreshRetryWindowSeconds: z.number().int().min(0).max(300).optional(),
    /** Checked at every code exchange and refresh: an inactive account gets `invalid_grant` and its grant is revoked. */
    isAccountActive: z
      .custom<(accountUuid: string) => boolean | Promise<boolean>>((v) => typeof v === 'function', 'expected a function')
      .optional(),
    /**
     * Which `resource` values (RFC 8707) this server issues tokens for: called with each resource
     * a client asks for, at the authorization and token endpoints; false answers `invalid_target`.
     * Default: exactly the `resource` identifiers of `protectedResources`, compared as strings.
     * Only called with absolute URIs without a fragment (docs/reference.md#resource-indicators-rfc-8707).
     */
    acceptResource: z.custom<(resource: string) => boolean>((v) => typeof v === 'function', 'expected a function').optional(),
    /** Security events (tokens issued and revoked, replays detected, consents), with ids but never secrets. */
    onAudit: z.custom<(event: AuditEvent) => void>((v) => typeof v === 'function', 'expected a function').optional(),
    /** The `realm` of `WWW-Authenticate` challenges (RFC 6750 §3). */
    realm: z
      .string()
      .regex(/^[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}$/, 'expected printable ASCII without quotes or backslashes, at most 64 characters')
      .default('authgate'),
    /**
     * A fixed prefix per kind of opaque credential, e.g. `{ accessToken: 'doo_v1_', refreshToken: 'dor_v1_' }`,
     * so secret scanners recognise leaked tokens. After the prefix every value is 43 base64url
     * characters (256 random bits). `personalToken`: personal access tokens
     * (docs/reference.md#personal-access-tokens), e.g. `dop_v1_`.
     */
    tokenPrefixes: z
      .object({
        accessToken: prefix,
        refreshToken: prefix,
        code: prefix,
        personalToken: prefix,
      })
      .strict()
      .prefault({}),
    /** `opaque` (default) or `jwt`: RFC 9068 access tokens, signed, still looked up on every use. Needs `issuer`. */
    accessTokenFormat: z.enum(['opaque', 'jwt']).default('opaque'),
    /** Signing keys for JWT access tokens: private JWKs with `kid` and `alg` (EdDSA or ES256); the first signs. */
    jwt: z
      .object({
        keys: z.array(z.custom<JWK>((v) => isSigningJwk(v), 'expected a private JWK with kid and alg EdDSA or ES256')).optional(),
        algorithm: z.enum(['EdDSA', 'ES256']).default('EdDSA'),
        /** The `aud` claim; default: the issuer. */
        audience: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
    /** Extra fields for the `info` object of token responses (name, email and uuid are always there). */
    info: z.custom<(account: Account) => Record<string, unknown>>((v) => typeof v === 'function', 'expected a function').optional(),
    /** Dynamic client registration (RFC 7591) of public clients at POST /v1/oauth/register. Default off. */
    allowDynamicRegistration: z.boolean().default(false),
    /** Decide each dynamic registration: return false to refuse it. */
    onDynamicRegistration: z
      .custom<(metadata: { clientName: string; redirectUri: string }, request: OAuthRequest) => boolean | Promise<boolean>>(
        (v) => typeof v === 'function',
        'expected a function',
      )
      .optional(),
    /**
     * Client ID metadata documents (docs/reference.md#client-id-metadata-documents): an https URL
     * used as `client_id` names the public client described by the JSON document at that URL.
     * Default off. `fetch`: how documents are fetched (default: the hardened Node fetcher, which
     * never connects to an internal address; required where `node:https` is missing). `allow`:
     * the host's policy, asked before every use of a URL client id; false refuses it.
     * `maxCacheSeconds` caps how long a document is kept (within its `Cache-Control`, default
     * 3600); `maxEntries` caps how many are kept (default 1000).
     */
    clientMetadataDocuments: z
      .object({
        fetch: z.custom<MetadataFetcher>((v) => typeof v === 'function', 'expected a function').optional(),
        allow: z.custom<(clientId: string) => boolean | Promise<boolean>>((v) => typeof v === 'function', 'expected a function').optional(),
        maxCacheSeconds: z.number().int().min(0).max(86_400).default(3600),
        maxEntries: z.number().int().positive().max(1_000_000).default(1000),
      })
      .strict()
      .optional(),
    /** A host's own scope vocabulary and resource rule, replacing the default `read` / `read write` (docs/reference.md#scope). */
    scopes: z
      .object({
        values: z
          .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,64}$/, 'expected scope tokens (RFC 6749 section 3.3)'))
          .min(1)
          .max(100),
        default: z.array(z.string()).min(1),
        allows: z.custom<(scope: readonly string[], request: { method: string; url: string }) => boolean>(
          (v) => typeof v === 'function',
          'expected a function',
        ),
        descriptions: z.record(z.string(), z.string()).optional(),
      })
      .strict()
      .refine((s) => s.default.every((d) => s.values.includes(d)), 'expected default to list known values only')
      .optional(),
    /**
     * The protected resources this server issues tokens for and describes (RFC 9728): each gets
     * its metadata document, and `requireToken(server, { resource })` its scope rule and
     * challenges (docs/reference.md#protected-resources-rfc-9728).
     */
    protectedResources: z
      .array(
        z
          .object({
            resource: resourceIdentifier,
            name: z
              .string()
              .refine((value) => plainLine(value, 200), 'expected 1 to 200 characters without control characters')
              .optional(),
            scopes: z.array(scopeToken).min(1).max(100).optional(),
            requiredScope: z
              .custom<(request: ResourceRequest) => string[]>((v) => typeof v === 'function', 'expected a function')
              .optional(),
            /** Only DPoP-bound tokens with a proof (RFC 9449 §7); needs the `dpop` option. Default false. */
            dpopBoundAccessTokensRequired: z.boolean().optional(),
          })
          .strict(),
      )
      .max(100)
      .optional(),
    /**
     * The most sign-in steps (`login` interactions: the browser is not signed in as the request
     * needs) that one server instance keeps pending: storing one more forgets the oldest still
     * pending (its sign-in link then answers "expired"). Bounds what an anonymous flood of
     * authorization requests can store. Default 10 000; `null`: no cap. Consent steps (a
     * signed-in account) are not counted.
     */
    maxPendingAnonymousInteractions: z.number().int().positive().max(10_000_000).nullable().default(10_000),
    /**
     * The brand and languages of the built-in consent and error pages
     * (docs/reference.md#branding-and-languages): `brand`, `messages`, `locale`, `authorizedAppsUrl`.
     */
    pages: pagesSchema.optional(),
    /**
     * The device authorization grant (RFC 8628; docs/reference.md#device-authorization-grant-rfc-8628)
     * for clients whose `grantTypes` name `urn:ietf:params:oauth:grant-type:device_code`. Default
     * off. `interval`: seconds a device waits between polls (default 5); `lifetime`: seconds a
     * device code and user code live (default 600); `userCodeLength`: characters of the user code,
     * from the 20 consonants of RFC 8628 §6.1 (default 8, at least 6); `maxUserCodeAttempts`: wrong
     * user codes one account or one browser may enter before it is locked out (default 5);
     * `lockSeconds`: how long that lock lasts (default 900). Needs the optional device methods of
     * `Storage` (MemoryStorage and PostgresStorage have them).
     */
    deviceAuthorization: z
      .object({
        interval: z.number().int().min(1).max(60).default(5),
        lifetime: z.number().int().min(60).max(3600).default(600),
        userCodeLength: z.number().int().min(6).max(12).default(8),
        maxUserCodeAttempts: z.number().int().min(1).max(100).default(5),
        lockSeconds: z.number().int().min(1).max(86_400).default(900),
      })
      .strict()
      .optional(),
    /**
     * DPoP, sender-constrained tokens (RFC 9449; docs/reference.md#dpop-rfc-9449). Default off:
     * a `DPoP` header is then ignored, as by a server that does not know it. On (`{}` for the
     * defaults), a token request with a valid proof gets tokens bound to its key, resources accept
     * `Authorization: DPoP`, and the metadata lists the algorithms. Needs an `issuer` and the
     * store's `dpopProofs` group. `algorithms` (default ES256, EdDSA, Ed25519, RS256, PS256),
     * `maxAgeSeconds` (how old a proof may be, default 60), `clockSkewSeconds` (default 5),
     * `maxLength` (of the header, default 8192), `nonceSecret` (at least 32 bytes shared by every
     * instance: proofs must then carry a server nonce) and `nonceWindowSeconds` (default 300).
     */
    dpop: z
      .object({
        algorithms: z.array(z.string()).optional(),
        maxAgeSeconds: z.number().optional(),
        clockSkewSeconds: z.number().optional(),
        maxLength: z.number().optional(),
        nonceSecret: z.union([z.string(), z.instanceof(Uint8Array)]).optional(),
        nonceWindowSeconds: z.number().optional(),
      })
      .strict()
      .optional(),
    /**
     * OpenID Connect (docs/reference.md#openid-connect): `scope=openid` requests get an ID token,
     * `userinfo` and `/.well-known/openid-configuration` answer. Off (absent), and for every
     * request without `openid` in its scope, nothing changes. Needs `issuer`.
     */
    openid: z
      .object({
        /** Private JWKs with `kid` and `alg` (RS256, ES256, EdDSA), one RS256 among them; absent: one RS256 key per process (development only). */
        signingKeys: z.array(z.unknown()).min(1).optional(),
        /** The account's standard claims (OpenID Connect Core §5.1), filtered by the granted scope (Core §5.4). */
        claims: z
          .custom<(account: Account, context: { scope: string[]; clientId: string }) => unknown>(
            (v) => typeof v === 'function',
            'expected a function',
          )
          .optional(),
        /** More claims per scope besides Core §5.4's, e.g. `{ profile: ['team'] }`. */
        claimsByScope: z.record(z.string(), z.array(z.string())).optional(),
        /** The account's `sub`; default `account.uuid`. */
        subject: z.custom<(account: Account) => string>((v) => typeof v === 'function', 'expected a function').optional(),
        /** Pairwise subjects (Core §8.1) for clients registered with `subjectType: 'pairwise'`. */
        pairwise: z.object({ salt: z.string() }).strict().optional(),
        /** Seconds an ID token is valid. Default 3600. */
        idTokenLifetime: seconds.default(3600),
        /** Put the scope's claims in the ID token too, not only at userinfo. Default false (Core §5.4). */
        claimsInIdToken: z.boolean().default(false),
        /**
         * RP-initiated logout (docs/reference.md#rp-initiated-logout): end the host's session of
         * `account` (`null` when nobody is signed in). Called by the end-session endpoint only
         * after the user confirmed, or when the `id_token_hint` names the signed-in account. The
         * headers it returns (a `set-cookie` clearing the session) go on the answer.
         */
        signOut: z
          .custom<(request: OAuthRequest, account: Account | null) => SignOutResult | Promise<SignOutResult>>(
            (v) => typeof v === 'function',
            'expected a function',
          )
          .optional(),
      })
      .strict()
      .optional(),
    /** Called with every unexpected error (a storage outage, a bug). The client only sees `server_error`. */
    onError: z.custom<(error: unknown) => void>((v) => typeof v === 'function', 'expected a function').optional(),
  })
  .strict();

/**
 * What `new AuthorizationServer(options)` accepts.
 * @group Authorization
 */
export type AuthorizationServerOptions = z.input<typeof schema>;
type Knobs = 'allowImplicit' | 'requirePkce' | 'requireClientAuthOnRefresh' | 'allowCredentialsInQuery';
/**
 * Options after defaults (the profile's, for the knobs not set), frozen.
 * @group Authorization
 */
export type ResolvedOptions = Readonly<
  Omit<z.output<typeof schema>, Knobs | 'protectedResources' | 'pages'> &
    Record<Knobs, boolean> & {
      /** The built-in pages' brand, languages and headers, resolved (the site name defaults to the issuer's host). */
      pages: ResolvedPages;
      /** Frozen, each with its defaults and the URL of its metadata document. */
      protectedResources?: readonly ProtectedResource[];
    }
>;

const PROFILES: Record<'compatible' | 'strict', Record<Knobs, boolean>> = {
  compatible: { allowImplicit: true, requirePkce: false, requireClientAuthOnRefresh: false, allowCredentialsInQuery: true },
  strict: { allowImplicit: false, requirePkce: true, requireClientAuthOnRefresh: true, allowCredentialsInQuery: false },
};

/** Whether the default metadata-document fetcher can run here: `node:https` found by feature detection. */
function hasNodeHttps(): boolean {
  try {
    const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    return runtime?.getBuiltinModule?.('node:https') !== undefined && runtime?.getBuiltinModule?.('node:dns') !== undefined;
  } catch {
    return false;
  }
}

/** Parse once, name the first bad option, freeze the result. */
export function resolveOptions(options: unknown): ResolvedOptions {
  const result = schema.safeParse(options);
  if (!result.success) {
    const [issue] = result.error.issues;
    // zod reports at least one issue with every failure; checked rather than asserted (startup only).
    if (issue === undefined) throw new ConfigError('(options)', result.error.message);
    const path = issue.path.map(String).join('.') || '(options)';
    const expected =
      issue.code === 'unrecognized_keys'
        ? `unknown option${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`
        : issue.message;
    const unknownKey = issue.code === 'unrecognized_keys' && path === '(options)' ? issue.keys[0] : undefined;
    throw new ConfigError(unknownKey ?? path, expected);
  }
  const { protectedResources, pages, ...data } = result.data;
  const defaults = PROFILES[data.profile];
  const resolved: ResolvedOptions = {
    ...data,
    ...(protectedResources && { protectedResources: resolveResources(protectedResources, data.scopes?.values) }),
    allowImplicit: data.allowImplicit ?? defaults.allowImplicit,
    requirePkce: data.requirePkce ?? defaults.requirePkce,
    requireClientAuthOnRefresh: data.requireClientAuthOnRefresh ?? defaults.requireClientAuthOnRefresh,
    allowCredentialsInQuery: data.allowCredentialsInQuery ?? defaults.allowCredentialsInQuery,
    pages: resolvePages(pages, data.issuer),
  };
  if (data.accessTokenFormat === 'jwt' && !data.issuer) {
    throw new ConfigError('issuer', 'expected an https URL: JWT access tokens carry it as `iss` (RFC 9068)');
  }
  if (data.profile === 'strict' && !data.issuer) {
    throw new ConfigError('issuer', 'expected an https URL: the strict profile sends `iss` on every authorization response (RFC 9207)');
  }
  if (data.openid && !data.issuer) {
    throw new ConfigError('issuer', 'expected an https URL: ID tokens carry it as `iss` (OpenID Connect Core section 2)');
  }
  if (data.clientMetadataDocuments && !data.clientMetadataDocuments.fetch && !hasNodeHttps()) {
    throw new ConfigError(
      'clientMetadataDocuments.fetch',
      'expected a function: this runtime has no node:https for the default fetcher, so documents need a fetcher of yours',
    );
  }
  if (data.clientMetadataDocuments && data.allowPlainPkce) {
    // Metadata-document clients are public clients held to PKCE with S256 only.
    throw new ConfigError('allowPlainPkce', 'expected false: client ID metadata documents require PKCE with S256 only');
  }
  if (data.dpop && !data.issuer) {
    throw new ConfigError('issuer', 'expected an https URL: DPoP proofs at the token endpoint name its URL (RFC 9449 section 4.2, htu)');
  }
  if (!data.dpop && protectedResources?.some((r) => r.dpopBoundAccessTokensRequired)) {
    throw new ConfigError('dpop', 'expected DPoP to be on: a protected resource requires DPoP-bound tokens');
  }
  if (data.deviceAuthorization) Object.freeze(data.deviceAuthorization);
  Object.freeze(resolved.lifetimes);
  Object.freeze(resolved.tokenPrefixes);
  return Object.freeze(resolved);
}

/** The well-known path of RFC 9728 §3. */
const RESOURCE_METADATA = '/.well-known/oauth-protected-resource';

/**
 * The protected resources with their defaults: `scopes` (known values only, default every one),
 * and where the metadata document is (RFC 9728 §3.1: the well-known path inserted between the
 * host and the path, a terminating `/` of an empty path dropped). Each identifier once.
 */
function resolveResources(
  list: NonNullable<z.output<typeof schema>['protectedResources']>,
  custom: readonly string[] | undefined,
): readonly ProtectedResource[] {
  const known = custom ?? ['read', 'write'];
  // By document URL: `https://api.example` and `https://api.example/` would share one document.
  const seen = new Set<string>();
  return Object.freeze(
    list.map((entry, i) => {
      const url = new URL(entry.resource);
      const metadataPath = RESOURCE_METADATA + (url.pathname === '/' ? '' : url.pathname);
      const metadataUrl = url.origin + metadataPath;
      if (seen.has(metadataUrl))
        throw new ConfigError(`protectedResources.${i}.resource`, 'expected each resource once (one document each)');
      seen.add(metadataUrl);
      const unknown = entry.scopes?.find((s) => !known.includes(s));
      if (unknown !== undefined)
        throw new ConfigError(`protectedResources.${i}.scopes`, `expected known scope values only, not "${unknown}"`);
      return Object.freeze({ ...entry, scopes: Object.freeze([...(entry.scopes ?? known)]), metadataUrl, metadataPath });
    }),
  );
}
