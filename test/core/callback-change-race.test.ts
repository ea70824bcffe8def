/** updateClient racing a pending approve: an implicit token is never sent to the callback that was just replaced. */
import { describe, expect, it } from 'vitest';
import { MemoryStorage, type ClientRecord } from '../../src/index.js';
import { setup } from '../helpers.js';

class SlowReads extends MemoryStorage {
  override async findClient(clientId: string): Promise<ClientRecord | null> {
    const found = await super.findClient(clientId);
    await new Promise((resolve) => setTimeout(resolve, 5));
    return found;
  }
}

describe('updateClient racing approve', () => {
  it('an approval decided while the callback changes sends no token to the old callback', async () => {
    const t = await setup({ storage: new SlowReads(), allowImplicit: true });
    const decision = await t.server.authorize(t.get(t.authorizeUrl({ response_type: 'token' }), t.ada));
    if (decision.type !== 'consent') throw new Error(decision.type);
    const [approved] = await Promise.all([
      t.server.approve(decision.interaction.id, t.get('/', t.ada)),
      t.server.updateClient(t.client.clientId, { redirectUri: 'https://new.example/cb' }),
    ]);
    // Once updateClient has returned, the old callback is documented as dead everywhere.
    if (approved.type === 'redirect') expect(approved.location.startsWith('https://client.example/cb')).toBe(false);
  });
});
