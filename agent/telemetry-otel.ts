import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { type ExportResult, ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtobufMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { AgentTelemetry, TelemetrySettings } from './telemetry.js';

/** What the spans started inside an attempt inherit: their parent, the thread, the attempt's usage. */
interface Scope {
  context: Context;
  conversationId?: string | undefined;
  usage: { input: number; output: number };
}

/** The conventions' bucket boundaries for gen_ai.client.token.usage and gen_ai.client.operation.duration. */
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/** The model endpoint speaks OpenAI's Chat Completions, whoever serves it. */
const PROVIDER = 'openai';

/** An exporter whose failed exports are logged (the SDK would only tell its diagnostic logger). */
function reporting<E extends { export(items: never, done: (result: ExportResult) => void): void }>(
  exporter: E,
  signal: string,
  log: (event: Record<string, unknown>) => void,
): E {
  const send = exporter.export.bind(exporter) as (
    items: unknown,
    done: (result: ExportResult) => void,
  ) => void;
  (exporter as unknown as { export: typeof send }).export = (items, done) =>
    send(items, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) {
        log({ event: 'telemetry_export_failed', signal, error: result.error?.message ?? 'export failed' });
      }
      done(result);
    });
  return exporter;
}

/** `error.type` of a failure: the HTTP status of an API error, else the error's class. */
function errorType(error: unknown): string {
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number') return String(status);
  return error instanceof Error ? error.constructor.name : '_OTHER';
}

function failed(span: Span, type: string, message?: string) {
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
}

/**
 * The runtime's own tracer and meter providers, never registered globally (a process may run the gateway
 * with its own beside it, as the tests do): spans name their parent explicitly, from the runtime's current
 * scope, and the MCP client's fetch injects it as W3C `traceparent`.
 */
export function createOtelTelemetry(
  settings: TelemetrySettings,
  log: (event: Record<string, unknown>) => void,
): AgentTelemetry {
  const resource = resourceFromAttributes({ 'service.name': settings.serviceName });
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: settings.tracesUrl
      ? [
          new BatchSpanProcessor(
            reporting(
              new (settings.tracesProtocol === 'http/json' ? JsonTraceExporter : ProtobufTraceExporter)({
                url: settings.tracesUrl,
                timeoutMillis: settings.exportTimeoutMs,
              }),
              'traces',
              log,
            ),
          ),
        ]
      : [],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: settings.metricsUrl
      ? [
          new PeriodicExportingMetricReader({
            exporter: reporting(
              new (settings.metricsProtocol === 'http/json' ? JsonMetricExporter : ProtobufMetricExporter)({
                url: settings.metricsUrl,
                timeoutMillis: settings.exportTimeoutMs,
              }),
              'metrics',
              log,
            ),
            exportIntervalMillis: settings.metricIntervalMs,
            exportTimeoutMillis: Math.min(settings.exportTimeoutMs, settings.metricIntervalMs),
          }),
        ]
      : [],
  });
  const tracer = tracerProvider.getTracer('boardroom-agent');
  const meter = meterProvider.getMeter('boardroom-agent');
  const tokenUsage = meter.createHistogram('gen_ai.client.token.usage', {
    description: 'Number of input and output tokens used',
    unit: '{token}',
    advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
  });
  const operationDuration = meter.createHistogram('gen_ai.client.operation.duration', {
    description: 'GenAI operation duration',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  // The scope of what the runtime does now. A runtime does one thing at a time (its lease renewals aside,
  // which take the scope they fire in): a variable, not an AsyncLocalStorage, whose promise hooks would
  // slow every promise of the process on Node 20 (see bench/README.md, agent-telemetry).
  let current: Scope | undefined;
  const within = async <T>(scope: Scope, run: () => Promise<T>): Promise<T> => {
    const previous = current;
    current = scope;
    try {
      return await run();
    } finally {
      current = previous;
    }
  };
  const propagator = new W3CTraceContextPropagator();
  // v1.36.0 named the provider gen_ai.system; the latest conventions, opted into, gen_ai.provider.name.
  const provider: Attributes = settings.latestGenAi
    ? { 'gen_ai.provider.name': PROVIDER }
    : { 'gen_ai.system': PROVIDER };

  return {
    attempt(role) {
      const startTime = Date.now();
      // Started before the claim so that the claim's requests are its children; ended only if a task comes.
      const span = tracer.startSpan(
        `invoke_agent ${role}`,
        {
          kind: SpanKind.INTERNAL,
          startTime,
          attributes: {
            'gen_ai.operation.name': 'invoke_agent',
            ...provider,
            'gen_ai.agent.name': role,
            'gen_ai.agent.id': role,
          },
        },
        ROOT_CONTEXT,
      );
      const scope: Scope = { context: trace.setSpan(ROOT_CONTEXT, span), usage: { input: 0, output: 0 } };
      return {
        claiming: (claim) => within(scope, claim),
        async working(facts, work) {
          scope.conversationId = facts.threadId ?? undefined;
          span.setAttributes({
            'gen_ai.request.model': facts.model,
            'boardroom.task_id': facts.taskId,
            ...(facts.threadId ? { 'gen_ai.conversation.id': facts.threadId } : {}),
            ...(facts.attempts ? { 'boardroom.task.attempt': facts.attempts } : {}),
          });
          try {
            const outcome = await within(scope, work);
            span.setAttribute('boardroom.task.outcome', outcome);
            if (outcome === 'failed') failed(span, 'task_failed');
            return outcome;
          } catch (error) {
            failed(span, errorType(error), (error as Error).message);
            throw error;
          } finally {
            span.setAttributes({
              'gen_ai.usage.input_tokens': scope.usage.input,
              'gen_ai.usage.output_tokens': scope.usage.output,
            });
            span.end();
          }
        },
      };
    },

    async chat({ model, baseURL }, call) {
      const scope = current;
      const server = new URL(baseURL);
      const common: Attributes = {
        'gen_ai.operation.name': 'chat',
        ...provider,
        'gen_ai.request.model': model,
        'server.address': server.hostname,
        'server.port': Number(server.port) || (server.protocol === 'https:' ? 443 : 80),
      };
      const span = tracer.startSpan(
        `chat ${model}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            ...common,
            ...(scope?.conversationId ? { 'gen_ai.conversation.id': scope.conversationId } : {}),
          },
        },
        scope?.context ?? ROOT_CONTEXT,
      );
      const started = performance.now();
      try {
        const completion = await call();
        const input = completion.usage?.prompt_tokens;
        const output = completion.usage?.completion_tokens;
        const answered: Attributes = { ...common, 'gen_ai.response.model': completion.model };
        span.setAttributes({
          'gen_ai.response.model': completion.model,
          'gen_ai.response.id': completion.id,
          'gen_ai.response.finish_reasons': completion.choices.map((choice) => choice.finish_reason),
          ...(input !== undefined ? { 'gen_ai.usage.input_tokens': input } : {}),
          ...(output !== undefined ? { 'gen_ai.usage.output_tokens': output } : {}),
        });
        if (input !== undefined) {
          tokenUsage.record(input, { ...answered, 'gen_ai.token.type': 'input' });
          if (scope) scope.usage.input += input;
        }
        if (output !== undefined) {
          tokenUsage.record(output, { ...answered, 'gen_ai.token.type': 'output' });
          if (scope) scope.usage.output += output;
        }
        operationDuration.record((performance.now() - started) / 1000, answered);
        return completion;
      } catch (error) {
        failed(span, errorType(error), (error as Error).message);
        operationDuration.record((performance.now() - started) / 1000, {
          ...common,
          'error.type': errorType(error),
        });
        throw error;
      } finally {
        span.end();
      }
    },

    async tool({ name, callId }, call, isError) {
      const scope = current;
      const parent = scope?.context ?? ROOT_CONTEXT;
      const span = tracer.startSpan(
        `execute_tool ${name}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            ...provider,
            'gen_ai.tool.name': name,
            'gen_ai.tool.call.id': callId,
            'gen_ai.tool.type': 'function',
          },
        },
        parent,
      );
      const inner: Scope = {
        context: trace.setSpan(parent, span),
        conversationId: scope?.conversationId,
        usage: scope?.usage ?? { input: 0, output: 0 },
      };
      try {
        const result = await within(inner, call);
        if (isError?.(result)) failed(span, 'tool_error');
        return result;
      } catch (error) {
        failed(span, errorType(error), (error as Error).message);
        throw error;
      } finally {
        span.end();
      }
    },

    fetch(url, init) {
      const scope = current;
      if (!scope) return fetch(url, init);
      const headers = new Headers(init?.headers);
      propagator.inject(scope.context, headers, { set: (carrier, key, value) => carrier.set(key, value) });
      return fetch(url, { ...init, headers });
    },

    async shutdown() {
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}
