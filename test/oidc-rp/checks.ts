/**
 * What a relying party's report must show, beyond each library's own verdict: the authorization
 * request carries what OpenID Connect Core 1.0 and RFC 7636 ask of it, and the claims of the
 * different steps agree with each other (one subject throughout, OIDC Core 5.3.2 and 12.2).
 */
import { type Claims, LOGOUT_STEPS, RP_STEPS, type RpConfig, type RpReport } from './driver.js';

/** What is wrong with an authorization request URL, as `problem` lines (none: a good request). */
export function authorizationRequestProblems(href: string | undefined, config: RpConfig): string[] {
  if (!href) return ['no authorization request was made'];
  const params = new URL(href).searchParams;
  const problems: string[] = [];
  const expect = (name: string, ok: (value: string | null) => boolean, wanted: string) => {
    if (!ok(params.get(name))) problems.push(`authorization request: ${name} is ${params.get(name) ?? 'missing'}, wanted ${wanted}`);
  };
  expect('response_type', (v) => v === 'code', 'code');
  expect('client_id', (v) => v === config.clientId, config.clientId);
  expect('redirect_uri', (v) => v === config.redirectUri, config.redirectUri);
  expect('scope', (v) => (v ?? '').split(' ').includes('openid'), 'a scope with openid');
  expect('state', (v) => (v ?? '').length >= 16, 'a random state');
  expect('nonce', (v) => (v ?? '').length >= 16, 'a random nonce');
  expect('code_challenge_method', (v) => v === 'S256', 'S256');
  expect('code_challenge', (v) => /^[\w-]{43}$/.test(v ?? ''), 'a SHA-256 challenge (43 base64url characters)');
  return problems;
}

const audience = (claims: Claims | undefined) => [claims?.['aud']].flat();

/**
 * Everything wrong with a report: a step of `RP_STEPS` that failed or never ran, a bad
 * authorization request, claims that disagree. An empty list is a relying party that passed.
 */
export function problems(report: RpReport, config: RpConfig): string[] {
  const found: string[] = [];
  if (report.error) found.push(report.error);
  for (const name of RP_STEPS[report.rp]) {
    if (config.logout === false && LOGOUT_STEPS.includes(name)) continue;
    const step = report.steps[name];
    if (!step) found.push(`${name}: not reached`);
    else if (!step.ok) found.push(`${name}: ${step.error}`);
  }
  found.push(...authorizationRequestProblems(report.browsed[0], config));

  const idToken = report.steps.id_token?.claims;
  if (!idToken) return found;
  if (idToken['iss'] !== config.issuer) found.push(`id_token: iss ${idToken['iss']}, wanted ${config.issuer}`);
  if (!audience(idToken).includes(config.clientId)) found.push(`id_token: aud ${idToken['aud']} lacks ${config.clientId}`);
  if (idToken['nonce'] !== new URL(report.browsed[0]!).searchParams.get('nonce')) found.push('id_token: not the nonce of the request');
  const sameSubject = (step: 'userinfo' | 'refresh_id_token' | 'silent') => {
    const claims = report.steps[step]?.claims;
    if (claims && claims['sub'] !== idToken['sub']) found.push(`${step}: sub ${claims['sub']}, wanted ${idToken['sub']}`);
  };
  sameSubject('userinfo');
  sameSubject('refresh_id_token');
  sameSubject('silent');
  const refreshed = report.steps.refresh_id_token?.claims;
  if (refreshed && (refreshed['iss'] !== idToken['iss'] || audience(refreshed).join() !== audience(idToken).join())) {
    found.push('refresh_id_token: not the iss and aud of the first ID token');
  }
  // Core 12.2: the refreshed ID token's nonce, if any, is the first one's (openid-client and oauth4webapi leave it unchecked).
  if (refreshed && refreshed['nonce'] !== undefined && refreshed['nonce'] !== idToken['nonce'])
    found.push('refresh_id_token: another nonce');
  if (refreshed && Number(refreshed['iat']) < Number(idToken['iat'])) found.push('refresh_id_token: issued before the first ID token');
  if (report.steps.silent) {
    const silent = new URL(report.browsed[1] ?? 'about:blank').searchParams;
    if (silent.get('prompt') !== 'none' || !silent.get('id_token_hint'))
      found.push('silent: the request lacks prompt=none or id_token_hint');
  }
  return found;
}
