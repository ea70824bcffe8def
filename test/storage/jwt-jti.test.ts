/**
 * On both stores (docs/reference.md#jwt-access-tokens): storage knows a JWT access token by nothing
 * a bare claim leads to. The `jti` and `SHA-256(jti)` find no record; a record that an earlier
 * version keyed by `SHA-256(jti)` is not reachable through the bare `jti` either (bearer check,
 * introspection, revocation). Over HTTP: test/adapters/jwt-jti.test.ts.
 */
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { sha256Base64url } from '../../src/crypto.js';
import { ISSUER } from '../fixtures.js';
import { json, setup } from '../helpers.js';
import { storesUnderTest } from './pg.js';

const stores = storesUnderTest('jwtjti');

describe.each(stores)('%s: JWT access tokens are known by nothing a bare claim leads to', (_name, makeStorage) => {
  it('storage does not know a JWT by the hash of its jti, nor by the hash of the JWT', async () => {
    const storage = makeStorage();
    const t = { ...(await setup({ storage, accessTokenFormat: 'jwt', issuer: ISSUER })), storage };
    const { access_token } = await t.tokens();
    const jti = decodeJwt(access_token).jti!;
    expect(await t.storage.findToken(sha256Base64url(jti))).toBeNull();
    expect(await t.storage.findToken(sha256Base64url(access_token))).toBeNull();
    expect((await t.api('GET', jti)).ok).toBe(false);
    expect((await t.api('GET', access_token)).ok).toBe(true);
  });

  it('a record an earlier version keyed by SHA-256(jti): the bare jti authenticates, introspects and revokes nothing', async () => {
    const storage = makeStorage();
    const t = { ...(await setup({ storage, accessTokenFormat: 'jwt', issuer: ISSUER })), storage };
    const { access_token } = await t.tokens();
    const jti = decodeJwt(access_token).jti!;
    // What earlier versions stored: the access token keyed by SHA-256(jti) (here in a grant of its own).
    const current = (await t.storage.findToken(jti)) ?? (await t.storage.findToken(sha256Base64url(jti)));
    expect(current).not.toBeNull();
    const legacyKey = sha256Base64url(jti);
    const legacyGrant = `legacy-${legacyKey.slice(0, 12)}`;
    if (current!.token.hash !== legacyKey) {
      await t.storage.createGrant(
        { ...current!.grant, id: legacyGrant },
        { tokens: [{ ...current!.token, hash: legacyKey, grantId: legacyGrant }] },
      );
    }
    expect((await t.api('GET', jti)).ok).toBe(false);
    const ask = (token: string) =>
      t.server.introspect(t.post('/v1/oauth/introspect', { token, client_id: t.client.clientId, client_secret: t.client.clientSecret }));
    expect(json(await ask(jti))).toEqual({ active: false });
    expect((await t.server.revoke(t.post('/v1/oauth/revoke', { token: jti }))).status).toBe(200);
    expect((await t.storage.findToken(legacyKey))?.grant.revokedAt).toBeNull();
    expect((await t.api('GET', access_token)).ok).toBe(true);
    expect(json(await ask(access_token))).toMatchObject({ active: true });
  });
});
