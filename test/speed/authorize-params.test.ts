/**
 * The authorization endpoint checks state, prompt, max_auth_age and i by hand instead of with
 * zod on every request, for speed (see BENCHMARKS.md); the schema stays the reference, and this
 * pins the hand-written check to it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { restFast, restSchema } from '../../src/endpoints/authorize.js';

// Values near every boundary of the schema: prompt words and their mixes, digits, hint characters.
const word = fc.constantFrom('none', 'login', 'select_account', 'consent', 'None', '', ' ');
const prompt = fc.array(word, { maxLength: 4 }).map((w) => w.join(' '));
const digits = fc.stringMatching(/^[0-9]{0,12}$/);
const hint = fc.stringMatching(/^[0-9A-Fa-f-]{0,40}$/);
const anything = fc.string({ unit: 'binary', maxLength: 40 });
const values = fc.record({
  state: fc.option(fc.oneof(anything, fc.string({ minLength: 2040, maxLength: 2060 })), { nil: undefined }),
  prompt: fc.option(fc.oneof(prompt, anything, fc.constant('none '.repeat(45))), { nil: undefined }),
  max_auth_age: fc.option(fc.oneof(digits, anything), { nil: undefined }),
  i: fc.option(fc.oneof(hint, anything), { nil: undefined }),
}, { requiredKeys: [] });

describe('authorization request parameters (state, prompt, max_auth_age, i)', () => {
  it('the hand-written check accepts exactly what the schema accepts, with the same result', () => {
    fc.assert(fc.property(values, (v) => {
      const fast = restFast(v);
      const slow = restSchema.safeParse(v);
      expect(fast !== undefined).toBe(slow.success);
      if (fast && slow.success) expect(fast.data).toEqual(slow.data);
    }), { seed: 5, numRuns: 5_000 });
  });
});
