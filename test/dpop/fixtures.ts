/**
 * DPoP proofs for the wiring tests: signed with jose at the server's (fake) clock, so each test
 * controls `iat`, and any claim can be changed or left out.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { sha256Base64url } from '../../src/crypto.js';
import type { OAuthRequest } from '../../src/index.js';
import { CALLBACK } from '../fixtures.js';

export interface ProofKey {
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
}

/** An ES256 key pair, with its public JWK and thumbprint. */
export async function proofKey(): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}

let counter = 0;

/** A proof of `htm htu` at `now` (milliseconds), with `ath` of `accessToken` when given; `claims` replace or add claims. */
export function proof(
  key: ProofKey,
  htm: string,
  htu: string,
  now: number,
  options: { accessToken?: string; nonce?: string; claims?: Record<string, unknown> } = {},
): Promise<string> {
  const claims: Record<string, unknown> = { htm, htu, iat: Math.floor(now / 1000), jti: `jti-${++counter}-${Math.random()}` };
  if (options.accessToken !== undefined) claims.ath = sha256Base64url(options.accessToken);
  if (options.nonce !== undefined) claims.nonce = options.nonce;
  Object.assign(claims, options.claims);
  return new SignJWT(claims).setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk }).sign(key.privateKey);
}

/** What `exchangeRequest` needs of a test server (`setup` in test/helpers.ts): its confidential client and its form POST. */
interface Exchanger {
  client: { clientId: string; clientSecret?: string | undefined };
  post(url: string, form: Record<string, string>, headers?: Record<string, string>): OAuthRequest;
}

/** The confidential client's exchange of `code`, with `dpop` as its DPoP header when given, and `params` added to the form. */
export function exchangeRequest(t: Exchanger, code: string, dpop?: string, params: Record<string, string> = {}): OAuthRequest {
  return t.post(
    '/v1/oauth/token',
    {
      grant_type: 'authorization_code',
      code,
      client_id: t.client.clientId,
      client_secret: t.client.clientSecret!,
      redirect_uri: CALLBACK,
      ...params,
    },
    dpop === undefined ? {} : { dpop },
  );
}

/** What `boundTokenAnswer` needs of an app under test (`startApp`, test/adapters/app.ts). */
interface HttpApp {
  base: string;
  getCode(): Promise<string>;
  codeParams(code: string): Record<string, string>;
}

/** Over HTTP: a new code of `app` exchanged with a proof by `key` for `${issuer}/v1/oauth/token`; the token endpoint's answer. */
export async function boundTokenAnswer(app: HttpApp, key: ProofKey, issuer: string): Promise<Response> {
  return fetch(`${app.base}/v1/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      dpop: await proof(key, 'POST', `${issuer}/v1/oauth/token`, Date.now()),
    },
    body: new URLSearchParams(app.codeParams(await app.getCode())).toString(),
  });
}
