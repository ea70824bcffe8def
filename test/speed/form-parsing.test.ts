/**
 * The form parser and the token endpoint's one-pass parameter reader replace `URLSearchParams`
 * and the general path for speed (see BENCHMARKS.md); these pin them to what the references give,
 * and their work to linear in the body.
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { OAuthError, type OAuthRequest } from '../../src/index.js';
import {
  formBounds,
  formParamsWithin,
  parseForm,
  pickForm,
  requestParams,
  singleWithin,
  type Params,
  type Picked,
} from '../../src/http.js';

const FORM = 'application/x-www-form-urlencoded';

/** What the WHATWG parser gives, in the same shape. */
function reference(input: string): Params {
  const out: Params = new Map();
  for (const [name, value] of new URLSearchParams(input)) {
    const values = out.get(name);
    if (values) values.push(value);
    else out.set(name, [value]);
  }
  return out;
}

function parse(input: string): Params {
  const out: Params = new Map();
  parseForm(input, out);
  return out;
}

function pick(input: string, wanted: readonly string[]): Picked {
  const picked: Picked = new Array<undefined>(wanted.length).fill(undefined);
  pickForm(input, wanted, picked);
  return picked;
}

/** `reference` in the shape `pickForm` gives: each wanted name's value, `null` when repeated. */
function referencePicked(input: string, wanted: readonly string[]): Picked {
  const all = reference(input);
  return wanted.map((name) => {
    const values = all.get(name);
    return values === undefined ? undefined : values.length > 1 ? null : values[0];
  });
}

// Strings built from the characters that matter to the grammar, so escapes, separators,
// non-ASCII text and lone surrogates meet in every combination.
const pieces = [
  '&',
  '=',
  '+',
  '%',
  '%2',
  '%41',
  '%zz',
  '%C3%A9',
  '%E2%82',
  '%FF',
  '%ED%A0%80',
  '%EF%BB%BF',
  '?',
  'a',
  'b',
  'é',
  '\u{1F600}',
  '\uD800',
  '\uDC00',
  ' ',
  '%25',
  '%26',
  '%3D',
  '%2B',
];
const formLike = fc.array(fc.constantFrom(...pieces), { maxLength: 24 }).map((parts) => parts.join(''));

describe('form parsing (the token, revocation and consent bodies, every query string)', () => {
  it('gives exactly what URLSearchParams gives, for any input', () => {
    fc.assert(
      fc.property(fc.oneof(formLike, fc.string({ unit: 'binary', maxLength: 200 })), (input) => {
        expect(parse(input)).toEqual(reference(input));
      }),
      { seed: 7, numRuns: 5_000 },
    );
  });

  // Names matched where they stand ('a', 'ab', ''), met only once decoded ('a b', '&', '='), or
  // not ASCII ('é'); never a name that needs decoding itself, which pickForm does not take.
  const wanted = ['a', 'ab', 'a b', '', '&', '=', 'é'];
  it('pickForm gives exactly what URLSearchParams gives for the wanted names, for any input', () => {
    fc.assert(
      fc.property(fc.oneof(formLike, fc.string({ unit: 'binary', maxLength: 200 })), (input) => {
        expect(pick(input, wanted)).toEqual(referencePicked(input, wanted));
      }),
      { seed: 11, numRuns: 5_000 },
    );
  });

  it.each([
    ['', {}],
    ['?', {}],
    ['?a=1', { a: ['1'] }],
    ['a=1&&b=2&', { a: ['1'], b: ['2'] }],
    ['a', { a: [''] }],
    ['a=b=c', { a: ['b=c'] }],
    ['=x', { '': ['x'] }],
    ['a+b=c+d', { 'a b': ['c d'] }],
    ['a=%41%', { a: ['A%'] }],
    ['a=%zz&b=%C3%A9', { a: ['%zz'], b: ['é'] }],
    ['a=%FF', { a: ['\uFFFD'] }],
    ['a=1&a=2', { a: ['1', '2'] }],
    ['redirect_uri=https%3A%2F%2Fapp.example%2Fcb', { redirect_uri: ['https://app.example/cb'] }],
  ])('%j', (input, expected) => {
    expect(Object.fromEntries(parse(input))).toEqual(expected);
    expect(Object.fromEntries(reference(input))).toEqual(expected);
  });
});

describe('token, revocation and introspection parameters (formParamsWithin reads only the bounded names)', () => {
  const bounds = { grant_type: 100, code: 10, client_id: 512, client_secret: 512 } as const;
  const form = formBounds(bounds);
  const outcome = (run: () => unknown) => {
    try {
      return { ok: run() };
    } catch (error) {
      return { error: error instanceof OAuthError ? `${error.code}: ${error.description}` : String(error) };
    }
  };
  // Mostly well-formed pairs, with repeats, empty values, values at and around the bound, names
  // nobody asked for, escaped names, and now and then a query string, another body type or a
  // body the host already parsed.
  const name = fc.constantFrom('grant_type', 'code', 'client_id', 'client_secret', 'other', '', 'grant%5Ftype', 'co+de');
  const value = fc.constantFrom(
    '',
    'x',
    'x'.repeat(10),
    'x'.repeat(11),
    `${'x'.repeat(9)}%41`,
    'a=b',
    '%41',
    'a+b',
    '?',
    '%zz',
    '%C3%A9',
    '%FF',
    '\uD800',
  );
  const pair = fc.oneof(
    { weight: 8, arbitrary: fc.tuple(name, value).map(([n, v]) => `${n}=${v}`) },
    { weight: 1, arbitrary: name },
    { weight: 1, arbitrary: fc.constantFrom('', '&', '==', '?code=1') },
  );
  const body = fc.array(pair, { maxLength: 7 }).map((p) => p.join('&'));
  // What a host body parser may hand over instead: strings, arrays of them, now and then an object.
  const parsed = fc.dictionary(
    fc.constantFrom('grant_type', 'code', 'client_id', 'other'),
    fc.oneof(
      { weight: 4, arbitrary: value },
      { weight: 2, arbitrary: fc.array(value, { maxLength: 3 }) },
      { weight: 1, arbitrary: fc.constant({ b: '1' }) },
    ),
  );
  const request = fc.record({
    url: fc.oneof(
      { weight: 6, arbitrary: fc.constant('/v1/oauth/token') },
      { weight: 1, arbitrary: fc.constantFrom('/v1/oauth/token?code=q', '/v1/oauth/token?') },
    ),
    type: fc.oneof(
      { weight: 6, arbitrary: fc.constant<string | string[] | undefined>(FORM) },
      { weight: 1, arbitrary: fc.constantFrom(`${FORM}; charset=utf-8`, 'application/json', undefined, [FORM, FORM]) },
    ),
    body: fc.oneof(
      { weight: 8, arbitrary: body },
      { weight: 1, arbitrary: fc.constantFrom('', undefined) },
      { weight: 1, arbitrary: parsed },
    ),
  });

  it('gives what singleWithin(requestParams()) gives, values and errors alike', () => {
    fc.assert(
      fc.property(request, ({ url, type, body: sent }) => {
        const req: OAuthRequest = {
          method: 'POST',
          url,
          headers: type === undefined ? {} : { 'content-type': type },
          ...(sent !== undefined && { body: sent }),
        };
        expect(outcome(() => formParamsWithin(req, form))).toEqual(outcome(() => singleWithin(requestParams(req), bounds)));
      }),
      { seed: 17, numRuns: 5_000 },
    );
  });
});

describe('parsing work grows linearly with the body', () => {
  // Many sequences without "=": searching afresh for the next "=" from each would be quadratic.
  const body = `client_id=abc&${'a&'.repeat(20_000)}client_secret=s`;

  /** The characters every indexOf call walks over while `run` runs (up to its match, or to the end). */
  function scannedBy(run: () => void): number {
    let scanned = 0;
    const indexOf = String.prototype.indexOf;
    const spy = vi.spyOn(String.prototype, 'indexOf').mockImplementation(function (this: string, search: string, from?: number) {
      const found = indexOf.call(this, search, from);
      scanned += (found < 0 ? this.length : found) - (from ?? 0);
      return found;
    });
    try {
      run();
    } finally {
      spy.mockRestore();
    }
    return scanned;
  }

  it('a body of many sequences without "=" is scanned a bounded number of times, not once per sequence', () => {
    const request: OAuthRequest = { method: 'POST', url: '/v1/oauth/revoke', headers: { 'content-type': FORM }, body };
    let params: ReturnType<typeof formParamsWithin> | undefined;
    const bounds = formBounds({ client_id: 512, client_secret: 512 });
    expect(scannedBy(() => (params = formParamsWithin(request, bounds)))).toBeLessThan(4 * body.length);
    expect(params).toEqual({ client_id: 'abc', client_secret: 's' });
  });

  it('the same when every parameter is kept (parseForm, as for a query string)', () => {
    const params: Params = new Map();
    expect(scannedBy(() => parseForm(body, params))).toBeLessThan(4 * body.length);
    expect(params.get('a')).toHaveLength(20_000);
    expect(params.get('client_secret')).toEqual(['s']);
  });
});
