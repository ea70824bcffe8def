/**
 * The MCP example's scope rule (examples/mcp/mcp-server.ts `mcpRequiredScope`), the
 * `requiredScope` of its protected resource (docs/reference.md#protected-resources-rfc-9728):
 * by JSON-RPC method and tool, failing closed (`read write`) on whatever it cannot classify.
 */
import { describe, expect, it } from 'vitest';
import { mcpRequiredScope } from '../../examples/mcp/mcp-server.js';

const URL = 'http://127.0.0.1:3030/mcp';
const post = (body?: unknown) => mcpRequiredScope({ method: 'POST', url: URL, ...(body !== undefined && { body }) });
const call = (name: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } });

describe('mcpRequiredScope', () => {
  it('read for the handshake, notifications, listing and reading', () => {
    for (const method of ['initialize', 'ping', 'tools/list', 'resources/list', 'resources/read', 'prompts/get']) {
      expect(post({ jsonrpc: '2.0', id: 1, method }), method).toEqual(['read']);
    }
    expect(post({ jsonrpc: '2.0', method: 'notifications/initialized' })).toEqual(['read']);
  });

  it('tools/call: the scope of the tool; a tool nobody classified needs read write', () => {
    expect(post(call('whoami'))).toEqual(['read']);
    expect(post(call('post_status'))).toEqual(['read', 'write']);
    expect(post(call('delete_everything'))).toEqual(['read', 'write']);
    expect(post(call('constructor'))).toEqual(['read', 'write']);
    expect(post(call(42))).toEqual(['read', 'write']);
    expect(post({ jsonrpc: '2.0', id: 1, method: 'tools/call' })).toEqual(['read', 'write']);
  });

  it('an unknown method, a JSON-RPC response or something malformed needs read write', () => {
    expect(post({ jsonrpc: '2.0', id: 1, method: 'tasks/create' })).toEqual(['read', 'write']);
    expect(post({ jsonrpc: '2.0', id: 1, result: {} })).toEqual(['read', 'write']);
    expect(post('tools/list')).toEqual(['read', 'write']);
    expect(post(null)).toEqual(['read', 'write']);
  });

  it('a batch needs what its most demanding message needs; an empty one read write', () => {
    expect(post([call('whoami'), { jsonrpc: '2.0', id: 2, method: 'tools/list' }])).toEqual(['read']);
    expect(post([call('whoami'), call('post_status')])).toEqual(['read', 'write']);
    expect(post([])).toEqual(['read', 'write']);
  });

  it('a POST without a parsed body needs read write (the transport would read and run it unseen)', () => {
    expect(post()).toEqual(['read', 'write']);
  });

  it('GET and DELETE need read (this stateless server answers them 405)', () => {
    expect(mcpRequiredScope({ method: 'GET', url: URL })).toEqual(['read']);
    expect(mcpRequiredScope({ method: 'DELETE', url: URL })).toEqual(['read']);
  });
});
