/**
 * updateClient racing a pending approve: an implicit token is never sent to the callback that was
 * just replaced. The interleaving is forced: the callback changes (updateClient runs to its end)
 * right after the approval's first read of the client, so the approval goes on with the old
 * callback in hand and must notice the change before the token leaves. On a store that reads the
 * client with the interaction (`combinedApproval`) and on one that reads it apart.
 */
import { describe, expect, it } from 'vitest';
import { type ClientRecord, type InteractionRecord, MemoryStorage } from '../../src/index.js';
import { setup } from '../helpers.js';

/** A MemoryStorage that runs `between` (once) after the first read that hands out the client. */
class ChangeAfterRead extends MemoryStorage {
  between: (() => Promise<unknown>) | null = null;
  private async after<T>(read: T): Promise<T> {
    const run = this.between;
    this.between = null;
    if (run) await run();
    return read;
  }
  override async findClient(clientId: string): Promise<ClientRecord | null> {
    return this.after(await super.findClient(clientId));
  }
  override async findInteractionAndClient(idHash: string): Promise<{ interaction: InteractionRecord | null; client: ClientRecord | null }> {
    return this.after(await super.findInteractionAndClient(idHash));
  }
}

/** The same without the combined approval group: the approval reads the client with `findClient`. */
class ChangeAfterReadApart extends ChangeAfterRead {}
Object.defineProperty(ChangeAfterReadApart.prototype, 'findInteractionAndClient', { value: undefined });
Object.defineProperty(ChangeAfterReadApart.prototype, 'approveInteraction', { value: undefined });

describe.each([
  ['with combinedApproval', () => new ChangeAfterRead()],
  ['without combinedApproval', () => new ChangeAfterReadApart()],
])('updateClient racing approve (%s)', (_, makeStorage) => {
  it('a callback replaced after the approval read the client: no token goes to the old callback', async () => {
    const storage = makeStorage();
    const t = await setup({ storage, allowImplicit: true });
    const decision = await t.server.authorize(t.get(t.authorizeUrl({ response_type: 'token' }), t.ada));
    if (decision.type !== 'consent') throw new Error(decision.type);
    let updated = false;
    storage.between = async () => {
      await t.server.updateClient(t.client.clientId, { redirectUri: 'https://new.example/cb' });
      updated = true;
    };
    const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
    expect(updated, 'the callback changed during the approval').toBe(true);
    // Once updateClient has returned, the old callback is documented as dead everywhere.
    expect(approved.type === 'redirect' && approved.location.startsWith('https://client.example/cb')).toBe(false);
    expect(approved).toMatchObject({ type: 'error' });
  });

  it('without the change, the same approval sends the token to the callback (the check above can fail)', async () => {
    const t = await setup({ storage: makeStorage(), allowImplicit: true });
    const decision = await t.server.authorize(t.get(t.authorizeUrl({ response_type: 'token' }), t.ada));
    if (decision.type !== 'consent') throw new Error(decision.type);
    const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
    expect(approved.type === 'redirect' && approved.location.startsWith('https://client.example/cb#access_token=')).toBe(true);
  });
});
