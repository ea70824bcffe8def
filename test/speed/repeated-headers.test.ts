/**
 * The adapters hand the core Node's header object as it is when no header name came twice
 * (Express and Fastify skip `headersDistinct` then). A name repeated in another letter case is
 * still a repetition, and each framework still answers as the others do.
 */
import { describe, expect, it } from 'vitest';
import { FORM, FRAMEWORKS, useApp } from '../adapters/app.js';

describe.each(FRAMEWORKS)('%s: repeated headers, whatever the case of their names', (framework) => {
  const app = useApp({ framework });

  it('Authorization and authorization at the resource API → 400 invalid_request, the valid token first or second', async () => {
    const { tokens, rawRequest } = app();
    const { access_token } = await tokens();
    for (const lines of [
      [
        ['Authorization', `Bearer ${access_token}`],
        ['authorization', 'Bearer AAAA'],
      ],
      [
        ['AUTHORIZATION', 'Bearer AAAA'],
        ['Authorization', `Bearer ${access_token}`],
      ],
    ] as Array<Array<[string, string]>>) {
      const reply = await rawRequest('GET', '/v2/account', lines);
      expect(reply.status, reply.text).toBe(400);
      expect(String(reply.headers['www-authenticate'])).toContain('error="invalid_request"');
    }
  });

  it('Content-Type and content-type at the token endpoint → 400 invalid_request', async () => {
    const { rawRequest } = app();
    const reply = await rawRequest(
      'POST',
      '/v1/oauth/revoke',
      [
        ['Content-Type', FORM],
        ['content-type', FORM],
      ],
      'token=abc',
    );
    expect(reply.status, reply.text).toBe(400);
    expect((JSON.parse(reply.text) as { error: string }).error).toBe('invalid_request');
  });

  it('one line per header, names in any case: the token is read and the request served', async () => {
    const { tokens, rawRequest } = app();
    const { access_token } = await tokens();
    const reply = await rawRequest('GET', '/v2/account', [
      ['AUTHORIZATION', `Bearer ${access_token}`],
      ['X-Extra', 'a'],
      ['Accept', '*/*'],
    ]);
    expect(reply.status, reply.text).toBe(200);
  });
});
