/**
 * The client the demo registers for its own StatusBoard, found again at every start instead of
 * registered anew (with DATABASE_URL the clients outlive the process).
 *
 * It is Ada's application (owner: her account uuid, so it is on her developer page) marked with
 * `metadata: { role: 'statusboard', managedBy: 'demo' }` (docs/reference.md#managing-clients). Its
 * secret is known only when it is issued, and authgate keeps only its hash; rather than keep the
 * secret in plain text somewhere (metadata is not the place for a secret), each start issues a new
 * one with `resetClientSecret` and hands it to the StatusBoard it starts. The previous run's
 * secret dies with that run; tokens already issued stay valid. The callback URL is moved when the
 * app's port changed (`updateClient`). The developer page offers no reset, edit or delete of it.
 */
import type { AuthorizationServer, RegisteredClient } from '../../src/index.js';

export const STATUSBOARD_METADATA = { role: 'statusboard', managedBy: 'demo' } as const;

export async function statusBoardClient(
  server: AuthorizationServer,
  ownerUuid: string,
  redirectUri: string,
): Promise<RegisteredClient & { reused: boolean }> {
  const existing = (await server.listClients({ owner: ownerUuid })).find((c) => c.metadata?.['role'] === STATUSBOARD_METADATA.role);
  if (!existing) {
    const client = await server.registerClient({
      name: 'StatusBoard',
      redirectUri,
      owner: ownerUuid,
      metadata: { ...STATUSBOARD_METADATA },
    });
    return { ...client, reused: false };
  }
  if (existing.redirectUri !== redirectUri) await server.updateClient(existing.clientId, { redirectUri });
  const { clientSecret } = await server.resetClientSecret(existing.clientId);
  return { clientId: existing.clientId, clientSecret, name: existing.name, redirectUri, reused: true };
}
