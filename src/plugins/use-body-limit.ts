import type { Plugin } from 'graphql-yoga';

export interface UseBodyLimitOptions {
  /** Largest accepted request body in bytes, judged by Content-Length. Default 72 MiB (5 attachments). */
  maxBytes?: number;
}

/** Answers 413 before reading a body larger than the limit. */
export function useBodyLimit({ maxBytes = 72 * 1024 * 1024 }: UseBodyLimitOptions = {}): Plugin {
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
