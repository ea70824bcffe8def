/**
 * Request bodies from a Node `IncomingMessage`, shared by the adapters that read the stream
 * themselves (Express, node:http). Internal: not an entry point of the package.
 */
import type { IncomingMessage } from 'node:http';
import { bodyTooLarge, bodyUnreadable, type OAuthRequest } from '../src/index.js';

/** A Node request a host's body parser may have read already (Express, connect): then `body` is its result. */
type NodeRequest = IncomingMessage & { body?: unknown; _body?: boolean };

/**
 * The raw body as text, at most `limit` bytes: the declared length is checked first, a chunked
 * body is counted as it arrives. When a host parser consumed the stream before, its result
 * instead. Rejects with a `BodyError`.
 */
export function readNodeBody(req: NodeRequest, limit: number): Promise<OAuthRequest['body']> {
  // The limit holds even when a host parser (with its own, larger limit) read the body first.
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.reject(bodyTooLarge(limit));
  if (req.readableEnded || req._body) {
    const parsed = req.body;
    // express.raw() leaves a Buffer, express.json() an object the core would not read as JSON:
    // hand both over as the text they were.
    if (Buffer.isBuffer(parsed)) return Promise.resolve(parsed.toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && /json/i.test(req.headers['content-type'] ?? ''))
      return Promise.resolve(JSON.stringify(parsed));
    return Promise.resolve(
      typeof parsed === 'string' || (typeof parsed === 'object' && parsed !== null) ? (parsed as OAuthRequest['body']) : undefined,
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(bodyTooLarge(limit));
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => reject(bodyUnreadable()));
  });
}
