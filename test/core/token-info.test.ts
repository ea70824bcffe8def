/** The host's extra fields in the `info` of a token response (docs/reference.md#token-response). */
import { describe, expect, it } from 'vitest';
import { setup } from '../helpers.js';

describe('extra info fields', () => {
  it('the host adds fields to info; name, email and uuid stay', async () => {
    const t = await setup({ info: (account) => ({ team: { name: 'Core', uuid: 'team-1' }, uuid: 'ignored', owner: account.uuid }) });
    const tokens = await t.tokens();
    expect(tokens.info).toEqual({
      team: { name: 'Core', uuid: 'team-1' },
      owner: tokens.info.uuid,
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      uuid: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
    });
  });
});
