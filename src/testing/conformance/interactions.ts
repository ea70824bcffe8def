/**
 * Interactions: every field of every variant round trips (an authorization request's steps with
 * their request and browser binding, a device verification's with what they decide), and
 * `takeInteraction` is single use: by expiry at the `now` argument, and under concurrency.
 */
import type { DeviceConfirmationInteractionRecord, DeviceSignInInteractionRecord } from '../../storage/types.js';
import { conformanceCase, type StorageConformanceCase } from './case.js';
import { check, same } from './check.js';
import {
  CONFORMANCE_RACERS,
  T0,
  CALLBACK,
  id,
  hash,
  makeAccount,
  makeInteraction,
  makeLoginInteraction,
  requestOf,
  warmUp,
} from './fixtures.js';

/** The cases on interactions. */
export const interactionCases: readonly StorageConformanceCase[] = [
  conformanceCase('interactions: login and consent records round trip with every field', async (make) => {
    const storage = await make();
    const consent = makeInteraction();
    const login = makeLoginInteraction({ loginAfter: T0 - 1 });
    const minimal = makeLoginInteraction({
      request: { clientId: id(), redirectUri: CALLBACK, responseType: 'token', scope: ['read'], prompt: [] },
    });
    for (const record of [consent, login, minimal]) await storage.saveInteraction(record);
    same(
      await storage.findInteraction(consent.idHash),
      consent,
      'findInteraction returns the consent interaction, its request and account (extra account fields too)',
    );
    same(await storage.findInteraction(login.idHash), login, 'findInteraction returns the login interaction');
    same(await storage.findInteraction(minimal.idHash), minimal, 'findInteraction returns an interaction without optional request fields');
    same(await storage.findInteraction(hash()), null, 'findInteraction of an unknown id is null');
  }),

  conformanceCase(
    'interactions: the steps of a device verification (purpose device: what they decide, no request) round trip with every field',
    async (make) => {
      const storage = await make();
      const signIn: DeviceSignInInteractionRecord = {
        idHash: hash(),
        kind: 'login',
        purpose: 'device',
        device: { returnTo: '/v1/oauth/device/verify?user_code=WDJB-MJHT' },
        requestedAt: T0,
        expiresAt: T0 + 600_000,
        loginAfter: null,
      };
      const confirmation: DeviceConfirmationInteractionRecord = {
        idHash: hash(),
        kind: 'consent',
        purpose: 'device',
        device: {
          codeHash: hash(),
          clientId: id(),
          scope: ['read', 'write'],
          resources: ['https://api.example/'],
          browserHash: hash(),
          returnTo: '/v1/oauth/device/verify',
        },
        requestedAt: T0 + 1,
        expiresAt: T0 + 600_001,
        loginAfter: null,
        account: makeAccount(),
      };
      const minimal: DeviceConfirmationInteractionRecord = {
        ...confirmation,
        idHash: hash(),
        device: { codeHash: hash(), clientId: id(), scope: ['read'], returnTo: '/device/verify' },
      };
      for (const record of [signIn, confirmation, minimal]) await storage.saveInteraction(record);
      same(
        await storage.findInteraction(signIn.idHash),
        signIn,
        'findInteraction returns the sign-in step of a device verification as saved',
      );
      same(
        await storage.findInteraction(confirmation.idHash),
        confirmation,
        'findInteraction returns the confirmation step with what it decides (resources and browser binding too) and its account',
      );
      same(await storage.findInteraction(minimal.idHash), minimal, 'a confirmation without resources or binding comes back without them');
      same(await storage.takeInteraction(confirmation.idHash, T0 + 2), confirmation, 'takeInteraction returns it whole');
      same(await storage.takeInteraction(signIn.idHash, T0 + 2), signIn, 'and the sign-in step too');
    },
  ),

  conformanceCase('interactions: the browser binding (request.browserHash) round trips through save, find and take', async (make) => {
    const storage = await make();
    // Without it, every browser could continue the interaction: an interaction belongs to the browser that started it.
    const bound = makeInteraction();
    bound.request.browserHash = hash();
    await storage.saveInteraction(bound);
    same(
      requestOf(await storage.findInteraction(bound.idHash))?.browserHash,
      bound.request.browserHash,
      'findInteraction returns request.browserHash as saved',
    );
    same(
      await storage.takeInteraction(bound.idHash, T0 + 1),
      bound,
      'takeInteraction returns the bound interaction whole, request.browserHash included',
    );
  }),

  conformanceCase('takeInteraction: single use; expired when now >= expiresAt (boundary -1 ms / 0)', async (make) => {
    const storage = await make();
    const record = makeInteraction();
    await storage.saveInteraction(record);
    same(
      await storage.takeInteraction(record.idHash, record.expiresAt - 1),
      record,
      'takeInteraction at expiresAt - 1 ms returns the interaction',
    );
    same(await storage.takeInteraction(record.idHash, record.expiresAt - 1), null, 'a second takeInteraction returns null (single use)');
    same(await storage.findInteraction(record.idHash), null, 'a taken interaction is gone');
    const expired = makeInteraction();
    await storage.saveInteraction(expired);
    same(
      await storage.takeInteraction(expired.idHash, expired.expiresAt),
      null,
      'takeInteraction at now = expiresAt returns null (expired)',
    );
    same(
      await storage.takeInteraction(expired.idHash, expired.expiresAt - 1),
      null,
      'an expired interaction that was taken stays unusable',
    );
    same(await storage.takeInteraction(hash(), T0), null, 'takeInteraction of an unknown id is null');
  }),

  conformanceCase(`takeInteraction: exactly one of ${CONFORMANCE_RACERS} concurrent takes gets the interaction`, async (make) => {
    const storage = await make();
    const record = makeInteraction();
    await storage.saveInteraction(record);
    await warmUp(storage);
    const taken = await Promise.all(Array.from({ length: CONFORMANCE_RACERS }, () => storage.takeInteraction(record.idHash, T0 + 1)));
    const winners = taken.filter((r) => r !== null);
    check(
      winners.length === 1,
      `takeInteraction must be single use under concurrency: ${winners.length} of ${CONFORMANCE_RACERS} concurrent calls got the interaction (expected exactly 1). Check and delete must be one atomic step (DELETE ... RETURNING, GETDEL, no await in between).`,
    );
    same(winners[0], record, 'the winner gets the whole record');
  }),
];
