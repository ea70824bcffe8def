/**
 * Request bodies from a Web-standard `Request`, as a framework wraps it (Hono's `c.req`: the
 * Fetch request, and the text and JSON it keeps once read), for the adapters that run on any
 * runtime (Node through @hono/node-server, Bun, Deno, workerd): no Node module here. What
 * node-body.ts is to the Node adapters. Internal: not an entry point of the package.
 */
import { bodyTooLarge, bodyUnreadable } from '../src/index.js';

/** The parts of a wrapped Fetch request this reads (Hono's `HonoRequest`). */
export interface FetchRequest {
  readonly raw: Request;
  header(name: string): string | undefined;
  /** The body as text, kept for later readers (a host middleware may have read it already). */
  text(): Promise<string>;
  /** The body as JSON, kept the same way. */
  json(): Promise<unknown>;
}

/**
 * Whether `text` is more than `limit` bytes in UTF-8. A UTF-16 code unit takes at most 3 bytes,
 * so a text of up to `limit / 3` units is not encoded at all.
 */
const overLimit = (text: string, limit: number): boolean => text.length * 3 > limit && new TextEncoder().encode(text).byteLength > limit;

/**
 * The raw body, at most `limit` bytes (the declared length checked first; a chunked body counted
 * as it arrives). Rejects with a `BodyError`.
 */
export async function readFetchBody(req: FetchRequest, limit: number): Promise<string> {
  const tooLarge = () => bodyTooLarge(limit);
  if (Number(req.header('content-length') ?? 0) > limit) throw tooLarge();
  const raw = req.raw;
  // `raw.body` is not touched before the body is read through `req.text()`: on
  // @hono/node-server that getter builds a whole Web Request around the Node stream, while
  // `text()` reads the stream directly. A request without a body reads as '' either way.
  // A host middleware may have read it already through `c.req`, which keeps a copy. With a
  // declared length (checked above) the body can be read in one go; only a chunked body is
  // counted as it streams in, so it is never held whole before the limit applies.
  if (raw.bodyUsed || raw.headers.has('content-length')) {
    const text = await req.text().catch(() => Promise.reject(bodyUnreadable()));
    if (overLimit(text, limit)) throw tooLarge();
    return text;
  }
  if (!raw.body) return '';
  let size = 0;
  const counted = raw.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > limit) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
    }),
  );
  try {
    return await new Response(counted).text();
  } catch {
    throw size > limit ? tooLarge() : bodyUnreadable();
  }
}

/**
 * The JSON body of `req` for a protected resource's scope rule, read from a clone (the handler
 * still reads the request as usual); undefined unless the request declares a JSON type and a
 * length of at most `limit` bytes, or when it does not parse.
 */
export async function jsonForRule(req: FetchRequest, limit: number): Promise<unknown> {
  const length = Number(req.header('content-length'));
  if (!(length > 0 && length <= limit) || !/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(req.header('content-type') ?? '')) {
    return undefined;
  }
  try {
    // A host middleware that read the body through `c.req` left its copy there.
    return await (req.raw.bodyUsed ? req.json() : req.raw.clone().json());
  } catch {
    return undefined;
  }
}
