/**
 * A stored consent covers the resources (RFC 8707) the user approved, not only the scope
 * (docs/reference.md#stored-consents): `prompt=none` issues without the user only
 * for a request the approvals cover, scope and resources alike, else `consent_required`. A
 * request without `resource` gets tokens with no audience, which every resource accepts: approving
 * one is the broadest approval. The device flow's approvals store the same. The sequence on both
 * stores and the PostgreSQL migration: test/storage/consent-resources.test.ts; over HTTP:
 * test/adapters/resource-indicators.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { sha256Base64url } from '../../src/crypto.js';
import { DEVICE_CODE_GRANT, MemoryStorage, type ConsentRecord } from '../../src/index.js';
import { ADA, json, setup } from '../helpers.js';

const API = 'https://api.example/v2';
const MCP = 'https://mcp.example/mcp';
const FILES = 'https://files.example/';
const KNOWN = [API, MCP, FILES];
const acceptResource = (resource: string) => KNOWN.includes(resource);

type T = Awaited<ReturnType<typeof setup>>;

/** `&resource=…` for each value. */
const resourceQuery = (resources: readonly string[]) => resources.map((r) => `&resource=${encodeURIComponent(r)}`).join('');

/** The user approves a request for `resources` (none: no `resource` at all) on the consent step. */
async function approve(t: T, resources: readonly string[], scope = 'read'): Promise<void> {
  const decision = await t.server.authorize(t.get(t.authorizeUrl({ scope }) + resourceQuery(resources), t.ada));
  if (decision.type !== 'consent') throw new Error(`expected consent, got ${JSON.stringify(decision)}`);
  const approved = await t.server.approve(decision.interaction.id, t.get('/', t.ada));
  if (approved.type !== 'redirect' || !new URL(approved.location).searchParams.has('code')) throw new Error('expected a code');
}

/** `prompt=none` for `resources`: `code` when issued at once, else the error it redirected with. */
async function silent(t: T, resources: readonly string[], scope = 'read'): Promise<string> {
  const decision = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none', scope }) + resourceQuery(resources), t.ada));
  if (decision.type !== 'redirect') throw new Error(`expected a redirect, got ${JSON.stringify(decision)}`);
  const url = new URL(decision.location);
  return url.searchParams.has('code') ? 'code' : (url.searchParams.get('error') ?? 'nothing');
}

describe('prompt=none and the resources a consent approved', () => {
  it.each([
    // approvals, in order → request → outcome
    [[[API]], [API], 'code'],
    [[[API]], [MCP], 'consent_required'],
    [[[API]], [], 'consent_required'], // no resource: tokens every resource accepts, wider than API alone
    [[[API]], [API, MCP], 'consent_required'],
    [[[API, MCP]], [API], 'code'],
    [[[API, MCP]], [MCP], 'code'],
    [[[API, MCP]], [MCP, API], 'code'],
    [[[API, MCP]], [], 'consent_required'],
    [[[API, MCP]], [API, FILES], 'consent_required'],
    [[[API], [MCP]], [API, MCP], 'code'], // two approvals merge, as scope does
    [[[]], [API], 'code'], // approving no resource is the broadest approval
    [[[]], [API, MCP, FILES], 'code'],
    [[[]], [], 'code'],
    [[[API], []], [FILES], 'code'],
    [[[], [API]], [], 'code'], // a narrower approval later never narrows an earlier one
  ] as Array<[string[][], string[], string]>)('approved %j, then prompt=none for %j: %s', async (approvals, requested, outcome) => {
    const t = await setup({ acceptResource });
    for (const resources of approvals) await approve(t, resources);
    expect(await silent(t, requested)).toBe(outcome);
  });

  it('scope and resources must both be covered; each is the union of every approval', async () => {
    const t = await setup({ acceptResource });
    await approve(t, [API], 'read');
    expect(await silent(t, [API], 'read write')).toBe('consent_required');
    await approve(t, [MCP], 'read write');
    expect(await silent(t, [MCP], 'read write')).toBe('code');
    expect(await silent(t, [FILES], 'read')).toBe('consent_required');
    // One set of scope values and one of resources, as documented: read write for API is
    // covered now, although no single approval showed both.
    expect(await silent(t, [API], 'read write')).toBe('code');
  });

  it('the consent keeps what was approved; the silent code is for the resources requested', async () => {
    const t = await setup({ acceptResource });
    await approve(t, [API, MCP]);
    await approve(t, [FILES]);
    const consent = await t.storage.findConsent(ADA.uuid, t.client.clientId);
    expect(consent).toMatchObject({ scope: ['read'], anyResource: false });
    expect([...(consent?.resources ?? [])].sort()).toEqual([API, FILES, MCP].sort());
    await approve(t, []);
    expect(await t.storage.findConsent(ADA.uuid, t.client.clientId)).toMatchObject({ anyResource: true });

    const decision = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none' }) + resourceQuery([MCP]), t.ada));
    if (decision.type !== 'redirect') throw new Error('expected a redirect');
    const code = await t.storage.findCode(sha256Base64url(new URL(decision.location).searchParams.get('code')!));
    expect(code?.resources).toEqual([MCP]);
  });

  it('a consent whose approved resources are unknown (a store that does not keep them) covers no request: consent_required, never a 500', async () => {
    /** A store that forgets the fields, as one written before them would. */
    class Forgetful extends MemoryStorage {
      override async findConsent(accountUuid: string, clientId: string) {
        const found = await super.findConsent(accountUuid, clientId);
        if (!found) return null;
        const { anyResource: _a, resources: _r, ...rest } = found;
        return rest as ConsentRecord;
      }
    }
    const errors: unknown[] = [];
    const t = await setup({ acceptResource, storage: new Forgetful(), onError: (e) => errors.push(e) });
    await approve(t, []);
    expect(await silent(t, [])).toBe('consent_required');
    expect(await silent(t, [API])).toBe('consent_required');
    expect(errors).toEqual([]);
  });

  it('a device approval stores the resources of the device request; approving one without resource covers every resource', async () => {
    const t = await setup({ acceptResource, deviceAuthorization: {} });
    const tv = await t.server.registerClient({
      name: 'TV App',
      redirectUri: 'https://tv.example/cb',
      grantTypes: [DEVICE_CODE_GRANT, 'authorization_code'],
    });
    const VERIFY = '/v1/oauth/device/verify';
    const deviceApprove = async (resources: readonly string[]) => {
      const form = new URLSearchParams({ client_id: tv.clientId, client_secret: tv.clientSecret! }).toString() + resourceQuery(resources);
      const started = await t.server.deviceAuthorization(t.post('/v1/oauth/device', form), `https://auth.example${VERIFY}`);
      expect(started.status, started.body).toBe(200);
      const outcome = await t.server.enterUserCode(json(started).user_code as string, t.get(VERIFY, t.ada), VERIFY, undefined);
      if (outcome.type !== 'decision' || outcome.decision.type !== 'consent') throw new Error('expected the confirmation');
      const approved = await t.server.approve(outcome.decision.interaction.id, t.get(VERIFY, t.ada));
      expect(approved).toEqual({ type: 'redirect', location: `${VERIFY}?result=approved` });
    };
    const tvSilent = async (resources: readonly string[]) => {
      const url = `/v1/oauth/authorize?${new URLSearchParams({ client_id: tv.clientId, redirect_uri: 'https://tv.example/cb', response_type: 'code', prompt: 'none' })}`;
      const decision = await t.server.authorize(t.get(url + resourceQuery(resources), t.ada));
      if (decision.type !== 'redirect') throw new Error(`expected a redirect, got ${JSON.stringify(decision)}`);
      const params = new URL(decision.location).searchParams;
      return params.has('code') ? 'code' : params.get('error');
    };

    await deviceApprove([API]);
    expect(await t.storage.findConsent(ADA.uuid, tv.clientId)).toMatchObject({ anyResource: false, resources: [API] });
    expect(await tvSilent([API])).toBe('code');
    expect(await tvSilent([MCP])).toBe('consent_required');
    expect(await tvSilent([])).toBe('consent_required');

    await deviceApprove([]);
    expect(await t.storage.findConsent(ADA.uuid, tv.clientId)).toMatchObject({ anyResource: true, resources: [API] });
    expect(await tvSilent([MCP])).toBe('code');
    expect(await tvSilent([])).toBe('code');
  });
});
