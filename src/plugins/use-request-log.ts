import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import type { Logger } from '../logger.js';
import { requestIdOf } from './use-request-id.js';

export interface UseRequestLogOptions {
  logger: Logger;
  /** Paths not worth a line each (probes). Default: /healthz and /readyz. */
  quietPaths?: readonly string[];
}

interface Entry {
  start: number;
  operation?: string | undefined;
  tenantId?: string | undefined;
}

/** One JSON line per request: id, method, path, status, duration, tenant and GraphQL operation. */
export function useRequestLog({
  logger,
  quietPaths = ['/healthz', '/readyz'],
}: UseRequestLogOptions): Plugin<Context> {
  const entries = new WeakMap<Request, Entry>();
  return {
    onRequest({ request }) {
      entries.set(request, { start: performance.now() });
    },
    onParams({ request, params }) {
      const entry = entries.get(request);
      if (entry) entry.operation = params.operationName ?? undefined;
    },
    onExecute({ args }) {
      const context = args.contextValue as Context & { request?: Request };
      const entry = context.request ? entries.get(context.request) : undefined;
      if (entry) entry.tenantId = context.viewer?.tenantId;
    },
    onResponse({ request, response, serverContext }) {
      const url = new URL(request.url);
      if (quietPaths.includes(url.pathname)) return;
      // REST routes run their GraphQL operation as an inner request; the outer request is the one logged.
      if ((serverContext as { viewer?: unknown } | undefined)?.viewer) return;
      const entry = entries.get(request);
      logger.info({
        requestId: requestIdOf(request),
        method: request.method,
        path: url.pathname,
        status: response.status,
        durationMs: entry ? Math.round((performance.now() - entry.start) * 10) / 10 : undefined,
        tenantId: entry?.tenantId,
        operation: entry?.operation,
      });
    },
  };
}
