import type { Plugin } from 'graphql-yoga';
import { authenticationOf } from '../auth/request.js';
import { isRestPath, refusalResponse } from '../errors.js';
import { addressKey, callerKey, type RateLimiter } from '../rate-limit.js';

export interface UseRateLimitOptions {
  limiter: RateLimiter;
  /** Paths that are never limited. Default: probes, docs and the OpenAPI document. */
  exempt?: readonly string[];
  /** Counts refused requests by surface (`rest` or `graphql`). Default: not counted. */
  refusals?: { inc(labels: { surface: 'rest' | 'graphql' }): void };
}

/** The peer address of a request served by node:http (yoga's server context carries `req`). */
export function clientAddressOf(serverContext: unknown): string | undefined {
  return (serverContext as { req?: { socket?: { remoteAddress?: string } } } | undefined)?.req?.socket
    ?.remoteAddress;
}

/**
 * Limits requests per caller before any work is done, after useAuthentication: a verified caller by
 * (tenant, subject), a request without a token by client address, and a refused credential by client
 * address from a separate budget of failed authentications (token guessing). Over a budget: 429 with
 * Retry-After, as `{"detail"}` on REST routes and as a RATE_LIMITED GraphQL error on /graphql.
 */
export function useRateLimit({
  limiter,
  exempt = ['/healthz', '/readyz', '/docs', '/api/v1/openapi.json'],
  refusals,
}: UseRateLimitOptions): Plugin {
  return {
    async onRequest({ url, endResponse, fetchAPI, serverContext }) {
      if (exempt.includes(url.pathname)) return;
      const address = clientAddressOf(serverContext);
      const outcome = authenticationOf(serverContext);
      const retryAfter =
        outcome?.status === 'failed'
          ? await limiter.consumeAuthFailure(address)
          : await limiter.consume(
              outcome?.status === 'verified' ? callerKey(outcome.viewer) : addressKey(address),
            );
      if (retryAfter === null) return;
      refusals?.inc({ surface: isRestPath(url.pathname) ? 'rest' : 'graphql' });
      endResponse(
        refusalResponse(
          url.pathname,
          'RATE_LIMITED',
          `Too many requests; retry in ${retryAfter} s`,
          { 'Retry-After': String(retryAfter) },
          fetchAPI,
        ),
      );
    },
  };
}
