import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { verifiedViewerOf } from '../auth/request.js';
import { BufferPool } from '../buffer-pool.js';
import { MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS_PER_MESSAGE } from '../domain/agents/attachments.js';
import { refusalResponse, serviceError } from '../errors.js';
import { allowDropping } from '../lingering-close.js';

/** Largest body read before the caller is authenticated, and of every request that needs no more. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Largest body of the REST routes that carry attachments as base64 JSON (a chat message with 5 attachments
 * of 10 MiB, base64-encoded, fits), admitted only for an authenticated caller.
 */
export const MAX_REQUEST_BYTES = 72 * 1024 * 1024;

/**
 * Largest GraphQL multipart request (files as they are, not base64): every attachment at its limit, with
 * room for `operations`, `map` and the part headers. Admitted only for an authenticated caller.
 */
export const MAX_UPLOAD_BYTES = MAX_ATTACHMENTS_PER_MESSAGE * MAX_ATTACHMENT_BYTES + 2 * MAX_BODY_BYTES;

export interface UseBodyLimitOptions {
  /** Largest body of any request without a verified caller, and of requests that need no more. Default 1 MiB. */
  maxBytes?: number;
  /** Largest body of a verified caller's request that `allowsLargeBody` admits. Default 72 MiB. */
  maxLargeBytes?: number;
  /** Which requests (by method and path) may carry a large body once authenticated. Default: none. */
  allowsLargeBody?: (method: string, pathname: string) => boolean;
  /**
   * Largest multipart/form-data body (a GraphQL multipart request, with files) a verified caller may send to
   * /graphql; a JSON body there stays at `maxBytes`, whatever its operation. Default 52 MiB (MAX_UPLOAD_BYTES).
   */
  maxUploadBytes?: number;
}

export const payloadTooLarge = (maxBytes: number): GraphQLError =>
  serviceError('PAYLOAD_TOO_LARGE', `Request body exceeds ${maxBytes} bytes`);

export function isPayloadTooLarge(error: unknown): error is GraphQLError {
  return (error as GraphQLError | undefined)?.extensions?.code === 'PAYLOAD_TOO_LARGE';
}

const limits = new WeakMap<Request, number>();
const DECIMAL = /^\d+$/;

/** The body limit decided for a request when it arrived. */
export function bodyLimitOf(request: Request): number {
  return limits.get(request) ?? MAX_BODY_BYTES;
}

/** Passes a body through while counting its bytes; errors with 413 past `maxBytes`, whatever the headers say. */
function countingStream(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  Transform: typeof TransformStream,
) {
  let bytes = 0;
  return body.pipeThrough(
    new Transform<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        if (bytes > maxBytes) controller.error(payloadTooLarge(maxBytes));
        else controller.enqueue(chunk);
      },
    }),
  );
}

/** Bodies of at least this many bytes are read into a buffer kept for the next such body (see withBody). */
export const POOLED_BODY_MIN_BYTES = 1024 * 1024;
/** Largest buffer kept, and how many are kept: 64 MiB at most, held only after a burst of large bodies. */
export const POOLED_BODY_MAX_BYTES = 16 * 1024 * 1024;
export const POOLED_BODY_BUFFERS = 4;

/**
 * Buffers of large bodies that were read and parsed, for the next large body. A REST chat with 4 MiB makes a
 * 5.6 MB body, and V8 counts such buffers as external memory until a full collection finds them dead: made
 * anew for each body they set off one full collection every few requests
 * (docs/decisions/0027-chat-attachments.md, "Chat attachments"). Kept only between one body's `use` and the
 * next body's first bytes, never shared.
 */
const bodyBuffers = new BufferPool({
  minBytes: POOLED_BODY_MIN_BYTES,
  maxBytes: POOLED_BODY_MAX_BYTES,
  buffers: POOLED_BODY_BUFFERS,
});

/** A buffer for a body of `length` bytes (a kept one that is large enough, else a new one). */
function bodyBuffer(length: number): Buffer {
  const buffer = bodyBuffers.take(length);
  return buffer ? Buffer.from(buffer, 0, length) : Buffer.allocUnsafe(length);
}

/** Total bytes of the buffers kept for the next large bodies. */
export function pooledBodyBytes(): number {
  return bodyBuffers.keptBytes();
}

/** Lets go of the buffers kept for the next large bodies (a test starts from an empty pool). */
export function releasePooledBodies(): void {
  bodyBuffers.clear();
}

/**
 * Reads a body's bytes and hands them to `use`, synchronously; once `use` returns or throws, a large body's
 * buffer is kept for the next one. `use` must not keep the bytes or a view of them: it copies what it needs
 * (JSON.parse, parseJsonBody and bodyText make strings of their own).
 *
 * The body is refused (413) once more than `maxBytes` arrived, Content-Length or not. With a Content-Length
 * within the limit the bytes are copied into one buffer of that size as they arrive, so a body of megabytes
 * is whole the moment its last chunk is in (node:http delivers exactly that many bytes).
 */
export async function withBody<T>(
  request: Request,
  maxBytes: number,
  use: (bytes: Uint8Array) => T,
): Promise<T> {
  const bytes = await readBody(request, maxBytes);
  try {
    return use(bytes);
  } finally {
    bodyBuffers.give(bytes.buffer);
  }
}

async function readBody(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const declared = request.headers.get('content-length');
  const expected = declared !== null && DECIMAL.test(declared) ? Number(declared) : Number.NaN;
  // Made when the first bytes arrive: a caller that declares a body and sends nothing holds no buffer.
  let whole: Buffer | undefined;
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let copied = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (bytes + value.byteLength > maxBytes) {
        await reader.cancel().catch(() => {});
        throw payloadTooLarge(maxBytes);
      }
      if (!whole && bytes === 0 && expected > 0 && expected <= maxBytes) whole = bodyBuffer(expected);
      bytes += value.byteLength;
      if (whole && chunks.length === 0 && copied + value.byteLength <= whole.byteLength) {
        whole.set(value, copied);
        copied += value.byteLength;
      } else {
        chunks.push(value);
      }
    }
  } catch (error) {
    // A body that never arrived whole (the client went away, it passed the limit) gives its buffer back.
    if (whole) bodyBuffers.give(whole.buffer);
    throw error;
  }
  if (!whole) return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, bytes);
  // More than Content-Length promised (not from node:http): what was copied, then the rest as it came.
  if (chunks.length === 0) return whole.subarray(0, copied);
  const joined = Buffer.concat([whole.subarray(0, copied), ...chunks], bytes);
  bodyBuffers.give(whole.buffer);
  return joined;
}

const isMultipart = (request: Request) =>
  (request.headers.get('content-type') ?? '').toLowerCase().startsWith('multipart/form-data');

/**
 * Decides each request's body limit from its verified caller, its path and its type, before any body is
 * read: small unless an authenticated caller sends to a REST route that needs more, or sends files to
 * /graphql as a multipart request (a JSON body there is small for every operation). A declared
 * Content-Length over the limit is refused at once; a body without one is counted while GraphQL reads it
 * (REST routes read theirs with withBody). This is the only body limit of /graphql: yoga's own is turned
 * off. 413 as `{"detail"}` on REST, as a PAYLOAD_TOO_LARGE error on /graphql, as soon as the limit is
 * passed. The connection then closes lingering (src/lingering-close.ts): it drops what the client still
 * sends, at most this limit and HTTP_LINGER_BYTES, within HTTP_LINGER_MS.
 */
export function useBodyLimit({
  maxBytes = MAX_BODY_BYTES,
  maxLargeBytes = MAX_REQUEST_BYTES,
  allowsLargeBody = () => false,
  maxUploadBytes = MAX_UPLOAD_BYTES,
}: UseBodyLimitOptions = {}): Plugin {
  const limitOf = (request: Request, pathname: string) => {
    if (!verifiedViewerOf(request)) return maxBytes;
    if (allowsLargeBody(request.method, pathname)) return maxLargeBytes;
    if (pathname === '/graphql' && request.method === 'POST' && isMultipart(request)) return maxUploadBytes;
    return maxBytes;
  };
  return {
    onRequest({ request, url, endResponse, fetchAPI, serverContext }) {
      const limit = limitOf(request, url.pathname);
      limits.set(request, limit);
      // What the connection may drop after an answer given before the body all arrived: no more than the
      // body could have been, so 1 MiB before the caller is authenticated.
      allowDropping(serverContext, limit);
      const length = Number(request.headers.get('content-length') ?? 0);
      if (!(length > limit)) return;
      endResponse(
        refusalResponse(url.pathname, 'PAYLOAD_TOO_LARGE', payloadTooLarge(limit).message, {}, fetchAPI),
      );
    },
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (!requestParser || !request.body) return;
      const limit = bodyLimitOf(request);
      // node:http delivers exactly Content-Length bytes of body (a longer one is not this request's), and
      // onRequest refused a length over the limit: such a body needs no counting.
      const declared = request.headers.get('content-length');
      if (declared !== null && DECIMAL.test(declared)) return;
      setRequestParser((original) => {
        if (!original.body) return requestParser(original);
        // A native stream needs the native TransformStream (as in yoga's own body limit).
        const Transform =
          original.body instanceof ReadableStream ? globalThis.TransformStream : fetchAPI.TransformStream;
        return requestParser(
          new fetchAPI.Request(original.url, {
            method: original.method,
            headers: original.headers,
            signal: original.signal,
            body: countingStream(original.body, limit, Transform),
            // @ts-expect-error `duplex` is required for a streamed body but missing from the DOM types
            duplex: 'half',
          }),
        );
      });
    },
  };
}
