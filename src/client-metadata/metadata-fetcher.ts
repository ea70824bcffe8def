/**
 * Fetching a client ID metadata document (draft-ietf-oauth-client-id-metadata-document), the one
 * place where a client makes this server open a connection: a server-side request forgery
 * surface (the SSRF security consideration of that draft). What is refused and why is in
 * docs/reference.md#client-id-metadata-documents.
 *
 * The core stays on Web APIs: the fetcher is a function the host may inject
 * (`MetadataFetcher`). The default one, for Node, reaches `node:https` and `node:dns` through
 * `process.getBuiltinModule` at run time (no static `node:` import), and checks every address it
 * would connect to, on the address actually connected to: its own `lookup` validates every
 * address a name resolves to and hands the validated one to the socket (so a name cannot resolve
 * once for a check and again for the connection), IP literals are checked the same way, and the
 * socket's `remoteAddress` is checked again once connected.
 */

/** The limits a fetch of a metadata document must keep. */
export interface MetadataFetchLimits {
  /** The most bytes of body read; a longer document is a failure (counted while reading). */
  maxBytes: number;
  /** The whole fetch, connection included, in milliseconds. */
  timeoutMs: number;
  /** Aborted when `timeoutMs` has passed: a fetcher should stop then. */
  signal: AbortSignal;
}

/** What a fetcher answers: the status, the headers (Web `Headers` fit) and the body as text. */
export interface MetadataResponse {
  status: number;
  headers: { get(name: string): string | null };
  body: string;
}

/**
 * Fetches a client ID metadata document: GET `url` with `Accept: application/json`, no redirects
 * followed, within `limits`, never to an internal address. Injected as
 * `clientMetadataDocuments.fetch`; rejecting means the document could not be fetched.
 * @group Authorization
 */
export type MetadataFetcher = (url: string, limits: MetadataFetchLimits) => Promise<MetadataResponse>;

/** One address a name resolves to, as `dns.lookup` with `all: true` answers. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses (the default is `dns.lookup` with `all: true`). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

// ---------------------------------------------------------------------------------------------
// Address classification

/** A dotted-quad IPv4 address as a 32-bit unsigned number, or `null`. */
function ipv4Value(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = value * 256 + n;
  }
  return value;
}

/** An IPv6 address (a zone `%…` ignored, an IPv4 tail allowed) as a 128-bit number, or `null`. */
function ipv6Value(text: string): bigint | null {
  const zone = text.indexOf('%');
  const address = zone >= 0 ? text.slice(0, zone) : text;
  if (!/^[0-9A-Fa-f:.]+$/.test(address)) return null;
  // The 16-bit groups of one side of `::`; only the last piece may be an IPv4 tail (two groups).
  const parse = (half: string): number[] | null => {
    if (half === '') return [];
    const groups: number[] = [];
    const pieces = half.split(':');
    const last = pieces.length - 1;
    for (const [i, piece] of pieces.entries()) {
      if (i === last && piece.includes('.')) {
        const v4 = ipv4Value(piece);
        if (v4 === null) return null;
        groups.push(v4 >>> 16, v4 & 0xffff);
      } else {
        if (!/^[0-9A-Fa-f]{1,4}$/.test(piece)) return null;
        groups.push(Number.parseInt(piece, 16));
      }
    }
    return groups;
  };
  // At most one `::`, standing for one or more zero groups.
  const gap = address.indexOf('::');
  if (gap >= 0 && address.includes('::', gap + 2)) return null;
  const head = parse(gap >= 0 ? address.slice(0, gap) : address);
  const tail = gap >= 0 ? parse(address.slice(gap + 2)) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (gap >= 0 ? missing < 1 : missing !== 0) return null;
  let value = 0n;
  for (const group of head) value = (value << 16n) | BigInt(group);
  value <<= BigInt(16 * missing);
  for (const group of tail) value = (value << 16n) | BigInt(group);
  return value;
}

/**
 * IPv4 ranges that are not the public internet (the IANA special-purpose address registry,
 * RFC 6890), each as [network as a 32-bit number, prefix length].
 */
const IPV4_SPECIAL: ReadonlyArray<readonly [number, number]> = [
  [0x00000000, 8], // 0.0.0.0/8 "this network", 0.0.0.0 unspecified
  [0x0a000000, 8], // 10/8 private (RFC 1918)
  [0x64400000, 10], // 100.64/10 shared address space, CGNAT (RFC 6598)
  [0x7f000000, 8], // 127/8 loopback
  [0xa9fe0000, 16], // 169.254/16 link-local
  [0xac100000, 12], // 172.16/12 private
  [0xc0000000, 24], // 192.0.0/24 IETF protocol assignments
  [0xc0000200, 24], // 192.0.2/24 documentation
  [0xc0586300, 24], // 192.88.99/24 6to4 relay anycast
  [0xc0a80000, 16], // 192.168/16 private
  [0xc6120000, 15], // 198.18/15 benchmarking
  [0xc6336400, 24], // 198.51.100/24 documentation
  [0xcb007100, 24], // 203.0.113/24 documentation
  [0xe0000000, 4], // 224/4 multicast
  [0xf0000000, 4], // 240/4 reserved, and 255.255.255.255 broadcast
];

function ipv4IsPublic(value: number): boolean {
  for (const [network, length] of IPV4_SPECIAL) {
    const mask = length === 0 ? 0 : (~0 << (32 - length)) >>> 0;
    if ((value & mask) >>> 0 === network) return false;
  }
  return true;
}

/** Whether the 128-bit `value` lies in `network`/`length` (`network` given by its first 16-bit group). */
const inIpv6Prefix = (value: bigint, network: bigint, length: number) => value >> BigInt(128 - length) === network >> BigInt(128 - length);

/** The blocks of global unicast 2000::/3 that are not the public internet, as [network, prefix length]. */
const IPV6_SPECIAL: ReadonlyArray<readonly [bigint, number]> = [
  [0x2001n << 112n, 23], // 2001::/23 IETF protocol assignments (Teredo, ORCHID, ...)
  [0x20010db8n << 96n, 32], // 2001:db8::/32 documentation
  [0x2002n << 112n, 16], // 2002::/16 6to4: carries an IPv4 address of any kind
  [0x3ff0n << 112n, 12], // 3ff0::/12, which holds 3fff::/20 documentation
];

/**
 * Whether an IP address (v4 or v6, as text; brackets allowed) is a public unicast address this
 * server may connect to. Anything unparsable is not. IPv6 is allowed only in global unicast
 * 2000::/3, minus its special-purpose blocks, so loopback `::1`, unspecified `::`, unique-local
 * fc00::/7, link-local fe80::/10, multicast ff00::/8, NAT64 64:ff9b::/96 and every other block
 * outside it are refused; an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is judged as the IPv4
 * address it maps.
 */
export function isPublicAddress(text: string): boolean {
  const address = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const v4 = ipv4Value(address);
  if (v4 !== null) return ipv4IsPublic(v4);
  const v6 = ipv6Value(address);
  if (v6 === null) return false;
  if (v6 >> 32n === 0xffffn) return ipv4IsPublic(Number(v6 & 0xffffffffn)); // ::ffff:0:0/96, IPv4-mapped
  if (!inIpv6Prefix(v6, 0x2000n << 112n, 3)) return false; // outside 2000::/3
  for (const [network, length] of IPV6_SPECIAL) if (inIpv6Prefix(v6, network, length)) return false;
  return true;
}

/** Whether `text` is an IP literal (v4 or v6, brackets allowed) rather than a name. */
export function isIpLiteral(text: string): boolean {
  const address = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  return ipv4Value(address) !== null || ipv6Value(address) !== null;
}

/** Why a fetch was refused or failed. Its message never reaches the client. */
export class MetadataFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MetadataFetchError';
  }
}

type LookupCallback = (error: Error | null, address?: string | ResolvedAddress[], family?: number) => void;

/**
 * A `lookup` for `net.connect` / `https.request` that resolves with `resolve` and refuses the
 * name unless every address it resolves to is public: the socket then connects to an address
 * this function validated, never to one resolved a second time (DNS rebinding).
 */
export function guardedLookup(resolve: Resolver) {
  return (hostname: string, options: { all?: boolean } | number | undefined, callback: LookupCallback): void => {
    resolve(hostname).then(
      (addresses) => {
        const [first] = addresses;
        if (first === undefined) return callback(new MetadataFetchError(`${hostname} resolves to no address`));
        const refused = addresses.find((a) => !isPublicAddress(a.address));
        if (refused) return callback(new MetadataFetchError(`${hostname} resolves to ${refused.address}, which is not a public address`));
        if (typeof options === 'object' && options?.all)
          return callback(
            null,
            addresses.map((a) => ({ address: a.address, family: a.family })),
          );
        callback(null, first.address, first.family);
      },
      (error: unknown) => callback(error instanceof Error ? error : new MetadataFetchError(String(error))),
    );
  };
}

/** The check made again once connected: the peer's address must be public. */
export function checkConnectedAddress(remoteAddress: string | undefined): void {
  if (!remoteAddress || !isPublicAddress(remoteAddress)) {
    throw new MetadataFetchError(`connected to ${remoteAddress ?? 'an unknown address'}, which is not a public address`);
  }
}

// ---------------------------------------------------------------------------------------------
// Reading the response

/** The slice of a Node `IncomingMessage` that `readLimited` uses. */
export interface ResponseStream {
  statusCode?: number;
  headers: Record<string, string | string[] | undefined>;
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  destroy(error?: Error): unknown;
}

/**
 * The response of a document fetch, read within `maxBytes` (counted while reading, and refused
 * at once from `content-length`), as UTF-8 text. Anything but 200 is a failure: a redirect is
 * never followed (the document's `client_id` must be the URL it was fetched from).
 */
export function readLimited(response: ResponseStream, maxBytes: number): Promise<MetadataResponse> {
  return new Promise((resolve, reject) => {
    const status = response.statusCode ?? 0;
    if (status !== 200) {
      response.destroy();
      return reject(new MetadataFetchError(status >= 300 && status < 400 ? `redirect (${status}) refused` : `status ${status}`));
    }
    const length = Number(response.headers['content-length']);
    if (length > maxBytes) {
      response.destroy();
      return reject(new MetadataFetchError(`document larger than ${maxBytes} bytes`));
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    response.on('data', (chunk) => {
      size += chunk.length;
      if (size > maxBytes) {
        const error = new MetadataFetchError(`document larger than ${maxBytes} bytes`);
        response.destroy(error);
        reject(error);
        return;
      }
      chunks.push(chunk);
    });
    response.on('error', reject);
    response.on('end', () => {
      if (size > maxBytes) return;
      const bytes = new Uint8Array(size);
      let offset = 0;
      for (const chunk of chunks) {
        bytes.set(chunk, offset);
        offset += chunk.length;
      }
      let body: string;
      try {
        body = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        return reject(new MetadataFetchError('document is not UTF-8'));
      }
      const headers = response.headers;
      resolve({
        status,
        headers: {
          get: (name) => {
            const value = headers[name.toLowerCase()];
            return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
          },
        },
        body,
      });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The default fetcher, for Node

interface NodeRequest {
  on(event: 'response', listener: (response: ResponseStream & { socket?: { remoteAddress?: string } }) => void): unknown;
  on(event: 'socket', listener: (socket: NodeSocket) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  end(): unknown;
  destroy(error?: Error): unknown;
}
interface NodeSocket {
  remoteAddress?: string;
  once(event: 'connect', listener: () => void): unknown;
  destroy(error?: Error): unknown;
}
interface NodeHttps {
  request(url: URL, options: Record<string, unknown>): NodeRequest;
}
interface NodeDns {
  lookup(
    hostname: string,
    options: { all: true; verbatim?: boolean },
    callback: (error: Error | null, addresses: ResolvedAddress[]) => void,
  ): void;
}

/** A Node built-in module found by feature detection (`process.getBuiltinModule`, Node 20.16+), or `undefined`. */
function builtin<T>(id: string): T | undefined {
  try {
    const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    return runtime?.getBuiltinModule?.(id) as T | undefined;
  } catch {
    return undefined;
  }
}

/**
 * The hardened default fetcher on Node: https only, no redirects, `maxBytes` and `timeoutMs`,
 * `Accept: application/json`, and a connection of its own (a fresh agent per fetch, so a
 * connection opened for another purpose is never reused), and no connection to an address that is
 * not public (`isPublicAddress`), checked on the resolved addresses (`guardedLookup`), on IP
 * literals, and on the connected socket. `resolve` replaces DNS (tests inject one).
 */
export function nodeMetadataFetcher(resolve?: Resolver): MetadataFetcher {
  return (url, limits) => {
    const https = builtin<NodeHttps>('node:https');
    const dns = builtin<NodeDns>('node:dns');
    if (!https || !dns) return Promise.reject(new MetadataFetchError('node:https is not available'));
    const resolver: Resolver =
      resolve ??
      ((hostname) =>
        new Promise((ok, fail) =>
          dns.lookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? fail(error) : ok(addresses))),
        ));
    return new Promise<MetadataResponse>((ok, fail) => {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        return fail(new MetadataFetchError('not a URL'));
      }
      if (target.protocol !== 'https:') return fail(new MetadataFetchError('only https is fetched'));
      if (isIpLiteral(target.hostname) && !isPublicAddress(target.hostname)) {
        return fail(new MetadataFetchError(`${target.hostname} is not a public address`));
      }
      let settled = false;
      /** Settles once, with the first outcome: an answer, or the error that ends the request. */
      const finish = (outcome: Error | MetadataResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        limits.signal.removeEventListener('abort', onAbort);
        if (outcome instanceof Error) {
          request.destroy(outcome);
          fail(outcome);
        } else ok(outcome);
      };
      if (limits.signal.aborted) return fail(new MetadataFetchError(`no answer within ${limits.timeoutMs} ms`));
      const onAbort = () => finish(new MetadataFetchError(`no answer within ${limits.timeoutMs} ms`));
      const timer = setTimeout(onAbort, limits.timeoutMs);
      limits.signal.addEventListener('abort', onAbort);
      const request = https.request(target, {
        method: 'GET',
        headers: { accept: 'application/json', 'user-agent': 'authgate' },
        lookup: guardedLookup(resolver),
        agent: false,
        maxHeaderSize: 8192,
      });
      request.on('socket', (socket) => {
        socket.once('connect', () => {
          try {
            checkConnectedAddress(socket.remoteAddress);
          } catch (error) {
            finish(error as Error);
          }
        });
      });
      request.on('error', (error) => finish(error));
      request.on('response', (response) => {
        try {
          checkConnectedAddress(response.socket?.remoteAddress);
        } catch (error) {
          return finish(error as Error);
        }
        readLimited(response, limits.maxBytes).then(
          (answer) => finish(answer),
          (error: Error) => finish(error),
        );
      });
      request.end();
    });
  };
}
