/**
 * The one liveness rule of a presented token (`liveness`, src/tokens/lookup.ts;
 * docs/reference.md#revocation-semantics), seen through every caller: the plain bearer check,
 * the check for a protected resource (by identifier and through `resourceCheck`), the core
 * check with a scope requirement (`requireBearerScope`), introspection, the revocation endpoint
 * and the account's `revokePersonalToken`. Each row is a sequence over time (issue, wait, use,
 * rotate, revoke) that leaves one token live or dead; each caller must answer as the row says,
 * so that a change to the rule is seen by all of them at once.
 */
import { describe, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import { sha256Base64url } from '../../src/crypto.js';
import { requireBearerScope } from '../../src/endpoints/authenticate.js';
import { liveness } from '../../src/tokens/lookup.js';
import type { AuditEvent, AuthenticateResult, GrantRecord, OAuthRequest, TokenRecord } from '../../src/index.js';
import { ADA, json, setup } from '../helpers.js';

const ISSUER = 'https://auth.example';
const API = 'https://api.example/v2';
const DAY = 86_400_000;
/** The default access token lifetime (30 days). */
const ACCESS_LIFETIME = 2_592_000_000;

type Kind = 'access' | 'refresh' | 'personal';

async function world() {
  const events: AuditEvent[] = [];
  const errors: unknown[] = [];
  const active = new Set([ADA.uuid]);
  const t = await setup({
    issuer: ISSUER,
    protectedResources: [{ resource: API }],
    isAccountActive: (uuid) => active.has(uuid),
    onAudit: (e) => events.push(e),
    onError: (e) => errors.push(e),
  });
  const ctx = (t.server as unknown as { ctx: Context }).ctx;
  const personal = (expiresIn: number | null = null) =>
    t.server.createPersonalToken({ account: ADA, name: 'CI', scope: ['read', 'write'], expiresIn });
  /** The store's own records of an opaque token, for the rows that play a broken store. */
  const stored = (token: string) => {
    const found = t.storage.readToken(sha256Base64url(token));
    if (!found) throw new Error('no such token');
    return found as { token: TokenRecord; grant: GrantRecord };
  };
  return { ...t, ctx, events, errors, active, personal, stored };
}
type World = Awaited<ReturnType<typeof world>>;

interface Row {
  name: string;
  kind: Kind;
  live: boolean;
  /** Issues the token and plays the sequence; returns the token, ready to be presented. */
  make: (w: World) => Promise<string>;
}

const rows: Row[] = [
  { name: 'an access token just issued', kind: 'access', live: true, make: async (w) => (await w.tokens()).access_token },
  {
    name: 'an access token 1 ms before its expiry',
    kind: 'access',
    live: true,
    make: async (w) => {
      const { access_token } = await w.tokens();
      w.clock.advance(ACCESS_LIFETIME - 1);
      return access_token;
    },
  },
  {
    name: 'an access token at its expiry (now = expiresAt)',
    kind: 'access',
    live: false,
    make: async (w) => {
      const { access_token } = await w.tokens();
      w.clock.advance(ACCESS_LIFETIME);
      return access_token;
    },
  },
  {
    name: 'an access token after the user revoked the application (its grant revoked)',
    kind: 'access',
    live: false,
    make: async (w) => {
      const { access_token } = await w.tokens();
      w.clock.advance(DAY);
      await w.server.revokeAccess({ accountUuid: ADA.uuid, clientId: w.client.clientId });
      return access_token;
    },
  },
  {
    name: 'an access token whose refresh token was used (rotation revokes the pair)',
    kind: 'access',
    live: false,
    make: async (w) => {
      const { access_token, refresh_token } = await w.tokens();
      w.clock.advance(DAY);
      expect((await w.refresh(refresh_token)).status).toBe(200);
      return access_token;
    },
  },
  {
    name: 'an access token revoked by itself (the token record, not its grant)',
    kind: 'access',
    live: false,
    make: async (w) => {
      const { access_token } = await w.tokens();
      w.stored(access_token).token.revokedAt = w.clock.now();
      return access_token;
    },
  },
  {
    name: 'an access token of an account isAccountActive now refuses (asked when issuing, not per request)',
    kind: 'access',
    live: true,
    make: async (w) => {
      const { access_token } = await w.tokens();
      w.active.delete(ADA.uuid);
      w.clock.advance(DAY);
      return access_token;
    },
  },
  {
    name: 'an access token whose grant a broken store calls personal',
    kind: 'access',
    live: false,
    make: async (w) => {
      const { access_token } = await w.tokens();
      (w.stored(access_token).grant as { kind: string }).kind = 'personal';
      return access_token;
    },
  },
  { name: 'a refresh token just issued', kind: 'refresh', live: true, make: async (w) => (await w.tokens()).refresh_token },
  {
    name: 'a refresh token after its rotation',
    kind: 'refresh',
    live: false,
    make: async (w) => {
      const { refresh_token } = await w.tokens();
      w.clock.advance(DAY);
      expect((await w.refresh(refresh_token)).status).toBe(200);
      return refresh_token;
    },
  },
  {
    name: 'a personal token without expiry, nine years on',
    kind: 'personal',
    live: true,
    make: async (w) => {
      const { token } = await w.personal();
      w.clock.advance(9 * 365 * DAY);
      return token;
    },
  },
  {
    name: 'a personal token 1 ms before its expiry',
    kind: 'personal',
    live: true,
    make: async (w) => {
      const { token } = await w.personal(3600);
      w.clock.advance(3_600_000 - 1);
      return token;
    },
  },
  {
    name: 'a personal token at its expiry (now = expiresAt)',
    kind: 'personal',
    live: false,
    make: async (w) => {
      const { token } = await w.personal(3600);
      w.clock.advance(3_600_000);
      return token;
    },
  },
  {
    name: 'a personal token its account revoked',
    kind: 'personal',
    live: false,
    make: async (w) => {
      const { token, id } = await w.personal();
      w.clock.advance(DAY);
      expect(await w.server.revokePersonalToken(ADA.uuid, id)).toBe(true);
      return token;
    },
  },
  {
    name: 'a personal token of an account isAccountActive now refuses (revoke its tokens instead)',
    kind: 'personal',
    live: true,
    make: async (w) => {
      const { token } = await w.personal();
      w.active.delete(ADA.uuid);
      return token;
    },
  },
  {
    name: 'a personal token whose grant a broken store calls oauth',
    kind: 'personal',
    live: false,
    make: async (w) => {
      const { token } = await w.personal();
      (w.stored(token).grant as { kind: string }).kind = 'oauth';
      return token;
    },
  },
];

const request = (token: string, method = 'GET'): OAuthRequest => ({
  method,
  url: '/v2/account',
  headers: { authorization: `Bearer ${token}` },
});

const INVALID = 'Bearer realm="authgate", error="invalid_token", error_description="The access token is invalid, expired or revoked."';

/** The answer of a bearer check for a token the row says is accepted (`true`) or not. */
function expectAnswer(result: AuthenticateResult, accepted: boolean, challenge: string): void {
  if (accepted) {
    expect(result.ok ? result.token.account.uuid : result.response.body).toBe(ADA.uuid);
    return;
  }
  expect(result.ok ? 200 : result.response.status).toBe(401);
  expect(result.ok ? '' : result.response.headers['www-authenticate']).toBe(challenge);
}

describe('one liveness rule, seen by every caller', () => {
  describe.each(rows)('$name', (row) => {
    // The bearer checks take access and personal tokens, never refresh tokens; introspection
    // takes OAuth tokens of the asking client, never personal ones (docs/reference.md#introspection-endpoint).
    const bearer = row.live && row.kind !== 'refresh';
    const introspected = row.live && row.kind !== 'personal';

    it(`the bearer checks: ${bearer ? 'accepted' : '401 invalid_token'}`, async () => {
      const w = await world();
      const token = await row.make(w);
      expectAnswer(await w.api('GET', token), bearer, INVALID);
      const metadata = `, resource_metadata="https://api.example/.well-known/oauth-protected-resource/v2"`;
      expectAnswer(await w.server.authenticate(request(token), { resource: API }), bearer, `${INVALID}, scope="read"${metadata}`);
      expectAnswer(await w.server.resourceCheck(API)(request(token)), bearer, `${INVALID}, scope="read"${metadata}`);
      expectAnswer(await requireBearerScope(w.ctx, request(token), ['read'], w.errors.push.bind(w.errors)), bearer, INVALID);
      expect(w.errors).toEqual([]);
    });

    it(`introspection: active ${introspected}`, async () => {
      const w = await world();
      const token = await row.make(w);
      const res = await w.server.introspect(
        w.post('/v1/oauth/introspect', { token, client_id: w.client.clientId, client_secret: w.client.clientSecret }),
      );
      expect(res.status).toBe(200);
      expect(json(res).active).toBe(introspected);
    });

    it('revocation: 200 {}, and nothing of it is usable afterwards', async () => {
      const w = await world();
      const token = await row.make(w);
      const res = await w.server.revoke(w.post('/v1/oauth/revoke', { token }));
      expect([res.status, res.body]).toEqual([200, '{}']);
      const found = w.storage.readToken(sha256Base64url(token));
      expect(found && liveness(found, w.clock.now())).toBe('revoked');
      if (row.kind !== 'refresh') expect((await w.api('GET', token)).ok).toBe(false);
      // A personal token is reported revoked only when this revocation killed it.
      if (row.kind === 'personal') {
        expect(w.events.filter((e) => e.type === 'personal_token.revoked').map((e) => 'via' in e && e.via)).toEqual(
          row.live ? ['revocation_endpoint'] : row.name.includes('its account revoked') ? ['account'] : [],
        );
      }
    });

    if (row.kind === 'personal') {
      it(`the account revokes it: ${row.live}`, async () => {
        const w = await world();
        const token = await row.make(w);
        const id = w.stored(token).grant.id;
        const listed = (await w.server.listPersonalTokens(ADA.uuid)).some((p) => p.id === id);
        // A broken store's record is not listed as a personal token at all.
        if (!row.name.includes('broken')) expect(await w.server.revokePersonalToken(ADA.uuid, id)).toBe(row.live);
        else expect(listed).toBe(false);
      });
    }
  });

  it('the rule itself: revoked before expired, a token without expiresAt never expires', () => {
    const grant: GrantRecord = { id: 'g', kind: 'oauth', clientId: 'c', account: ADA, scope: ['read'], createdAt: 0, revokedAt: null };
    const token: TokenRecord = {
      hash: 'h',
      kind: 'access',
      grantId: 'g',
      clientId: 'c',
      scope: ['read'],
      issuedAt: 0,
      expiresAt: 10,
      pairHash: null,
      rotatedAt: null,
      revokedAt: null,
    };
    expect(liveness({ token, grant }, 9)).toBe('live');
    expect(liveness({ token, grant }, 10)).toBe('expired');
    expect(liveness({ token: { ...token, revokedAt: 5 }, grant }, 10)).toBe('revoked');
    expect(liveness({ token, grant: { ...grant, revokedAt: 5 } }, 10)).toBe('revoked');
    expect(liveness({ token: { ...token, kind: 'refresh', rotatedAt: 5 }, grant }, 1)).toBe('revoked');
    expect(liveness({ token: { ...token, expiresAt: null }, grant }, Number.MAX_SAFE_INTEGER)).toBe('live');
  });
});
