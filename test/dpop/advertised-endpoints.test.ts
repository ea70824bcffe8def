import { describe, expect, it } from 'vitest';
import { CALLBACK, json, setup } from '../helpers.js';
import { proof, proofKey } from './fixtures.js';

/**
 * The `htu` of a proof sent to an endpoint of the authorization server itself (RFC 9449 §4.3
 * point 9): the URL the metadata advertises for it, which is what a client signs (oauth4webapi
 * and openid-client take `token_endpoint` and `userinfo_endpoint` from the documents). That URL
 * is the `issuer`, with its path, then the path the request came to (docs/reference.md#metadata-endpoint):
 * an issuer with a path sits behind a proxy that strips it, and an app behind a TLS-terminating
 * proxy is reached over http, at another host; neither decides what the proof must name.
 */
async function server(issuer: string) {
  const t = await setup({ issuer, dpop: {}, openid: {} });
  const key = await proofKey();
  const documents = json(t.server.openidConfiguration({ method: 'GET' }));
  const tokenEndpoint = documents.token_endpoint as string;
  const userinfoEndpoint = documents.userinfo_endpoint as string;
  /** The confidential client's code exchange, sent to `url` (as the adapter hands it over) with a proof of `htu`. */
  const exchange = async (url: string, htu: string) =>
    t.server.token(
      t.post(
        url,
        {
          grant_type: 'authorization_code',
          code: await t.getCode({ scope: 'openid' }),
          client_id: t.client.clientId,
          client_secret: t.client.clientSecret!,
          redirect_uri: CALLBACK,
        },
        { dpop: await proof(key, 'POST', htu, t.clock.now()) },
      ),
    );
  const userinfo = async (url: string, htu: string, token: string) =>
    t.server.userinfo({
      method: 'GET',
      url,
      headers: { authorization: `DPoP ${token}`, dpop: await proof(key, 'GET', htu, t.clock.now(), { accessToken: token }) },
    });
  return { ...t, key, tokenEndpoint, userinfoEndpoint, exchange, userinfo };
}

describe('proofs name the endpoints as the metadata advertises them', () => {
  it('an issuer with a path (behind a proxy that strips it): token and userinfo endpoints take the advertised URLs', async () => {
    const t = await server('https://as.example/tenant-a');
    expect(t.tokenEndpoint).toBe('https://as.example/tenant-a/v1/oauth/token');
    expect(t.userinfoEndpoint).toBe('https://as.example/tenant-a/v1/oauth/userinfo');
    // The app sees the path without the issuer's: the proxy took it off.
    const res = await t.exchange('http://10.0.0.5:8080/v1/oauth/token', t.tokenEndpoint);
    expect(res.status, res.body).toBe(200);
    expect(json(res).token_type).toBe('DPoP');
    const token = json(res).access_token as string;
    const info = await t.userinfo('http://10.0.0.5:8080/v1/oauth/userinfo', t.userinfoEndpoint, token);
    expect(info.status, info.body).toBe(200);

    // The URL without the issuer's path is another one: refused.
    const short = await t.exchange('/v1/oauth/token', 'https://as.example/v1/oauth/token');
    expect(json(short).error).toBe('invalid_dpop_proof');
    const shortInfo = await t.userinfo('/v1/oauth/userinfo', 'https://as.example/v1/oauth/userinfo', token);
    expect(shortInfo.status).toBe(401);
    expect(shortInfo.headers['www-authenticate']).toContain('error="invalid_dpop_proof"');
  });

  it('behind a TLS-terminating proxy (the app reached over http at another host): userinfo as the token endpoint', async () => {
    const t = await server('https://as.example');
    const res = await t.exchange('http://10.0.0.5:8080/v1/oauth/token', t.tokenEndpoint);
    expect(res.status, res.body).toBe(200);
    const token = json(res).access_token as string;
    expect((await t.userinfo('http://10.0.0.5:8080/v1/oauth/userinfo', t.userinfoEndpoint, token)).status).toBe(200);
    // The URL of the hop to the app is not the endpoint's: refused, as at the token endpoint.
    const hop = await t.userinfo('http://10.0.0.5:8080/v1/oauth/userinfo', 'http://10.0.0.5:8080/v1/oauth/userinfo', token);
    expect(hop.status).toBe(401);
    expect(hop.headers['www-authenticate']).toContain('error="invalid_dpop_proof"');
    const hopToken = await t.exchange('http://10.0.0.5:8080/v1/oauth/token', 'http://10.0.0.5:8080/v1/oauth/token');
    expect(json(hopToken).error).toBe('invalid_dpop_proof');
  });
});
