/** A client name given to registerClient or updateClient is refused for what dynamic registration refuses: bidirectional overrides too. */
import { describe, expect, it } from 'vitest';
import { setup } from '../helpers.js';

describe('client names and bidirectional controls', () => {
  it('updateClient refuses a name with a bidirectional override, as dynamic registration does', async () => {
    const t = await setup();
    const error = await t.server.updateClient(t.client.clientId, { name: 'Example App \u202E(deifirev)' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid_request' });
    expect((await t.server.getClient(t.client.clientId))!.name).toBe('Example App');
  });
});
