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
      if (c === 0x5c)
        i++; // a quoted-pair (RFC 9110 §5.6.4)
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

/**
 * `url` (absolute, or a path as the core accepts) with its path in the normal form of RFC 3986
 * §6.2.2.1 and §6.2.2.2: a percent-encoded unreserved character (§2.3: `A-Z a-z 0-9 - . _ ~`)
 * decoded, the hex of every other upper-cased. What a resource's `requiredScope` rule is given
 * (docs/reference.md#protected-resources-rfc-9728): Fastify and Hono route `/r/%61ccount` to
 * `/r/account`, so a rule that compared the path as sent was passed round. It identifies the same
 * resource: nothing else is decoded (`%2F` is no `/`, `%C3%A9` no `é`), the path keeps its case
 * (RFC 3986 paths are case-sensitive), and dot segments stay, as Express, Fastify and node:http
 * route them (`/r/a/../b` reaches a route `/r/a/*`; Hono's URL has them removed already). The
 * query and anything malformed (`%`, `%zz`) are left as they came.
 *
 * On every bearer check of a resource with a rule: a URL without `%`, the usual one, is one
 * native scan and the same string back; a path without `%` is the same string too. Nothing is
 * allocated unless the path holds a `%`.
 */
export function pathNormalForm(url: string): string {
  if (!url.includes('%')) return url;
  const start = pathStart(url);
  let end = start;
  let percent = false;
  for (; end >= 0 && end < url.length; end++) {
    const c = url.charCodeAt(end);
    if (c === 0x3f || c === 0x23) break; // `?`, `#`: the path ends
    if (c === 0x25) percent = true;
  }
  if (!percent) return url;
  let path = '';
  let from = start;
  for (let i = url.indexOf('%', start); i >= 0 && i + 2 < end; i = url.indexOf('%', i + 1)) {
    const high = hexValue(url.charCodeAt(i + 1));
    const low = hexValue(url.charCodeAt(i + 2));
    if (high < 0 || low < 0) continue;
    const code = high * 16 + low;
    path += url.slice(from, i) + (unreserved(code) ? String.fromCharCode(code) : `%${HEX[high]}${HEX[low]}`);
    from = i + 3;
    i += 2;
  }
  return url.slice(0, start) + path + url.slice(from);
}

const HEX = '0123456789ABCDEF';

/** The value of one hex digit, either case; -1 for anything else (NaN past the end included). */
function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** RFC 3986 §2.3 `unreserved`: ALPHA / DIGIT / "-" / "." / "_" / "~". */
function unreserved(c: number): boolean {
  const lower = c | 0x20;
  return (lower >= 0x61 && lower <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e || c === 0x5f || c === 0x7e;
}

/**
 * Where the path of `url` starts: 0 for a path (origin form, RFC 9112 §3.2.1), after the authority
 * for `scheme://authority/…`; -1 when there is no path to normalise (none, or no such URL).
 */
function pathStart(url: string): number {
  if (url.charCodeAt(0) === 0x2f) return 0;
  const colon = url.indexOf('://');
  if (colon < 1) return -1;
  for (let i = 0; i < colon; i++) {
    // RFC 3986 §3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
    const c = url.charCodeAt(i);
    const alpha = (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a;
    if (!alpha && (i === 0 || !((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e))) return -1;
  }
  for (let i = colon + 3; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 0x2f) return i;
    if (c === 0x3f || c === 0x23) return -1;
  }
  return -1;
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
  const value = new URLSearchParams(`x=${part}`).get('x');
  // Unreachable: `x=…` always names one parameter. Checked, not asserted (this path is rare).
  if (value === null) throw new Error('URLSearchParams lost the parameter it was given');
  return value;
}

/**
 * Parse `application/x-www-form-urlencoded` text into `params`, exactly as `URLSearchParams`
 * does (a leading `?` dropped, empty sequences skipped, a name without `=` has the value ''),
 * without its cost for what requests carry: ASCII with few or no escapes (see BENCHMARKS.md).
 */
export function parseForm(form: string, params: Params): void {
  readForm(form, undefined, params);
}

/**
 * The values of wanted parameters, at the position of their name: `undefined` for one not sent,
 * `REPEATED` for one sent more than once.
 */
export type Picked = (string | typeof REPEATED | undefined)[];
const REPEATED = null;

/**
 * `parseForm` keeping only the `wanted` parameters, in `picked` rather than a map (see
 * BENCHMARKS.md). A name is matched where it stands, so a parameter nobody asked for is neither
 * cut out nor decoded (unless its name is escaped: it could decode to a wanted one). `wanted`
 * names must need no decoding themselves (no `%`, `+` or surrogate), being compared as written.
 */
export function pickForm(form: string, wanted: readonly string[], picked: Picked): void {
  readForm(form, wanted, picked);
}

function pick(picked: Picked, k: number, value: string): void {
  picked[k] = picked[k] === undefined ? value : REPEATED;
}

/**
 * The one form parser, behind `parseForm` (every parameter, by name, into `into`) and `pickForm`
 * (the `wanted` ones, by position). The work is linear in the length of `form`, whatever it holds.
 */
function readForm(form: string, wanted: readonly string[] | undefined, into: Params | Picked): void {
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
      if (wanted === undefined) {
        const name = form.slice(start, eq);
        const value = eq < end ? form.slice(eq + 1, end) : '';
        append(into as Params, decode ? decodeFormPart(name, surrogates) : name, decode ? decodeFormPart(value, surrogates) : value);
      } else {
        let k = 0;
        for (const name of wanted) {
          if (name.length === eq - start && form.startsWith(name, start)) break;
          k++;
        }
        if (k === wanted.length && decode) {
          const name = form.slice(start, eq);
          if (needsDecoding(name)) k = wanted.indexOf(decodeFormPart(name, surrogates));
        }
        if (k >= 0 && k < wanted.length) {
          const value = eq < end ? form.slice(eq + 1, end) : '';
          pick(into as Picked, k, decode ? decodeFormPart(value, surrogates) : value);
        }
      }
    }
    start = end + 1;
  }
}

/** Parameters of the query string. `+` is a space and bad `%` escapes are kept as written (WHATWG). */
export function queryParams(request: OAuthRequest): Params {
  const params: Params = new Map();
  if (request.url.includes('?')) parseForm(rawQuery(request.url), params);
  return params;
}

const FORM = 'application/x-www-form-urlencoded';

/**
 * Parameters of the query string and of a form body together (some clients send token request
 * parameters in the query of a POST; RFC 6749 §3.2 puts them in the body). A body that is not a
 * form is `invalid_request`.
 */
export function requestParams(request: OAuthRequest): Params {
  const params = queryParams(request);
  const body = formBody(request);
  if (typeof body === 'string') parseForm(body, params);
  else parsedForm(body, params);
  return params;
}

/**
 * The form a request carries: its text, or what a host body parser made of it ('' for none). A
 * body of another type is `invalid_request`.
 */
function formBody(request: OAuthRequest): string | Record<string, unknown> {
  const body = request.body;
  if (body === undefined || body === '') return '';
  // Exactly the form type, the usual case, is neither repeated nor anything else.
  if (request.headers['content-type'] === FORM) return body;
  // Two Content-Type lines reach the core as an array (Node) or joined with ", " (Fetch): refuse
  // both the same way, rather than guessing which one the sender meant.
  if (repeatedHeader(request, 'content-type')) throw new OAuthError('invalid_request', 'The request carries more than one Content-Type.');
  const contentType = header(request, 'content-type') ?? '';
  const semicolon = contentType.indexOf(';');
  const type = (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  if (type === FORM) return body;
  // A host body parser may already have turned an empty form into `{}`.
  if (typeof body === 'object' && Object.keys(body).length === 0) return body;
  throw new OAuthError('invalid_request', `The request body must be ${FORM}.`);
}

/**
 * A form the host already parsed, into `params`: strings and arrays of strings only, never
 * objects (an extended parser turns `a[b]=1` into `{ a: { b: '1' } }`).
 */
function parsedForm(body: Record<string, unknown>, params: Params): Params {
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
 */
export function singleWithin<K extends string>(params: Params, bounds: Readonly<Record<K, number>>): Partial<Record<K, string>> {
  const names = Object.keys(bounds) as K[];
  const out = single(params, names);
  for (const name of names) {
    if ((out[name]?.length ?? 0) > bounds[name]) throw new OAuthError('invalid_request', `The parameter '${name}' is malformed.`);
  }
  return out;
}

/** A bounds table as `formParamsWithin` reads it (`formBounds`): its names, and each name with its bound, in the same order. */
export interface FormBounds<K extends string> {
  readonly names: readonly K[];
  readonly fields: ReadonlyArray<{ readonly name: K; readonly limit: number }>;
}

/**
 * A bounds table made ready for `formParamsWithin`, once, where it is declared (a module
 * constant), so no request works it out or looks it up. Its names are compared as written, so
 * none may need decoding, as no OAuth parameter name does.
 */
export function formBounds<K extends string>(bounds: Readonly<Record<K, number>>): FormBounds<K> {
  const names = Object.keys(bounds) as K[];
  if (names.some(needsDecoding)) throw new Error('formBounds: parameter names are compared as written, so none may need decoding.');
  return { names, fields: names.map((name) => ({ name, limit: bounds[name] })) };
}

/**
 * `singleWithin(requestParams(request), table)` for the `table` that `bounds` was made of: the
 * token, revocation and introspection parameters. Only the bounded names are read from the form
 * (`pickForm`), so a parameter nobody asked for costs no string of its own (the endpoints ignore
 * unknown parameters, RFC 6749 §3.2).
 */
export function formParamsWithin<K extends string>(request: OAuthRequest, bounds: FormBounds<K>): Partial<Record<K, string>> {
  const { names, fields } = bounds;
  const picked: Picked = new Array<undefined>(names.length).fill(undefined);
  if (request.url.includes('?')) pickForm(rawQuery(request.url), names, picked);
  const body = formBody(request);
  if (typeof body === 'string') pickForm(body, names, picked);
  else {
    for (const [name, values] of parsedForm(body, new Map())) {
      const k = (names as readonly string[]).indexOf(name);
      if (k >= 0) for (const value of values) pick(picked, k, value);
    }
  }
  // A repeated parameter is reported before an over-long one, wherever each stands (`single`
  // runs before the bounds are checked), and an empty value counts as absent.
  const out: Partial<Record<K, string>> = {};
  let tooLong: string | undefined;
  let k = 0;
  for (const { name, limit } of fields) {
    const value = picked[k++];
    if (value === REPEATED) throw new OAuthError('invalid_request', `The parameter '${name}' was sent more than once.`);
    if (value === undefined || value === '') continue;
    if (tooLong === undefined && value.length > limit) tooLong = name;
    out[name] = value;
  }
  if (tooLong !== undefined) throw new OAuthError('invalid_request', `The parameter '${tooLong}' is malformed.`);
  return out;
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

/**
 * A public JSON document (the metadata documents, the keys), which every cache may keep for
 * `maxAge` seconds: unlike token responses, they are the same for everyone and change seldom.
 */
export function publicJsonResponse(body: unknown, maxAge: number): OAuthResponse {
  return {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': `public, max-age=${maxAge}` },
    body: JSON.stringify(body),
  };
}

/**
 * The 405 of a document for a method other than GET and HEAD (docs/reference.md#metadata-endpoint),
 * or `null` when it may answer (no request is a call from the host itself).
 */
export function documentMethodRefused(request?: { method: string }): OAuthResponse | null {
  if (!request || isMethod(request, 'GET') || isMethod(request, 'HEAD')) return null;
  return jsonResponse(
    405,
    { error: 'invalid_request', error_description: 'This document only answers GET and HEAD.' },
    { allow: 'GET, HEAD' },
  );
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
