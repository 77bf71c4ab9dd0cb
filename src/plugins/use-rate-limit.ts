import { createHash } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import type { RateLimiter } from '../rate-limit.js';

export interface UseRateLimitOptions {
  limiter: RateLimiter;
  /** Paths that are never limited. Default: probes, docs and the OpenAPI document. */
  exempt?: readonly string[];
}

/**
 * Limits requests per caller before any work is done: the key is a digest of the bearer credential, or
 * the client address for requests without one. Over the budget: 429 with Retry-After, as `{"detail"}` on
 * REST routes and as a GraphQL error on /graphql.
 */
export function useRateLimit({
  limiter,
  exempt = ['/healthz', '/readyz', '/docs', '/api/v1/openapi.json'],
}: UseRateLimitOptions): Plugin {
  return {
    async onRequest({ request, url, endResponse, fetchAPI, serverContext }) {
      // REST routes run their operation as an inner request; the outer request was already counted.
      if (exempt.includes(url.pathname) || (serverContext as { viewer?: unknown } | undefined)?.viewer)
        return;
      const authorization = request.headers.get('authorization');
      const address = (serverContext as { req?: { socket?: { remoteAddress?: string } } } | undefined)?.req
        ?.socket?.remoteAddress;
      const key = authorization
        ? createHash('sha256').update(authorization).digest('base64url')
        : `address:${address ?? 'unknown'}`;
      const retryAfter = await limiter.consume(key);
      if (retryAfter === null) return;
      const headers = { 'Retry-After': String(retryAfter) };
      const message = `Too many requests; retry in ${retryAfter} s`;
      endResponse(
        url.pathname.startsWith('/api/')
          ? fetchAPI.Response.json({ detail: message }, { status: 429, headers })
          : fetchAPI.Response.json(
              { errors: [{ message, extensions: { code: 'RATE_LIMITED' } }] },
              { status: 429, headers },
            ),
      );
    },
  };
}
