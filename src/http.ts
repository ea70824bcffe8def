import { OAuthError } from './errors.js';
import type { OAuthRequest, OAuthResponse } from './types.js';

/**
 * Request parsing and response building shared by every endpoint. The core parses the raw query
 * and body itself, so a duplicated parameter looks the same whatever framework sent it
 * (RFC 6749 §3.1: "Request and response parameters MUST NOT be included more than once").
 */

/** Parameter name → every value received, from the query and the body together. */
export type Params = Map<string, string[]>;

/**
 * Whether the request's method is `method` (given in upper case), written in any case: the core
 * has always compared methods case-insensitively. The exact form, what clients send, is checked
 * first, without building an upper-case copy.
 */
export function isMethod(request: { method: string }, method: string): boolean {
  return request.method === method || request.method.toUpperCase() === method;
}

/** Header value, or the first of several. */
export function header(request: OAuthRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Whether a header was sent more than once: an array of several values (Node), or values joined
 * with a comma (Fetch). For Content-Type, whose values hold no comma; `Authorization` values
 * may (`repeatedAuthorization`).
 */
export function repeatedHeader(request: OAuthRequest, name: string): boolean {
  const value = request.headers[name];
  return Array.isArray(value) ? value.length > 1 || (value[0] ?? '').includes(',') : value !== undefined && value.includes(',');
}

/**
 * Whether the `Authorization` header was sent more than once: several values (Node passes an
 * array), or one value that holds two sets of credentials, as Fetch joins repeated lines with
 * ", ". A single header may hold commas itself (`Digest username="x", realm="y"`), so only a
 * comma outside a quoted string followed by the start of credentials counts (RFC 9110 §11.6.2:
 * an auth-scheme, then a space and a token68 or parameters, or nothing), not by an auth-param
 * (`name=value`) of the same credentials.
 */
export function repeatedAuthorization(request: OAuthRequest): boolean {
  const value = request.headers['authorization'];
  if (Array.isArray(value)) return value.length > 1 || (value[0] !== undefined && twoCredentials(value[0]));
  return value !== undefined && twoCredentials(value);
}

// After a comma: an auth-scheme (a token), then a space and anything but `=`, a comma, or the end.
const NEXT_CREDENTIALS = /[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]+[^\s=,]|[ \t]*(?:,|$))/y;

function twoCredentials(value: string): boolean {
  if (value.indexOf(',') < 0) return false; // the usual case: no comma at all
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (quoted) {
      if (c === 0x5c) i++; // a quoted-pair (RFC 9110 §5.6.4)
      else if (c === 0x22) quoted = false;
    } else if (c === 0x22) {
      quoted = true;
    } else if (c === 0x2c) {
      NEXT_CREDENTIALS.lastIndex = i + 1;
      if (NEXT_CREDENTIALS.test(value)) return true;
    }
  }
  return false;
}

/** The raw query string of the request URL, without `?` and fragment. */
export function rawQuery(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return '';
  const end = url.indexOf('#', start);
  return url.slice(start + 1, end < 0 ? undefined : end);
}

function append(params: Params, name: string, value: string): void {
  const values = params.get(name);
  if (values) values.push(value);
  else params.set(name, [value]);
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Whether form text needs decoding (`+`, `%`) or could decode differently from WHATWG
 * (surrogates). Two indexOf calls and a regex V8 answers at once for one-byte strings, rather
 * than one character-class regex over the same text (see BENCHMARKS.md).
 */
function needsDecoding(text: string): boolean {
  return text.indexOf('%') >= 0 || text.indexOf('+') >= 0 || SURROGATE.test(text);
}
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * One name or value of a form, decoded the WHATWG way: `+` is a space, then percent-decoding as
 * UTF-8. `decodeURIComponent` does it where it gives the same answer; where the two could differ
 * (a bad escape, bytes that are not UTF-8, a lone surrogate), `URLSearchParams` decodes the part.
 * `surrogates: false` says the whole input was already found free of surrogates, which spares
 * two regex scans of every part.
 */
function decodeFormPart(part: string, surrogates: boolean): string {
  const plus = part.indexOf('+') >= 0;
  if (!plus && part.indexOf('%') < 0 && !(surrogates && SURROGATE.test(part))) return part;
  if (!(surrogates && LONE_SURROGATE.test(part))) {
    try {
      return decodeURIComponent(plus ? part.replace(/\+/g, ' ') : part);
    } catch {
      // A bad escape or bytes that are not UTF-8: WHATWG keeps or replaces them, below.
    }
  }
  return whatwgDecode(part);
}

/**
 * A name or value decoded by `URLSearchParams` itself. A part holds no '&', so after `x=` it is
 * the whole value of one parameter, decoded exactly as in place: its neighbours in the form,
 * '&' and '=', end any surrogate pair either way.
 */
function whatwgDecode(part: string): string {
  return new URLSearchParams(`x=${part}`).get('x')!;
}

/**
 * Parse `application/x-www-form-urlencoded` text into `params`, exactly as `URLSearchParams`
 * does (a leading `?` dropped, empty sequences skipped, a name without `=` has the value ''),
 * without its cost for what requests carry: ASCII with few or no escapes (see BENCHMARKS.md).
 * With `wanted`, only those names are kept: a name is matched where it stands, so a parameter
 * nobody asked for is neither cut out nor decoded (unless its name is escaped, since it could
 * decode to a wanted one). `wanted` names must need no decoding themselves (no `%`, `+` or
 * surrogate), as they are compared with the text as written.
 * The work is linear in the length of `form`, whatever it holds.
 */
export function parseForm(form: string, params: Params, wanted?: readonly string[]): void {
  const decode = needsDecoding(form);
  const surrogates = decode && SURROGATE.test(form);
  const length = form.length;
  // The next '=' at or after `start`, found again only once passed: searching afresh for every
  // sequence would rescan the rest of a form of many '='-less sequences (quadratic).
  let nextEq = -1;
  let start = form.charCodeAt(0) === 63 ? 1 : 0;
  while (start < length) {
    let end = form.indexOf('&', start);
    if (end < 0) end = length;
    if (end > start) {
      if (nextEq < start) {
        nextEq = form.indexOf('=', start);
        if (nextEq < 0) nextEq = length;
      }
      const eq = nextEq < end ? nextEq : end;
      let name: string | undefined;
      if (wanted === undefined) {
        name = decode ? decodeFormPart(form.slice(start, eq), surrogates) : form.slice(start, eq);
      } else {
        let k = 0;
        while (k < wanted.length && !(wanted[k]!.length === eq - start && form.startsWith(wanted[k]!, start))) k++;
        if (k < wanted.length) {
          name = wanted[k];
        } else if (decode) {
          const raw = form.slice(start, eq);
          const decoded = needsDecoding(raw) ? decodeFormPart(raw, surrogates) : undefined;
          if (decoded !== undefined && wanted.includes(decoded)) name = decoded;
        }
      }
      if (name !== undefined) {
        const value = eq < end ? form.slice(eq + 1, end) : '';
        append(params, name, decode ? decodeFormPart(value, surrogates) : value);
      }
    }
    start = end + 1;
  }
}

/**
 * Parameters of the query string. `+` is a space and bad `%` escapes are kept as written
 * (WHATWG). With `wanted`, only those (`parseForm`).
 */
export function queryParams(request: OAuthRequest, wanted?: readonly string[]): Params {
  const params: Params = new Map();
  if (request.url.includes('?')) parseForm(rawQuery(request.url), params, wanted);
  return params;
}

const FORM = 'application/x-www-form-urlencoded';

/**
 * Parameters of the query string and of a form body together (some clients send token request
 * parameters in the query of a POST; RFC 6749 §3.2 puts them in the body). A body that is not a
 * form is `invalid_request`. With `wanted`, only those are read from text (`parseForm`); a form the host
 * already parsed is checked whole.
 */
export function requestParams(request: OAuthRequest, wanted?: readonly string[]): Params {
  const params = queryParams(request, wanted);
  const body = request.body;
  if (body === undefined || body === '') return params;
  // Exactly the form type, the usual case, is neither repeated nor anything else.
  if (request.headers['content-type'] !== FORM) {
    // Two Content-Type lines reach the core as an array (Node) or joined with ", " (Fetch): refuse
    // both the same way, rather than guessing which one the sender meant.
    if (repeatedHeader(request, 'content-type')) throw new OAuthError('invalid_request', 'The request carries more than one Content-Type.');
    const type = (header(request, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== FORM) {
      // A host body parser may already have turned an empty form into `{}`.
      if (typeof body === 'object' && Object.keys(body).length === 0) return params;
      throw new OAuthError('invalid_request', `The request body must be ${FORM}.`);
    }
  }
  if (typeof body === 'string') {
    parseForm(body, params, wanted);
    return params;
  }
  // A form the host already parsed: accept strings and arrays of strings only, never objects
  // (an extended parser turns `a[b]=1` into `{ a: { b: '1' } }`).
  for (const name of Object.keys(body)) {
    const value = body[name];
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      if (typeof v !== 'string') throw new OAuthError('invalid_request', `The parameter '${safeName(name)}' is malformed.`);
      append(params, name, v);
    }
  }
  return params;
}

/** A parameter name fit to quote in an error description (RFC 6749 §5.2 character set, no quotes). */
export function safeName(name: string): string {
  return name.length <= 40 && /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/.test(name) ? name : '(parameter)';
}

/**
 * The single value of each named parameter. A parameter sent more than once, even with the same
 * value in query and body, is `invalid_request`. An empty value counts as absent.
 */
export function single<K extends string>(params: Params, names: readonly K[]): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const name of names) {
    const values = params.get(name);
    if (!values) continue;
    if (values.length > 1) throw new OAuthError('invalid_request', `The parameter '${name}' was sent more than once.`);
    if (values[0] !== '') out[name] = values[0];
  }
  return out;
}

/**
 * `single`, then each value at most its bound in characters (so nothing unbounded reaches
 * hashing or storage): a longer one is `invalid_request` naming the parameter, never echoing it.
 * Plain code rather than a zod schema: it runs on every token request.
 */
export function singleWithin<K extends string>(params: Params, bounds: Readonly<Record<K, number>>): Partial<Record<K, string>> {
  const names = Object.keys(bounds) as K[];
  return within(params, names, names.map((name) => bounds[name]));
}

// `single` and the bounds in one loop. A repeated parameter is reported before an over-long one,
// wherever each stands, as `single` runs before the bounds are checked.
function within<K extends string>(params: Params, names: readonly K[], limits: readonly number[]): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  let tooLong: K | undefined;
  for (let k = 0; k < names.length; k++) {
    const name = names[k]!;
    const values = params.get(name);
    if (values === undefined) continue;
    if (values.length > 1) throw new OAuthError('invalid_request', `The parameter '${name}' was sent more than once.`);
    const value = values[0]!;
    if (value === '') continue;
    if (tooLong === undefined && value.length > limits[k]!) tooLong = name;
    out[name] = value;
  }
  if (tooLong !== undefined) throw new OAuthError('invalid_request', `The parameter '${tooLong}' is malformed.`);
  return out;
}

/** The parameter names of a bounds table, and whether `parseForm` may match them in place. */
interface BoundNames {
  names: string[];
  limits: number[];
  wanted: string[] | undefined;
}

// Per bounds table (they are module constants), worked out once.
const BOUND_NAMES = new WeakMap<object, BoundNames>();

/**
 * `singleWithin(requestParams(request), bounds)`: the token, revocation and introspection
 * parameters. Only the bounded names are read from the form, so a parameter nobody asked for
 * costs no string of its own (the endpoints ignore unknown parameters, RFC 6749 §3.2).
 */
export function formParamsWithin<K extends string>(request: OAuthRequest, bounds: Readonly<Record<K, number>>): Partial<Record<K, string>> {
  let known = BOUND_NAMES.get(bounds);
  if (!known) {
    const names = Object.keys(bounds);
    // A name that needs decoding itself cannot be matched where it stands: then read them all.
    BOUND_NAMES.set(bounds, (known = { names, limits: names.map((name) => bounds[name as K]), wanted: names.some(needsDecoding) ? undefined : names }));
  }
  return within(requestParams(request, known.wanted), known.names as K[], known.limits);
}

/** A JSON response that no cache may keep (RFC 6749 §5.1). */
export function jsonResponse(status: number, body: unknown, headers?: Record<string, string>): OAuthResponse {
  return jsonTextResponse(status, JSON.stringify(body), headers);
}

/** The same, for JSON text already written. */
export function jsonTextResponse(status: number, json: string, headers?: Record<string, string>): OAuthResponse {
  const base = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', pragma: 'no-cache' };
  return { status, headers: headers ? { ...base, ...headers } : base, body: json };
}

// Printable ASCII other than `"` and `\`: what a JSON string holds without escaping.
const JSON_SAFE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A string as a JSON string literal, without `JSON.stringify` when nothing in it needs escaping. */
export function jsonString(value: string): string {
  return JSON_SAFE.test(value) ? `"${value}"` : JSON.stringify(value);
}

/** An OAuth error as JSON (RFC 6749 §5.2). */
export function errorResponse(error: OAuthError, headers: Record<string, string> = {}): OAuthResponse {
  return jsonResponse(error.status, { error: error.code, error_description: error.description }, headers);
}
