import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTracing, type Tracing } from '../../src/observability/tracing.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let t: TestApp;
let chairman: Caller;

beforeAll(async () => {
  tracing = createTracing({ exporter });
  t = await createTestApp({ tracing });
  chairman = await t.caller(['chairman']);
});
afterAll(() => t.close());
beforeEach(() => exporter.reset());

async function finishedSpans(): Promise<ReadableSpan[]> {
  await tracing.flush();
  return exporter.getFinishedSpans();
}

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

describe('tracing', () => {
  it('traces an authenticated GraphQL request: HTTP, parse, validate, execute, resolver and Prisma', async () => {
    const response = await t.app.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${chairman.token}`,
        'x-request-id': 'trace-request-1',
      },
      body: JSON.stringify({ query: 'query Roles { agents { role } }' }),
    });
    expect(response.status).toBe(200);

    const spans = await finishedSpans();
    const http = spans.find((span) => span.name === 'POST /graphql');
    expect(http).toBeDefined();
    expect(http?.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/graphql',
      'http.response.status_code': 200,
      'boardroom.request_id': 'trace-request-1',
      'boardroom.tenant_id': chairman.tenantId,
    });
    expect(http?.resource.attributes['service.name']).toBe('boardroom');
    const trace = spans.filter((span) => span.spanContext().traceId === http?.spanContext().traceId);
    const byName = (name: string) => trace.find((span) => span.name === name);
    for (const name of ['graphql.parse', 'graphql.validate', 'graphql.execute']) {
      expect(byName(name)?.attributes['boardroom.request_id']).toBe('trace-request-1');
    }
    expect(byName('graphql.execute')?.attributes).toMatchObject({
      'boardroom.tenant_id': chairman.tenantId,
      'graphql.operation.type': 'query',
    });
    const resolver = byName('graphql.resolve Query.agents');
    expect(resolver && parentOf(resolver)).toBe(byName('graphql.execute')?.spanContext().spanId);
    expect(resolver?.attributes['boardroom.tenant_id']).toBe(chairman.tenantId);
    const queries = trace.filter((span) => span.name === 'prisma:client:db_query');
    expect(queries.length).toBeGreaterThan(0);
  });

  it('puts a REST route and the operation it runs in one trace under the route template', async () => {
    const response = await t.rest('GET', '/api/v1/agents/cfo/vitals', { caller: chairman });
    expect(response.status).toBe(200);

    const spans = await finishedSpans();
    const servers = spans.filter((span) => span.attributes['http.request.method']);
    expect(servers.map((span) => span.name)).toEqual(['GET /api/v1/agents/{role}/vitals']);
    expect(servers[0]?.attributes['boardroom.tenant_id']).toBe(chairman.tenantId);
    const execute = spans.find((span) => span.name === 'graphql.execute');
    expect(execute?.spanContext().traceId).toBe(servers[0]?.spanContext().traceId);
  });

  it('continues an inbound W3C traceparent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await t.app.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${chairman.token}`,
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      },
      body: JSON.stringify({ query: '{ me { sub } }' }),
    });
    const http = (await finishedSpans()).find((span) => span.name === 'POST /graphql');
    expect(http?.spanContext().traceId).toBe(traceId);
    expect(parentOf(http as ReadableSpan)).toBe('00f067aa0ba902b7');
  });

  it('wraps an outbox relay pass that publishes a pause in an outbox.publish span', async () => {
    await t.graphql('mutation { setDogfoodLiveMode(enabled: true) { id } }', {}, chairman);
    const paused = await t.graphql(
      'mutation { pauseAgent(role: "cfo", input: { actorUserId: "chair-1" }) { eventId } }',
      {},
      chairman,
    );
    expect(paused.errors).toBeUndefined();
    await t.app.services.relay.kick();

    const spans = await finishedSpans();
    const publish = spans.filter((span) => span.name === 'outbox.publish');
    expect(publish.length).toBeGreaterThan(0);
    expect(publish[0]?.attributes['messaging.batch.message_count']).toBeGreaterThan(0);
    // Inside it: the query that takes the next `seq` values, the statement that marks the rows published
    // and, for an event webhooks carry (a pause does), the one that queues its deliveries (answering which
    // were dropped).
    const inside = spans
      .filter(
        (span) =>
          span.name === 'prisma:client:operation' && parentOf(span) === publish[0]?.spanContext().spanId,
      )
      .map((span) => span.attributes.method);
    expect(inside).toEqual(['queryRaw', 'executeRaw', 'queryRaw']);
  });

  it('leaves no trace of probes, idle relay passes or background polling', async () => {
    await t.rest('GET', '/healthz');
    await t.app.services.relay.kick();
    expect(await finishedSpans()).toEqual([]);
  });
});
