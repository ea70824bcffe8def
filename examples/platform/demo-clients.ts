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
import { DEVICE_CODE_GRANT, type AuthorizationServer, type RegisteredClient, type RegisteredPublicClient } from '../../src/index.js';

export const STATUSBOARD_METADATA = { role: 'statusboard', managedBy: 'demo' } as const;

export async function statusBoardClient(
  server: AuthorizationServer,
  ownerUuid: string,
  redirectUri: string,
  /** StatusBoard's `/signed-out`: where Nimbus's end-session endpoint sends the browser after RP-initiated logout. */
  postLogoutRedirectUri: string,
): Promise<RegisteredClient & { reused: boolean }> {
  const existing = (await server.listClients({ owner: ownerUuid })).find((c) => c.metadata?.['role'] === STATUSBOARD_METADATA.role);
  if (!existing) {
    const client = await server.registerClient({
      name: 'StatusBoard',
      redirectUri,
      owner: ownerUuid,
      metadata: { ...STATUSBOARD_METADATA },
      openid: { postLogoutRedirectUris: [postLogoutRedirectUri] },
    });
    return { ...client, reused: false };
  }
  if (existing.redirectUri !== redirectUri) await server.updateClient(existing.clientId, { redirectUri });
  // A StatusBoard registered by an earlier start (or an earlier version) on another port: its logout URI moves too.
  if (existing.openid?.postLogoutRedirectUris?.join(' ') !== postLogoutRedirectUri)
    await server.updateClient(existing.clientId, { openid: { ...existing.openid, postLogoutRedirectUris: [postLogoutRedirectUri] } });
  const { clientSecret } = await server.resetClientSecret(existing.clientId);
  return { clientId: existing.clientId, clientSecret, name: existing.name, redirectUri, reused: true };
}

/** The owner of the clients Nimbus itself ships (its CLI): the platform, not a user. */
export const NIMBUS_OWNER = 'nimbus';

/**
 * Nimbus's own command-line tool: a public client allowed only the device grant (RFC 8628) and
 * refresh, found again at every start like StatusBoard (`role: 'cli'`). A public client has no
 * secret, so it is reused as it is.
 */
export async function cliClient(server: AuthorizationServer): Promise<RegisteredPublicClient> {
  const existing = (await server.listClients({ owner: NIMBUS_OWNER })).find((c) => c.metadata?.['role'] === 'cli');
  if (existing) return { clientId: existing.clientId, name: existing.name, redirectUri: existing.redirectUri, public: true };
  return server.registerClient({
    name: 'Nimbus CLI',
    redirectUri: 'http://127.0.0.1/cb',
    public: true,
    grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'],
    owner: NIMBUS_OWNER,
    metadata: { role: 'cli', managedBy: 'demo' },
  });
}
