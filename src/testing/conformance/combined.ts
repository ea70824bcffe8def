/**
 * Combined reads (the `combinedReads` group, `CombinedReadStorage`; a storage without it passes
 * these cases, one with part of it fails them): `findClientAndCode` and `findClientAndToken`
 * answer exactly what `findClient` with `findCode` or `findToken` answer, for every state of the
 * code or token and with either of the two missing.
 */
import type { ClientRecord } from '../../storage/types.js';
import { groupCase, type StorageConformanceCase } from './case.js';
import { check, same } from './check.js';
import { CALLBACK, T0, hash, id, makePair, withCode, withPair } from './fixtures.js';

/** A client with every optional field set: each must come through the combined read as through `findClient`. */
const fullClient = (): ClientRecord => ({
  id: id(),
  name: 'Every Field App',
  redirectUri: CALLBACK,
  secretHash: hash(),
  createdAt: T0,
  responseTypes: ['code'],
  grantTypes: ['authorization_code', 'refresh_token'],
  registration: 'dynamic',
  clientUri: 'https://client.example/',
  logoUri: 'https://client.example/logo.png',
  owner: 'owner-1',
  metadata: { software_id: 'x', contacts: ['ops@client.example'], n: 3 },
  dpopBoundAccessTokens: true,
  openid: { idTokenSignedResponseAlg: 'ES256', postLogoutRedirectUris: [CALLBACK], defaultMaxAge: 600, requireAuthTime: true },
});

/** The cases on combined reads. */
export const combinedCases: readonly StorageConformanceCase[] = [
  groupCase(
    'combinedReads',
    'combined reads (optional): findClientAndCode answers what findClient and findCode answer, a code unused or used, either one unknown',
    async (storage) => {
      const client = fullClient();
      await storage.saveClient(client);
      const { code } = await withCode(
        storage,
        {
          clientId: client.id,
          codeChallenge: hash(),
          codeChallengeMethod: 'S256',
          resources: ['https://api.example/'],
          dpop: { jkt: hash() },
        },
        { clientId: client.id },
      );
      const both = async (clientId: string, codeHash: string) => ({
        client: await storage.findClient(clientId),
        code: await storage.findCode(codeHash),
      });
      const read = await storage.findClientAndCode(client.id, code.hash);
      same(read, await both(client.id, code.hash), 'the client (every field) and the unused code, as the separate reads give them');
      check(read.client !== null && read.code !== null, 'both were found');
      check((await storage.redeemCode(code.hash, T0, [])).ok, 'the code redeems');
      same(await storage.findClientAndCode(client.id, code.hash), await both(client.id, code.hash), 'the used code, with its usedAt');
      const unknown = hash();
      same(
        await storage.findClientAndCode(client.id, unknown),
        { client: await storage.findClient(client.id), code: null },
        'an unknown code is null',
      );
      same(
        await storage.findClientAndCode(id(), code.hash),
        { client: null, code: await storage.findCode(code.hash) },
        'an unknown client is null',
      );
      same(await storage.findClientAndCode(id(), unknown), { client: null, code: null }, 'both unknown: both null');
    },
  ),
  groupCase(
    'combinedReads',
    'combined reads (optional): findClientAndToken answers what findClient and findToken answer, a token live, rotated or revoked, either one unknown',
    async (storage) => {
      const client = fullClient();
      await storage.saveClient(client);
      const { grant, access, refresh } = await withPair(storage, { expiresAt: T0 + 1_000_000 }, { clientId: client.id });
      const both = async (clientId: string, tokenHash: string) => ({
        client: await storage.findClient(clientId),
        token: await storage.findToken(tokenHash),
      });
      same(
        await storage.findClientAndToken(client.id, refresh.hash),
        await both(client.id, refresh.hash),
        'a live refresh token with its grant',
      );
      same(await storage.findClientAndToken(client.id, access.hash), await both(client.id, access.hash), 'its access token');
      check((await storage.rotateRefreshToken(refresh.hash, T0 + 5, makePair(grant, T0 + 5))).ok, 'the refresh token rotates');
      same(await storage.findClientAndToken(client.id, refresh.hash), await both(client.id, refresh.hash), 'the rotated refresh token');
      await storage.revokeGrant(grant.id, T0 + 7);
      same(await storage.findClientAndToken(client.id, access.hash), await both(client.id, access.hash), 'a token of a revoked grant');
      const unknown = hash();
      same(
        await storage.findClientAndToken(client.id, unknown),
        { client: await storage.findClient(client.id), token: null },
        'an unknown token is null',
      );
      same(
        await storage.findClientAndToken(id(), access.hash),
        { client: null, token: await storage.findToken(access.hash) },
        'an unknown client is null',
      );
    },
  ),
];
