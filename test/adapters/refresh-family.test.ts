/**
 * Refresh-token reuse detection survives prune() over HTTP
 * (docs/reference.md#refresh-token-rotation-and-families): a token stolen and used after its access
 * token expired, then replayed by its owner after prune, revokes the family. The core and both
 * stores are covered in test/security/refresh-family.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { FRAMEWORKS, useApp } from './app.js';

const DAY = 24 * 3600 * 1000;

describe.each(FRAMEWORKS)('%s: refresh-token families over HTTP', (framework) => {
  const app = useApp({ framework });

  it("the owner's replay after the thief's refresh and a prune revokes the family", async () => {
    const { tokens, postForm, api, clock, storage } = app();
    const first = await tokens();
    clock.advance(31 * DAY);
    const stolen = await postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(stolen.status, stolen.text).toBe(200);
    const thief = stolen.json<{ access_token: string; refresh_token: string }>();
    storage.prune(clock.now());
    const replay = await postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(replay.status).toBe(400);
    expect(replay.json().error).toBe('invalid_grant');
    expect((await api('GET', '/v2/account', thief.access_token)).status).toBe(401);
    const after = await postForm('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: thief.refresh_token });
    expect(after.json().error).toBe('invalid_grant');
  });
});
