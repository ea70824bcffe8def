import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseForm, type Params } from '../../src/http.js';

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

// Strings built from the characters that matter to the grammar, so escapes, separators,
// non-ASCII text and lone surrogates meet in every combination.
const pieces = ['&', '=', '+', '%', '%2', '%41', '%zz', '%C3%A9', '%E2%82', '%FF', '%ED%A0%80', '%EF%BB%BF', '?', 'a', 'b', 'é', '\u{1F600}', '\uD800', '\uDC00', ' ', '%25', '%26', '%3D', '%2B'];
const formLike = fc.array(fc.constantFrom(...pieces), { maxLength: 24 }).map((parts) => parts.join(''));

describe('form parsing (the token, revocation and consent bodies, every query string)', () => {
  it('gives exactly what URLSearchParams gives, for any input', () => {
    fc.assert(fc.property(fc.oneof(formLike, fc.string({ unit: 'binary', maxLength: 200 })), (input) => {
      expect(parse(input)).toEqual(reference(input));
    }), { seed: 7, numRuns: 5_000 });
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
