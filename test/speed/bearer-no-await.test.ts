/**
 * The plain bearer check awaits nothing when the store answers at once (docs/architecture.md#hot-paths):
 * with `MemoryStorage`, whose `readToken` is synchronous, and an opaque token, the promise
 * `server.authenticate(request)` returns is settled when it is returned, so a `then` on it runs
 * before anything queued after it. One `await` added on the path (a promise wrapper, an awaited
 * helper) delays it past that, and this fails. Its answers are the general path's: the same as a
 * store that answers later (`findToken` only, a promise).
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage, type AuthenticateResult, type OAuthRequest, type Storage } from '../../src/index.js';
import { ADA, setup } from '../helpers.js';

/** Whether `promise` settles before a microtask queued right after it is looked at. */
async function settlesAtOnce(promise: Promise<AuthenticateResult>): Promise<boolean> {
  let settled = false;
  void promise.then(() => {
    settled = true;
  });
  await Promise.resolve();
  return settled;
}

const request = (authorization: string | undefined, method = 'GET'): OAuthRequest => ({
  method,
  url: '/v2/account',
  headers: authorization === undefined ? {} : { authorization },
});

/** A store without `readToken`: the lookup then goes through `findToken`, a promise. */
class FindOnly extends MemoryStorage {
  constructor() {
    super();
    (this as { readToken?: Storage['readToken'] }).readToken = undefined;
  }
}

describe('the plain bearer check with a synchronous store: no await', () => {
  it('accepted, refused (unknown, expired, revoked, scope, no header), and a personal token: each settled at once', async () => {
    const t = await setup();
    const { access_token, refresh_token } = await t.tokens({ scope: 'read' });
    const { token: personal } = await t.server.createPersonalToken({ account: ADA, name: 'CI', scope: ['read'] });
    const cases = [
      request(`Bearer ${access_token}`),
      request(`Bearer ${access_token}`, 'POST'),
      request(`Bearer ${personal}`),
      request('Bearer unknown-token'),
      request(`Bearer ${refresh_token}`),
      request(undefined),
      request('Bearer a b'),
    ];
    for (const r of cases) expect(await settlesAtOnce(t.server.authenticate(r))).toBe(true);
    expect((await t.server.authenticate(cases[0]!)).ok).toBe(true);
    // Rotated (the access token revoked), then every token expired: still no await.
    expect((await t.refresh(refresh_token)).status).toBe(200);
    t.clock.advance(2_592_000_000);
    for (const r of cases) expect(await settlesAtOnce(t.server.authenticate(r))).toBe(true);
    expect((await t.server.authenticate(cases[0]!)).ok).toBe(false);
  });

  it('the same answers through a store that answers later', async () => {
    const answers: unknown[][] = [];
    for (const storage of [new MemoryStorage(), new FindOnly()]) {
      const t = await setup({ storage });
      const { access_token } = await t.tokens({ scope: 'read' });
      const seen: unknown[] = [];
      for (const r of [request(`Bearer ${access_token}`), request(`Bearer ${access_token}`, 'DELETE'), request('Bearer nope')]) {
        const a = await t.server.authenticate(r);
        seen.push(a.ok ? [200, a.token.scope, a.token.account] : [a.response.status, a.response.headers, a.response.body]);
      }
      answers.push(seen);
      // The store that answers later is the general path: there the answer comes after a turn.
      expect(await settlesAtOnce(t.server.authenticate(request('Bearer nope')))).toBe(!(storage instanceof FindOnly));
    }
    expect(answers[1]).toEqual(answers[0]);
    expect((answers[0] ?? []).map((a) => (a as unknown[])[0])).toEqual([200, 403, 401]);
  });
});
