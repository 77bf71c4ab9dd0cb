import type { Plugin } from 'graphql-yoga';
import { verifiedViewerOf } from '../auth/request.js';
import { refusalResponse } from '../errors.js';
import {
  bodyLimitOf,
  countingStream,
  DECIMAL,
  MAX_BODY_BYTES,
  MAX_REQUEST_BYTES,
  MAX_UPLOAD_BYTES,
  payloadTooLarge,
  setBodyLimit,
} from '../http/body.js';
import { allowDropping } from '../lingering-close.js';

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
      setBodyLimit(request, limit);
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
