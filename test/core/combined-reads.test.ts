/**
 * The `combinedReads` storage group: the token endpoint (code exchange, refresh), revocation and
 * introspection read the client together with the code or token the request presents, in one
 * store call, when the store has the group. That must change nothing but the number of calls:
 * the same sequence of requests (right and wrong credentials, a wrong secret before the right
 * one, codes and tokens of another client, replays, retries, revocations, introspection) is run
 * against a store without the group and one with it, and every answer must be the same, random
 * values aside. A failed client authentication uses nothing up, though the code or token was
 * read with the client: the right client then exchanges it.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage, type Storage } from '../../src/index.js';
import { ADA } from '../fixtures.js';
import { json, randomValuesNamed, setup } from '../helpers.js';

/**
 * A MemoryStorage without `readToken` (so revocation and introspection read through the store
 * as a SQL store's callers do), with or without the combined reads, counting the calls.
 */
function store(combined: boolean): { storage: Storage; calls: string[] } {
  const memory = new MemoryStorage();
  const calls: string[] = [];
  const overrides: Record<string, unknown> = { readToken: undefined };
  if (!combined) Object.assign(overrides, { findClientAndCode: undefined, findClientAndToken: undefined });
  for (const name of ['findClient', 'findCode', 'findToken', 'findClientAndCode', 'findClientAndToken'] as const) {
    if (name in overrides) continue;
    const method = (memory[name] as (...args: unknown[]) => unknown).bind(memory);
    overrides[name] = (...args: unknown[]) => {
      calls.push(name);
      return method(...args);
    };
  }
  return { storage: Object.assign(memory, overrides), calls };
}

async function transcript(combined: boolean): Promise<{ lines: string[]; calls: string[] }> {
  const { storage, calls } = store(combined);
  const t = await setup({ storage, issuer: 'https://auth.example.com' });
  const lines: string[] = [];
  const norm = randomValuesNamed();
  const record = (label: string, value: unknown) => lines.push(`${label}: ${norm(JSON.stringify(value))}`);
  const creds = { client_id: t.client.clientId, client_secret: t.client.clientSecret };
  const basic = `Basic ${Buffer.from(`${t.client.clientId}:${t.client.clientSecret}`).toString('base64')}`;
  const about = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) => t.post(path, form, headers);

  // A code: a wrong secret first (uses nothing up), then another client's credentials, a wrong
  // redirect_uri, then the right client by HTTP Basic; then a replay.
  const code = await t.getCode({ scope: 'read write' });
  record('wrong secret', await t.exchange(code, { client_secret: 'wrong' }));
  record('unknown client', await t.exchange(code, { client_id: 'nobody', client_secret: 'x' }));
  record('other client', await t.exchange(code, { client_id: t.other.clientId, client_secret: t.other.clientSecret }));
  record('wrong redirect_uri', await t.exchange(code, { redirect_uri: 'https://client.example/elsewhere' }));
  const form = { grant_type: 'authorization_code', code, redirect_uri: 'https://client.example/cb' };
  const exchanged = await t.server.token(t.post('/v1/oauth/token', form, { authorization: basic }));
  record('right client by Basic', exchanged);
  record('replay', await t.exchange(code));
  record('unknown code', await t.exchange('not-a-code'));
  record('over-long code', await t.exchange('x'.repeat(5000)));

  // Refresh: another client's credentials, a wrong secret, the right client, a retry, a replay.
  const pair = await t.tokens({ scope: 'read write' });
  record(
    'refresh, other client',
    await t.refresh(pair.refresh_token, { client_id: t.other.clientId, client_secret: t.other.clientSecret }),
  );
  record('refresh, wrong secret', await t.refresh(pair.refresh_token, { ...creds, client_secret: 'wrong' }));
  const refreshed = await t.refresh(pair.refresh_token, creds);
  record('refresh', refreshed);
  const next = json(refreshed)['refresh_token'] as string;
  record('refresh, no credentials', await t.refresh(next));
  record('refresh, unknown token', await t.refresh('not-a-token', creds));
  record('refresh of the first token again (replay)', await t.refresh(pair.refresh_token, creds));
  record('api after replay', await t.api('GET', pair.access_token));

  // Introspection and revocation: another client, a wrong secret, the right client.
  const live = await t.tokens({ scope: 'read' });
  const introspect = (form: Record<string, string>, headers?: Record<string, string>) =>
    t.server.introspect(about('/v1/oauth/introspect', form, headers));
  record(
    'introspect, other client',
    await introspect({ token: live.access_token, client_id: t.other.clientId, client_secret: t.other.clientSecret }),
  );
  record('introspect, wrong secret', await introspect({ token: live.access_token, ...creds, client_secret: 'wrong' }));
  record('introspect', await introspect({ token: live.access_token, ...creds }));
  record('introspect by Basic', await introspect({ token: live.refresh_token }, { authorization: basic }));
  record('introspect, unknown', await introspect({ token: 'nope', ...creds }));
  const revoke = (form: Record<string, string>, headers?: Record<string, string>) =>
    t.server.revoke(about('/v1/oauth/revoke', form, headers));
  record(
    'revoke, other client',
    await revoke({ token: live.access_token, client_id: t.other.clientId, client_secret: t.other.clientSecret }),
  );
  record('revoke, wrong secret', await revoke({ token: live.access_token, ...creds, client_secret: 'wrong' }));
  record('api before revoke', await t.api('GET', live.access_token));
  record('revoke', await revoke({ token: live.access_token }, { authorization: basic }));
  record('api after revoke', await t.api('GET', live.access_token));
  record('revoke again', await revoke({ token: live.refresh_token, ...creds }));
  record('revoke, unknown', await revoke({ token: 'nope', ...creds }));
  record('authorizations', await t.server.listAuthorizations(ADA.uuid));
  return { lines, calls };
}

describe('combined reads: the same answers, fewer store calls', () => {
  it('the same sequence gives the same answers with and without the combinedReads group, random values aside', async () => {
    const separate = await transcript(false);
    const combined = await transcript(true);
    expect(combined.lines.length).toBeGreaterThan(25);
    expect(combined.lines).toEqual(separate.lines);
    // The exchange by the right client and the refresh answered with tokens in both.
    expect(combined.lines.find((l) => l.startsWith('right client by Basic'))).toContain('access_token');
    expect(combined.lines.find((l) => l.startsWith('refresh:'))).toContain('access_token');
    // Without the group the client and the code or token are read apart; with it, together.
    expect(separate.calls).not.toContain('findClientAndCode');
    expect(combined.calls).toContain('findClientAndCode');
    expect(combined.calls).toContain('findClientAndToken');
    expect(combined.calls.length).toBeLessThan(separate.calls.length);
  });

  it('a code exchange and a refresh make one store read each before their single-use step', async () => {
    const { storage, calls } = store(true);
    const t = await setup({ storage });
    const code = await t.getCode({ scope: 'read' });
    calls.length = 0;
    const exchanged = await t.exchange(code);
    expect(exchanged.status).toBe(200);
    expect(calls).toEqual(['findClientAndCode']);
    calls.length = 0;
    const refresh = json(exchanged)['refresh_token'] as string;
    const creds = { client_id: t.client.clientId, client_secret: t.client.clientSecret };
    expect((await t.refresh(refresh, creds)).status).toBe(200);
    expect(calls).toEqual(['findClientAndToken']);
    calls.length = 0;
    const revoked = await t.server.revoke(t.post('/v1/oauth/revoke', { token: refresh, ...creds }));
    expect(revoked.status).toBe(200);
    expect(calls).toEqual(['findClientAndToken']);
  });
});
