import type { Plugin } from 'graphql-yoga';
import { verifiedViewerOf } from '../auth/request.js';
import { requestSlot } from '../http/request-context.js';
import { requestIdOf } from '../http/request-id.js';
import type { Logger } from '../logger.js';

export interface UseRequestLogOptions {
  logger: Logger;
  /** Paths not worth a line each (probes). Default: /healthz and /readyz. */
  quietPaths?: readonly string[];
}

interface Entry {
  start: number;
  operation?: string | undefined;
}

/**
 * One JSON line per request that reached the server: id, method, path, status, duration, the verified
 * caller's tenant and the GraphQL operation. Never the credential.
 */
export function useRequestLog({
  logger,
  quietPaths = ['/healthz', '/readyz'],
}: UseRequestLogOptions): Plugin {
  const entries = requestSlot<Entry>('request log: entry');
  return {
    onRequest({ serverContext }) {
      entries.set(serverContext, { start: performance.now() });
    },
    onParams({ context, params }) {
      const entry = entries.get(context);
      if (entry) entry.operation = params.operationName ?? undefined;
    },
    onResponse({ request, response, serverContext }) {
      const entry = entries.get(serverContext);
      if (!entry) return;
      const url = new URL(request.url);
      if (quietPaths.includes(url.pathname)) return;
      logger.info({
        requestId: requestIdOf(request),
        method: request.method,
        path: url.pathname,
        status: response.status,
        durationMs: Math.round((performance.now() - entry.start) * 10) / 10,
        tenantId: verifiedViewerOf(serverContext)?.tenantId,
        operation: entry.operation,
      });
    },
  };
}
