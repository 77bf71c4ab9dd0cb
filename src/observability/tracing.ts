import {
  context,
  createContextKey,
  type Context as OtelContext,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-node';
import { PrismaInstrumentation } from '@prisma/instrumentation';
import type { Plugin } from 'graphql-yoga';
import type { RelayTracing } from '../events/relay.js';
import { type UseTracingOptions, useTracing } from '../plugins/use-tracing.js';
import { DEFAULT_OTLP_PROTOCOL, type OtlpProtocol } from './otlp-protocol.js';

/** What the outbox relay needs: quiet polling, and a span once a pass has something to publish. */
/**
 * Tracing of one process. This module and the OpenTelemetry packages are loaded only when tracing is
 * configured (main.ts imports it dynamically); the rest of the code depends on this interface only.
 */
export interface Tracing extends RelayTracing {
  /** The yoga plugin: HTTP, GraphQL phases, root resolvers. */
  plugin(options: Omit<UseTracingOptions, 'tracer'>): Plugin;
  /** Exports the spans ended so far. */
  flush(): Promise<void>;
  /** Flushes, stops Prisma's instrumentation and unregisters the global tracer. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /**
   * Where spans go. Default: OTLP over HTTP in `protocol`'s encoding, to where the standard
   * `OTEL_EXPORTER_OTLP_*` variables say.
   */
  exporter?: SpanExporter;
  /** The default exporter's encoding (config.ts reads it). Default `http/protobuf`. */
  protocol?: OtlpProtocol;
  /** `service.name` of every span. Default `boardroom`. */
  serviceName?: string;
}

const RELAY_CALLER = createContextKey('boardroom.relay_caller');

/**
 * A Prisma span without a parent comes from background polling (lease sweeper, idle relay), not from a
 * request: dropping those keeps a trace per request instead of several per second of idle queries.
 */
const noBackgroundQueries: Sampler = {
  shouldSample: (_context, _traceId, spanName) => ({
    decision: spanName.startsWith('prisma:')
      ? SamplingDecision.NOT_RECORD
      : SamplingDecision.RECORD_AND_SAMPLED,
  }),
  toString: () => 'NoBackgroundQueries',
};

export function createTracing({
  protocol = DEFAULT_OTLP_PROTOCOL,
  exporter = protocol === 'http/json' ? new JsonTraceExporter() : new ProtobufTraceExporter(),
  serviceName = 'boardroom',
}: TracingOptions = {}): Tracing {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    sampler: new ParentBasedSampler({ root: noBackgroundQueries }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  // Global context manager (AsyncLocalStorage) and W3C trace-context propagator.
  provider.register();
  // Prisma 7 reads this global helper on every query (driver adapters included): db_query spans.
  const prisma = new PrismaInstrumentation({ enabled: false });
  prisma.setTracerProvider(provider);
  prisma.enable();
  const tracer = provider.getTracer('boardroom');

  return {
    plugin: (options) => useTracing({ tracer, ...options }),
    untraced(pass) {
      const caller = context.active();
      return context.with(suppressTracing(caller).setValue(RELAY_CALLER, caller), pass);
    },
    publishing(events, publish) {
      const active = context.active();
      const parent = (active.getValue(RELAY_CALLER) as OtelContext | undefined) ?? active;
      return tracer.startActiveSpan(
        'outbox.publish',
        {
          kind: SpanKind.PRODUCER,
          attributes: { 'messaging.operation.type': 'publish', 'messaging.batch.message_count': events },
        },
        parent,
        async (span) => {
          try {
            return await publish();
          } catch (error) {
            span.recordException(error as Error);
            span.setStatus({ code: SpanStatusCode.ERROR });
            throw error;
          } finally {
            span.end();
          }
        },
      );
    },
    flush: () => provider.forceFlush(),
    async shutdown() {
      prisma.disable();
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
