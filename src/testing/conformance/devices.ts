/**
 * Device authorizations (RFC 8628): records round trip, user
 * codes are unique among live records, a decision happens once, and polling answers as the
 * contract says, with exactly one poll getting an approved record, also under concurrency. The
 * `deviceAuthorization` group (`DeviceAuthorizationStorage`): a storage without it passes these
 * cases without running them (it cannot be used with the `deviceAuthorization` option: the
 * server refuses it), one with part of it fails them.
 */
import { hasGroup } from '../../storage/groups.js';
import {
  DEVICE_CODE_GRANT,
  type ClientGrantType,
  type DeviceAuthorizationFields,
  type DeviceAuthorizationRecord,
  type PendingDeviceAuthorizationRecord,
} from '../../storage/types.js';
import { groupCase, type StorageConformanceCase } from './case.js';
import { check, same } from './check.js';
import { CONFORMANCE_RACERS, T0, hash, id, makeAccount, makeGrant, makePair, warmUp } from './fixtures.js';

/** The device lifetime of fixtures: ten minutes; the interval five seconds. */
const LIFETIME = 600_000;
const INTERVAL = 5;

/** A pending device authorization created at T0. */
function makeDevice(over: Partial<DeviceAuthorizationFields> = {}): PendingDeviceAuthorizationRecord {
  return {
    hash: hash(),
    userCodeHash: hash(),
    clientId: id(),
    scope: ['read', 'write'],
    createdAt: T0,
    expiresAt: T0 + LIFETIME,
    interval: INTERVAL,
    lastPolledAt: null,
    status: 'pending',
    account: null,
    decidedAt: null,
    ...over,
  };
}

/** The cases on device authorizations. */
export const deviceCases: readonly StorageConformanceCase[] = [
  groupCase(
    'deviceAuthorization',
    'device authorizations (optional): a client allowed the device grant round trips its grantTypes',
    async (storage) => {
      const client = {
        id: id(),
        name: 'Terminal CLI',
        redirectUri: 'http://127.0.0.1/cb',
        secretHash: null,
        createdAt: T0,
        grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'] as ClientGrantType[],
      };
      await storage.saveClient(client);
      same(await storage.findClient(client.id), client, 'findClient returns the device grant among the grantTypes');
    },
  ),

  groupCase(
    'deviceAuthorization',
    'device authorizations (optional): a record round trips with every field, found by its user code hash',
    async (storage) => {
      const full = makeDevice({ resources: ['https://api.example/'] });
      const minimal = makeDevice();
      same(await storage.createDeviceAuthorization(full), true, 'createDeviceAuthorization of a new record answers true');
      same(await storage.createDeviceAuthorization(minimal), true, 'createDeviceAuthorization of another record answers true');
      same(await storage.findDeviceAuthorization(full.userCodeHash), full, 'findDeviceAuthorization returns the record with its resources');
      same(
        await storage.findDeviceAuthorization(minimal.userCodeHash),
        minimal,
        'findDeviceAuthorization returns a record without resources as saved',
      );
      same(await storage.findDeviceAuthorization(hash()), null, 'findDeviceAuthorization of an unknown user code is null');
    },
  ),

  groupCase(
    'deviceAuthorization',
    'device authorizations (optional): a user code is unique among live records; an expired holder is replaced',
    async (storage) => {
      const first = makeDevice();
      await storage.createDeviceAuthorization(first);
      const clash = makeDevice({
        userCodeHash: first.userCodeHash,
        createdAt: first.expiresAt - 1,
        expiresAt: first.expiresAt - 1 + LIFETIME,
      });
      same(await storage.createDeviceAuthorization(clash), false, 'a user code held by a live record is refused (false)');
      same(await storage.findDeviceAuthorization(first.userCodeHash), first, 'the live holder is unchanged');
      const later = makeDevice({ userCodeHash: first.userCodeHash, createdAt: first.expiresAt, expiresAt: first.expiresAt + LIFETIME });
      same(await storage.createDeviceAuthorization(later), true, 'a user code whose holder expired (createdAt >= its expiresAt) is taken');
      same(await storage.findDeviceAuthorization(first.userCodeHash), later, 'the user code now finds the new record');
      same(
        await storage.pollDeviceAuthorization(first.hash, first.clientId, first.expiresAt, 0),
        { status: 'missing' },
        'the replaced record is gone',
      );
    },
  ),

  groupCase(
    'deviceAuthorization',
    'device authorizations (optional): decided once, while pending and unexpired (boundary -1 ms / 0)',
    async (storage) => {
      const account = makeAccount();
      const record = makeDevice();
      await storage.createDeviceAuthorization(record);
      same(await storage.decideDeviceAuthorization(record.hash, T0 + 10, account), true, 'the first decision answers true');
      same(await storage.decideDeviceAuthorization(record.hash, T0 + 11, null), false, 'a second decision answers false');
      same(
        await storage.findDeviceAuthorization(record.userCodeHash),
        { ...record, status: 'approved', account, decidedAt: T0 + 10 },
        'the approved record names its account (extra fields too) and decision time',
      );
      const denied = makeDevice();
      await storage.createDeviceAuthorization(denied);
      same(
        await storage.decideDeviceAuthorization(denied.hash, denied.expiresAt - 1, null),
        true,
        'a denial at expiresAt - 1 ms answers true',
      );
      same(
        await storage.findDeviceAuthorization(denied.userCodeHash),
        { ...denied, status: 'denied', account: null, decidedAt: denied.expiresAt - 1 },
        'a denied record is denied at its decision time, with no account',
      );
      const expired = makeDevice();
      await storage.createDeviceAuthorization(expired);
      same(await storage.decideDeviceAuthorization(expired.hash, expired.expiresAt, account), false, 'no decision at now = expiresAt');
      same(await storage.decideDeviceAuthorization(hash(), T0, account), false, 'no decision of an unknown record');
    },
  ),

  groupCase(
    'deviceAuthorization',
    'device authorizations (optional): polling answers pending, slow_down (+5 s), denied, expired, and the approval once',
    async (storage) => {
      const record = makeDevice();
      await storage.createDeviceAuthorization(record);
      const poll = (at: number, clientId = record.clientId) => storage.pollDeviceAuthorization(record.hash, clientId, at, 0);
      same(await poll(T0 + 1, id()), { status: 'missing' }, "another client's poll is missing");
      same(await poll(T0 + 1), { status: 'pending' }, 'the first poll is pending');
      same(
        await poll(T0 + 1 + INTERVAL * 1000 - 1),
        { status: 'slow_down', interval: INTERVAL + 5 },
        'a poll 1 ms too soon is slow_down, interval + 5',
      );
      same((await storage.findDeviceAuthorization(record.userCodeHash))?.interval, INTERVAL + 5, 'the raised interval is stored');
      same(
        await poll(T0 + 1 + INTERVAL * 1000 - 1 + (INTERVAL + 5) * 1000),
        { status: 'pending' },
        'a poll after the raised interval is pending',
      );
      const account = makeAccount();
      await storage.decideDeviceAuthorization(record.hash, T0 + 20_000, account);
      same(await poll(T0 + 20_001, id()), { status: 'missing' }, "another client's poll does not take the approval");
      const seen = await poll(T0 + 20_002);
      check(seen.status === 'approved', `an approved record is answered to the next poll (got ${JSON.stringify(seen)})`);
      same(seen.record.account, account, 'with the account that approved it');
      same((await poll(T0 + 20_003)).status, 'approved', 'a poll does not use the approval up');
      const grant = makeGrant({ clientId: record.clientId, account });
      const tokens = makePair(grant, T0 + 20_004);
      check(
        await storage.redeemDeviceAuthorization(record.hash, T0 + 20_004, grant, tokens),
        'redeemDeviceAuthorization of an approved record answers true',
      );
      same((await storage.findToken(tokens[0].hash))?.grant, grant, 'and stores the grant with its tokens');
      same(await storage.redeemDeviceAuthorization(record.hash, T0 + 20_005, makeGrant(), []), false, 'a second redeem answers false');
      same(await poll(T0 + 20_006), { status: 'redeemed' }, 'the next poll finds it redeemed');
      same(await poll(record.expiresAt + 1), { status: 'redeemed' }, 'redeemed is reported before expired');
      const late = makeDevice();
      await storage.createDeviceAuthorization(late);
      await storage.decideDeviceAuthorization(late.hash, T0 + 1, account);
      const lateGrant = makeGrant({ clientId: late.clientId, account });
      const latePair = makePair(lateGrant, late.expiresAt);
      same(
        await storage.redeemDeviceAuthorization(late.hash, late.expiresAt, lateGrant, latePair),
        false,
        'an approval is not redeemed at now = expiresAt',
      );
      same(await storage.findToken(latePair[0].hash), null, 'and nothing of it is stored');

      const denied = makeDevice();
      await storage.createDeviceAuthorization(denied);
      await storage.decideDeviceAuthorization(denied.hash, T0 + 1, null);
      same(
        await storage.pollDeviceAuthorization(denied.hash, denied.clientId, T0 + 2, 0),
        { status: 'denied' },
        'a denied record polls denied',
      );
      same(
        await storage.pollDeviceAuthorization(denied.hash, denied.clientId, denied.expiresAt, 0),
        { status: 'expired' },
        'expired at now = expiresAt',
      );
      same(await storage.pollDeviceAuthorization(hash(), denied.clientId, T0, 0), { status: 'missing' }, 'an unknown record is missing');
    },
  ),

  groupCase(
    'deviceAuthorization',
    `device authorizations (optional): exactly one of ${CONFORMANCE_RACERS} concurrent redeems gets an approval; one of concurrent decisions wins`,
    async (storage) => {
      await warmUp(storage);
      const record = makeDevice();
      await storage.createDeviceAuthorization(record);
      const decisions = await Promise.all(
        Array.from({ length: CONFORMANCE_RACERS }, (_, i) =>
          storage.decideDeviceAuthorization(record.hash, T0 + 1, i % 2 ? makeAccount() : null),
        ),
      );
      check(
        decisions.filter(Boolean).length === 1,
        `decideDeviceAuthorization must decide once under concurrency: ${decisions.filter(Boolean).length} of ${CONFORMANCE_RACERS} won`,
      );
      const approved = makeDevice();
      await storage.createDeviceAuthorization(approved);
      await storage.decideDeviceAuthorization(approved.hash, T0 + 1, makeAccount());
      const racers = Array.from({ length: CONFORMANCE_RACERS }, () => {
        const grant = makeGrant({ clientId: approved.clientId });
        return { grant, pair: makePair(grant, T0 + 2) };
      });
      const redeems = await Promise.all(
        racers.map(({ grant, pair }) => storage.redeemDeviceAuthorization(approved.hash, T0 + 2, grant, pair)),
      );
      const winners = redeems.filter(Boolean).length;
      check(
        winners === 1,
        `redeemDeviceAuthorization must hand an approval to exactly one caller: ${winners} of ${CONFORMANCE_RACERS} got it. Check and mark redeemed must be one atomic step with the insert of the tokens.`,
      );
      const stored = await Promise.all(racers.map(({ pair }) => storage.findToken(pair[0].hash)));
      same(stored.map(Boolean), redeems, 'only the winner stored its grant and tokens: the losers changed nothing');
      same(
        await storage.pollDeviceAuthorization(approved.hash, approved.clientId, T0 + 3, 0),
        { status: 'redeemed' },
        'after the race the record is redeemed',
      );
    },
  ),
  groupCase(
    'deviceAuthorization',
    'device authorizations (optional): revokeAccess, revokeClientGrants and revokeAccountGrants deny the approvals they cover that no poll collected yet',
    async (storage) => {
      const ada = makeAccount();
      const bob = makeAccount();
      const clientId = id();
      const otherClient = id();
      /** A device request of `client` approved by `account` at T0 + 1. */
      const approved = async (account: typeof ada, client = clientId) => {
        const device = makeDevice({ clientId: client });
        await storage.createDeviceAuthorization(device);
        check(await storage.decideDeviceAuthorization(device.hash, T0 + 1, account), 'a pending request can be approved');
        return device;
      };
      const pollOf = async (device: DeviceAuthorizationRecord) =>
        (await storage.pollDeviceAuthorization(device.hash, device.clientId, T0 + 10_000, 0)).status;

      const pair = await approved(ada);
      const adaElsewhere = await approved(ada, otherClient);
      const bobs = await approved(bob);
      await storage.revokeAccess(ada.uuid, clientId, T0 + 2);
      same(await pollOf(pair), 'denied', "revokeAccess denies the account's approval for that client");
      same(
        await storage.findDeviceAuthorization(pair.userCodeHash),
        { ...pair, status: 'denied', account: null, decidedAt: T0 + 1 },
        'a denied approval names no account any more; its decision time stays',
      );
      same(await pollOf(adaElsewhere), 'approved', "revokeAccess leaves the account's approval for another client");

      const all = await approved(ada);
      await storage.revokeClientGrants(clientId, T0 + 3);
      same(await pollOf(all), 'denied', 'revokeClientGrants denies every approval for the client');
      same(await pollOf(bobs), 'denied', "revokeClientGrants denies another account's approval for the client too");

      if (hasGroup(storage, 'accountAdministration')) {
        const mine = await approved(ada, otherClient);
        const theirs = await approved(bob, otherClient);
        await storage.revokeAccountGrants(ada.uuid, T0 + 4);
        same(await pollOf(mine), 'denied', "revokeAccountGrants denies the account's approvals");
        same(await pollOf(theirs), 'approved', "revokeAccountGrants leaves another account's approvals");
      }
      const pending = makeDevice({ clientId });
      await storage.createDeviceAuthorization(pending);
      await storage.revokeClientGrants(clientId, T0 + 5);
      check(await storage.decideDeviceAuthorization(pending.hash, T0 + 6, ada), 'a request still pending is not denied by a revocation');
    },
  ),
];
