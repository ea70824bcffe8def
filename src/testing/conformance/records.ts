/**
 * What every record must survive, whatever its kind: copies in and out (no shared objects),
 * millisecond times as numbers, and exact key matches (no case folding, no trimming).
 */
import type { ClientRecord, ConsentRecord } from '../../storage/types.js';
import { conformanceCase, type StorageConformanceCase } from './case.js';
import { check, canonical, same, outcome, expectFailure } from './check.js';
import { T0, CALLBACK, id, hash, makePair, withCode, withPair, makeInteraction, requestOf } from './fixtures.js';

/** The cases that hold for every kind of record. */
export const recordCases: readonly StorageConformanceCase[] = [
  conformanceCase('records are copies: mutating what was saved, or what was returned, changes nothing stored', async (make) => {
    const storage = await make();
    const client: ClientRecord = { id: id(), name: 'Example App', redirectUri: CALLBACK, secretHash: hash(), createdAt: T0 };
    await storage.saveClient(client);
    client.name = 'changed after save';
    const foundClient = await storage.findClient(client.id);
    check(foundClient, 'client saved');
    foundClient.redirectUri = 'https://evil.example/';
    same((await storage.findClient(client.id))?.redirectUri, CALLBACK, 'mutating a returned client must not change the stored one');
    same((await storage.findClient(client.id))?.name, 'Example App', 'mutating a client after saveClient must not change the stored one');

    const interaction = makeInteraction();
    const snapshot = structuredClone(interaction);
    await storage.saveInteraction(interaction);
    interaction.request.scope.push('admin');
    const foundInteraction = await storage.findInteraction(interaction.idHash);
    check(
      foundInteraction?.purpose === 'authorization' && foundInteraction.kind === 'consent',
      'interaction saved (a consent step of an authorization request)',
    );
    foundInteraction.request.redirectUri = 'https://evil.example/';
    foundInteraction.account.uuid = 'someone-else';
    same(
      await storage.findInteraction(interaction.idHash),
      snapshot,
      'mutating an interaction (its nested request and account) after saving or finding it must not change the stored one',
    );

    const accountUuid = id();
    const clientId = id();
    const consent: ConsentRecord = {
      accountUuid,
      clientId,
      scope: ['read'],
      approvals: [{ resource: 'https://api.example/', scope: ['read'] }],
      grantedAt: T0,
    };
    await storage.saveConsent(consent);
    consent.scope.push('write');
    consent.approvals[0]?.scope.push('write');
    consent.approvals.push({ resource: null, scope: ['write'] });
    const foundConsent = await storage.findConsent(accountUuid, clientId);
    foundConsent?.scope.push('write');
    foundConsent?.approvals[0]?.scope.push('write');
    foundConsent?.approvals.push({ resource: null, scope: ['write'] });
    const listedConsent = (await storage.listConsents(accountUuid))[0];
    listedConsent?.scope.push('write');
    listedConsent?.approvals[0]?.scope.push('write');
    listedConsent?.approvals.push({ resource: null, scope: ['write'] });
    const storedConsent = await storage.findConsent(accountUuid, clientId);
    same(
      { scope: storedConsent?.scope, approvals: storedConsent?.approvals },
      { scope: ['read'], approvals: [{ resource: 'https://api.example/', scope: ['read'] }] },
      'mutating a consent (its scope, its approvals and the scope of one) after saving, finding or listing it must not change the stored one',
    );

    const { grant, code } = await withCode(storage);
    const expectedCode = structuredClone(code);
    code.redirectUri = 'https://evil.example/';
    const foundCode = await storage.findCode(code.hash);
    check(foundCode, 'code saved');
    foundCode.usedAt = T0;
    foundCode.scope.push('admin');
    same(await storage.findCode(code.hash), expectedCode, 'mutating a code after createGrant or findCode must not change the stored one');

    const { grant: g2, access } = await withPair(storage);
    const expected = structuredClone({ token: access, grant: g2 });
    access.scope.push('admin');
    g2.account.name = 'changed after save';
    const found = await storage.findToken(access.hash);
    check(found, 'token saved');
    found.token.revokedAt = T0;
    found.grant.revokedAt = T0;
    found.grant.account.uuid = 'someone-else';
    same(
      await storage.findToken(access.hash),
      expected,
      'mutating a token or its grant after saving or finding it must not change the stored ones',
    );

    const pair = makePair(grant, T0 + 1);
    const expectedGrant = structuredClone(grant);
    const redeemed = await storage.redeemCode(code.hash, T0 + 1, pair);
    check(redeemed.ok, `redeemCode of a fresh code succeeds (got ${outcome(redeemed)})`);
    redeemed.grant.revokedAt = T0;
    redeemed.grant.scope.push('admin');
    pair[0].scope.push('admin');
    same(
      await storage.findToken(pair[0].hash),
      { token: { ...pair[0], scope: [...grant.scope] }, grant: expectedGrant },
      'mutating the grant returned by redeemCode, or the tokens passed to it, must not change the stored ones',
    );
  }),

  conformanceCase('timestamps: millisecond values (odd ms, far past and far future) come back exactly, as numbers', async (make) => {
    const storage = await make();
    const times = [1, T0, 4_102_444_800_999 /* 2100-01-01T00:00:00.999Z */, 8_640_000_000_000_000 /* the largest Date */];
    for (const t of times) {
      const { grant, code } = await withCode(storage, { expiresAt: t + 1 }, { createdAt: t });
      const found = await storage.findCode(code.hash);
      check(found, 'code saved');
      check(
        typeof found.expiresAt === 'number',
        `findCode().expiresAt must be a number, got ${typeof found.expiresAt} (${canonical(found.expiresAt)}); a SQL bigint arrives as a string and must be parsed`,
      );
      same(found.expiresAt, t + 1, `expiresAt ${t + 1} round trips exactly`);
      const redeemed = await storage.redeemCode(code.hash, t, []);
      check(redeemed.ok, `redeemCode at ${t} of a code expiring at ${t + 1} must succeed, got ${outcome(redeemed)}`);
      check(
        typeof redeemed.grant.createdAt === 'number' && redeemed.grant.createdAt === t,
        `the grant's createdAt (${t}) must come back as the same number, got ${canonical(redeemed.grant.createdAt)}`,
      );
      const replay = await storage.redeemCode(code.hash, t, []);
      check(
        !replay.ok && typeof replay.usedAt === 'number' && replay.usedAt === t,
        `usedAt must come back as the number ${t}, got ${canonical(replay)}`,
      );
      check(grant.id === code.grantId, 'fixture');
    }
    const { access } = await withPair(storage);
    const found = await storage.findToken(access.hash);
    check(
      found &&
        typeof found.token.issuedAt === 'number' &&
        typeof found.token.expiresAt === 'number' &&
        typeof found.grant.createdAt === 'number',
      `token times must be numbers, got ${canonical(found && { issuedAt: found.token.issuedAt, expiresAt: found.token.expiresAt, createdAt: found.grant.createdAt })}`,
    );
    const interaction = makeInteraction({ loginAfter: T0 - 7 });
    await storage.saveInteraction(interaction);
    const foundInteraction = await storage.findInteraction(interaction.idHash);
    check(
      foundInteraction &&
        typeof foundInteraction.expiresAt === 'number' &&
        foundInteraction.loginAfter === T0 - 7 &&
        typeof foundInteraction.requestedAt === 'number',
      `interaction times must be numbers, got ${canonical(foundInteraction)}`,
    );
  }),

  conformanceCase('lookups are exact: keys that differ only in letter case or whitespace find nothing', async (make) => {
    const storage = await make();
    // Hashes are base64url: "abc" and "ABC" are different secrets (beware case-insensitive collations).
    const flip = (s: string) => {
      const i = s.search(/[A-Za-z]/);
      check(i >= 0, `${s} has a letter to change the case of`);
      const c = s.charAt(i);
      return s.slice(0, i) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + s.slice(i + 1);
    };
    const client: ClientRecord = { id: `App-${id()}`, name: 'Example App', redirectUri: CALLBACK, secretHash: hash(), createdAt: T0 };
    await storage.saveClient(client);
    same(await storage.findClient(client.id.toLowerCase()), null, 'findClient with a differently cased id finds nothing');
    same(await storage.findClient(`${client.id} `), null, 'findClient with a trailing space finds nothing');
    const { code } = await withCode(storage);
    same(await storage.findCode(flip(code.hash)), null, 'findCode with one letter of the hash in another case finds nothing');
    const flipped = await storage.redeemCode(flip(code.hash), T0, []);
    expectFailure(flipped, 'missing', 'redeemCode with one letter of the hash in another case');
    same(await storage.findCode(`${code.hash} `), null, 'findCode with a trailing space finds nothing');
    const { access, refresh } = await withPair(storage);
    same(await storage.findToken(flip(access.hash)), null, 'findToken with one letter of the hash in another case finds nothing');
    expectFailure(
      await storage.rotateRefreshToken(flip(refresh.hash), T0, []),
      'missing',
      'rotateRefreshToken with one letter of the hash in another case',
    );
    const interaction = makeInteraction();
    await storage.saveInteraction(interaction);
    same(
      await storage.takeInteraction(flip(interaction.idHash), T0),
      null,
      'takeInteraction with one letter of the id hash in another case finds nothing',
    );
    same(await storage.findInteraction(interaction.idHash), interaction, 'and leaves the interaction in place');
  }),
  conformanceCase(
    "resource indicators (RFC 8707): a request's resources, a code's resources and a token's audience round trip; absent stays absent",
    async (make) => {
      const storage = await make();
      const api = 'https://api.example/v2';
      const mcp = 'https://mcp.example/mcp';
      const resources = [api, mcp];
      const interaction = makeInteraction();
      interaction.request.resources = resources.slice();
      await storage.saveInteraction(interaction);
      same(
        requestOf(await storage.findInteraction(interaction.idHash))?.resources,
        resources,
        "an interaction's request keeps its resources",
      );
      same(requestOf(await storage.takeInteraction(interaction.idHash, T0))?.resources, resources, 'and so does takeInteraction');

      const { grant, code } = await withCode(storage, { resources: resources.slice() });
      same(await storage.findCode(code.hash), code, 'findCode returns the resources of a code');
      const { code: plain } = await withCode(storage);
      same(await storage.findCode(plain.hash), plain, 'a code saved without resources comes back without the field');

      const [access, refresh] = makePair(grant, T0 + 1, { audience: resources.slice() });
      access.audience = [mcp];
      check((await storage.redeemCode(code.hash, T0 + 1, [access, refresh])).ok, 'redeemCode of a fresh code succeeds');
      same((await storage.findToken(access.hash))?.token, access, 'findToken returns the audience of a token inserted by redeemCode');
      same((await storage.findToken(refresh.hash))?.token, refresh, 'and of its refresh token');

      const [access2, refresh2] = makePair(grant, T0 + 2, { audience: resources.slice(), familyHash: hash() });
      access2.audience = [api];
      check((await storage.rotateRefreshToken(refresh.hash, T0 + 2, [access2, refresh2])).ok, 'rotateRefreshToken succeeds');
      same(
        (await storage.findToken(access2.hash))?.token,
        access2,
        'findToken returns the audience of a token inserted by rotateRefreshToken',
      );
      same((await storage.findToken(refresh2.hash))?.token, refresh2, 'and of its refresh token');

      const { access: bare } = await withPair(storage);
      same((await storage.findToken(bare.hash))?.token, bare, 'a token saved without an audience comes back without the field');
    },
  ),
  conformanceCase(
    "OpenID Connect: a client's, a request's, a code's and a grant's openid sections round trip, through redeemCode and rotateRefreshToken too; absent stays absent",
    async (make) => {
      const storage = await make();
      const client: ClientRecord = {
        id: id(),
        name: 'Example App',
        redirectUri: CALLBACK,
        secretHash: hash(),
        createdAt: T0,
        openid: {
          idTokenSignedResponseAlg: 'ES256',
          postLogoutRedirectUris: [CALLBACK],
          defaultMaxAge: 60,
          requireAuthTime: true,
          subjectType: 'pairwise',
        },
      };
      await storage.saveClient(client);
      same(await storage.findClient(client.id), client, 'findClient returns the openid section of a client');

      const interaction = makeInteraction();
      interaction.request.openid = {
        nonce: 'n-0S6',
        maxAge: 0,
        idTokenHintSub: 'sub-1',
        loginHint: 'ada',
        uiLocales: ['fr', 'en'],
        acrValues: ['x'],
        claimsLocales: ['fr'],
        display: 'popup',
        responseMode: 'form_post',
      };
      await storage.saveInteraction(interaction);
      same(
        requestOf(await storage.takeInteraction(interaction.idHash, T0))?.openid,
        interaction.request.openid,
        "an interaction's request keeps its openid section",
      );

      const authTime = T0 - 5000;
      const { grant, code } = await withCode(storage, { openid: { authTime, nonce: 'n-0S6' } }, { openid: { authTime } });
      same(await storage.findCode(code.hash), code, 'findCode returns the openid section of a code');
      const [access, refresh] = makePair(grant, T0 + 1);
      const redeemed = await storage.redeemCode(code.hash, T0 + 1, [access, refresh]);
      check(redeemed.ok, 'redeemCode of a fresh code succeeds');
      same(redeemed.grant.openid, { authTime }, 'redeemCode returns the grant with its openid section');
      const [access2, refresh2] = makePair(grant, T0 + 2, { familyHash: hash() });
      const rotated = await storage.rotateRefreshToken(refresh.hash, T0 + 2, [access2, refresh2]);
      check(rotated.ok, 'rotateRefreshToken succeeds');
      same(rotated.grant.openid, { authTime }, 'rotateRefreshToken returns the grant with its openid section');

      const { grant: plainGrant, code: plainCode } = await withCode(storage);
      same(await storage.findCode(plainCode.hash), plainCode, 'a code saved without an openid section comes back without the field');
      const [a3, r3] = makePair(plainGrant, T0 + 1);
      const plain = await storage.redeemCode(plainCode.hash, T0 + 1, [a3, r3]);
      check(plain.ok, 'redeemCode of a plain code succeeds');
      same('openid' in plain.grant, false, 'a grant saved without an openid section comes back without the field');
    },
  ),
  conformanceCase(
    "DPoP bindings (RFC 9449): a request's dpopJkt, a code's and a token's dpop section, a client's dpopBoundAccessTokens round trip; absent stays absent",
    async (make) => {
      const storage = await make();
      const jkt = hash();
      const client: ClientRecord = {
        id: id(),
        name: 'Agent',
        redirectUri: CALLBACK,
        secretHash: null,
        createdAt: T0,
        dpopBoundAccessTokens: true,
      };
      await storage.saveClient(client);
      same(await storage.findClient(client.id), client, 'findClient returns dpopBoundAccessTokens');
      const interaction = makeInteraction();
      interaction.request.dpopJkt = jkt;
      await storage.saveInteraction(interaction);
      same(requestOf(await storage.findInteraction(interaction.idHash))?.dpopJkt, jkt, "an interaction's request keeps its dpopJkt");

      const { grant, code } = await withCode(storage, { dpop: { jkt } });
      same(await storage.findCode(code.hash), code, 'findCode returns the dpop section of a code');
      const [access, refresh] = makePair(grant, T0 + 1);
      access.dpop = { jkt };
      refresh.dpop = { jkt };
      check((await storage.redeemCode(code.hash, T0 + 1, [access, refresh])).ok, 'redeemCode of a fresh code succeeds');
      same((await storage.findToken(access.hash))?.token, access, 'findToken returns the dpop section of a token inserted by redeemCode');
      same((await storage.findToken(refresh.hash))?.token, refresh, 'and of its refresh token');
      const [access2, refresh2] = makePair(grant, T0 + 2);
      access2.dpop = { jkt };
      check((await storage.rotateRefreshToken(refresh.hash, T0 + 2, [access2, refresh2])).ok, 'rotateRefreshToken succeeds');
      same(
        (await storage.findToken(access2.hash))?.token,
        access2,
        'findToken returns the dpop section of a token inserted by rotateRefreshToken',
      );
      same((await storage.findToken(refresh2.hash))?.token, refresh2, 'and a refresh token without one comes back without the field');
    },
  ),
];
