/**
 * The default fetcher of client ID metadata documents cannot be turned against internal
 * addresses (docs/reference.md#client-id-metadata-documents): the address classifier, the
 * `lookup` hook that validates every resolved address (DNS rebinding included), the check on the
 * connected socket, IP literals, and real connection attempts to loopback that must be refused
 * before a connection is made. No test reaches the internet.
 */
import { createServer, type Server } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkConnectedAddress,
  guardedLookup,
  isPublicAddress,
  MetadataFetchError,
  nodeMetadataFetcher,
  readLimited,
  type ResolvedAddress,
  type Resolver,
  type ResponseStream,
} from '../../src/client-metadata/metadata-fetcher.js';

const REFUSED: Array<[string, string[]]> = [
  ['IPv4 loopback', ['127.0.0.1', '127.1.2.3', '127.255.255.255']],
  ['IPv6 loopback', ['::1', '0:0:0:0:0:0:0:1', '[::1]']],
  ['private 10/8', ['10.0.0.1', '10.255.255.255']],
  ['private 172.16/12', ['172.16.0.1', '172.31.255.254']],
  ['private 192.168/16', ['192.168.0.1', '192.168.255.255']],
  ['link-local 169.254/16 (cloud metadata)', ['169.254.169.254', '169.254.0.1']],
  ['link-local fe80::/10', ['fe80::1', 'fe80::1%eth0', 'febf::1']],
  ['unique-local fc00::/7', ['fc00::1', 'fd12:3456:789a::1']],
  ['unspecified', ['0.0.0.0', '0.1.2.3', '::', '0:0:0:0:0:0:0:0']],
  ['multicast', ['224.0.0.1', '239.255.255.250', 'ff02::1', 'ff0e::1']],
  ['broadcast and reserved 240/4', ['255.255.255.255', '240.0.0.1']],
  ['CGNAT 100.64/10', ['100.64.0.1', '100.127.255.254']],
  [
    'IPv4-mapped IPv6 of internal addresses',
    ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '[::ffff:192.168.1.1]'],
  ],
  [
    'NAT64, 6to4, Teredo, documentation',
    ['64:ff9b::7f00:1', '2002:7f00:1::1', '2001::1', '2001:db8::1', '192.0.2.1', '198.51.100.1', '203.0.113.1'],
  ],
  ['IETF protocol assignments and benchmarking', ['192.0.0.1', '198.18.0.1', '198.19.255.255']],
  ['not an address', ['', 'localhost', '1.2.3', '1.2.3.4.5', '01.2.3.4', '256.1.1.1', '::g', '1::2::3', '1:2:3:4:5:6:7:8:9']],
];
const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '100.128.0.1',
  '172.32.0.1',
  '2606:4700:4700::1111',
  '2a00:1450:4001::1',
  '::ffff:8.8.8.8',
];

describe('address classifier', () => {
  for (const [name, addresses] of REFUSED) {
    it(`refuses ${name}`, () => {
      for (const address of addresses) expect(isPublicAddress(address), address).toBe(false);
    });
  }
  it('allows public unicast addresses', () => {
    for (const address of PUBLIC) expect(isPublicAddress(address), address).toBe(true);
  });
});

type LookupAnswer = { error: Error | null; address?: string | ResolvedAddress[]; family?: number };
const lookupWith = (resolver: Resolver, hostname: string, options: { all?: boolean } = {}) =>
  new Promise<LookupAnswer>((done) =>
    guardedLookup(resolver)(hostname, options, (error, address, family) => done({ error, address, family })),
  );

describe('the lookup hook', () => {
  it('refuses a name that resolves to an internal address', async () => {
    for (const address of ['127.0.0.1', '::1', '10.1.2.3', '169.254.169.254', '::ffff:127.0.0.1', '0.0.0.0']) {
      const answer = await lookupWith(async () => [{ address, family: address.includes(':') ? 6 : 4 }], 'evil.example');
      expect(answer.error, address).toBeInstanceOf(MetadataFetchError);
      expect(answer.address).toBeUndefined();
    }
  });

  it('refuses a name when any of its addresses is internal', async () => {
    const answer = await lookupWith(
      async () => [
        { address: '93.184.216.34', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
      'mixed.example',
      { all: true },
    );
    expect(answer.error).toBeInstanceOf(MetadataFetchError);
  });

  it('hands the socket the address it validated, in the form asked for', async () => {
    const resolver: Resolver = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ];
    expect(await lookupWith(resolver, 'ok.example')).toEqual({ error: null, address: '93.184.216.34', family: 4 });
    expect((await lookupWith(resolver, 'ok.example', { all: true })).address).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
  });

  it('checks every resolution: a name that resolves first to a public, then to a private address (rebinding) is refused the second time', async () => {
    let calls = 0;
    const flipping: Resolver = async () =>
      calls++ === 0 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
    expect((await lookupWith(flipping, 'rebind.example')).address).toBe('93.184.216.34');
    expect((await lookupWith(flipping, 'rebind.example')).error).toBeInstanceOf(MetadataFetchError);
  });

  it('refuses a name that resolves to nothing, and passes a resolver failure on', async () => {
    expect((await lookupWith(async () => [], 'empty.example')).error).toBeInstanceOf(MetadataFetchError);
    expect((await lookupWith(async () => Promise.reject(new Error('ENOTFOUND')), 'gone.example')).error?.message).toBe('ENOTFOUND');
  });
});

describe('the connected socket', () => {
  it('must be connected to a public address', () => {
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.0.0.1', undefined]) {
      expect(() => checkConnectedAddress(address), String(address)).toThrow(MetadataFetchError);
    }
    expect(() => checkConnectedAddress('93.184.216.34')).not.toThrow();
  });
});

/** A response stream as `https.request` hands it over. */
function response(status: number, headers: Record<string, string>, chunks: Array<string | Uint8Array>): ResponseStream {
  const stream = Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : Buffer.from(c)))) as unknown as ResponseStream;
  stream.statusCode = status;
  stream.headers = headers;
  return stream;
}

describe('reading the response', () => {
  it('reads a small JSON document', async () => {
    const answer = await readLimited(
      response(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }, ['{"a":', '1}']),
      5120,
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('{"a":1}');
    expect(answer.headers.get('Content-Type')).toBe('application/json');
    expect(answer.headers.get('cache-control')).toBe('max-age=60');
  });

  it('refuses redirects without following them', async () => {
    for (const status of [301, 302, 303, 307, 308]) {
      await expect(readLimited(response(status, { location: 'https://127.0.0.1/' }, []), 5120)).rejects.toThrow(/redirect/);
    }
  });

  it('refuses any other status', async () => {
    await expect(readLimited(response(404, {}, []), 5120)).rejects.toThrow(MetadataFetchError);
    await expect(readLimited(response(204, {}, []), 5120)).rejects.toThrow(MetadataFetchError);
  });

  it('refuses an oversize document, announced or streamed', async () => {
    await expect(readLimited(response(200, { 'content-length': '6000' }, []), 5120)).rejects.toThrow(/larger/);
    await expect(readLimited(response(200, {}, ['x'.repeat(3000), 'y'.repeat(3000)]), 5120)).rejects.toThrow(/larger/);
  });

  it('refuses a body that is not UTF-8', async () => {
    await expect(readLimited(response(200, {}, [new Uint8Array([0x7b, 0xff, 0x7d])]), 5120)).rejects.toThrow(/UTF-8/);
  });
});

describe('the default fetcher', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  beforeAll(async () => {
    server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  const limits = (timeoutMs = 3000) => ({ maxBytes: 5120, timeoutMs, signal: AbortSignal.timeout(timeoutMs) });

  it('fetches https only', async () => {
    await expect(nodeMetadataFetcher()(`http://127.0.0.1:${port}/client.json`, limits())).rejects.toThrow(/https/);
    await expect(nodeMetadataFetcher()('ftp://example.com/client.json', limits())).rejects.toThrow(/https/);
  });

  it('refuses internal IP literals before connecting', async () => {
    for (const host of [
      '127.0.0.1',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      '10.0.0.1',
      '169.254.169.254',
      '0.0.0.0',
      '[::]',
      '[fe80::1]',
      '[fc00::1]',
      '100.64.0.1',
    ]) {
      await expect(nodeMetadataFetcher()(`https://${host}:${port}/client.json`, limits()), host).rejects.toThrow(MetadataFetchError);
    }
    expect(connections).toBe(0);
  });

  it('refuses a name that resolves to loopback: no connection is made', async () => {
    const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    await expect(nodeMetadataFetcher(resolver)(`https://cimd.test:${port}/client.json`, limits())).rejects.toThrow(/not a public address/);
    expect(connections).toBe(0);
  });

  it('refuses localhost through the real resolver: no connection is made', async () => {
    await expect(nodeMetadataFetcher()(`https://localhost:${port}/client.json`, limits())).rejects.toThrow(MetadataFetchError);
    expect(connections).toBe(0);
  });

  it('gives up at the time limit', async () => {
    const hanging: Resolver = () => new Promise(() => {});
    const started = performance.now();
    await expect(nodeMetadataFetcher(hanging)('https://slow.example/client.json', limits(100))).rejects.toThrow(/within 100 ms/);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
