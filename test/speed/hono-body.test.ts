/**
 * The Hono adapter's fast paths on @hono/node-server, each pinned to the answer the Web-standard
 * path gives: the body read without building a Web `Request` around the Node stream, the byte
 * limit counted without encoding every body again.
 */
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FORM, expectJsonError, useApp, type TokenBody } from '../adapters/app.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('Hono on @hono/node-server: the body with a declared length', () => {
  const app = useApp({ framework: 'hono' });

  it('is read without wrapping the Node stream in a Web stream (no Readable.toWeb), and the exchange works', async () => {
    const { getCode, exchange } = app();
    const code = await getCode();
    const toWeb = vi.spyOn(Readable, 'toWeb');
    const reply = await exchange(code);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json<TokenBody>().token_type).toBe('bearer');
    expect(toWeb).not.toHaveBeenCalled();
  });
});

// Also in workerd: the same adapter code on another runtime's streams and TextDecoder.
describe.each(['hono', 'workerd'] as const)(
  '%s: the byte limit of a body read whole is counted in UTF-8 bytes of the text',
  (framework) => {
    const app = useApp({ framework, router: { bodyLimit: 100 } });

    it('100 bytes of two-byte characters (50 UTF-16 units) reach the core', async () => {
      const { postForm } = app();
      const body = `x=${'é'.repeat(49)}`; // 2 + 98 bytes
      expect(Buffer.byteLength(body)).toBe(100);
      expectJsonError(await postForm('/v1/oauth/token', body), 400, 'invalid_request');
    });

    it('101 bytes of two-byte characters → 413', async () => {
      const { postForm } = app();
      const body = `xy=${'é'.repeat(49)}`;
      expect(Buffer.byteLength(body)).toBe(101);
      expectJsonError(await postForm('/v1/oauth/token', body), 413, 'invalid_request');
    });

    it('40 bytes that are not UTF-8 count as the 120 bytes of the 40 U+FFFD they decode to → 413', async () => {
      const { request } = app();
      const reply = await request('POST', '/v1/oauth/token', { headers: { 'content-type': FORM }, body: new Uint8Array(40).fill(0xff) });
      expectJsonError(reply, 413, 'invalid_request');
    });

    it('33 such bytes (99 bytes of text) reach the core', async () => {
      const { request } = app();
      const reply = await request('POST', '/v1/oauth/token', { headers: { 'content-type': FORM }, body: new Uint8Array(33).fill(0xff) });
      expectJsonError(reply, 400, 'invalid_request');
    });
  },
);
