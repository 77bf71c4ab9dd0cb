/**
 * The runtime's OpenTelemetry hooks, following the GenAI semantic conventions: an `invoke_agent` span per
 * task attempt, a `chat` span per model call, an `execute_tool` span per connector tool call, and the
 * `gen_ai.client.token.usage` metric. Off unless an OTLP endpoint is configured; the OpenTelemetry SDK is
 * then loaded (telemetry-otel.ts), never otherwise. runtime.ts depends on this interface only.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { type OtlpProtocol, otlpProtocol } from '../src/observability/otlp-protocol.js';

/** How a task attempt ended, as runAgent counts it. */
export type AttemptOutcome = 'completed' | 'failed' | 'released' | 'delegated';

/** What the runtime knows of a claimed task when it starts working it. */
export interface AttemptFacts {
  taskId: string;
  /** The task's thread: `gen_ai.conversation.id`. */
  threadId?: string | null | undefined;
  /** How many times the task was claimed, this claim included. */
  attempts?: number | null | undefined;
  /** The model the task is answered with. */
  model: string;
}

/** One claim, and the attempt it may start. */
export interface AttemptTrace {
  /** Runs the claim: its MCP requests carry the attempt's `traceparent`, so the gateway's spans join it. */
  claiming<T>(claim: () => Promise<T>): Promise<T>;
  /** The claim handed out a task: its `invoke_agent` span covers the claim and `work`. */
  working(facts: AttemptFacts, work: () => Promise<AttemptOutcome>): Promise<AttemptOutcome>;
}

export interface AgentTelemetry {
  /** Before each claim. A claim that hands out nothing leaves no span of the runtime's. */
  attempt(role: string): AttemptTrace;
  /** One model call to the endpoint at `baseURL`: a `chat` span and the token usage metric. */
  chat(
    request: { model: string; baseURL: string },
    call: () => Promise<ChatCompletion>,
  ): Promise<ChatCompletion>;
  /** One tool call: an `execute_tool` span; `failed` tells a tool's error result from its answer. */
  tool<T>(
    tool: { name: string; callId: string },
    call: () => Promise<T>,
    failed?: (result: T) => boolean,
  ): Promise<T>;
  /** The fetch the MCP client uses: adds the current span's W3C `traceparent`. */
  fetch: FetchLike;
  /** Exports what is left and stops; export errors are logged, never thrown. */
  shutdown(): Promise<void>;
}

/** Where and how the runtime exports, read from the standard OpenTelemetry variables. */
export interface TelemetrySettings {
  /** OTLP/HTTP traces URL; undefined: no spans. */
  tracesUrl: string | undefined;
  /** OTLP/HTTP metrics URL; undefined: no metrics. */
  metricsUrl: string | undefined;
  /** Each signal's encoding: OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL, else …_PROTOCOL, else protobuf. */
  tracesProtocol: OtlpProtocol;
  metricsProtocol: OtlpProtocol;
  /** `service.name`: OTEL_SERVICE_NAME, default `boardroom-agent`. */
  serviceName: string;
  /**
   * OTEL_SEMCONV_STABILITY_OPT_IN names `gen_ai_latest_experimental`: the latest experimental GenAI
   * conventions (`gen_ai.provider.name`). Without it, the v1.36.0 names (`gen_ai.system`).
   */
  latestGenAi: boolean;
  /** Milliseconds between metric exports: OTEL_METRIC_EXPORT_INTERVAL, default 60,000. */
  metricIntervalMs: number;
  /** The longest an export may take, in milliseconds: OTEL_EXPORTER_OTLP_TIMEOUT, default 10,000. */
  exportTimeoutMs: number;
}

/** A variable the runtime cannot use: main.ts prints it and exits 2, as for its other settings. */
export class TelemetrySettingError extends Error {}

const signalUrl = (base: string, signal: 'traces' | 'metrics') => `${base.replace(/\/+$/, '')}/v1/${signal}`;

function httpUrl(name: string, value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new TelemetrySettingError(`${name} ${JSON.stringify(value)} is not an http(s) URL`);
  }
  return value;
}

/**
 * The settings `env` gives (variables set to nothing count as unset), or undefined when telemetry is off:
 * no OTLP endpoint, OTEL_SDK_DISABLED=true, or both signals' exporters `none`.
 */
export function telemetrySettings(env: Record<string, string | undefined>): TelemetrySettings | undefined {
  const read = (name: string) => env[name]?.trim() || undefined;
  if (read('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const base = read('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (base) httpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', base);
  const urlOf = (signal: 'traces' | 'metrics') => {
    const upper = signal.toUpperCase();
    const exporter = read(`OTEL_${upper}_EXPORTER`)?.toLowerCase();
    if (exporter === 'none') return undefined;
    if (exporter !== undefined && exporter !== 'otlp') {
      throw new TelemetrySettingError(
        `OTEL_${upper}_EXPORTER ${JSON.stringify(exporter)}: only otlp or none`,
      );
    }
    const specific = read(`OTEL_EXPORTER_OTLP_${upper}_ENDPOINT`);
    if (specific) return httpUrl(`OTEL_EXPORTER_OTLP_${upper}_ENDPOINT`, specific);
    return base ? signalUrl(base, signal) : undefined;
  };
  const tracesUrl = urlOf('traces');
  const metricsUrl = urlOf('metrics');
  if (!tracesUrl && !metricsUrl) return undefined;
  const milliseconds = (name: string, fallback: number) => {
    const value = read(name);
    const parsed = value === undefined ? fallback : Number(value);
    if (!Number.isInteger(parsed) || parsed <= 0) {
      throw new TelemetrySettingError(
        `${name} ${JSON.stringify(value)} is not a positive number of milliseconds`,
      );
    }
    return parsed;
  };
  const metricIntervalMs = milliseconds('OTEL_METRIC_EXPORT_INTERVAL', 60_000);
  const exportTimeoutMs = milliseconds('OTEL_EXPORTER_OTLP_TIMEOUT', 10_000);
  const refused = (name: string, message: string) => new TelemetrySettingError(`${name} ${message}`);
  const optIn = (read('OTEL_SEMCONV_STABILITY_OPT_IN') ?? '').split(',').map((value) => value.trim());
  return {
    tracesUrl,
    metricsUrl,
    tracesProtocol: otlpProtocol(read, 'traces', refused),
    metricsProtocol: otlpProtocol(read, 'metrics', refused),
    serviceName: read('OTEL_SERVICE_NAME') ?? 'boardroom-agent',
    latestGenAi: optIn.includes('gen_ai_latest_experimental'),
    metricIntervalMs,
    exportTimeoutMs,
  };
}

/**
 * Loads the OpenTelemetry SDK and starts exporting, as `settings` say; `log` hears of failed exports. One
 * instance serves one runAgent (it holds that runtime's current span).
 */
export async function startTelemetry(
  settings: TelemetrySettings,
  log: (event: Record<string, unknown>) => void,
): Promise<AgentTelemetry> {
  return (await import('./telemetry-otel.js')).createOtelTelemetry(settings, log);
}

/** No telemetry: every hook runs what it is given. */
export const noTelemetry: AgentTelemetry = {
  attempt: () => ({ claiming: (claim) => claim(), working: (_facts, work) => work() }),
  chat: (_request, call) => call(),
  tool: (_tool, call) => call(),
  fetch: (url, init) => fetch(url, init),
  shutdown: async () => {},
};
