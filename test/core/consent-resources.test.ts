/**
 * A stored consent covers the scope the user approved for each resource (RFC 8707), not a scope
 * and a set of resources each on its own (docs/reference.md#stored-consents): `prompt=none`
 * issues without the user only when each requested resource was approved with the requested
 * scope, else `consent_required`. A request without `resource` gets tokens with no audience,
 * which every resource accepts: approving one is the broadest approval, for its scope. The device
 * flow's approvals store the same. The sequence on both
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
/** `read` and `write` each on its own (the default vocabulary has no `write` without `read`). */
const scopes = { values: ['read', 'write'], default: ['read'], allows: () => true };

type T = Awaited<ReturnType<typeof setup>>;

/** The approvals of a consent by resource (the approval without resource first), each scope sorted. */
const byResource = (consent: ConsentRecord | null) =>
  (consent?.approvals ?? [])
    .map((a) => ({ resource: a.resource, scope: [...a.scope].sort() }))
    .sort((a, b) => (a.resource === null ? -1 : b.resource === null ? 1 : a.resource.localeCompare(b.resource)));

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

  it.each([
    // approvals (resources, scope), in order → request (resources, scope) → outcome
    // The cross product: read for API and read write for MCP never approved write for API.
    [
      [
        [[API], 'read'],
        [[MCP], 'read write'],
      ],
      [[API], 'read write'],
      'consent_required',
    ],
    [
      [
        [[API], 'read'],
        [[MCP], 'read write'],
      ],
      [[API], 'write'],
      'consent_required',
    ],
    [
      [
        [[API], 'read'],
        [[MCP], 'read write'],
      ],
      [[API, MCP], 'read write'],
      'consent_required',
    ],
    [
      [
        [[API], 'read'],
        [[MCP], 'read write'],
      ],
      [[API, MCP], 'read'],
      'code',
    ],
    [
      [
        [[API], 'read'],
        [[MCP], 'read write'],
      ],
      [[MCP], 'read write'],
      'code',
    ],
    [
      [
        [[API], 'read'],
        [[MCP], 'read write'],
      ],
      [[API], 'read'],
      'code',
    ],
    [
      [
        [[API], 'read'],
        [[MCP], 'read write'],
      ],
      [[], 'read'],
      'consent_required',
    ],
    // One resource approved twice: its scope values unite.
    [
      [
        [[API], 'read'],
        [[API], 'write'],
      ],
      [[API], 'read write'],
      'code',
    ],
    [[[[API, MCP], 'read write']], [[MCP], 'write'], 'code'],
    // Without resource: its scope covers every resource, and only its scope covers a request without resource.
    [
      [
        [[], 'read'],
        [[API], 'read write'],
      ],
      [[], 'read write'],
      'consent_required',
    ],
    [
      [
        [[], 'read'],
        [[API], 'read write'],
      ],
      [[API], 'read write'],
      'code',
    ],
    [
      [
        [[], 'read'],
        [[API], 'read write'],
      ],
      [[FILES], 'read'],
      'code',
    ],
    [
      [
        [[], 'read'],
        [[API], 'read write'],
      ],
      [[FILES], 'read write'],
      'consent_required',
    ],
    [
      [
        [[], 'read'],
        [[API], 'read write'],
      ],
      [[API, FILES], 'read'],
      'code',
    ],
    [
      [
        [[], 'read'],
        [[API], 'read write'],
      ],
      [[API, FILES], 'read write'],
      'consent_required',
    ],
    [
      [
        [[], 'read write'],
        [[API], 'read'],
      ],
      [[MCP, API], 'read write'],
      'code',
    ],
    // Each resource is covered by its own approval or by the one without resource, never by a mix
    // of the two (read without resource and write for API: write for API, read for API, not both).
    [
      [
        [[], 'read'],
        [[API], 'write'],
      ],
      [[API], 'write'],
      'code',
    ],
    [
      [
        [[], 'read'],
        [[API], 'write'],
      ],
      [[API], 'read write'],
      'consent_required',
    ],
  ] as Array<[Array<[string[], string]>, [string[], string], string]>)(
    'scope is approved per resource: approved %j, then prompt=none for %j: %s',
    async (approvals, [resources, scope], outcome) => {
      const t = await setup({ acceptResource, scopes });
      for (const [approvedResources, approvedScope] of approvals) await approve(t, approvedResources, approvedScope);
      expect(await silent(t, resources, scope)).toBe(outcome);
    },
  );

  it('scope and resources must both be covered, and by the same approval of each resource', async () => {
    const t = await setup({ acceptResource, scopes });
    await approve(t, [API], 'read');
    expect(await silent(t, [API], 'read write')).toBe('consent_required');
    await approve(t, [MCP], 'read write');
    expect(await silent(t, [MCP], 'read write')).toBe('code');
    expect(await silent(t, [FILES], 'read')).toBe('consent_required');
    // write was approved for MCP, never for API: no silent write for API.
    expect(await silent(t, [API], 'read write')).toBe('consent_required');
    await approve(t, [API], 'write');
    expect(await silent(t, [API], 'read write')).toBe('code');
  });

  it('the consent keeps the scope approved for each resource; the silent code is for the resources requested', async () => {
    const t = await setup({ acceptResource });
    await approve(t, [API, MCP], 'read');
    await approve(t, [FILES], 'read write');
    const consent = await t.storage.findConsent(ADA.uuid, t.client.clientId);
    expect(consent?.scope).toEqual(['read', 'write']);
    expect(byResource(consent)).toEqual([
      { resource: API, scope: ['read'] },
      { resource: FILES, scope: ['read', 'write'] },
      { resource: MCP, scope: ['read'] },
    ]);
    await approve(t, []);
    expect(byResource(await t.storage.findConsent(ADA.uuid, t.client.clientId))[0]).toEqual({ resource: null, scope: ['read'] });

    const decision = await t.server.authorize(t.get(t.authorizeUrl({ prompt: 'none' }) + resourceQuery([MCP]), t.ada));
    if (decision.type !== 'redirect') throw new Error('expected a redirect');
    const code = await t.storage.findCode(sha256Base64url(new URL(decision.location).searchParams.get('code')!));
    expect(code?.resources).toEqual([MCP]);
  });

  it.each([
    ['without approvals (a store that does not keep them)', undefined],
    ['with approvals that are not an array', 'read'],
    ['with an approval that names no resource (never taken for the approval without resource)', [{ scope: ['read', 'write'] }]],
    ['with an approval whose scope is not an array', [{ resource: null, scope: 'read write' }]],
  ])('a consent %s covers no request: consent_required, never a 500', async (_name, approvals) => {
    /** A store that returns the consent with `approvals` replaced, as one of another shape would. */
    class Misshapen extends MemoryStorage {
      override async findConsent(accountUuid: string, clientId: string) {
        const found = await super.findConsent(accountUuid, clientId);
        if (!found) return null;
        const { approvals: _approvals, ...rest } = found;
        return (approvals === undefined ? rest : { ...rest, approvals }) as ConsentRecord;
      }
    }
    const errors: unknown[] = [];
    const t = await setup({ acceptResource, storage: new Misshapen(), onError: (e) => errors.push(e) });
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
    expect(byResource(await t.storage.findConsent(ADA.uuid, tv.clientId))).toEqual([{ resource: API, scope: ['read'] }]);
    expect(await tvSilent([API])).toBe('code');
    expect(await tvSilent([MCP])).toBe('consent_required');
    expect(await tvSilent([])).toBe('consent_required');

    await deviceApprove([]);
    expect(byResource(await t.storage.findConsent(ADA.uuid, tv.clientId))).toEqual([
      { resource: null, scope: ['read'] },
      { resource: API, scope: ['read'] },
    ]);
    expect(await tvSilent([MCP])).toBe('code');
    expect(await tvSilent([])).toBe('code');
  });
});
