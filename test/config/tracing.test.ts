import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('tracing in the configuration', () => {
  it('is off without an endpoint, and encodes spans as protobuf unless a protocol variable says otherwise', () => {
    expect(loadConfig({}).tracing).toEqual({ endpoint: undefined, protocol: 'http/protobuf' });
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(loadConfig(endpoint).tracing).toEqual({
      endpoint: 'http://collector:4318',
      protocol: 'http/protobuf',
    });
    expect(loadConfig({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing.protocol).toBe(
      'http/json',
    );
    expect(
      loadConfig({
        ...endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      }).tracing.protocol,
    ).toBe('http/protobuf');
  });

  it('refuses a protocol it does not send, naming the variable', () => {
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(refused({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toMatchInlineSnapshot(`
      "Invalid configuration:
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc": only http/protobuf or http/json"
    `);
    expect(refused({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/xml' })).toMatchInlineSnapshot(`
      "Invalid configuration:
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/xml": only http/protobuf or http/json"
    `);
  });
});
