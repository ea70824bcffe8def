/**
 * Small rules the core applies in many places, each named once here (base layer: it imports
 * nothing): what an id may be, which characters no name may hold, which hosts are loopback,
 * and the default paths of the routes.
 */

/** C0 control characters and DEL, as a character class. */
const CONTROL_CHARACTERS = '\\x00-\\x1f\\x7f';
/** The bidirectional embeddings, overrides and isolates (Unicode UAX #9), as a character class. */
const BIDI_OVERRIDES = '\\u202a-\\u202e\\u2066-\\u2069';

/** A control character: never part of an id, a name or a URL (a NUL breaks SQL stores). */
export const CONTROL = new RegExp(`[${CONTROL_CHARACTERS}]`);

/**
 * A bidirectional formatting character (Unicode UAX #9: embeddings, overrides, isolates, marks).
 * A name a client chose for itself must not hold one: it could reorder what the consent page
 * shows around it, such as the "(unverified)" mark.
 */
export const BIDI_CONTROLS = new RegExp(`[\\u061c\\u200e\\u200f${BIDI_OVERRIDES}]`);

/**
 * Text of the host's for the pages (the brand's name, a catalogue's strings): no control
 * character and no bidirectional override. The marks (U+200E, U+200F, U+061C) are allowed: a
 * right-to-left translation needs them, and the host wrote the text itself.
 */
export const PAGE_TEXT = new RegExp(`^[^${CONTROL_CHARACTERS}${BIDI_OVERRIDES}]*$`);

/** 1 to `max` characters (UTF-16 units), none a control character. */
export const plainLine = (value: string, max: number): boolean => value.length > 0 && value.length <= max && !CONTROL.test(value);

/**
 * A string that could be an id (a client's, an account's, an interaction's): 1 to 200
 * characters, no control character. Anything else is known to match nothing, so it is answered
 * as unknown without asking storage.
 */
export const plausibleId = (value: unknown): value is string => typeof value === 'string' && plainLine(value, 200);

/** The loopback hosts, as WHATWG URL writes them (`hostname`): where http is allowed, for development. */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether a URL is https, or http on a loopback host (RFC 8252 §7.3, RFC 8414 §2 for development). */
export const isHttpsOrLoopback = (url: URL): boolean =>
  url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));

/**
 * The default `basePath`: where the OAuth routes are mounted.
 * @group Adapter kit
 */
export const DEFAULT_BASE_PATH = '/v1/oauth';

/** The default `loginUrl`: where the host signs users in. */
export const DEFAULT_LOGIN_URL = '/login';
