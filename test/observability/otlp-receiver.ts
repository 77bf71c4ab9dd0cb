import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP attribute value as OTLP/JSON writes it. */
type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValues = { key: string; value: AnyValue }[] | undefined;

/** One span received, with its resource's `service.name` and its attributes as plain values. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  status: { code?: number; message?: string } | undefined;
  attributes: Record<string, unknown>;
}

/** One histogram data point received. */
export interface ReceivedPoint {
  service: string;
  metric: string;
  unit: string | undefined;
  count: number;
  sum: number | undefined;
  attributes: Record<string, unknown>;
}

function plainValue(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plainValue);
  return undefined;
}

const attributesOf = (attributes: KeyValues) =>
  Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, plainValue(value)]));

/**
 * An OTLP/HTTP receiver on loopback taking JSON bodies (what the `otlp-http` exporters send) at
 * `/v1/traces` and `/v1/metrics`; `url` is the base an `OTEL_EXPORTER_OTLP_ENDPOINT` names.
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const json = request.headers['content-type']?.startsWith('application/json');
      if (request.method !== 'POST' || !json) {
        response.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (request.url === '/v1/traces') {
        for (const resourceSpans of body.resourceSpans ?? []) {
          const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                service,
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId || undefined,
                name: span.name,
                kind: span.kind,
                status: span.status,
                attributes: attributesOf(span.attributes),
              });
            }
          }
        }
      } else if (request.url === '/v1/metrics') {
        for (const resourceMetrics of body.resourceMetrics ?? []) {
          const service = String(attributesOf(resourceMetrics.resource?.attributes)['service.name']);
          for (const scope of resourceMetrics.scopeMetrics ?? []) {
            for (const metric of scope.metrics ?? []) {
              for (const point of metric.histogram?.dataPoints ?? []) {
                points.push({
                  service,
                  metric: metric.name,
                  unit: metric.unit,
                  count: Number(point.count),
                  sum: point.sum,
                  attributes: attributesOf(point.attributes),
                });
              }
            }
          }
        }
      } else {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    points,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
