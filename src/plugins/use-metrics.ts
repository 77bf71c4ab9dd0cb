import { isAsyncIterable } from '@envelop/core';
import { usePrometheus } from '@graphql-yoga/plugin-prometheus';
import { type DocumentNode, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { requestSlot } from '../http/request-context.js';
import {
  type Metrics,
  type MetricsAccess,
  metricsResponse,
  type OperationOutcome,
} from '../observability/metrics.js';
import { routeMatcher } from '../observability/routes.js';

export interface UseMetricsOptions {
  metrics: Metrics;
  /** Who may read `/metrics` on this port. Default: nobody (404). */
  access?: MetricsAccess;
  /** REST path templates (`/api/v1/agents/{role}/chat`) reported as the route label. Default: none. */
  routeTemplates?: readonly string[];
}

interface Operation {
  start: number;
  name: string;
  type: string;
  recorded: boolean;
}

/**
 * Measures HTTP requests (by route template) and GraphQL operations (by name, type and outcome), counts
 * open subscriptions, adds yoga's Prometheus phase histograms, and serves `/metrics` under `access`.
 */
export function useMetrics({
  metrics,
  access = { kind: 'off' },
  routeTemplates = [],
}: UseMetricsOptions): Plugin {
  const routeOf = routeMatcher(routeTemplates);
  const started = requestSlot<number>('metrics: started');
  const operations = new WeakMap<object, Operation>();

  function record(context: object, outcome: OperationOutcome) {
    const operation = operations.get(context);
    if (!operation || operation.recorded) return;
    operation.recorded = true;
    metrics.graphqlOperations.observe(
      { operation_name: operation.name, operation_type: operation.type, outcome },
      (performance.now() - operation.start) / 1000,
    );
  }

  return {
    onPluginInit({ addPlugin, registerContextErrorHandler }) {
      // Phase timings and errors by operation type only: operation names, and error paths (which hold the
      // client's aliases and list indices), are the client's words, never label values.
      addPlugin(
        usePrometheus({
          registry: metrics.registry,
          endpoint: false,
          labels: { operationName: false, path: false },
          metrics: {
            graphql_envelop_phase_parse: true,
            graphql_envelop_phase_validate: true,
            graphql_envelop_phase_context: true,
            graphql_envelop_phase_execute: true,
            graphql_envelop_phase_subscribe: true,
            graphql_envelop_error_result: true,
            graphql_envelop_request: false,
            graphql_envelop_request_duration: false,
            graphql_envelop_request_time_summary: false,
            graphql_envelop_deprecated_field: false,
            graphql_envelop_schema_change: false,
            graphql_envelop_execute_resolver: false,
            graphql_yoga_http_duration: false,
          },
        }),
      );
      registerContextErrorHandler(({ context }) => record(context, 'error'));
    },
    async onRequest({ request, url, endResponse, serverContext }) {
      started.set(serverContext, performance.now());
      if (url.pathname === '/metrics' && request.method === 'GET') {
        endResponse(await metricsResponse(metrics, access, request.headers.get('authorization')));
      }
    },
    onParse({ context }) {
      const start = performance.now();
      return ({ result }) => {
        const document = result instanceof Error || !result ? undefined : (result as DocumentNode);
        const operation = document
          ? getOperationAST(document, context.params?.operationName ?? undefined)
          : undefined;
        operations.set(context, {
          start,
          name: metrics.operationLabel(operation?.name?.value, context.params?.query ?? undefined),
          type: operation?.operation ?? 'unknown',
          recorded: false,
        });
        if (!document) record(context, 'invalid');
      };
    },
    onValidate() {
      return ({ valid, context }) => {
        if (!valid) record(context, 'invalid');
      };
    },
    onExecute({ args }) {
      const context = args.contextValue;
      return {
        onExecuteDone({ result }) {
          // @defer/@stream: the operation is over when its last part is.
          if (isAsyncIterable(result)) return { onEnd: () => record(context, 'success') };
          record(context, result.errors?.length ? 'error' : 'success');
          return undefined;
        },
      };
    },
    onSubscribe({ args }) {
      const context = args.contextValue;
      return {
        onSubscribeResult({ result }) {
          if (!isAsyncIterable(result)) {
            record(context, 'error');
            return undefined;
          }
          record(context, 'success');
          metrics.graphqlSubscriptions.inc();
          return { onEnd: () => metrics.graphqlSubscriptions.dec() };
        },
        onSubscribeError: () => record(context, 'error'),
      };
    },
    onResponse({ request, response, serverContext }) {
      const start = started.get(serverContext);
      if (start === undefined) return;
      metrics.httpRequests.observe(
        {
          method: request.method,
          route: routeOf(new URL(request.url).pathname),
          status: String(response.status),
        },
        (performance.now() - start) / 1000,
      );
    },
  };
}
