import { useOnResolve } from '@envelop/on-resolve';
import {
  context,
  createContextKey,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { requestIdOf } from '../http/request-id.js';
import { routeMatcher } from '../observability/routes.js';

export interface UseTracingOptions {
  tracer: Tracer;
  /** REST path templates used as `http.route` and in span names. Default: none. */
  routeTemplates?: readonly string[];
  /** Paths not traced (probes and scrapes would drown the rest). Default: /healthz, /readyz, /metrics. */
  quietPaths?: readonly string[];
}

/** Span attribute names for the request id and the caller's tenant. */
export const REQUEST_ID = 'boardroom.request_id';
export const TENANT_ID = 'boardroom.tenant_id';

const HTTP_SPAN = createContextKey('boardroom.http_span');
const headerGetter = {
  keys: (headers: Headers) => [...headers.keys()],
  get: (headers: Headers, key: string) => headers.get(key) ?? undefined,
};

type GraphQLContext = Partial<Context> & { request?: Request; params?: { operationName?: string | null } };

function fail(span: Span, error: unknown) {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : undefined });
}

/**
 * OpenTelemetry spans: one SERVER span per HTTP request (continuing an inbound `traceparent`), GraphQL
 * parse/validate/execute/subscribe, and each root field's resolver; request id and tenant as attributes.
 * Everything below (Prisma queries, the outbox publish a mutation kicks) runs inside these spans.
 */
export function useTracing({
  tracer,
  routeTemplates = [],
  quietPaths = ['/healthz', '/readyz', '/metrics'],
}: UseTracingOptions): Plugin {
  const routeOf = routeMatcher(routeTemplates);
  // By request, not on its context: yoga's request instrumentation, which starts the span, is given none.
  const httpSpans = new WeakMap<Request, Span>();

  function graphqlAttributes(graphqlContext: GraphQLContext) {
    const attributes: Record<string, string> = {};
    const request = graphqlContext.request;
    if (request) attributes[REQUEST_ID] = graphqlContext.requestId ?? requestIdOf(request);
    if (graphqlContext.viewer) attributes[TENANT_ID] = graphqlContext.viewer.tenantId;
    if (graphqlContext.params?.operationName)
      attributes['graphql.operation.name'] = graphqlContext.params.operationName;
    return attributes;
  }

  function inSpan<T>(name: string, attributes: Record<string, string>, wrapped: () => T): T {
    return tracer.startActiveSpan(name, { attributes }, (span): T => {
      let result: T;
      try {
        result = wrapped();
      } catch (error) {
        fail(span, error);
        span.end();
        throw error;
      }
      if (result instanceof Promise) {
        return result.then(
          (value) => {
            span.end();
            return value;
          },
          (error) => {
            fail(span, error);
            span.end();
            throw error;
          },
        ) as T;
      }
      span.end();
      return result;
    });
  }

  /** The tenant is known once the context is built; the HTTP span gets it too. */
  function tagTenant(graphqlContext: GraphQLContext) {
    const tenantId = graphqlContext.viewer?.tenantId;
    if (!tenantId) return;
    (context.active().getValue(HTTP_SPAN) as Span | undefined)?.setAttribute(TENANT_ID, tenantId);
  }

  return {
    onPluginInit({ addPlugin }) {
      addPlugin(
        useOnResolve(({ info, replaceResolver, resolver }) => {
          if (info.path.prev !== undefined) return;
          const name = `graphql.resolve ${info.parentType.name}.${info.fieldName}`;
          replaceResolver((root, args, resolverContext, resolverInfo) =>
            inSpan(
              name,
              {
                'graphql.field.name': resolverInfo.fieldName,
                'graphql.field.path': String(resolverInfo.path.key),
                ...graphqlAttributes(resolverContext as GraphQLContext),
              },
              () => resolver(root, args, resolverContext, resolverInfo),
            ),
          );
        }),
      );
    },
    instrumentation: {
      request({ request }, wrapped) {
        const url = new URL(request.url);
        const active = context.active();
        // A request made inside another's span belongs to it.
        if (quietPaths.includes(url.pathname) || active.getValue(HTTP_SPAN)) return wrapped();
        const route = routeOf(url.pathname);
        const parent = propagation.extract(active, request.headers, headerGetter);
        const span = tracer.startSpan(
          `${request.method} ${route}`,
          {
            kind: SpanKind.SERVER,
            attributes: {
              'http.request.method': request.method,
              'http.route': route,
              'url.path': url.pathname,
              [REQUEST_ID]: requestIdOf(request),
            },
          },
          parent,
        );
        httpSpans.set(request, span);
        return context.with(trace.setSpan(parent, span).setValue(HTTP_SPAN, span), wrapped);
      },
      parse: ({ context: graphqlContext }, wrapped) =>
        inSpan('graphql.parse', graphqlAttributes(graphqlContext as GraphQLContext), wrapped),
      validate: ({ context: graphqlContext }, wrapped) =>
        inSpan('graphql.validate', graphqlAttributes(graphqlContext as GraphQLContext), wrapped),
      execute({ context: graphqlContext }, wrapped) {
        tagTenant(graphqlContext as GraphQLContext);
        return inSpan('graphql.execute', graphqlAttributes(graphqlContext as GraphQLContext), wrapped);
      },
      subscribe({ context: graphqlContext }, wrapped) {
        tagTenant(graphqlContext as GraphQLContext);
        return inSpan('graphql.subscribe', graphqlAttributes(graphqlContext as GraphQLContext), wrapped);
      },
    },
    onExecute({ args }) {
      const operation = getOperationAST(args.document, args.operationName);
      trace.getActiveSpan()?.setAttribute('graphql.operation.type', operation?.operation ?? 'unknown');
      return {
        onExecuteDone({ result }) {
          const errors = 'errors' in result ? result.errors : undefined;
          if (errors?.length)
            trace.getActiveSpan()?.setStatus({ code: SpanStatusCode.ERROR, message: errors[0]?.message });
        },
      };
    },
    onResponse({ request, response }) {
      const span = httpSpans.get(request);
      if (!span) return;
      span.setAttribute('http.response.status_code', response.status);
      if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
  };
}
