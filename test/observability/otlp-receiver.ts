import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/**
 * The part of opentelemetry-proto's trace and metrics services this receiver reads (field numbers as
 * opentelemetry/proto/{common,resource,trace,metrics}/v1 define them; fields not named here are skipped,
 * as protobuf decoding does with unknown fields).
 */
const OTLP_PROTO = `
syntax = "proto3";
package otlp;
message AnyValue {
  oneof value {
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Status { string message = 2; int32 code = 3; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  repeated KeyValue attributes = 9; Status status = 15;
}
message ScopeSpans { repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message HistogramDataPoint { repeated KeyValue attributes = 9; fixed64 count = 4; optional double sum = 5; }
message Histogram { repeated HistogramDataPoint data_points = 1; }
message Metric { string name = 1; string unit = 3; Histogram histogram = 9; }
message ScopeMetrics { repeated Metric metrics = 2; }
message ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; }
message ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
`;
const otlp = protobuf.parse(OTLP_PROTO).root;
const requests = {
  '/v1/traces': otlp.lookupType('otlp.ExportTraceServiceRequest'),
  '/v1/metrics': otlp.lookupType('otlp.ExportMetricsServiceRequest'),
};

/**
 * A protobuf request as OTLP/JSON would have carried it: camelCase names, 64-bit integers as strings,
 * trace and span ids as lowercase hex (the JSON encoding's one exception to base64 bytes).
 */
function protobufAsJson(path: keyof typeof requests, body: Buffer): ReturnType<typeof JSON.parse> {
  const type = requests[path];
  const object = type.toObject(type.decode(body), { longs: String, bytes: Buffer, oneofs: false });
  return JSON.parse(
    JSON.stringify(object, (_key, value) =>
      value?.type === 'Buffer' && Array.isArray(value.data) ? Buffer.from(value.data).toString('hex') : value,
    ),
  );
}

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
 * An OTLP/HTTP receiver on loopback at `/v1/traces` and `/v1/metrics`, taking both encodings a collector
 * takes: protobuf (`application/x-protobuf`) and JSON (`application/json`); `url` is the base an
 * `OTEL_EXPORTER_OTLP_ENDPOINT` names, `encodings` the content type of each request received.
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const encodings: { path: string; contentType: string }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const contentType = request.headers['content-type']?.split(';')[0]?.trim() ?? '';
      const path = request.url ?? '';
      if (request.method !== 'POST' || !(path === '/v1/traces' || path === '/v1/metrics')) {
        response.writeHead(404).end();
        return;
      }
      let body: ReturnType<typeof protobufAsJson>;
      if (contentType === 'application/json') {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } else if (contentType === 'application/x-protobuf') {
        body = protobufAsJson(path, Buffer.concat(chunks));
      } else {
        response.writeHead(415).end();
        return;
      }
      encodings.push({ path, contentType });
      if (path === '/v1/traces') {
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
      } else {
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
      }
      // An empty ExportServiceResponse, in the request's encoding (zero bytes in protobuf).
      response
        .writeHead(200, { 'content-type': contentType })
        .end(contentType === 'application/json' ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    points,
    encodings,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
