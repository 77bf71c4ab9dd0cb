/**
 * The OTLP/HTTP encodings this project's exporters send: `http/protobuf` (the OpenTelemetry
 * specification's default) and `http/json`. `grpc` is not served: a collector takes OTLP/HTTP on 4318.
 */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** What the specification says an exporter sends when no protocol variable is set. */
export const DEFAULT_OTLP_PROTOCOL: OtlpProtocol = 'http/protobuf';

export const isOtlpProtocol = (value: string): value is OtlpProtocol =>
  (OTLP_PROTOCOLS as readonly string[]).includes(value);

/** Why `value` of `name` is refused, in the words the gateway's and the runtime's settings errors use. */
export const otlpProtocolRefusal = (value: string) =>
  `${JSON.stringify(value)}: only ${OTLP_PROTOCOLS.join(' or ')}`;

/**
 * The protocol for one signal: `OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`,
 * else the default; `read` gives a variable's value, undefined when unset or blank. Throws `refused(name,
 * message)` for a value that is not one of OTLP_PROTOCOLS.
 */
export function otlpProtocol(
  read: (name: string) => string | undefined,
  signal: 'traces' | 'metrics',
  refused: (name: string, message: string) => Error,
): OtlpProtocol {
  for (const name of [`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_PROTOCOL`, 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const value = read(name);
    if (value === undefined) continue;
    if (!isOtlpProtocol(value)) throw refused(name, otlpProtocolRefusal(value));
    return value;
  }
  return DEFAULT_OTLP_PROTOCOL;
}
