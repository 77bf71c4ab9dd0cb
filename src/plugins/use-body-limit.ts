import { type DocumentNode, type GraphQLError, getOperationAST, Kind } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { verifiedViewerOf } from '../auth/request.js';
import { serviceError } from '../errors.js';

/** Largest body read before the caller is authenticated, and of every request that needs no more. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Largest body of the requests that carry attachments (a chat message with 5 attachments of 10 MiB,
 * base64-encoded, fits), admitted only for an authenticated caller.
 */
export const MAX_REQUEST_BYTES = 72 * 1024 * 1024;

export interface UseBodyLimitOptions {
  /** Largest body of any request without a verified caller, and of requests that need no more. Default 1 MiB. */
  maxBytes?: number;
  /** Largest body of a verified caller's request that `allowsLargeBody` admits. Default 72 MiB. */
  maxLargeBytes?: number;
  /** Which requests (by method and path) may carry a large body once authenticated. Default: none. */
  allowsLargeBody?: (method: string, pathname: string) => boolean;
  /**
   * Root fields of the GraphQL operations that may use a large body once parsed: any other operation
   * whose body passed `maxBytes` is refused before it runs. Default: none.
   */
  largeBodyFields?: readonly string[];
}

export const payloadTooLarge = (maxBytes: number): GraphQLError =>
  serviceError('PAYLOAD_TOO_LARGE', `Request body exceeds ${maxBytes} bytes`);

export function isPayloadTooLarge(error: unknown): error is GraphQLError {
  return (error as GraphQLError | undefined)?.extensions?.code === 'PAYLOAD_TOO_LARGE';
}

const limits = new WeakMap<Request, number>();
const DECIMAL = /^\d+$/;
const bodyBytes = new WeakMap<Request, number>();

/** The body limit decided for a request when it arrived. */
export function bodyLimitOf(request: Request): number {
  return limits.get(request) ?? MAX_BODY_BYTES;
}

/** Passes a body through while counting its bytes; errors with 413 past `maxBytes`, whatever the headers say. */
function countingStream(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  Transform: typeof TransformStream,
  counted: (bytes: number) => void,
) {
  let bytes = 0;
  return body.pipeThrough(
    new Transform<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        counted(bytes);
        if (bytes > maxBytes) controller.error(payloadTooLarge(maxBytes));
        else controller.enqueue(chunk);
      },
    }),
  );
}

/** Reads a body as text, refusing (413) once more than `maxBytes` arrived, Content-Length or not. */
export async function readBodyText(request: Request, maxBytes: number): Promise<string> {
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > maxBytes) {
      await reader.cancel().catch(() => {});
      throw payloadTooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/**
 * Decides each request's body limit from its verified caller and its path, before any body is read:
 * small unless an authenticated caller sends to a path that needs more. A declared Content-Length over
 * the limit is refused at once; a body without one is counted while GraphQL reads it (REST routes read
 * theirs with readBodyText). This is the only body limit of /graphql: yoga's own is turned off. 413 as `{"detail"}` on REST, as a PAYLOAD_TOO_LARGE error on /graphql.
 */
export function useBodyLimit({
  maxBytes = MAX_BODY_BYTES,
  maxLargeBytes = MAX_REQUEST_BYTES,
  allowsLargeBody = () => false,
  largeBodyFields = [],
}: UseBodyLimitOptions = {}): Plugin {
  const mayUseLargeBody = (args: { document: DocumentNode; operationName?: string | null | undefined }) =>
    getOperationAST(args.document, args.operationName)?.selectionSet.selections.every(
      (selection) =>
        selection.kind === Kind.FIELD &&
        (selection.name.value === '__typename' || largeBodyFields.includes(selection.name.value)),
    ) ?? false;
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      const limit =
        verifiedViewerOf(request) && allowsLargeBody(request.method, url.pathname) ? maxLargeBytes : maxBytes;
      limits.set(request, limit);
      const length = Number(request.headers.get('content-length') ?? 0);
      if (!(length > limit)) return;
      const message = payloadTooLarge(limit).message;
      endResponse(
        url.pathname.startsWith('/api/')
          ? fetchAPI.Response.json({ detail: message }, { status: 413 })
          : fetchAPI.Response.json(
              { errors: [{ message, extensions: { code: 'PAYLOAD_TOO_LARGE' } }] },
              { status: 413 },
            ),
      );
    },
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (!requestParser || !request.body) return;
      const limit = bodyLimitOf(request);
      // node:http delivers exactly Content-Length bytes of body (a longer one is not this request's), and
      // onRequest refused a length over the limit: such a body needs no counting.
      const declared = request.headers.get('content-length');
      if (declared !== null && DECIMAL.test(declared)) {
        bodyBytes.set(request, Number(declared));
        return;
      }
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
            body: countingStream(original.body, limit, Transform, (bytes) => bodyBytes.set(request, bytes)),
            // @ts-expect-error `duplex` is required for a streamed body but missing from the DOM types
            duplex: 'half',
          }),
        );
      });
    },
    onExecute({ args, setResultAndStopExecution }) {
      // The operation is known only now: a large body is for the operations that carry attachments.
      const request = (args.contextValue as { request?: Request }).request;
      const bytes = request ? (bodyBytes.get(request) ?? 0) : 0;
      if (bytes > maxBytes && !mayUseLargeBody(args)) {
        setResultAndStopExecution({ errors: [payloadTooLarge(maxBytes)] });
      }
    },
  };
}
