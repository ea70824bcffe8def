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

/** The four bytes of a dotted-quad IPv4 address, or `null`. */
function ipv4Bytes(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes: number[] = [];
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    bytes.push(n);
  }
  return bytes;
}

/** The eight 16-bit groups of an IPv6 address (a zone `%…` ignored, an IPv4 tail allowed), or `null`. */
function ipv6Groups(text: string): number[] | null {
  const zone = text.indexOf('%');
  const address = zone >= 0 ? text.slice(0, zone) : text;
  if (!/^[0-9A-Fa-f:.]+$/.test(address)) return null;
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const parse = (half: string): number[] | null => {
    if (half === '') return [];
    const groups: number[] = [];
    const pieces = half.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (i === pieces.length - 1 && piece.includes('.')) {
        const v4 = ipv4Bytes(piece);
        if (!v4) return null;
        groups.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else {
        if (!/^[0-9A-Fa-f]{1,4}$/.test(piece)) return null;
        groups.push(Number.parseInt(piece, 16));
      }
    }
    return groups;
  };
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  if (!head || !tail) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
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

function ipv4IsPublic(bytes: readonly number[]): boolean {
  const value = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
  for (const [network, length] of IPV4_SPECIAL) {
    const mask = length === 0 ? 0 : (~0 << (32 - length)) >>> 0;
    if ((value & mask) >>> 0 === network) return false;
  }
  return true;
}

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
  const v4 = ipv4Bytes(address);
  if (v4) return ipv4IsPublic(v4);
  const g = ipv6Groups(address);
  if (!g) return false;
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) {
    return ipv4IsPublic([g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff]);
  }
  if ((g[0]! & 0xe000) !== 0x2000) return false; // outside 2000::/3
  if (g[0] === 0x2001 && g[1]! < 0x0200) return false; // 2001::/23 IETF protocol assignments (Teredo, ORCHID, ...)
  if (g[0] === 0x2001 && g[1] === 0x0db8) return false; // 2001:db8::/32 documentation
  if (g[0] === 0x2002) return false; // 2002::/16 6to4: carries an IPv4 address of any kind
  if ((g[0]! & 0xfff0) === 0x3ff0) return false; // 3fff::/20 documentation
  return true;
}

/** Whether `text` is an IP literal (v4 or v6, brackets allowed) rather than a name. */
export function isIpLiteral(text: string): boolean {
  const address = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  return ipv4Bytes(address) !== null || ipv6Groups(address) !== null;
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
        if (addresses.length === 0) return callback(new MetadataFetchError(`${hostname} resolves to no address`));
        const refused = addresses.find((a) => !isPublicAddress(a.address));
        if (refused) return callback(new MetadataFetchError(`${hostname} resolves to ${refused.address}, which is not a public address`));
        if (typeof options === 'object' && options?.all)
          return callback(
            null,
            addresses.map((a) => ({ address: a.address, family: a.family })),
          );
        callback(null, addresses[0]!.address, addresses[0]!.family);
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
      const finish = (error: Error | null, response?: MetadataResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        limits.signal.removeEventListener('abort', onAbort);
        if (error) {
          request.destroy(error);
          fail(error);
        } else ok(response!);
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
          (answer) => finish(null, answer),
          (error: Error) => finish(error),
        );
      });
      request.end();
    });
  };
}
