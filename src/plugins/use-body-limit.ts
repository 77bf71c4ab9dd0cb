import type { Plugin } from 'graphql-yoga';
import { verifiedViewerOf } from '../auth/request.js';
import { refusalResponse } from '../errors.js';
import { countingStream, DECIMAL, MAX_BODY_BYTES, MAX_UPLOAD_BYTES, payloadTooLarge } from '../http/body.js';
import { requestStateOf } from '../http/request-context.js';
import { allowDropping } from '../lingering-close.js';

export interface UseBodyLimitOptions {
  /** Largest body of any request without a verified caller, and of requests that need no more. Default 1 MiB. */
  maxBytes?: number;
  /**
   * The limit the route a request goes to declares (by method and path; undefined for none), admitted once
   * the caller is verified when larger than `maxBytes`. Each transport declares its own (a REST route's
   * `maxBodyBytes`, the MCP endpoint's): the intake asks, it keeps no table. Default: none.
   */
  declaredLimit?: (method: string, pathname: string) => number | undefined;
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
  declaredLimit = () => undefined,
  maxUploadBytes = MAX_UPLOAD_BYTES,
}: UseBodyLimitOptions = {}): Plugin {
  const limitOf = (request: Request, pathname: string, serverContext: object) => {
    if (!verifiedViewerOf(serverContext)) return maxBytes;
    const declared = declaredLimit(request.method, pathname);
    if (declared !== undefined && declared > maxBytes) return declared;
    if (pathname === '/graphql' && request.method === 'POST' && isMultipart(request)) return maxUploadBytes;
    return maxBytes;
  };
  return {
    onRequest({ request, url, endResponse, fetchAPI, serverContext }) {
      const limit = limitOf(request, url.pathname, serverContext);
      requestStateOf(serverContext).bodyLimit = limit;
      // What the connection may drop after an answer given before the body all arrived: no more than the
      // body could have been, so 1 MiB before the caller is authenticated.
      allowDropping(serverContext, limit);
      const length = Number(request.headers.get('content-length') ?? 0);
      if (!(length > limit)) return;
      endResponse(
        refusalResponse(url.pathname, 'PAYLOAD_TOO_LARGE', payloadTooLarge(limit).message, {}, fetchAPI),
      );
    },
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI, serverContext }) {
      if (!requestParser || !request.body) return;
      const limit = requestStateOf(serverContext).bodyLimit ?? maxBytes;
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
