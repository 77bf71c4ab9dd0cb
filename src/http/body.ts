import type { GraphQLError } from 'graphql';
import { MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS_PER_MESSAGE } from '../domain/agents/attachments.js';
import { serviceError } from '../errors.js';
import { BufferPool } from './buffer-pool.js';

/**
 * Reading and limiting request bodies, for every transport: GraphQL over HTTP (through useBodyLimit), REST
 * and MCP (withBody). A body is read once, within the limit its request was given, into a pooled buffer.
 */

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

export const payloadTooLarge = (maxBytes: number): GraphQLError =>
  serviceError('PAYLOAD_TOO_LARGE', `Request body exceeds ${maxBytes} bytes`);

export function isPayloadTooLarge(error: unknown): error is GraphQLError {
  return (error as GraphQLError | undefined)?.extensions?.code === 'PAYLOAD_TOO_LARGE';
}

/** A Content-Length header's value as node:http accepts it. */
export const DECIMAL = /^\d+$/;

/** Passes a body through while counting its bytes; errors with 413 past `maxBytes`, whatever the headers say. */
export function countingStream(
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
 * (docs/decisions/0027-chat-attachments.md). Kept only between one body's `use` and the next body's first bytes, never shared.
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
