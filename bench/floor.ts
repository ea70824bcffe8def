/**
 * The physical floor of each workload: only what no implementation of the same contract can
 * avoid, with nothing around it (no parsing, validation, copies, promises beyond the crypto).
 *
 * - every token, code, interaction id and grant id minted: CSPRNG bytes (32; 16 for a grant id),
 *   encoded for the wire;
 * - every secret minted or presented: SHA-256, because only hashes are stored
 *   (docs/reference.md#conventions), which includes the client secret at the token and revocation
 *   endpoints;
 * - the Map operations of a minimal store (get, set, delete; marking a record used or revoked);
 * - W1o: one RS256 signature (node:crypto, a 2048-bit key) of an ID token's signing input;
 * - W6, W2d: one ES256 verification of the proof (node:crypto, the key already imported: a
 *   server may cache keys by thumbprint), its `jti` kept in a Map (replay), and one SHA-256 of the
 *   key's canonical JWK (RFC 7638 thumbprint) to compare with the token's binding; W6's `ath` is
 *   the SHA-256 of the token the lookup computes anyway.
 *
 * `floor` makes the same calls as src/crypto.ts, whatever they are today (its synchronous
 * `sha256Base64url` when it has one, else its `hashSecret`; its `randomToken` and `randomId`), so
 * the floor follows the core's crypto: on Node, one-shot native SHA-256 (`crypto.hash`) and
 * pooled CSPRNG bytes encoded by Buffer, the cheapest calls there are (see the primitives table).
 */
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import * as coreCrypto from '../src/crypto.js';
import type { WorkloadId } from './authgate.js';
import { proof, proofKey, RESOURCE_URL, TOKEN_URL } from './lib/dpop.js';
import type { Contender } from './lib/measure.js';

const encoder = new TextEncoder();

export interface FloorCrypto {
  random(bytes: 16 | 32): string;
  sha256(value: string): Promise<string> | string;
}

/** The core's own primitives, looked up at run time so a renamed helper does not break the bench. */
export function coreCryptoPrimitives(): FloorCrypto & { describe: string } {
  const m = coreCrypto as unknown as Record<string, unknown>;
  const fn = (name: string) => (typeof m[name] === 'function' ? (m[name] as (...args: unknown[]) => unknown) : undefined);
  const syncHash = fn('sha256Base64url') as ((v: string) => string) | undefined;
  const asyncHash = fn('hashSecret') as ((v: string) => Promise<string>) | undefined;
  const token = fn('randomToken') as (() => string) | undefined;
  const id = fn('randomId') as (() => string) | undefined;
  const webHash = async (value: string) =>
    Buffer.from(await globalThis.crypto.subtle.digest('SHA-256', encoder.encode(value))).toString('base64url');
  const webRandom = (bytes: number) => Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(bytes))).toString('base64url');
  return {
    random: (bytes) => (bytes === 32 ? token?.() : id?.()) ?? webRandom(bytes),
    sha256: syncHash ?? asyncHash ?? webHash,
    describe: `src/crypto.ts ${syncHash ? 'sha256Base64url' : asyncHash ? 'hashSecret' : '(none: subtle.digest)'} + ${token ? 'randomToken/randomId' : '(none: getRandomValues)'}`,
  };
}

interface Rec {
  grant: string;
  used: boolean;
  revoked: boolean;
}

export function floorContenders(): Record<WorkloadId, Contender> {
  const c = coreCryptoPrimitives();
  const name = 'floor';
  const kind = 'floor';
  const clients = new Map<string, string>();
  const interactions = new Map<string, string>();
  const consents = new Map<string, string>();
  const grants = new Map<string, Rec>();
  const codes = new Map<string, Rec>();
  const tokens = new Map<string, Rec>();
  const clientId = c.random(16);
  const clientSecret = c.random(32);
  const clientSecretHash = Promise.resolve(c.sha256(clientSecret)).then((hash) => clients.set(clientId, hash));

  /** Client authentication: hash the presented secret, compare with the stored hash. */
  async function authenticateClient(): Promise<void> {
    const presented = await c.sha256(clientSecret);
    if (clients.get(clientId) !== presented) throw new Error('floor: client authentication failed');
  }
  /** A code of a fresh grant, stored by hash. */
  async function mintCode(): Promise<string> {
    const grant = c.random(16);
    const code = c.random(32);
    grants.set(grant, { grant, used: false, revoked: false });
    codes.set(await c.sha256(code), { grant, used: false, revoked: false });
    return code;
  }
  /** An access + refresh pair of `grant`, stored by hash. */
  async function mintPair(grant: string): Promise<{ access: string; refresh: string }> {
    const access = c.random(32);
    const refresh = c.random(32);
    tokens.set(await c.sha256(access), { grant, used: false, revoked: false });
    tokens.set(await c.sha256(refresh), { grant, used: false, revoked: false });
    return { access, refresh };
  }
  async function exchange(code: string): Promise<{ access: string; refresh: string }> {
    await authenticateClient();
    const record = codes.get(await c.sha256(code));
    if (!record || record.used) throw new Error('floor: bad code');
    record.used = true;
    return mintPair(record.grant);
  }
  async function flow(): Promise<{ access: string; refresh: string }> {
    // authorize: an interaction id, stored by hash; approve: look it up by hash and take it.
    const id = c.random(32);
    interactions.set(await c.sha256(id), clientId);
    const hash = await c.sha256(id);
    if (interactions.get(hash) === undefined) throw new Error('floor: no interaction');
    interactions.delete(hash);
    consents.set(clientId, hash); // the user's standing authorization (prompt=none reuses it)
    return exchange(await mintCode());
  }

  // W1o: the ID token's signature, over a signing input of an ID token's size.
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const idTokenInput = Buffer.from(`${'h'.repeat(70)}.${'p'.repeat(330)}`);
  // W6, W2d: proofs made in `prepare`, verified in the op.
  const key = proofKey();
  const canonicalJwk = `{"crv":"${key.jwk.crv}","kty":"${key.jwk.kty}","x":"${key.jwk.x}","y":"${key.jwk.y}"}`;
  const jkt = c.sha256(canonicalJwk);
  const seen = new Map<string, number>();
  let proofs: string[] = [];
  async function checkProof(jws: string): Promise<void> {
    const dot = jws.lastIndexOf('.');
    if (
      !verify(
        'sha256',
        Buffer.from(jws.slice(0, dot)),
        { key: key.publicKey, dsaEncoding: 'ieee-p1363' },
        Buffer.from(jws.slice(dot + 1), 'base64url'),
      )
    )
      throw new Error('floor: bad proof');
    // The replay store, keyed by 22 characters unique to the proof (a jti's length; no parsing here).
    const replayKey = jws.slice(dot + 1, dot + 23);
    if (seen.has(replayKey)) throw new Error('floor: replayed proof');
    seen.set(replayKey, 0);
    if ((await c.sha256(canonicalJwk)) !== (await jkt)) throw new Error('floor: another key');
  }
  const prepareProofs = (count: number, htm: string, htu: string, token?: string) => {
    proofs = [];
    for (let i = 0; i < count; i++) proofs.push(proof(key, htm, htu, token));
  };
  let w2dRefresh: string | undefined;

  let pending: string[] = [];
  let refresh: string | undefined;
  let bearer: string | undefined;
  let live: string[] = [];
  const bearerCheck: Contender = {
    name,
    kind,
    async prepare() {
      await clientSecretHash;
      if (bearer) return;
      const grant = c.random(16);
      grants.set(grant, { grant, used: false, revoked: false });
      bearer = (await mintPair(grant)).access;
    },
    async op() {
      const record = tokens.get(await c.sha256(bearer!));
      if (!record || record.revoked || grants.get(record.grant)?.revoked !== false) throw new Error('floor: bad access token');
    },
  };
  return {
    W1: { name, kind, prepare: () => clientSecretHash.then(() => undefined), op: flow },
    W1o: {
      name,
      kind,
      prepare: () => clientSecretHash.then(() => undefined),
      async op() {
        await flow();
        sign('sha256', idTokenInput, rsa).toString('base64url');
      },
    },
    W6: {
      name,
      kind,
      async prepare(count) {
        await bearerCheck.prepare!(count);
        prepareProofs(count, 'GET', RESOURCE_URL, bearer);
      },
      async op(i) {
        await checkProof(proofs[i]!);
        await bearerCheck.op(i);
      },
    },
    W2d: {
      name,
      kind,
      async prepare(count) {
        await clientSecretHash;
        w2dRefresh ??= (await mintPair(c.random(16))).refresh;
        prepareProofs(count, 'POST', TOKEN_URL);
      },
      async op(i) {
        // A public client: no secret to hash; the proof instead.
        await checkProof(proofs[i]!);
        const record = tokens.get(await c.sha256(w2dRefresh!));
        if (!record || record.used) throw new Error('floor: bad refresh token');
        record.used = true;
        w2dRefresh = (await mintPair(record.grant)).refresh;
      },
    },
    W1x: {
      name,
      kind,
      async prepare(count) {
        await clientSecretHash;
        pending = [];
        for (let i = 0; i < count; i++) pending.push(await mintCode());
      },
      op: (i) => exchange(pending[i]!),
    },
    W2: {
      name,
      kind,
      async prepare() {
        await clientSecretHash;
        refresh ??= (await mintPair(c.random(16))).refresh;
      },
      async op() {
        await authenticateClient();
        const record = tokens.get(await c.sha256(refresh!));
        if (!record || record.used) throw new Error('floor: bad refresh token');
        record.used = true;
        refresh = (await mintPair(record.grant)).refresh;
      },
    },
    W3: bearerCheck,
    // A personal access token is checked as an access token is: the same floor.
    W5: bearerCheck,
    W4: {
      name,
      kind,
      async prepare(count) {
        await clientSecretHash;
        live = [];
        for (let i = 0; i < count; i++) {
          const grant = c.random(16);
          grants.set(grant, { grant, used: false, revoked: false });
          live.push((await mintPair(grant)).access);
        }
      },
      async op(i) {
        await authenticateClient();
        const record = tokens.get(await c.sha256(live[i]!));
        const grant = record && grants.get(record.grant);
        if (!grant) throw new Error('floor: unknown token');
        grant.revoked = true;
      },
    },
  };
}
