import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/index.js';
import { CALLBACK, json, setup } from '../helpers.js';

/**
 * Replay, reuse, and what a failed attempt must not do: SECURITY.md C-01..C-03, C-12, RT-01..RT-04
 * (docs/reference.md#refresh-token-rotation-and-families).
 */
describe('authorization code replay', () => {
  it("C-02: a valid replay revokes the first exchange's access and refresh tokens, and is audited", async () => {
    const events: AuditEvent[] = [];
    const t = await setup({ onAudit: (e) => events.push(e) });
    const code = await t.getCode();
    const first = json(await t.exchange(code));
    t.clock.advance(30_000); // oidcc-codereuse-30seconds
    expect(json(await t.exchange(code)).error).toBe('invalid_grant');
    expect((await t.api('GET', first.access_token as string)).ok).toBe(false);
    expect(json(await t.refresh(first.refresh_token as string)).error).toBe('invalid_grant');
    expect(events.some((e) => e.type === 'code.reused')).toBe(true);
  });

  it('C-02: a replay with wrong client authentication revokes nothing (no denial of service)', async () => {
    const t = await setup();
    const code = await t.getCode();
    const first = json(await t.exchange(code));
    expect((await t.exchange(code, { client_secret: 'wrong' })).status).toBe(401);
    expect(json(await t.exchange(code, { client_id: t.other.clientId, client_secret: t.other.clientSecret })).error).toBe('invalid_grant');
    expect(json(await t.exchange(code, { redirect_uri: 'https://client.example/other' })).error).toBe('invalid_grant');
    expect((await t.api('GET', first.access_token as string)).ok).toBe(true);
  });

  it('C-12: any number of failed exchanges does not use the code up', async () => {
    const t = await setup();
    const code = await t.getCode();
    for (let i = 0; i < 10; i++) await t.exchange(code, { redirect_uri: `${CALLBACK}/${i}` });
    expect((await t.exchange(code)).status).toBe(200);
  });
});

describe('refresh token reuse', () => {
  it('RT-02: RT1→RT2, then RT1 again: invalid_grant, and RT2, AT2 and AT1 are dead', async () => {
    const t = await setup();
    const one = await t.tokens();
    const two = json(await t.refresh(one.refresh_token));
    expect(json(await t.refresh(one.refresh_token)).error).toBe('invalid_grant');
    expect(json(await t.refresh(two.refresh_token as string)).error).toBe('invalid_grant');
    expect((await t.api('GET', two.access_token as string)).ok).toBe(false);
    expect((await t.api('GET', one.access_token)).ok).toBe(false);
  });

  it("RT-04: another client's credentials with A's token: invalid_grant, A's token neither rotated nor revoked", async () => {
    const t = await setup();
    const one = await t.tokens();
    expect(json(await t.refresh(one.refresh_token, { client_id: t.other.clientId, client_secret: t.other.clientSecret })).error).toBe(
      'invalid_grant',
    );
    expect((await t.api('GET', one.access_token)).ok).toBe(true);
    expect((await t.refresh(one.refresh_token)).status).toBe(200);
  });

  it('with refreshReuseGraceSeconds, a replay inside the window is refused without revoking the family', async () => {
    const events: AuditEvent[] = [];
    const t = await setup({ refreshReuseGraceSeconds: 10, onAudit: (e) => events.push(e) });
    const one = await t.tokens();
    const two = json(await t.refresh(one.refresh_token));
    t.clock.advance(10_000);
    expect(json(await t.refresh(one.refresh_token)).error).toBe('invalid_grant');
    expect((await t.api('GET', two.access_token as string)).ok).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'refresh_token.reused', familyRevoked: false });
    // Outside the window, the same replay revokes the family.
    t.clock.advance(1);
    expect(json(await t.refresh(one.refresh_token)).error).toBe('invalid_grant');
    expect((await t.api('GET', two.access_token as string)).ok).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: 'refresh_token.reused', familyRevoked: true });
  });

  it('the default (no grace) revokes the family on a replay one millisecond later', async () => {
    const t = await setup();
    const one = await t.tokens();
    const two = json(await t.refresh(one.refresh_token));
    t.clock.advance(1);
    await t.refresh(one.refresh_token);
    expect((await t.api('GET', two.access_token as string)).ok).toBe(false);
  });

  it('an account the host reports inactive gets invalid_grant, and its grant is revoked', async () => {
    let active = true;
    const t = await setup({ isAccountActive: () => active });
    const one = await t.tokens();
    const code = await t.getCode();
    active = false;
    expect(json(await t.refresh(one.refresh_token)).error).toBe('invalid_grant');
    expect(json(await t.exchange(code)).error).toBe('invalid_grant');
    active = true;
    expect((await t.api('GET', one.access_token)).ok).toBe(false);
  });
});
