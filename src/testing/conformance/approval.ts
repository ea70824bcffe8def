/**
 * The combined approval (the `combinedApproval` group, `CombinedApprovalStorage`; a storage
 * without it passes these cases, one with part of it fails them): `findInteractionAndClient`
 * answers what `findInteraction` and `findClient` answer; `approveInteraction` takes the
 * interaction and, only then, saves the consent and creates the grant with its code or tokens,
 * all or nothing, once under concurrency.
 */
import type { CodeRecord, ConsentRecord, DeviceConfirmationInteractionRecord, OAuthGrantRecord } from '../../storage/types.js';
import { groupCase, type StorageConformanceCase } from './case.js';
import { check, same } from './check.js';
import { CALLBACK, CONFORMANCE_RACERS, T0, hash, id, makeAccount, makeGrant, makeInteraction, makePair, warmUp } from './fixtures.js';

/** The consent, grant and code an approval of `interaction`'s request writes. */
function approvalOf(clientId: string, account = makeAccount()): { consent: ConsentRecord; grant: OAuthGrantRecord; code: CodeRecord } {
  const grant = makeGrant({ clientId, account });
  const consent: ConsentRecord = {
    accountUuid: account.uuid,
    clientId,
    scope: ['read', 'write'],
    approvals: [{ resource: null, scope: ['read', 'write'] }],
    grantedAt: T0 + 1,
  };
  const code: CodeRecord = {
    hash: hash(),
    grantId: grant.id,
    clientId,
    redirectUri: CALLBACK,
    scope: ['read', 'write'],
    codeChallenge: hash(),
    codeChallengeMethod: 'S256',
    expiresAt: T0 + 600_000,
    usedAt: null,
  };
  return { consent, grant, code };
}

/** The cases on the combined approval. */
export const approvalCases: readonly StorageConformanceCase[] = [
  groupCase(
    'combinedApproval',
    'combined approval (optional): findInteractionAndClient answers what findInteraction and findClient of its request answer; no client for a device step',
    async (storage) => {
      const clientId = id();
      await storage.saveClient({ id: clientId, name: 'App', redirectUri: CALLBACK, secretHash: null, createdAt: T0 });
      const interaction = makeInteraction();
      const mine = { ...interaction, request: { ...interaction.request, clientId } };
      await storage.saveInteraction(mine);
      same(
        await storage.findInteractionAndClient(mine.idHash),
        { interaction: await storage.findInteraction(mine.idHash), client: await storage.findClient(clientId) },
        'the interaction and its client, as the separate reads give them',
      );
      const orphan = makeInteraction(); // its client is not stored
      await storage.saveInteraction(orphan);
      same(
        await storage.findInteractionAndClient(orphan.idHash),
        { interaction: await storage.findInteraction(orphan.idHash), client: null },
        'an interaction whose client is not stored: the client is null',
      );
      const { request: _request, ...rest } = makeInteraction();
      const device: DeviceConfirmationInteractionRecord = {
        ...rest,
        purpose: 'device',
        device: { codeHash: hash(), clientId, scope: ['read'], returnTo: '/device' },
      };
      await storage.saveInteraction(device);
      const read = await storage.findInteractionAndClient(device.idHash);
      same(read.client, null, 'a device step has no request, so no client');
      same(read.interaction, await storage.findInteraction(device.idHash), 'the device step itself');
      same(await storage.findInteractionAndClient(hash()), { interaction: null, client: null }, 'an unknown interaction: both null');
    },
  ),
  groupCase(
    'combinedApproval',
    'combined approval (optional): approveInteraction takes the interaction, saves the consent (merged as saveConsent merges) and creates the grant with its code; taken, expired or unknown, it writes nothing',
    async (storage) => {
      const interaction = makeInteraction();
      await storage.saveInteraction(interaction);
      const account = makeAccount();
      const earlier: ConsentRecord = {
        accountUuid: account.uuid,
        clientId: interaction.request.clientId,
        scope: ['profile'],
        approvals: [{ resource: 'https://api.example/', scope: ['profile'] }],
        grantedAt: T0,
      };
      await storage.saveConsent(earlier);
      const { consent, grant, code } = approvalOf(interaction.request.clientId, account);
      check(await storage.approveInteraction(interaction.idHash, T0 + 1, consent, grant, { code }), 'the approval is stored');
      same(await storage.findInteraction(interaction.idHash), null, 'the interaction is taken');
      same(await storage.findCode(code.hash), code, 'the code is stored');
      check((await storage.redeemCode(code.hash, T0 + 2, makePair(grant, T0 + 2))).ok, 'the code redeems: its grant was created');
      same(
        (await storage.findConsent(account.uuid, consent.clientId))?.scope.sort(),
        ['profile', 'read', 'write'],
        'the consent is merged with the earlier one, as saveConsent merges',
      );

      const again = approvalOf(interaction.request.clientId, account);
      same(
        await storage.approveInteraction(interaction.idHash, T0 + 3, again.consent, again.grant, { code: again.code }),
        false,
        'taken: false',
      );
      same(await storage.findCode(again.code.hash), null, 'nothing of a refused approval is stored');

      const expired = makeInteraction({ expiresAt: T0 + 10 });
      await storage.saveInteraction(expired);
      const late = approvalOf(expired.request.clientId);
      same(
        await storage.approveInteraction(expired.idHash, T0 + 10, late.consent, late.grant, { code: late.code }),
        false,
        'expired: false',
      );
      same(await storage.findCode(late.code.hash), null, 'nothing of an expired approval is stored');
      same(await storage.findConsent(late.consent.accountUuid, late.consent.clientId), null, 'no consent of an expired approval');
      same(await storage.findInteraction(expired.idHash), null, 'the expired interaction is deleted all the same');

      const tokens = makePair(late.grant, T0);
      same(await storage.approveInteraction(hash(), T0, late.consent, late.grant, { tokens }), false, 'unknown: false');
      same(await storage.findToken(tokens[0].hash), null, 'nothing of an approval of an unknown interaction is stored');
    },
  ),
  groupCase(
    'combinedApproval',
    `combined approval (optional): exactly one of ${CONFORMANCE_RACERS} concurrent approvals of one interaction is stored`,
    async (storage) => {
      const interaction = makeInteraction();
      await storage.saveInteraction(interaction);
      const attempts = Array.from({ length: CONFORMANCE_RACERS }, () => approvalOf(interaction.request.clientId));
      await warmUp(storage);
      const results = await Promise.all(
        attempts.map((a) => storage.approveInteraction(interaction.idHash, T0 + 1, a.consent, a.grant, { code: a.code })),
      );
      const winners = results.filter(Boolean).length;
      check(
        winners === 1,
        `approveInteraction must take the interaction once: ${winners} of ${CONFORMANCE_RACERS} concurrent approvals succeeded (expected exactly 1). The take and the writes must be one atomic step.`,
      );
      for (const [i, attempt] of attempts.entries()) {
        const stored = await storage.findCode(attempt.code.hash);
        if (results[i]) check(stored, "the winner's code is stored");
        else {
          same(stored, null, "no loser's code is stored");
          same(await storage.findConsent(attempt.consent.accountUuid, attempt.consent.clientId), null, "no loser's consent is stored");
        }
      }
    },
  ),
];
