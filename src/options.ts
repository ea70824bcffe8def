import { z } from 'zod';
import { systemClock } from './clock.js';
import { ConfigError } from './errors.js';
import type { Storage } from './storage/types.js';
import type { Clock, UserSessions } from './types.js';

const STORAGE_METHODS = [
  'saveClient', 'findClient', 'saveInteraction', 'findInteraction', 'takeInteraction', 'saveConsent',
  'findConsent', 'listConsents', 'createGrant', 'findCode', 'redeemCode', 'findToken', 'rotateRefreshToken',
  'revokeGrant', 'revokeAccess', 'revokeClientGrants',
] as const;

const hasMethods = (value: unknown, names: readonly string[]) =>
  typeof value === 'object' && value !== null &&
  names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function');

const seconds = z.number().int().positive().max(10 * 365 * 24 * 3600);

const isLoopback = (host: string) => host === 'localhost' || host === '127.0.0.1' || host === '[::1]';

/** RFC 8414 §2: https, no query, no fragment. http is allowed for loopback development only. */
const issuer = z.string().refine((value) => {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url.hostname));
  return secure && !url.search && !url.hash && !value.includes('#') && !value.includes('?') && !url.username;
}, 'expected an https URL with no query or fragment (http only for localhost)');

const schema = z.object({
  storage: z.custom<Storage>((v) => hasMethods(v, STORAGE_METHODS), `expected a Storage (an object with ${STORAGE_METHODS.join(', ')})`),
  sessions: z.custom<UserSessions>((v) => hasMethods(v, ['current']), 'expected a UserSessions (an object with a current(request) method)'),
  /** Default: the system clock. Inject `FakeClock` from `authgate/testing` to move time in tests. */
  clock: z.custom<Clock>((v) => hasMethods(v, ['now']), 'expected a Clock (an object with a now() method)').default(systemClock),
  /** When set, `iss` is added to every authorization response (RFC 9207). */
  issuer: issuer.optional(),
  /** Lifetimes in seconds. Defaults from SPEC 8; refresh tokens never expire unless set (SPEC names no lifetime). */
  lifetimes: z.object({
    code: seconds.default(600),
    accessToken: seconds.default(2_592_000),
    refreshToken: seconds.nullable().default(null),
    interaction: seconds.default(600),
  }).strict().prefault({}),
  /** SPEC 4.2 lists no client credentials for refresh; `true` makes them required (RFC 6749 §6). */
  requireClientAuthOnRefresh: z.boolean().default(false),
  /** The `realm` of `WWW-Authenticate` challenges (RFC 6750 §3). */
  realm: z.string().regex(/^[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}$/, 'expected printable ASCII without quotes or backslashes, at most 64 characters').default('authgate'),
  /** Called with every unexpected error (a storage outage, a bug). The client only sees `server_error`. */
  onError: z.custom<(error: unknown) => void>((v) => typeof v === 'function', 'expected a function').optional(),
}).strict();

/** What `new AuthorizationServer(options)` accepts. */
export type AuthorizationServerOptions = z.input<typeof schema>;
/** Options after defaults, frozen. */
export type ResolvedOptions = Readonly<z.output<typeof schema>>;

/** Parse once, name the first bad option, freeze the result. */
export function resolveOptions(options: unknown): ResolvedOptions {
  const result = schema.safeParse(options);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.path.map(String).join('.') || '(options)';
    const expected = issue.code === 'unrecognized_keys'
      ? `unknown option${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`
      : issue.message;
    throw new ConfigError(issue.code === 'unrecognized_keys' && path === '(options)' ? issue.keys[0]! : path, expected);
  }
  const resolved = result.data;
  Object.freeze(resolved.lifetimes);
  return Object.freeze(resolved);
}
