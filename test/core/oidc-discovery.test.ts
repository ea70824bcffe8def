/**
 * The OpenID Provider fields of the discovery document (src/oidc/discovery.ts; Discovery 1.0
 * §3), built from what is on.
 */
import { describe, expect, it } from 'vitest';
import { claimsPolicy } from '../../src/oidc/claims.js';
import { type OpenIdDiscoveryInput, openIdDiscovery } from '../../src/oidc/discovery.js';
import { ISSUER } from '../fixtures.js';

const base: OpenIdDiscoveryInput = {
  userinfoEndpoint: `${ISSUER}/v1/oauth/userinfo`,
  jwksUri: `${ISSUER}/.well-known/jwks.json`,
  signingAlgorithms: ['RS256'],
  subjectTypes: ['public'],
  claims: claimsPolicy().supported,
  scopes: ['read', 'write'],
  claimScopes: ['profile', 'email'],
  offlineAccess: false,
  responseModes: ['query'],
  formPost: false,
  prompts: ['none', 'login', 'select_account'],
  languages: [],
};

describe('openIdDiscovery', () => {
  it('the least: userinfo, jwks_uri, RS256, public subjects, the claims, and no request objects', () => {
    expect(openIdDiscovery(base)).toEqual({
      userinfo_endpoint: `${ISSUER}/v1/oauth/userinfo`,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      scopes_supported: ['read', 'write', 'openid', 'profile', 'email'],
      response_modes_supported: ['query'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', ...claimsPolicy().supported.slice(1)],
      prompt_values_supported: ['none', 'login', 'select_account'],
      claims_parameter_supported: false,
      request_parameter_supported: false,
      // Discovery §3: true when absent, so it must be said.
      request_uri_parameter_supported: false,
    });
  });

  it('everything on: end session, pairwise, every algorithm, offline_access, form_post, page languages', () => {
    const fields = openIdDiscovery({
      ...base,
      endSessionEndpoint: `${ISSUER}/v1/oauth/logout`,
      signingAlgorithms: ['RS256', 'ES256', 'EdDSA'],
      subjectTypes: ['public', 'pairwise'],
      scopes: ['read', 'openid', 'profile'],
      claimScopes: ['profile', 'email', 'address', 'phone'],
      offlineAccess: true,
      responseModes: ['query', 'fragment'],
      formPost: true,
      prompts: ['none', 'login', 'consent', 'select_account'],
      languages: ['en', 'fr'],
    });
    expect(fields).toMatchObject({
      end_session_endpoint: `${ISSUER}/v1/oauth/logout`,
      id_token_signing_alg_values_supported: ['RS256', 'ES256', 'EdDSA'],
      subject_types_supported: ['public', 'pairwise'],
      scopes_supported: ['read', 'openid', 'profile', 'email', 'address', 'phone', 'offline_access'],
      response_modes_supported: ['query', 'fragment', 'form_post'],
      prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
      ui_locales_supported: ['en', 'fr'],
    });
  });

  it('without end session or languages, those fields are absent, not empty', () => {
    const fields = openIdDiscovery(base);
    expect(fields).not.toHaveProperty('end_session_endpoint');
    expect(fields).not.toHaveProperty('ui_locales_supported');
  });

  it('gives copies: changing a result changes neither the input nor the next result', () => {
    const input = { ...base, signingAlgorithms: ['RS256' as const] };
    const fields = openIdDiscovery(input);
    fields.id_token_signing_alg_values_supported.push('EdDSA');
    fields.scopes_supported.push('x');
    expect(input.signingAlgorithms).toEqual(['RS256']);
    expect(openIdDiscovery(input).scopes_supported).not.toContain('x');
  });
});
