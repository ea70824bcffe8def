import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { AuthorizationServer, type OAuthRequest } from '../../src/index.js';
import { PostgresStorage } from '../../src/postgres/index.js';
import { FakeClock, FakeSessions } from '../../src/testing/index.js';
import { ADA, CALLBACK } from '../fixtures.js';
import { DATABASE_URL, dropSchema, makePool, schemaName } from '../storage/pg.js';
import { proof, proofKey } from './fixtures.js';

/**
 * DPoP on PostgreSQL (migration 12): the bindings of tokens, codes and clients survive the
 * store, and two server instances on two pools (two machines behind a load balancer) share the
 * replay check: a proof one accepted, the other refuses, also when 50 requests race across both.
 */
const ISSUER = 'https://as.example';
const TOKEN_URL = `${ISSUER}/v1/oauth/token`;
const API = 'https://api.example/v2/account';
const pools = DATABASE_URL ? [makePool(20), makePool(20)] : [];
const schemas: string[] = [];
afterAll(async () => {
  if (pools[0]) for (const s of schemas) await dropSchema(pools[0], s);
  await Promise.all(pools.map((pool) => pool.end()));
});

const form = (values: Record<string, string>, dpop?: string): OAuthRequest => ({
  method: 'POST',
  url: '/v1/oauth/token',
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...(dpop !== undefined && { dpop }) },
  body: new URLSearchParams(values).toString(),
});

describe.skipIf(!DATABASE_URL)('DPoP on PostgreSQL, two instances', () => {
  async function twoServers() {
    const schema = schemaName('dpop_wiring');
    schemas.push(schema);
    const [a, b] = pools.map((pool) => new PostgresStorage(pool, { schema }));
    await a!.migrate();
    const clock = new FakeClock();
    const sessions = new FakeSessions(clock);
    const make = (storage: PostgresStorage) => new AuthorizationServer({ issuer: ISSUER, storage, sessions, clock, dpop: {} });
    return { one: make(a!), two: make(b!), storage: a!, clock, sessions };
  }

  it('a public client’s bound code (dpop_jkt), tokens and refresh token; a required-DPoP client; the replay check shared', async () => {
    const { one, two, storage, clock, sessions } = await twoServers();
    const key = await proofKey();
    const app = await one.registerClient({ name: 'CLI', redirectUri: CALLBACK, public: true, dpopBoundAccessTokens: true });
    expect((await storage.findClient(app.clientId))?.dpopBoundAccessTokens).toBe(true);
    const ada = sessions.signIn(ADA);
    const verifier = 'v'.repeat(50);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const query = new URLSearchParams({
      client_id: app.clientId,
      redirect_uri: CALLBACK,
      response_type: 'code',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      dpop_jkt: key.jkt,
    });
    const decision = await one.authorize({ method: 'GET', url: `/v1/oauth/authorize?${query}`, headers: { cookie: ada } });
    if (decision.type !== 'consent') throw new Error(JSON.stringify(decision));
    const approved = await one.approve(decision.interaction.id, { method: 'GET', url: '/', headers: { cookie: ada } });
    if (approved.type !== 'redirect') throw new Error(JSON.stringify(approved));
    const code = new URL(approved.location).searchParams.get('code')!;
    const exchange = { grant_type: 'authorization_code', code, client_id: app.clientId, redirect_uri: CALLBACK, code_verifier: verifier };
    // The code's binding came through PostgreSQL: another key is refused, and the code is not used up.
    const other = await proofKey();
    expect(JSON.parse((await two.token(form(exchange, await proof(other, 'POST', TOKEN_URL, clock.now())))).body).error).toBe(
      'invalid_grant',
    );
    const tokenProof = await proof(key, 'POST', TOKEN_URL, clock.now());
    const res = await two.token(form(exchange, tokenProof));
    expect(res.status).toBe(200);
    const body = JSON.parse(res.body) as { access_token: string; refresh_token: string; token_type: string };
    expect(body.token_type).toBe('DPoP');
    // The same proof at the other instance: used before.
    const replayed = JSON.parse(
      (await one.token(form({ grant_type: 'refresh_token', refresh_token: body.refresh_token }, tokenProof))).body,
    );
    expect(replayed.error_description).toBe('The DPoP proof was used before.');
    // The refresh token is bound (public client): refused without a proof, accepted with the key.
    expect(JSON.parse((await one.token(form({ grant_type: 'refresh_token', refresh_token: body.refresh_token }))).body).error).toBe(
      'invalid_dpop_proof',
    );
    const refreshed = await one.token(
      form({ grant_type: 'refresh_token', refresh_token: body.refresh_token }, await proof(key, 'POST', TOKEN_URL, clock.now())),
    );
    expect(refreshed.status).toBe(200);
    const token = (JSON.parse(refreshed.body) as { access_token: string }).access_token;
    // The access token as Bearer: refused; 50 requests replaying one resource proof across both instances: one passes.
    expect((await one.authenticate({ method: 'GET', url: API, headers: { authorization: `Bearer ${token}` } })).ok).toBe(false);
    const resourceProof = await proof(key, 'GET', API, clock.now(), { accessToken: token });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 === 0 ? one : two).authenticate({
          method: 'GET',
          url: API,
          headers: { authorization: `DPoP ${token}`, dpop: resourceProof },
        }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    // The required-DPoP client: a request without a proof is refused.
    expect(
      JSON.parse((await one.token(form({ grant_type: 'refresh_token', refresh_token: 'x', client_id: app.clientId }))).body).error,
    ).toBe('invalid_dpop_proof');
  });
});
