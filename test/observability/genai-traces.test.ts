import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AgentOptions, runAgent } from '../../agent/runtime.js';
import { startTelemetry, TelemetrySettingError, telemetrySettings } from '../../agent/telemetry.js';
import { connectorToolName } from '../../mcp/connector-tools.js';
import { createTracing, type Tracing } from '../../src/observability/tracing.js';
import type { RunningServer } from '../../src/server.js';
import { completion, startModelServer } from '../agent/model-server.js';
import { forgeLedger, sealingKey, serveInvoices, startUpstream } from '../rest/connectors-support.js';
import { chat, TaskQuery } from '../schema/agents-support.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import type { TestHttpsServer } from '../support/https-server.js';
import { listen } from '../support/ws.js';
import { type ReceivedSpan, startOtlpReceiver } from './otlp-receiver.js';

let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
let upstream: TestHttpsServer;
let tracing: Tracing;
let t: TestApp;
let server: RunningServer;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const started = await startUpstream();
  upstream = started.server;
  serveInvoices(upstream);
  // The gateway exports to the same collector, over OTLP/HTTP in protobuf, as it does when
  // OTEL_EXPORTER_OTLP_ENDPOINT is set and no protocol is.
  tracing = createTracing({ exporter: new OTLPTraceExporter({ url: `${receiver.url}/v1/traces` }) });
  t = await createTestApp({ env: { ...started.allow, ...sealingKey() }, egress: started.egress, tracing });
  server = await listen(t);
});
afterAll(async () => {
  await server?.close();
  await t?.close();
  await upstream?.close();
  await receiver?.close();
});

/** A tenant with an agent token and a connector whose GET /invoices the model may call; a task queued in a thread. */
async function taskInThread(message: string) {
  const chairman = await t.caller(['chairman']);
  const agent = await t.caller(['agent'], { tenantId: chairman.tenantId });
  const connectorId = await forgeLedger(t, chairman, upstream);
  const queued = await chat(t, chairman, 'cfo', { message });
  expect(queued.status).toBe(202);
  const taskId = queued.body.data.task_id as string;
  return { chairman, agent, connectorId, taskId };
}

const taskOf = async (id: string, caller: Caller) =>
  (await t.graphql(TaskQuery, { id }, caller)).data?.task as Record<string, any>;

/** Runs the runtime in-process until the task has ended, then stops it. */
async function workOneTask(
  agent: Caller,
  chairman: Caller,
  taskId: string,
  overrides: Partial<AgentOptions> & Pick<AgentOptions, 'openai'>,
) {
  const controller = new AbortController();
  const running = runAgent({
    boardroomUrl: server.url,
    token: agent.token,
    role: 'cfo',
    model: 'test-model',
    prices: { 'test-model': { input: 2, output: 8 } },
    waitSeconds: 1,
    idleBackoffMs: { min: 20, max: 100 },
    signal: controller.signal,
    log: () => {},
    ...overrides,
  });
  try {
    await vi.waitFor(
      async () => expect(['completed', 'failed']).toContain((await taskOf(taskId, chairman)).status),
      { timeout: 20_000, interval: 50 },
    );
  } finally {
    controller.abort('SIGTERM');
  }
  return running;
}

const named = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);

describe('GenAI traces of a task', () => {
  it('puts the runtime’s invoke_agent, chat and execute_tool spans and the gateway’s spans in one trace', async () => {
    const { chairman, agent, connectorId, taskId } = await taskInThread('Which invoices are overdue?');
    const invoices = connectorToolName({ id: connectorId, name: 'Ledger' }, 'GET', '/invoices');
    const model = await startModelServer([
      completion(
        {
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: {
                name: 'call_connector_endpoint',
                arguments: JSON.stringify({ name: invoices, arguments: { query: { status: 'overdue' } } }),
              },
            },
          ],
        },
        { prompt_tokens: 200, completion_tokens: 20, total_tokens: 220 },
      ),
      completion(
        { content: 'One invoice is overdue: inv_1.' },
        { prompt_tokens: 1500, completion_tokens: 300, total_tokens: 1800 },
      ),
    ]);
    const logged: Record<string, unknown>[] = [];
    const settings = telemetrySettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SEMCONV_STABILITY_OPT_IN: 'http,gen_ai_latest_experimental',
    });
    const telemetry = await startTelemetry(settings as NonNullable<typeof settings>, (event) =>
      logged.push(event),
    );
    const summary = await workOneTask(agent, chairman, taskId, {
      openai: { baseURL: model.baseURL, apiKey: 'test-key' },
      telemetry,
    });
    await model.close();
    await telemetry.shutdown();
    await tracing.flush();
    expect(summary.completed).toBe(1);
    expect(logged).toEqual([]);
    const threadId = (await taskOf(taskId, chairman)).threadId as string;
    expect(threadId).toEqual(expect.any(String));

    const [invoke, ...others] = receiver.spans.filter(
      (span) => span.name === 'invoke_agent cfo' && span.attributes['boardroom.task_id'] === taskId,
    );
    expect(others).toEqual([]);
    expect(invoke?.service).toBe('boardroom-agent');
    expect(invoke?.parentSpanId).toBeUndefined();
    expect(invoke?.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'openai',
      'gen_ai.agent.name': 'cfo',
      'gen_ai.agent.id': 'cfo',
      'gen_ai.request.model': 'test-model',
      'gen_ai.conversation.id': threadId,
      'gen_ai.usage.input_tokens': 1700,
      'gen_ai.usage.output_tokens': 320,
      'boardroom.task_id': taskId,
      'boardroom.task.attempt': 1,
      'boardroom.task.outcome': 'completed',
    });
    const trace = receiver.spans.filter((span) => span.traceId === invoke?.traceId);
    const runtime = trace.filter((span) => span.service === 'boardroom-agent');
    expect(runtime.map((span) => span.name).sort()).toEqual([
      'chat test-model',
      'chat test-model',
      'execute_tool call_connector_endpoint',
      'invoke_agent cfo',
    ]);

    const chats = named(runtime, 'chat test-model');
    for (const span of chats) expect(span.parentSpanId).toBe(invoke?.spanId);
    expect(chats.map((span) => span.attributes)).toEqual([
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'test-model',
        'gen_ai.response.model': 'test-model',
        'gen_ai.response.id': expect.stringMatching(/^chatcmpl-/),
        'gen_ai.response.finish_reasons': ['tool_calls'],
        'gen_ai.usage.input_tokens': 200,
        'gen_ai.usage.output_tokens': 20,
        'gen_ai.conversation.id': threadId,
        'server.address': '127.0.0.1',
        'server.port': Number(new URL(model.baseURL).port),
      },
      expect.objectContaining({
        'gen_ai.response.finish_reasons': ['stop'],
        'gen_ai.usage.input_tokens': 1500,
        'gen_ai.usage.output_tokens': 300,
      }),
    ]);
    const [tool] = named(runtime, 'execute_tool call_connector_endpoint');
    expect(tool?.parentSpanId).toBe(invoke?.spanId);
    expect(tool?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'call_connector_endpoint',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.type': 'function',
    });

    // The gateway's spans of the same task, joined by the traceparent of the runtime's MCP requests.
    const gateway = trace.filter((span) => span.service === 'boardroom');
    const mcpRequests = named(gateway, 'POST /mcp');
    const claim = mcpRequests.find(
      (span) => span.parentSpanId === invoke?.spanId && span.attributes['gen_ai.conversation.id'],
    );
    expect(claim?.attributes).toMatchObject({
      'gen_ai.agent.name': 'cfo',
      'gen_ai.conversation.id': threadId,
      'boardroom.task_id': taskId,
      'boardroom.tenant_id': chairman.tenantId,
    });
    const toolRequest = mcpRequests.find((span) => span.parentSpanId === tool?.spanId);
    const [connectorCall] = named(gateway, `execute_tool ${invoices}`);
    expect(connectorCall?.parentSpanId).toBe(toolRequest?.spanId);
    expect(connectorCall?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': invoices,
      'gen_ai.tool.type': 'extension',
      'boardroom.connector_id': connectorId,
    });
    expect(named(gateway, 'graphql.resolve Mutation.invokeConnector').length).toBe(1);
    const completed = mcpRequests.filter((span) => span.attributes['boardroom.task_id'] === taskId);
    expect(completed.length).toBeGreaterThanOrEqual(2);

    // The token usage metric, one data point per token type for the model and its answer.
    const usage = receiver.points.filter(
      (point) => point.metric === 'gen_ai.client.token.usage' && point.service === 'boardroom-agent',
    );
    expect(usage.map(({ unit, count, sum, attributes }) => ({ unit, count, sum, attributes }))).toEqual(
      ['input', 'output'].map((type) => ({
        unit: '{token}',
        count: 2,
        sum: type === 'input' ? 1700 : 320,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'test-model',
          'gen_ai.response.model': 'test-model',
          'gen_ai.token.type': type,
          'server.address': '127.0.0.1',
          'server.port': Number(new URL(model.baseURL).port),
        },
      })),
    );
    const durations = receiver.points.filter((point) => point.metric === 'gen_ai.client.operation.duration');
    expect(durations.map((point) => [point.unit, point.count])).toEqual([['s', 2]]);
    // No protocol set: both signals went as protobuf, the specification's default.
    expect(new Set(receiver.encodings.map(({ path, contentType }) => `${path} ${contentType}`))).toEqual(
      new Set(['/v1/traces application/x-protobuf', '/v1/metrics application/x-protobuf']),
    );
  });

  it('names the provider gen_ai.system, as the v1.36.0 conventions did, unless the latest are opted into', async () => {
    const { chairman, agent, taskId } = await taskInThread('Summarise the quarter.');
    const model = await startModelServer([
      completion(
        { content: 'A good quarter.' },
        { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      ),
    ]);
    const settings = telemetrySettings({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    });
    expect(settings?.metricsUrl).toBeUndefined();
    const received = receiver.encodings.length;
    const telemetry = await startTelemetry(settings as NonNullable<typeof settings>, () => {});
    await workOneTask(agent, chairman, taskId, {
      openai: { baseURL: model.baseURL, apiKey: 'test-key' },
      telemetry,
    });
    await model.close();
    await telemetry.shutdown();
    const invoke = receiver.spans.find((span) => span.attributes['boardroom.task_id'] === taskId);
    const spans = receiver.spans.filter(
      (span) => span.traceId === invoke?.traceId && span.service === 'boardroom-agent',
    );
    expect(spans.map((span) => span.name).sort()).toEqual(['chat test-model', 'invoke_agent cfo']);
    // The runtime's spans came as JSON, as OTEL_EXPORTER_OTLP_TRACES_PROTOCOL asked (the gateway's protobuf).
    expect(receiver.encodings.slice(received)).toContainEqual({
      path: '/v1/traces',
      contentType: 'application/json',
    });
    for (const span of spans) {
      expect(span.attributes['gen_ai.system']).toBe('openai');
      expect(span.attributes).not.toHaveProperty('gen_ai.provider.name');
    }
  });

  it('completes the task when the collector is down, and logs the failed exports', async () => {
    const { chairman, agent, taskId } = await taskInThread('Anything to report?');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const model = await startModelServer([
      completion({ content: 'Nothing.' }, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }),
    ]);
    const logged: Record<string, unknown>[] = [];
    const settings = telemetrySettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
    });
    const telemetry = await startTelemetry(settings as NonNullable<typeof settings>, (event) =>
      logged.push(event),
    );
    const summary = await workOneTask(agent, chairman, taskId, {
      openai: { baseURL: model.baseURL, apiKey: 'test-key' },
      telemetry,
    });
    await model.close();
    await telemetry.shutdown();
    expect(summary.completed).toBe(1);
    expect((await taskOf(taskId, chairman)).status).toBe('completed');
    expect(logged.map((event) => [event.event, event.signal]).sort()).toEqual([
      ['telemetry_export_failed', 'metrics'],
      ['telemetry_export_failed', 'traces'],
    ]);
  });
});

describe('the runtime’s telemetry settings', () => {
  it('is off without an OTLP endpoint, with OTEL_SDK_DISABLED=true, or with both exporters none', () => {
    expect(telemetrySettings({})).toBeUndefined();
    expect(telemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBeUndefined();
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(telemetrySettings({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' })).toBeUndefined();
    expect(
      telemetrySettings({ ...endpoint, OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' }),
    ).toBeUndefined();
  });

  it('derives each signal’s URL from the base endpoint unless its own is set', () => {
    expect(
      telemetrySettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'https://metrics.example/otlp',
        OTEL_SERVICE_NAME: 'cfo-runtime',
        OTEL_METRIC_EXPORT_INTERVAL: '5000',
      }),
    ).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      metricsUrl: 'https://metrics.example/otlp',
      serviceName: 'cfo-runtime',
      tracesProtocol: 'http/protobuf',
      metricsProtocol: 'http/protobuf',
      latestGenAi: false,
      metricIntervalMs: 5000,
      exportTimeoutMs: 10_000,
    });
  });

  it('encodes each signal as its own protocol variable says, else the general one, else protobuf', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    const protocols = (env: Record<string, string>) => {
      const settings = telemetrySettings({ ...endpoint, ...env });
      return [settings?.tracesProtocol, settings?.metricsProtocol];
    };
    expect(protocols({})).toEqual(['http/protobuf', 'http/protobuf']);
    expect(protocols({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toEqual(['http/json', 'http/json']);
    expect(
      protocols({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/protobuf',
      }),
    ).toEqual(['http/json', 'http/protobuf']);
    expect(
      protocols({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_PROTOCOL: ' ' }),
    ).toEqual(['http/json', 'http/protobuf']);
  });

  it('refuses a value it cannot use, naming the variable', () => {
    const refused = (env: Record<string, string>) => {
      try {
        telemetrySettings(env);
      } catch (error) {
        expect(error).toBeInstanceOf(TelemetrySettingError);
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toMatchInlineSnapshot(
      `"OTEL_EXPORTER_OTLP_ENDPOINT "collector:4318" is not an http(s) URL"`,
    );
    expect(
      refused({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://c',
      }),
    ).toMatchInlineSnapshot(`"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT "ftp://c" is not an http(s) URL"`);
    expect(
      refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'zipkin' }),
    ).toMatchInlineSnapshot(`"OTEL_TRACES_EXPORTER "zipkin": only otlp or none"`);
    expect(
      refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_METRIC_EXPORT_INTERVAL: '-1' }),
    ).toMatchInlineSnapshot(`"OTEL_METRIC_EXPORT_INTERVAL "-1" is not a positive number of milliseconds"`);
    expect(
      refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    ).toMatchInlineSnapshot(`"OTEL_EXPORTER_OTLP_PROTOCOL "grpc": only http/protobuf or http/json"`);
    expect(
      refused({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'HTTP/JSON',
      }),
    ).toMatchInlineSnapshot(
      `"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL "HTTP/JSON": only http/protobuf or http/json"`,
    );
  });
});
