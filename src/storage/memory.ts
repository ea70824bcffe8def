import type {
  AuthorizationRequestRecord,
  OpenIdRequestSection,
  ClientChanges,
  ClientOpenIdSection,
  ClientRecord,
  CodeRecord,
  ConsentApproval,
  ConsentRecord,
  ApprovedDeviceAuthorizationRecord,
  DeviceAuthorizationFields,
  DeviceAuthorizationRecord,
  DevicePoll,
  DeviceVerificationRecord,
  OAuthGrantRecord,
  OAuthTokenRecord,
  PendingDeviceAuthorizationRecord,
  PersonalGrantRecord,
  PersonalTokenRecord,
  GrantRecord,
  InteractionRecord,
  PersonalTokenRead,
  RefreshFamily,
  SingleUseOutcome,
  Storage,
  TokenRecord,
} from './types.js';
import { MAX_CONSENT_APPROVALS, MAX_REFRESH_WINDOW_SECONDS } from './types.js';
import { copyAccount, withClientChanges } from './copy.js';
import type { Account } from '../types.js';

// Records are flat except for `scope` arrays, the account object and an interaction's request:
// copy exactly those (structuredClone of a whole record is far slower; see BENCHMARKS.md).
// Written out field by field rather than spread: records whose fields change type over their
// life (null, then a time) leave V8 several shapes to clone from, and a spread of those showed
// on every bearer check; a literal always builds the same shape.
const copyClient = (c: ClientRecord): ClientRecord => {
  const out: ClientRecord = { id: c.id, name: c.name, redirectUri: c.redirectUri, secretHash: c.secretHash, createdAt: c.createdAt };
  // Optional fields stay absent when they are (absent: the server's defaults).
  if (c.responseTypes !== undefined) out.responseTypes = c.responseTypes.slice();
  if (c.grantTypes !== undefined) out.grantTypes = c.grantTypes.slice();
  if (c.registration !== undefined) out.registration = c.registration;
  if (c.clientUri !== undefined) out.clientUri = c.clientUri;
  if (c.logoUri !== undefined) out.logoUri = c.logoUri;
  if (c.owner !== undefined) out.owner = c.owner;
  // JSON in, JSON out, as a database column keeps it: nothing shared with the caller.
  if (c.metadata !== undefined) out.metadata = JSON.parse(JSON.stringify(c.metadata)) as Record<string, unknown>;
  if (c.dpopBoundAccessTokens === true) out.dpopBoundAccessTokens = true;
  if (c.openid !== undefined) out.openid = JSON.parse(JSON.stringify(c.openid)) as ClientOpenIdSection;
  return out;
};
// One literal per kind: a personal token has no client id (not even an `undefined` one).
const copyToken = (t: TokenRecord): TokenRecord => {
  if (t.kind === 'personal') return copyPersonalToken(t);
  const out: OAuthTokenRecord = {
    hash: t.hash,
    kind: t.kind,
    grantId: t.grantId,
    clientId: t.clientId,
    scope: t.scope.slice(),
    issuedAt: t.issuedAt,
    expiresAt: t.expiresAt,
    pairHash: t.pairHash,
    rotatedAt: t.rotatedAt,
    revokedAt: t.revokedAt,
  };
  if (t.familyHash != null) out.familyHash = t.familyHash; // refresh tokens only: absent stays absent
  if (t.parentHash != null) out.parentHash = t.parentHash; // likewise
  if (t.childRotatedAt != null) out.childRotatedAt = t.childRotatedAt;
  if (t.audience !== undefined) out.audience = t.audience.slice();
  if (t.dpop !== undefined) out.dpop = { jkt: t.dpop.jkt }; // DPoP-bound tokens only
  return out;
};
const copyPersonalToken = (t: PersonalTokenRecord): PersonalTokenRecord => {
  const out: PersonalTokenRecord = {
    hash: t.hash,
    kind: 'personal',
    grantId: t.grantId,
    scope: t.scope.slice(),
    issuedAt: t.issuedAt,
    expiresAt: t.expiresAt,
    pairHash: t.pairHash,
    rotatedAt: t.rotatedAt,
    revokedAt: t.revokedAt,
  };
  if (t.audience !== undefined) out.audience = t.audience.slice();
  return out;
};
const copyGrant = (g: GrantRecord): GrantRecord => (g.kind === 'personal' ? copyPersonalGrant(g) : copyOAuthGrant(g));
const copyOAuthGrant = (g: OAuthGrantRecord): OAuthGrantRecord => {
  const out: OAuthGrantRecord = {
    id: g.id,
    kind: 'oauth',
    clientId: g.clientId,
    account: copyAccount(g.account),
    scope: g.scope.slice(),
    createdAt: g.createdAt,
    revokedAt: g.revokedAt,
  };
  // Only when present: an OAuth grant without it keeps the shape it always had.
  if (g.openid !== undefined) out.openid = { authTime: g.openid.authTime };
  return out;
};
const copyPersonalGrant = (g: PersonalGrantRecord): PersonalGrantRecord => ({
  id: g.id,
  kind: 'personal',
  account: copyAccount(g.account),
  scope: g.scope.slice(),
  createdAt: g.createdAt,
  revokedAt: g.revokedAt,
  name: g.name,
  lastUsedAt: g.lastUsedAt,
});
const copyCode = (c: CodeRecord): CodeRecord => {
  const out: CodeRecord = {
    hash: c.hash,
    grantId: c.grantId,
    clientId: c.clientId,
    redirectUri: c.redirectUri,
    scope: c.scope.slice(),
    codeChallenge: c.codeChallenge,
    codeChallengeMethod: c.codeChallengeMethod,
    expiresAt: c.expiresAt,
    usedAt: c.usedAt,
  };
  if (c.resources !== undefined) out.resources = c.resources.slice();
  if (c.dpop !== undefined) out.dpop = { jkt: c.dpop.jkt };
  if (c.openid !== undefined) out.openid = { ...c.openid };
  return out;
};
const copyConsent = (c: ConsentRecord): ConsentRecord => ({
  ...c,
  scope: [...c.scope],
  approvals: c.approvals.map((a) => ({ resource: a.resource, scope: [...a.scope] })),
});
/** The values of `a` then those of `b`, each once. */
const union = (a: readonly string[], b: readonly string[]): string[] => [...new Set([...a, ...b])];
/**
 * The approvals of `newer` then those of `older`, merged by resource (`null` included), the scope
 * of each united; at most `MAX_CONSENT_APPROVALS`, the resources approved least recently dropped.
 * The same merge as PostgresStorage's (src/postgres/consents.ts).
 */
function mergeApprovals(newer: readonly ConsentApproval[], older: readonly ConsentApproval[]): ConsentApproval[] {
  const byResource = new Map<string | null, string[]>();
  for (const { resource, scope } of [...newer, ...older]) byResource.set(resource, union(byResource.get(resource) ?? [], scope));
  return [...byResource].slice(0, MAX_CONSENT_APPROVALS).map(([resource, scope]) => ({ resource, scope }));
}
// Optional fields stay absent when they are (a copy must compare equal to what was saved).
const copyRequest = (r: AuthorizationRequestRecord): AuthorizationRequestRecord => {
  const out: AuthorizationRequestRecord = {
    clientId: r.clientId,
    redirectUri: r.redirectUri,
    responseType: r.responseType,
    scope: r.scope.slice(),
    prompt: r.prompt.slice(),
  };
  if (r.state !== undefined) out.state = r.state;
  if (r.maxAuthAge !== undefined) out.maxAuthAge = r.maxAuthAge;
  if (r.accountHint !== undefined) out.accountHint = r.accountHint;
  if (r.codeChallenge !== undefined) out.codeChallenge = r.codeChallenge;
  if (r.codeChallengeMethod !== undefined) out.codeChallengeMethod = r.codeChallengeMethod;
  if (r.browserHash !== undefined) out.browserHash = r.browserHash;
  if (r.resources !== undefined) out.resources = r.resources.slice();
  if (r.dpopJkt !== undefined) out.dpopJkt = r.dpopJkt;
  if (r.openid !== undefined) out.openid = JSON.parse(JSON.stringify(r.openid)) as OpenIdRequestSection;
  return out;
};
const copyVerification = (d: DeviceVerificationRecord): DeviceVerificationRecord => {
  const out: DeviceVerificationRecord = { codeHash: d.codeHash, clientId: d.clientId, scope: d.scope.slice(), returnTo: d.returnTo };
  if (d.resources !== undefined) out.resources = d.resources.slice();
  if (d.browserHash !== undefined) out.browserHash = d.browserHash;
  return out;
};
/** The fields every device authorization has, copied. */
const copyDeviceFields = (d: DeviceAuthorizationRecord): DeviceAuthorizationFields => {
  const out: DeviceAuthorizationFields = {
    hash: d.hash,
    userCodeHash: d.userCodeHash,
    clientId: d.clientId,
    scope: d.scope.slice(),
    createdAt: d.createdAt,
    expiresAt: d.expiresAt,
    interval: d.interval,
    lastPolledAt: d.lastPolledAt,
  };
  if (d.resources !== undefined) out.resources = d.resources.slice();
  return out;
};
const copyDevice = (d: DeviceAuthorizationRecord): DeviceAuthorizationRecord => {
  const fields = copyDeviceFields(d);
  switch (d.status) {
    case 'pending':
      return { ...fields, status: 'pending', account: null, decidedAt: null };
    case 'denied':
      return { ...fields, status: 'denied', account: null, decidedAt: d.decidedAt };
    default:
      return { ...fields, status: d.status, account: copyAccount(d.account), decidedAt: d.decidedAt };
  }
};
// Its `purpose`, `kind` and `account` as they were saved (a `consent` names its account). One
// literal per variant: a device step has no `request`, an authorization step no `device`.
const copyInteraction = (i: InteractionRecord): InteractionRecord => {
  const { idHash, requestedAt, expiresAt, loginAfter } = i;
  if (i.purpose === 'device') {
    return i.kind === 'login'
      ? { idHash, kind: 'login', purpose: 'device', device: { returnTo: i.device.returnTo }, requestedAt, expiresAt, loginAfter }
      : {
          idHash,
          kind: 'consent',
          purpose: 'device',
          device: copyVerification(i.device),
          requestedAt,
          expiresAt,
          loginAfter,
          account: i.account && copyAccount(i.account),
        };
  }
  return i.kind === 'login'
    ? { idHash, kind: 'login', purpose: 'authorization', request: copyRequest(i.request), requestedAt, expiresAt, loginAfter }
    : {
        idHash,
        kind: 'consent',
        purpose: 'authorization',
        request: copyRequest(i.request),
        requestedAt,
        expiresAt,
        loginAfter,
        account: i.account && copyAccount(i.account),
      };
};
const pairKey = (accountUuid: string, clientId: string) => `${accountUuid}\u0000${clientId}`;

/**
 * A complete in-memory `Storage`, for tests, the demo and single-process development.
 *
 * Every single-use step runs as one synchronous block with no `await` inside, so two concurrent
 * calls in one process can never both succeed. Records are copied in and out, as a database
 * would, so a caller can never change stored state by mutating a returned object. State lives in
 * this process only: several processes need a shared store (PostgreSQL).
 * @group Storage
 */
export class MemoryStorage implements Storage {
  private readonly clients = new Map<string, ClientRecord>();
  private readonly interactions = new Map<string, InteractionRecord>();
  private readonly consents = new Map<string, ConsentRecord>();
  private readonly grants = new Map<string, GrantRecord>();
  // OAuth grant ids by (account, client), for revokeAccess; personal grant ids by account, for
  // listPersonalTokens. Arrays, not Sets: a push per grant is cheaper than hashing into a growing
  // Set, and prune rebuilds them.
  private readonly grantsByPair = new Map<string, string[]>();
  private readonly personalByAccount = new Map<string, string[]>();
  private readonly codes = new Map<string, CodeRecord>();
  private readonly tokens = new Map<string, TokenRecord>();
  // The newest refresh token's hash of each family, by family hash (findRefreshFamily).
  private readonly families = new Map<string, string>();
  // The refresh tokens minted from a refresh token that was retried (its children: siblings), by
  // its hash; indexed at its first retry (`childrenOf`), so a plain rotation adds nothing here.
  private readonly children = new Map<string, string[]>();
  // The token hash of each personal access token, by its grant id (listPersonalTokens).
  private readonly personal = new Map<string, string>();
  // Device authorizations (RFC 8628) by device-code hash, and their device-code hash by user-code hash.
  private readonly devices = new Map<string, DeviceAuthorizationRecord>();
  private readonly userCodes = new Map<string, string>();
  // DPoP proof keys seen (RFC 9449 §11.1), each until when it must be remembered; expired ones
  // are swept when the map has doubled since the last sweep, and by prune.
  private readonly dpopProofs = new Map<string, number>();
  private dpopSweepAt = 1024;

  async saveClient(client: ClientRecord): Promise<void> {
    this.clients.set(client.id, copyClient(client));
  }

  async findClient(clientId: string): Promise<ClientRecord | null> {
    return this.clientCopy(clientId);
  }
  private clientCopy(clientId: string): ClientRecord | null {
    const client = this.clients.get(clientId);
    return client ? copyClient(client) : null;
  }

  async saveInteraction(interaction: InteractionRecord): Promise<void> {
    this.interactions.set(interaction.idHash, copyInteraction(interaction));
  }

  async findInteraction(idHash: string): Promise<InteractionRecord | null> {
    const interaction = this.interactions.get(idHash);
    return interaction ? copyInteraction(interaction) : null;
  }

  async takeInteraction(idHash: string, now: number): Promise<InteractionRecord | null> {
    const interaction = this.interactions.get(idHash);
    if (!interaction) return null;
    this.interactions.delete(idHash);
    return now < interaction.expiresAt ? interaction : null;
  }

  async findInteractionAndClient(idHash: string): Promise<{ interaction: InteractionRecord | null; client: ClientRecord | null }> {
    const interaction = this.interactions.get(idHash);
    if (!interaction) return { interaction: null, client: null };
    const client = interaction.purpose === 'authorization' ? this.clientCopy(interaction.request.clientId) : null;
    return { interaction: copyInteraction(interaction), client };
  }

  async approveInteraction(
    idHash: string,
    now: number,
    consent: ConsentRecord,
    grant: OAuthGrantRecord,
    issued: { code?: CodeRecord; tokens?: TokenRecord[] },
  ): Promise<boolean> {
    const interaction = this.interactions.get(idHash);
    if (!interaction) return false;
    this.interactions.delete(idHash);
    if (now >= interaction.expiresAt) return false;
    this.storeConsent(consent);
    this.insertGrant(grant, issued);
    return true;
  }

  async saveConsent(consent: ConsentRecord): Promise<void> {
    this.storeConsent(consent);
  }

  /** `saveConsent`'s work, synchronous, for `approveInteraction`'s one block. */
  private storeConsent(consent: ConsentRecord): void {
    const key = pairKey(consent.accountUuid, consent.clientId);
    const existing = this.consents.get(key);
    // Each approval widens the consent (docs/reference.md#stored-consents).
    this.consents.set(key, {
      ...consent,
      scope: union(existing?.scope ?? [], consent.scope),
      approvals: mergeApprovals(consent.approvals, existing?.approvals ?? []),
    });
  }

  async findConsent(accountUuid: string, clientId: string): Promise<ConsentRecord | null> {
    const consent = this.consents.get(pairKey(accountUuid, clientId));
    return consent ? copyConsent(consent) : null;
  }

  async listConsents(accountUuid: string): Promise<ConsentRecord[]> {
    const prefix = pairKey(accountUuid, '');
    const out: ConsentRecord[] = [];
    for (const [key, consent] of this.consents) if (key.startsWith(prefix)) out.push(copyConsent(consent));
    return out;
  }

  async createGrant(grant: GrantRecord, issued: { code?: CodeRecord; tokens?: TokenRecord[] }): Promise<void> {
    this.insertGrant(grant, issued);
  }

  /** `createGrant`'s work, synchronous, so single-use steps can do it in their one block. */
  private insertGrant(grant: GrantRecord, issued: { code?: CodeRecord; tokens?: TokenRecord[] }): void {
    this.grants.set(grant.id, copyGrant(grant));
    if (grant.kind === 'personal') push(this.personalByAccount, grant.account.uuid, grant.id);
    else push(this.grantsByPair, pairKey(grant.account.uuid, grant.clientId), grant.id);
    if (issued.code) this.codes.set(issued.code.hash, copyCode(issued.code));
    if (issued.tokens) {
      this.insertTokens(issued.tokens);
      // A personal access token's grant: its one token, by grant.
      if (grant.kind === 'personal')
        for (const token of issued.tokens) if (token.kind === 'personal') this.personal.set(grant.id, token.hash);
    }
  }

  async findCode(hash: string): Promise<CodeRecord | null> {
    return this.codeCopy(hash);
  }
  private codeCopy(hash: string): CodeRecord | null {
    const code = this.codes.get(hash);
    return code ? copyCode(code) : null;
  }

  async redeemCode(hash: string, now: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome> {
    const code = this.codes.get(hash);
    if (!code) return { ok: false, reason: 'missing' };
    if (code.usedAt !== null) return { ok: false, reason: 'used', grantId: code.grantId, usedAt: code.usedAt };
    if (now >= code.expiresAt) return { ok: false, reason: 'expired' };
    const grant = this.liveOAuthGrant(code.grantId);
    if (!grant) return { ok: false, reason: 'revoked' };
    code.usedAt = now;
    this.insertTokens(tokens);
    return { ok: true, grant: copyOAuthGrant(grant) };
  }

  async findToken(hash: string): Promise<{ token: TokenRecord; grant: GrantRecord } | null> {
    return this.tokenCopy(hash);
  }
  private tokenCopy(hash: string): { token: TokenRecord; grant: GrantRecord } | null {
    const token = this.tokens.get(hash);
    const grant = token && this.grants.get(token.grantId);
    return token && grant ? { token: copyToken(token), grant: copyGrant(grant) } : null;
  }

  // -------------------------------------------------------------------------------------------
  // Combined reads: both answers at one moment (nothing can run between them).

  async findClientAndCode(clientId: string, codeHash: string): Promise<{ client: ClientRecord | null; code: CodeRecord | null }> {
    return { client: this.clientCopy(clientId), code: this.codeCopy(codeHash) };
  }
  async findClientAndToken(
    clientId: string,
    tokenHash: string,
  ): Promise<{ client: ClientRecord | null; token: { token: TokenRecord; grant: GrantRecord } | null }> {
    return { client: this.clientCopy(clientId), token: this.tokenCopy(tokenHash) };
  }

  /** `findToken` without the copies: the stored records themselves, for callers that only read them (see `Storage.readToken`). */
  readToken(hash: string): { token: Readonly<TokenRecord>; grant: Readonly<GrantRecord> } | null {
    const token = this.tokens.get(hash);
    const grant = token && this.grants.get(token.grantId);
    return token && grant ? { token, grant } : null;
  }

  async rotateRefreshToken(hash: string, now: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome> {
    const token = this.tokens.get(hash);
    if (!token || token.kind !== 'refresh') return { ok: false, reason: 'missing' };
    if (token.rotatedAt !== null) return { ok: false, reason: 'used', grantId: token.grantId, usedAt: token.rotatedAt };
    const grant = this.liveOAuthGrant(token.grantId);
    if (token.revokedAt !== null || !grant) return { ok: false, reason: 'revoked' };
    if (token.expiresAt !== null && now >= token.expiresAt) return { ok: false, reason: 'expired' };
    token.rotatedAt = now;
    this.revokePair(token, now);
    if (token.parentHash != null) {
      // The first child of a parent rotated: the parent can no longer be retried, and the
      // other children (siblings minted by retries) are revoked with their access tokens.
      const parent = this.tokens.get(token.parentHash);
      if (parent && parent.childRotatedAt == null) parent.childRotatedAt = now;
      for (const sibling of this.children.get(token.parentHash) ?? []) {
        const other = this.tokens.get(sibling);
        if (!other || other === token || other.rotatedAt !== null || other.revokedAt !== null) continue;
        other.revokedAt = now;
        this.revokePair(other, now);
      }
    }
    this.insertTokens(tokens);
    return { ok: true, grant: copyOAuthGrant(grant) };
  }

  async retryRefreshToken(hash: string, now: number, windowMs: number, tokens: OAuthTokenRecord[]): Promise<SingleUseOutcome> {
    const token = this.tokens.get(hash);
    if (!token || token.kind !== 'refresh' || token.rotatedAt === null) return { ok: false, reason: 'missing' };
    if (token.childRotatedAt != null || now - token.rotatedAt > windowMs) {
      return { ok: false, reason: 'used', grantId: token.grantId, usedAt: token.rotatedAt };
    }
    const grant = this.liveOAuthGrant(token.grantId);
    if (token.revokedAt !== null || !grant) return { ok: false, reason: 'revoked' };
    if (token.expiresAt !== null && now >= token.expiresAt) return { ok: false, reason: 'expired' };
    // The children are indexed from the first retry on: a plain rotation has one child, which
    // the rotation of a sibling must find once there are siblings, and only then.
    let children = this.children.get(hash);
    if (children === undefined) {
      children = this.childrenOf(token);
      this.children.set(hash, children);
    }
    this.insertTokens(tokens);
    for (const sibling of tokens) if (sibling.kind === 'refresh') children.push(sibling.hash);
    return { ok: true, grant: copyOAuthGrant(grant) };
  }

  /**
   * The refresh tokens minted from `parent` before any retry: its family's newest token when that
   * is its child (a rotated parent's one child is the newest until the child is rotated, which
   * ends retries), else a search of every token (a parent without a family, from before families).
   */
  private childrenOf(parent: TokenRecord): string[] {
    const newest = parent.familyHash ? this.families.get(parent.familyHash) : undefined;
    if (newest !== undefined && this.tokens.get(newest)?.parentHash === parent.hash) return [newest];
    const found: string[] = [];
    for (const token of this.tokens.values()) if (token.parentHash === parent.hash) found.push(token.hash);
    return found;
  }

  /** Revoke the access token issued with a refresh token. */
  private revokePair(token: TokenRecord, now: number): void {
    const pair = token.pairHash === null ? undefined : this.tokens.get(token.pairHash);
    if (pair && pair.revokedAt === null) pair.revokedAt = now;
  }

  async findRefreshFamily(familyHash: string): Promise<RefreshFamily | null> {
    const newest = this.families.get(familyHash);
    const token = newest === undefined ? undefined : this.tokens.get(newest);
    return token && token.kind !== 'personal' ? { grantId: token.grantId, clientId: token.clientId } : null;
  }

  async revokeGrant(grantId: string, now: number): Promise<void> {
    const grant = this.grants.get(grantId);
    if (grant && grant.revokedAt === null) grant.revokedAt = now;
  }

  async revokeAccess(accountUuid: string, clientId: string, now: number): Promise<void> {
    const key = pairKey(accountUuid, clientId);
    this.consents.delete(key);
    for (const id of this.grantsByPair.get(key) ?? []) {
      const grant = this.grants.get(id);
      if (grant && grant.revokedAt === null) grant.revokedAt = now;
    }
    this.denyApprovedDevices((d) => d.clientId === clientId && d.account.uuid === accountUuid);
  }

  async revokeClientGrants(clientId: string, now: number): Promise<void> {
    for (const grant of this.grants.values()) {
      if (grant.clientId === clientId && grant.revokedAt === null) grant.revokedAt = now;
    }
    this.denyApprovedDevices((d) => d.clientId === clientId);
  }

  /**
   * A device authorization approved but not yet collected by its device becomes a live grant at
   * the next poll: a revocation that covers its account and client denies it instead.
   */
  private denyApprovedDevices(covered: (device: ApprovedDeviceAuthorizationRecord) => boolean): void {
    for (const [hash, device] of this.devices) {
      // Denied, the account dropped: nobody gets tokens for it any more.
      if (device.status === 'approved' && covered(device)) this.devices.set(hash, { ...device, status: 'denied', account: null });
    }
  }

  async listClients(filter: { owner?: string }): Promise<ClientRecord[]> {
    const out: ClientRecord[] = [];
    for (const client of this.clients.values()) {
      if (filter.owner === undefined || client.owner === filter.owner) out.push(copyClient(client));
    }
    return out.sort((a, b) => a.createdAt - b.createdAt);
  }

  async updateClientFields(clientId: string, changes: ClientChanges): Promise<boolean> {
    const client = this.clients.get(clientId);
    if (!client) return false;
    this.clients.set(clientId, withClientChanges(client, changes));
    return true;
  }

  async deleteClient(clientId: string, now: number): Promise<void> {
    for (const grant of this.grants.values()) {
      if (grant.clientId === clientId && grant.revokedAt === null) grant.revokedAt = now;
    }
    for (const [key, consent] of this.consents) if (consent.clientId === clientId) this.consents.delete(key);
    this.denyApprovedDevices((d) => d.clientId === clientId);
    this.clients.delete(clientId);
  }

  async revokeAccountGrants(accountUuid: string, now: number): Promise<void> {
    for (const grant of this.grants.values()) {
      if (grant.account.uuid === accountUuid && grant.revokedAt === null) grant.revokedAt = now;
    }
    const prefix = pairKey(accountUuid, '');
    for (const key of this.consents.keys()) if (key.startsWith(prefix)) this.consents.delete(key);
    this.denyApprovedDevices((d) => d.account.uuid === accountUuid);
  }

  async listPersonalTokens(accountUuid: string): Promise<PersonalTokenRead[]> {
    const out: PersonalTokenRead[] = [];
    for (const id of this.personalByAccount.get(accountUuid) ?? []) {
      const grant = this.grants.get(id);
      const hash = this.personal.get(id);
      const token = hash === undefined ? undefined : this.tokens.get(hash);
      if (grant?.kind === 'personal' && token?.kind === 'personal')
        out.push({ grant: copyPersonalGrant(grant), token: copyPersonalToken(token) });
    }
    return out;
  }

  async touchPersonalToken(grantId: string, at: number): Promise<void> {
    const grant = this.grants.get(grantId);
    if (grant?.kind === 'personal' && (grant.lastUsedAt === null || grant.lastUsedAt < at)) grant.lastUsedAt = at;
  }

  async createDeviceAuthorization(record: PendingDeviceAuthorizationRecord): Promise<boolean> {
    const taken = this.userCodes.get(record.userCodeHash);
    const existing = taken === undefined ? undefined : this.devices.get(taken);
    if (existing && record.createdAt < existing.expiresAt) return false;
    if (taken !== undefined) this.devices.delete(taken);
    this.devices.set(record.hash, copyDevice(record));
    this.userCodes.set(record.userCodeHash, record.hash);
    return true;
  }

  async findDeviceAuthorization(userCodeHash: string): Promise<DeviceAuthorizationRecord | null> {
    const hash = this.userCodes.get(userCodeHash);
    const record = hash === undefined ? undefined : this.devices.get(hash);
    return record ? copyDevice(record) : null;
  }

  async decideDeviceAuthorization(hash: string, now: number, account: Account | null): Promise<boolean> {
    const record = this.devices.get(hash);
    if (!record || record.status !== 'pending' || now >= record.expiresAt) return false;
    this.devices.set(
      hash,
      account
        ? { ...record, status: 'approved', account: copyAccount(account), decidedAt: now }
        : { ...record, status: 'denied', account: null, decidedAt: now },
    );
    return true;
  }

  async pollDeviceAuthorization(hash: string, clientId: string, now: number, leewayMs: number): Promise<DevicePoll> {
    const record = this.devices.get(hash);
    if (!record || record.clientId !== clientId) return { status: 'missing' };
    if (record.status === 'redeemed') return { status: 'redeemed' };
    if (now >= record.expiresAt) return { status: 'expired' };
    if (record.status === 'approved') {
      return {
        status: 'approved',
        record: { ...copyDeviceFields(record), status: 'approved', account: copyAccount(record.account), decidedAt: record.decidedAt },
      };
    }
    if (record.status === 'denied') return { status: 'denied' };
    const tooSoon = record.lastPolledAt !== null && now - record.lastPolledAt < record.interval * 1000 - leewayMs;
    record.lastPolledAt = now;
    if (!tooSoon) return { status: 'pending' };
    record.interval += 5;
    return { status: 'slow_down', interval: record.interval };
  }

  async redeemDeviceAuthorization(hash: string, now: number, grant: OAuthGrantRecord, tokens: OAuthTokenRecord[]): Promise<boolean> {
    const record = this.devices.get(hash);
    if (!record || record.status !== 'approved' || now >= record.expiresAt) return false;
    record.status = 'redeemed';
    this.insertGrant(grant, { tokens });
    return true;
  }

  /**
   * Delete what can no longer matter at `now` (call it periodically; O(records)):
   * - expired interactions and codes (a used code is kept until it expires: its replay revokes);
   * - access tokens that expired or were revoked (a rotation revokes the pair's access token);
   * - rotated refresh tokens once a child was rotated or `MAX_REFRESH_WINDOW_SECONDS` after
   *   their rotation (until then a retry within `refreshRetryWindowSeconds` needs the record),
   *   and revoked ones (siblings revoked when another was rotated): a replay of one is still
   *   recognised by its family, through the family's newest refresh token, which stays while its
   *   grant lives and until it has expired and so has its access token. So a family keeps one
   *   refresh record however long its rotation chain, and a replay of a pruned token revokes it;
   * - revoked grants with everything of theirs; grants with nothing left;
   * - expired device authorizations (RFC 8628), whatever their status;
   * - DPoP proof keys past their `expiresAt` (not counted in the result).
   * Consents and clients stay.
   */
  prune(now: number): { interactions: number; codes: number; tokens: number; grants: number; devices: number } {
    const removed = { interactions: 0, codes: 0, tokens: 0, grants: 0, devices: 0 };
    this.sweepDpopProofs(now); // not counted: the result's fields are those of the records
    for (const [hash, device] of this.devices) {
      if (now >= device.expiresAt) {
        this.devices.delete(hash);
        if (this.userCodes.get(device.userCodeHash) === hash) this.userCodes.delete(device.userCodeHash);
        removed.devices++;
      }
    }
    for (const [key, interaction] of this.interactions) {
      if (now >= interaction.expiresAt) {
        this.interactions.delete(key);
        removed.interactions++;
      }
    }
    const expired = (t: TokenRecord) => t.expiresAt !== null && now >= t.expiresAt;
    const dead = (t: TokenRecord | undefined) => !t || t.revokedAt !== null || expired(t);
    const doomed: string[] = [];
    for (const [hash, token] of this.tokens) {
      const gone =
        this.isRevoked(token.grantId) ||
        (token.kind !== 'refresh'
          ? dead(token) // access and personal tokens
          : // A family's newest refresh token stays while it, or the access token issued with it, can be used.
            (token.rotatedAt !== null && (token.childRotatedAt != null || now - token.rotatedAt > MAX_REFRESH_WINDOW_SECONDS * 1000)) ||
            token.revokedAt !== null ||
            (expired(token) && dead(token.pairHash === null ? undefined : this.tokens.get(token.pairHash))));
      if (gone) doomed.push(hash);
    }
    for (const hash of doomed) {
      this.tokens.delete(hash);
      removed.tokens++;
    }
    for (const [family, newest] of this.families) if (!this.tokens.has(newest)) this.families.delete(family);
    for (const [parent, hashes] of this.children) {
      const kept = hashes.filter((h) => this.tokens.has(h));
      if (kept.length > 0) this.children.set(parent, kept);
      else this.children.delete(parent);
    }
    for (const [grantId, hash] of this.personal) if (!this.tokens.has(hash)) this.personal.delete(grantId);
    for (const [hash, code] of this.codes) {
      if (now >= code.expiresAt || this.isRevoked(code.grantId)) {
        this.codes.delete(hash);
        removed.codes++;
      }
    }
    const alive = new Set<string>();
    for (const token of this.tokens.values()) alive.add(token.grantId);
    for (const code of this.codes.values()) alive.add(code.grantId);
    for (const id of this.grants.keys()) {
      if (alive.has(id)) continue;
      this.grants.delete(id);
      removed.grants++;
    }
    if (removed.grants > 0) {
      for (const index of [this.grantsByPair, this.personalByAccount]) {
        for (const [key, ids] of index) {
          const kept = ids.filter((id) => this.grants.has(id));
          if (kept.length > 0) index.set(key, kept);
          else index.delete(key);
        }
      }
    }
    return removed;
  }

  async rememberDpopProof(key: string, expiresAt: number, now: number): Promise<boolean> {
    const until = this.dpopProofs.get(key);
    if (until !== undefined && until > now) return false;
    this.dpopProofs.set(key, expiresAt);
    if (this.dpopProofs.size >= this.dpopSweepAt) {
      this.sweepDpopProofs(now);
      this.dpopSweepAt = Math.max(1024, this.dpopProofs.size * 2);
    }
    return true;
  }

  private sweepDpopProofs(now: number): void {
    for (const [key, until] of this.dpopProofs) if (until <= now) this.dpopProofs.delete(key);
  }

  private insertTokens(tokens: TokenRecord[]): void {
    for (const token of tokens) {
      this.tokens.set(token.hash, copyToken(token));
      if (token.familyHash) this.families.set(token.familyHash, token.hash);
    }
  }

  private isRevoked(grantId: string): boolean {
    const grant = this.grants.get(grantId);
    return !grant || grant.revokedAt !== null;
  }

  /** The grant of a code or refresh token, while it lives; codes and refresh tokens belong to OAuth grants only. */
  private liveOAuthGrant(grantId: string): OAuthGrantRecord | undefined {
    const grant = this.grants.get(grantId);
    return grant && grant.revokedAt === null && grant.kind !== 'personal' ? grant : undefined;
  }
}

/** Add `id` to the list of `key` in an index. */
function push(index: Map<string, string[]>, key: string, id: string): void {
  const ids = index.get(key);
  if (ids) ids.push(id);
  else index.set(key, [id]);
}
