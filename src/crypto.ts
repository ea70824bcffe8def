/**
 * Randomness, hashing and comparison with Web platform APIs and pure JavaScript
 * (`globalThis.crypto.getRandomValues`, `@noble/hashes`), so the core runs unchanged on Node,
 * Bun, Deno and edge runtimes; where node:crypto and node:buffer exist, their native hashing
 * and encoding replace the JavaScript ones (same results, faster: see BENCHMARKS.md).
 */
import { sha256 } from '@noble/hashes/sha2.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const encoder = new TextEncoder();

/**
 * base64url without padding (RFC 4648 §5).
 *
 * The loop bounds keep every index in range, so each `?? 0` never applies: it stands where a `!`
 * would (noUncheckedIndexedAccess types a typed array's element `number | undefined`) and costs
 * nothing measurable, unlike a for-of with a per-byte branch, which was slower on 32-byte digests.
 * `charAt` answers a `string` where indexing would answer `string | undefined`.
 */
export function base64url(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += ALPHABET.charAt(n >>> 18) + ALPHABET.charAt((n >>> 12) & 63) + ALPHABET.charAt((n >>> 6) & 63) + ALPHABET.charAt(n & 63);
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = (bytes[i] ?? 0) << 16;
    out += ALPHABET.charAt(n >>> 18) + ALPHABET.charAt((n >>> 12) & 63);
  } else if (rest === 2) {
    const n = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8);
    out += ALPHABET.charAt(n >>> 18) + ALPHABET.charAt((n >>> 12) & 63) + ALPHABET.charAt((n >>> 6) & 63);
  }
  return out;
}

/** Lower-case hexadecimal. */
export function hex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += (b < 16 ? '0' : '') + b.toString(16);
  return out;
}

/** The slice of node:crypto and node:buffer used when the runtime offers them (Node, Bun and Deno do). */
interface NativeCrypto {
  /** One-shot hash: Node 20.12+ and 21.7+; cheaper than createHash for a token (see BENCHMARKS.md). */
  hash?(algorithm: 'sha256', data: string, encoding: 'base64url'): string;
  createHash(algorithm: 'sha256'): { update(data: string): { digest(encoding: 'base64url'): string } };
}
interface NativeBuffer {
  from(buffer: ArrayBuffer): { toString(encoding: 'base64url' | 'hex', start: number, end: number): string };
}

/**
 * Node's native modules, found by feature detection (`process.getBuiltinModule`, Node 20.16+)
 * rather than imported, so bundles for Workers and browsers carry no `node:` import and fall
 * back to @noble/hashes and the JavaScript encoders above.
 */
function builtin<T>(id: string, check: (module: Record<string, unknown>) => boolean): T | undefined {
  try {
    const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    const module = runtime?.getBuiltinModule?.(id) as Record<string, unknown> | undefined;
    return module && check(module) ? (module as T) : undefined;
  } catch {
    return undefined;
  }
}
const nativeCrypto = builtin<NativeCrypto>('node:crypto', (m) => typeof m.createHash === 'function');
const nativeHash = typeof nativeCrypto?.hash === 'function' ? nativeCrypto.hash.bind(nativeCrypto) : undefined;
const NativeBufferClass = builtin<{ Buffer: NativeBuffer }>(
  'node:buffer',
  (m) => typeof (m.Buffer as NativeBuffer | undefined)?.from === 'function',
)?.Buffer;

// One getRandomValues call fills a pool that serves many tokens: the call's fixed cost dominates
// for 32 bytes (see BENCHMARKS.md). Every pooled byte is handed out once. On Node the pool is
// also viewed as a Buffer, whose native base64url/hex encoders are faster than ours.
const POOL_SIZE = 4096;
let pool = new Uint8Array(0);
let poolView: ReturnType<NativeBuffer['from']> | undefined;
let poolOffset = 0;

/** The offset of `length` fresh random bytes in `pool`. */
function take(length: number): number {
  if (poolOffset + length > pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(POOL_SIZE));
    poolView = NativeBufferClass?.from(pool.buffer);
    poolOffset = 0;
  }
  const start = poolOffset;
  poolOffset += length;
  return start;
}

/**
 * A new secret value: 32 bytes (256 bits) from the CSPRNG, base64url, 43 characters.
 * RFC 6749 §10.10 asks for at most 2^-128 guessing odds; this gives 2^-256.
 */
export function randomToken(): string {
  const start = take(32);
  return poolView ? poolView.toString('base64url', start, start + 32) : base64url(pool.subarray(start, start + 32));
}

/** A new public identifier (client ids, grant ids): 16 random bytes as 32 hex characters. */
export function randomId(): string {
  const start = take(16);
  return poolView ? poolView.toString('hex', start, start + 16) : hex(pool.subarray(start, start + 16));
}

/** The same values with the JavaScript encoders only, as runtimes without node:buffer get them. */
export function portableRandomToken(): string {
  const start = take(32);
  return base64url(pool.subarray(start, start + 32));
}

/**
 * SHA-256 of a secret, base64url. Tokens, codes, interaction ids and client secrets are stored
 * only in this form (RFC 6819 §5.1.4.1.3). Every one of them is 256 random bits, so a fast hash
 * is enough: there is nothing to brute-force that a slow password hash would protect.
 * Synchronous (Web Crypto's digest is asynchronous and slower for short input; see BENCHMARKS.md).
 */
export function sha256Base64url(value: string): string {
  if (nativeHash) return nativeHash('sha256', value, 'base64url');
  return nativeCrypto ? nativeCrypto.createHash('sha256').update(value).digest('base64url') : portableSha256Base64url(value);
}

/** The same hash in pure JavaScript, for runtimes without node:crypto (Workers, browsers). */
export function portableSha256Base64url(value: string): string {
  return base64url(sha256(utf8(value)));
}

/** UTF-8 bytes; tokens are ASCII, which skips the encoder (a measurable share of every lookup). */
function utf8(value: string): Uint8Array {
  const bytes = new Uint8Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c > 127) return encoder.encode(value);
    bytes[i] = c;
  }
  return bytes;
}

/**
 * Constant-time equality of two strings of the same length (hashes). Different lengths are
 * unequal at once: lengths of hashes are public.
 */
export function timingSafeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
