/**
 * On both stores: a device approval the device has not collected yet would become a live grant at
 * its next poll, so every revocation that covers its account or client (revokeAllForAccount,
 * revokeAccess, revokeClientTokens) denies it. Table prefix `ag_` checks the SQL names too.
 */
import { describe, expect, it } from 'vitest';
import { DEVICE_CODE_GRANT } from '../../src/storage/types.js';
import { ADA, BOB, json, setup } from '../helpers.js';
import { storesUnderTest } from './pg.js';

const stores = storesUnderTest('devrevoke', { tablePrefix: 'ag_' });
const VERIFY = '/v1/oauth/device/verify';

describe.each(stores)(
  '%s: a device approval not yet collected is covered by every revocation of its account or client',
  (_name, makeStorage) => {
    async function approvedDevices() {
      const t = await setup({ storage: makeStorage(), deviceAuthorization: {} });
      const cli = await t.server.registerClient({
        name: 'CLI',
        redirectUri: 'http://127.0.0.1/cb',
        public: true,
        grantTypes: [DEVICE_CODE_GRANT],
      });
      const other = await t.server.registerClient({
        name: 'Other CLI',
        redirectUri: 'http://127.0.0.1/cb',
        public: true,
        grantTypes: [DEVICE_CODE_GRANT],
      });
      const approveAs = async (cookie: string, clientId = cli.clientId) => {
        const started = json(
          await t.server.deviceAuthorization(t.post('/v1/oauth/device', { client_id: clientId }), `https://a.example${VERIFY}`),
        );
        const outcome = await t.server.enterUserCode(started['user_code'] as string, t.get(VERIFY, cookie), VERIFY);
        if (outcome.type !== 'decision' || outcome.decision.type !== 'consent') throw new Error('expected a confirmation');
        await t.server.approve(outcome.decision.interaction.id, t.get(VERIFY, cookie));
        return { code: started['device_code'] as string, clientId };
      };
      const poll = async ({ code, clientId }: { code: string; clientId: string }) => {
        const res = await t.server.token(
          t.post('/v1/oauth/token', { grant_type: DEVICE_CODE_GRANT, device_code: code, client_id: clientId }),
        );
        return res.status === 200 ? 'tokens' : json(res)['error'];
      };
      const bobCookie = t.sessions.signIn(BOB);
      return { t, cli, other, approveAs, poll, bobCookie };
    }

    it("revokeAllForAccount: the account's approvals get access_denied; another account's still get tokens", async () => {
      const { t, approveAs, poll, bobCookie } = await approvedDevices();
      const ada = await approveAs(t.ada);
      const bob = await approveAs(bobCookie);
      await t.server.revokeAllForAccount(ADA.uuid);
      t.clock.advance(5000);
      expect(await poll(ada)).toBe('access_denied');
      expect(await poll(bob)).toBe('tokens');
    });

    it("revokeAccess: that account's approval for that client is denied; its approval for another client is not", async () => {
      const { t, cli, other, approveAs, poll } = await approvedDevices();
      const mine = await approveAs(t.ada);
      const elsewhere = await approveAs(t.ada, other.clientId);
      await t.server.revokeAccess({ accountUuid: ADA.uuid, clientId: cli.clientId });
      t.clock.advance(5000);
      expect(await poll(mine)).toBe('access_denied');
      expect(await poll(elsewhere)).toBe('tokens');
    });

    it("revokeClientTokens: every account's approval for the client is denied; another client's is not", async () => {
      const { t, cli, other, approveAs, poll, bobCookie } = await approvedDevices();
      const ada = await approveAs(t.ada);
      const bob = await approveAs(bobCookie);
      const elsewhere = await approveAs(t.ada, other.clientId);
      await t.server.revokeClientTokens(cli.clientId);
      t.clock.advance(5000);
      expect(await poll(ada)).toBe('access_denied');
      expect(await poll(bob)).toBe('access_denied');
      expect(await poll(elsewhere)).toBe('tokens');
    });
  },
);
