import type { Plugin } from 'graphql-yoga';

/** Largest request body: a chat message with 5 attachments of 10 MiB, base64-encoded, fits. */
export const MAX_REQUEST_BYTES = 72 * 1024 * 1024;

export interface UseBodyLimitOptions {
  /** Largest accepted request body in bytes, judged by Content-Length. Default 72 MiB (5 attachments). */
  maxBytes?: number;
}

/** Answers 413 before reading a body larger than the limit. */
export function useBodyLimit({ maxBytes = MAX_REQUEST_BYTES }: UseBodyLimitOptions = {}): Plugin {
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      const length = Number(request.headers.get('content-length') ?? 0);
      if (length > maxBytes) {
        endResponse(
          fetchAPI.Response.json({ detail: `Request body exceeds ${maxBytes} bytes` }, { status: 413 }),
        );
      }
    },
  };
}
