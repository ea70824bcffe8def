import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseOptionalParameters, type OptionalParameter } from '../../src/checks/authorization-request.js';

// The values near every boundary of the checks: prompt words and their mixes, digits, hint
// characters, lengths in UTF-16 units and in code points. Each expected outcome is what the
// zod schema these checks replaced answered, message for message.
const TOO_LONG_STATE = 'state is longer than 2048 characters';
const CONTROL_STATE = 'state contains control characters';
const PROMPT_TOO_BIG = 'Too big: expected string to have <=200 characters';
const UNKNOWN_PROMPT = 'prompt holds an unknown value';
const NONE_COMBINED = 'prompt=none cannot be combined with other values';
const BAD_MAX_AGE = 'max_auth_age must be a non-negative integer number of seconds';
const BAD_HINT = 'i must be the start of an account UUID';
const MESSAGES: Record<string, OptionalParameter> = {
  [TOO_LONG_STATE]: 'state',
  [CONTROL_STATE]: 'state',
  [PROMPT_TOO_BIG]: 'prompt',
  [UNKNOWN_PROMPT]: 'prompt',
  [NONE_COMBINED]: 'prompt',
  [BAD_MAX_AGE]: 'max_auth_age',
  [BAD_HINT]: 'i',
};

type Values = Partial<Record<OptionalParameter, string>>;
const accepted: [string, Values, object][] = [
  ['nothing: the default prompt', {}, { prompt: ['select_account'] }],
  ['an empty state', { state: '' }, { state: '', prompt: ['select_account'] }],
  ['a state of 2048 characters', { state: 'x'.repeat(2048) }, { state: 'x'.repeat(2048), prompt: ['select_account'] }],
  [
    'a state of 2048 emoji (4096 UTF-16 units)',
    { state: '\u{1F600}'.repeat(2048) },
    { state: '\u{1F600}'.repeat(2048), prompt: ['select_account'] },
  ],
  ['a state with tab-free punctuation and non-ASCII', { state: 'a b&c=d/é' }, { state: 'a b&c=d/é', prompt: ['select_account'] }],
  ['prompt=none', { prompt: 'none' }, { prompt: ['none'] }],
  ['prompt=none none', { prompt: 'none none' }, { prompt: ['none', 'none'] }],
  ['prompt=login', { prompt: 'login' }, { prompt: ['login'] }],
  ['prompt=login login', { prompt: 'login login' }, { prompt: ['login', 'login'] }],
  ['prompt=login select_account', { prompt: 'login select_account' }, { prompt: ['login', 'select_account'] }],
  ['prompt=select_account', { prompt: 'select_account' }, { prompt: ['select_account'] }],
  ['max_auth_age=0', { max_auth_age: '0' }, { prompt: ['select_account'], maxAuthAge: 0 }],
  ['max_auth_age of 10 digits', { max_auth_age: '9999999999' }, { prompt: ['select_account'], maxAuthAge: 9999999999 }],
  ['max_auth_age with leading zeros', { max_auth_age: '0060' }, { prompt: ['select_account'], maxAuthAge: 60 }],
  ['i of one character', { i: 'a' }, { prompt: ['select_account'], accountHint: 'a' }],
  [
    'i of 36 characters, mixed case',
    { i: 'A1B2C3D4-e5f6-7890-abcd-ef0123456789' },
    { prompt: ['select_account'], accountHint: 'A1B2C3D4-e5f6-7890-abcd-ef0123456789' },
  ],
  [
    'everything at once',
    { state: 's', prompt: 'none', max_auth_age: '60', i: 'a1b2c3' },
    { state: 's', prompt: ['none'], maxAuthAge: 60, accountHint: 'a1b2c3' },
  ],
];

const refused: [string, Values, OptionalParameter, string][] = [
  ['a state of 2049 characters', { state: 'x'.repeat(2049) }, 'state', TOO_LONG_STATE],
  ['a state of 2049 emoji', { state: '\u{1F600}'.repeat(2049) }, 'state', TOO_LONG_STATE],
  ['a state of 2049 lone surrogates', { state: '\ud800'.repeat(2049) }, 'state', TOO_LONG_STATE],
  ['a state with a NUL', { state: 'a\u0000b' }, 'state', CONTROL_STATE],
  ['a state with CR LF', { state: 'a\r\nb' }, 'state', CONTROL_STATE],
  ['a state with DEL', { state: 'a\u007f' }, 'state', CONTROL_STATE],
  ['a state too long and with control characters: the length first', { state: 'a\n'.repeat(1100) }, 'state', TOO_LONG_STATE],
  ['a bad state before a bad prompt', { state: 'a\n', prompt: 'zz' }, 'state', CONTROL_STATE],
  ['a bad state before everything else', { state: '\t', prompt: 'none login', max_auth_age: '-1', i: 'xyz' }, 'state', CONTROL_STATE],
  ['a prompt of 201 characters', { prompt: 'x'.repeat(201) }, 'prompt', PROMPT_TOO_BIG],
  ['prompt=none 45 times (225 characters)', { prompt: 'none '.repeat(45) }, 'prompt', PROMPT_TOO_BIG],
  ['a prompt of 150 emoji (300 UTF-16 units): unknown, not too long', { prompt: '\u{1F600}'.repeat(150) }, 'prompt', UNKNOWN_PROMPT],
  ['an empty prompt', { prompt: '' }, 'prompt', UNKNOWN_PROMPT],
  ['a prompt of one space', { prompt: ' ' }, 'prompt', UNKNOWN_PROMPT],
  ['prompt=consent', { prompt: 'consent' }, 'prompt', UNKNOWN_PROMPT],
  ['prompt=None (case-sensitive)', { prompt: 'None' }, 'prompt', UNKNOWN_PROMPT],
  ['two spaces between values', { prompt: 'login  select_account' }, 'prompt', UNKNOWN_PROMPT],
  ['a trailing space', { prompt: 'none ' }, 'prompt', UNKNOWN_PROMPT],
  ['an unknown value next to none: unknown first', { prompt: 'foo none login' }, 'prompt', UNKNOWN_PROMPT],
  ['prompt=none login', { prompt: 'none login' }, 'prompt', NONE_COMBINED],
  ['prompt=select_account none', { prompt: 'select_account none' }, 'prompt', NONE_COMBINED],
  ['a bad prompt before a bad max_auth_age', { prompt: 'x', max_auth_age: 'y' }, 'prompt', UNKNOWN_PROMPT],
  ['max_auth_age=-1', { max_auth_age: '-1' }, 'max_auth_age', BAD_MAX_AGE],
  ['max_auth_age of 11 digits', { max_auth_age: '12345678901' }, 'max_auth_age', BAD_MAX_AGE],
  ['an empty max_auth_age', { max_auth_age: '' }, 'max_auth_age', BAD_MAX_AGE],
  ['max_auth_age=1.5', { max_auth_age: '1.5' }, 'max_auth_age', BAD_MAX_AGE],
  ['max_auth_age with a sign', { max_auth_age: '+60' }, 'max_auth_age', BAD_MAX_AGE],
  ['max_auth_age with a newline', { max_auth_age: '60\n' }, 'max_auth_age', BAD_MAX_AGE],
  ['a bad max_auth_age before a bad i', { max_auth_age: 'x', i: 'y' }, 'max_auth_age', BAD_MAX_AGE],
  ['i=xyz', { i: 'xyz' }, 'i', BAD_HINT],
  ['an empty i', { i: '' }, 'i', BAD_HINT],
  ['i of 37 characters', { i: 'a'.repeat(37) }, 'i', BAD_HINT],
  ['i with a space', { i: 'a1 b2' }, 'i', BAD_HINT],
];

describe('authorization request parameters (state, prompt, max_auth_age, i)', () => {
  it.each(accepted)('accepts %s', (_, values, expected) => {
    expect(parseOptionalParameters(values)).toEqual(expected);
  });

  it.each(refused)('refuses %s, naming the first problem', (_, values, parameter, message) => {
    expect(parseOptionalParameters(values)).toEqual({ parameter, message });
  });

  // The inputs of the property test that kept the hand-written check equal to the schema.
  const word = fc.constantFrom('none', 'login', 'select_account', 'consent', 'None', '', ' ');
  const prompt = fc.array(word, { maxLength: 4 }).map((w) => w.join(' '));
  const digits = fc.stringMatching(/^[0-9]{0,12}$/);
  const hint = fc.stringMatching(/^[0-9A-Fa-f-]{0,40}$/);
  const anything = fc.string({ unit: 'binary', maxLength: 40 });
  const values = fc.record(
    {
      state: fc.option(fc.oneof(anything, fc.string({ minLength: 2040, maxLength: 2060 })), { nil: undefined }),
      prompt: fc.option(fc.oneof(prompt, anything, fc.constant('none '.repeat(45))), { nil: undefined }),
      max_auth_age: fc.option(fc.oneof(digits, anything), { nil: undefined }),
      i: fc.option(fc.oneof(hint, anything), { nil: undefined }),
    },
    { requiredKeys: [] },
  );

  it('any input: the values as sent, or one of the fixed problems, a state problem first', () => {
    fc.assert(
      fc.property(values, (v) => {
        const result = parseOptionalParameters(v);
        if ('message' in result) {
          expect(MESSAGES[result.message]).toBe(result.parameter);
          if (result.parameter !== 'state' && v.state !== undefined)
            expect(parseOptionalParameters({ state: v.state })).not.toHaveProperty('message');
          return;
        }
        expect(result.state).toBe(v.state);
        expect(result.prompt).toEqual(v.prompt === undefined ? ['select_account'] : v.prompt.split(' '));
        expect(result.maxAuthAge).toBe(v.max_auth_age === undefined ? undefined : Number(v.max_auth_age));
        expect(result.accountHint).toBe(v.i);
      }),
      { seed: 5, numRuns: 5_000 },
    );
  });
});
