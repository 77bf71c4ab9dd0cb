import path from 'node:path';
import { z } from 'zod';
import { type EgressAllowlist, parseEgressAllowlist } from './domain/connectors/egress/allowlist.js';
import { type Keyring, parseKeyring } from './domain/connectors/sealing.js';
import {
  DEFAULT_OTLP_PROTOCOL,
  isOtlpProtocol,
  type OtlpProtocol,
  otlpProtocolRefusal,
} from './observability/otlp-protocol.js';

export interface DatabaseLimits {
  /** PostgreSQL connections the instance opens at most. */
  poolSize: number;
  /** Requests that may wait for a connection when all are busy; one more is refused at once. */
  queueSize: number;
  /** Longest wait for a connection: in the queue, or while a new one is opened. */
  connectTimeoutMs: number;
  /** Longest a statement may run or wait for the server's answer. */
  statementTimeoutMs: number;
}

/** The DATABASE_* defaults: what `loadConfig` gives when they are unset, and what `openDatabase` uses when given no limits. */
export const DATABASE_DEFAULTS: DatabaseLimits = {
  poolSize: 10,
  queueSize: 100,
  connectTimeoutMs: 2000,
  statementTimeoutMs: 5000,
};

/** WebSockets, SSE subscriptions and MCP streams one caller may hold on one instance, unless configured. */
const STREAMS_PER_CALLER_DEFAULT = 20;

const optionalString = z
  .string()
  .trim()
  .transform((value) => value || undefined)
  .optional();

/** An OTLP protocol variable: unset, or one of the encodings the exporters send. */
const otlpProtocolVariable = optionalString.transform((value, ctx): OtlpProtocol | undefined => {
  if (value === undefined || isOtlpProtocol(value)) return value;
  ctx.addIssue({ code: 'custom', message: otlpProtocolRefusal(value) });
  return z.NEVER;
});

/** `https://app.example.com` or `http://localhost:5173`: exactly what browsers send as `Origin`. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

/** A comma-separated list, each entry trimmed, empty entries dropped. */
const commaList = z
  .string()
  .default('')
  .transform((value) =>
    value
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
  );

const origins = commaList.pipe(
  z.array(
    z.string().refine(isOrigin, {
      error: (issue) => `${String(issue.input)} is not an origin (scheme://host[:port], no path)`,
    }),
  ),
);

/** A host name or address as `Host` names it, without a port: `boardroom.internal`, `10.0.0.5`, `[fd00::5]`. */
function isHostName(value: string): boolean {
  try {
    const url = new URL(`http://${value}`);
    return url.host === value.toLowerCase() && url.port === '';
  } catch {
    return false;
  }
}

const environment = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(4000),
  HOST: z.string().default('127.0.0.1'),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
      .optional(),
  ),
  REDIS_URL: optionalString.pipe(
    z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// URL')
      .optional(),
  ),
  AUTH_JWT_SECRET: optionalString.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
  AUTH_JWKS_URL: optionalString.pipe(z.url().optional()),
  AUTH_ISSUER: optionalString,
  AUTH_AUDIENCE: optionalString,
  CORS_ORIGINS: origins,
  MCP_ALLOWED_ORIGINS: origins,
  MCP_ALLOWED_HOSTS: commaList.pipe(
    z.array(
      z.string().refine(isHostName, {
        error: (issue) => `${String(issue.input)} is not a host name (no scheme, port or path)`,
      }),
    ),
  ),
  CONNECTOR_EGRESS_ALLOW: z
    .string()
    .default('')
    .transform((value, ctx) => {
      const parsed = parseEgressAllowlist(value);
      if ('allowlist' in parsed) return parsed.allowlist;
      for (const problem of parsed.problems) ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }),
  CONNECTOR_CALL_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  CONNECTOR_CALLS_PER_TENANT: z.coerce.number().int().min(1).default(8),
  WEBHOOK_IN_FLIGHT_PER_TENANT: z.coerce.number().int().min(1).default(4),
  WEBHOOK_QUEUE_PER_TENANT: z.coerce.number().int().min(1).default(10_000),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(1200),
  WS_MAX_SUBSCRIPTIONS_PER_SOCKET: z.coerce.number().int().min(1).default(100),
  MAX_STREAMS_PER_CALLER: optionalString.pipe(z.coerce.number<string | undefined>().int().min(1).optional()),
  /** The older name of MAX_STREAMS_PER_CALLER, read when that one is unset. */
  WS_MAX_SOCKETS_PER_CALLER: optionalString.pipe(
    z.coerce.number<string | undefined>().int().min(1).optional(),
  ),
  WS_MAX_FRAME_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  WS_MAX_INIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(64 * 1024),
  WS_CONNECTION_INIT_TIMEOUT_MS: z.coerce.number().int().min(100).default(3000),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  HTTP_BODY_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  HTTP_MAX_ANONYMOUS_PER_ADDRESS: z.coerce.number().int().min(1).default(20),
  HTTP_LINGER_MS: z.coerce.number().int().min(100).default(5000),
  HTTP_LINGER_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(4 * 1024 * 1024),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(DATABASE_DEFAULTS.poolSize),
  DATABASE_QUEUE_SIZE: z.coerce.number().int().min(0).default(DATABASE_DEFAULTS.queueSize),
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(DATABASE_DEFAULTS.connectTimeoutMs),
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(DATABASE_DEFAULTS.statementTimeoutMs),
  READYZ_TIMEOUT_MS: z.coerce.number().int().min(100).default(2000),
  RETRY_AFTER_SECONDS: z.coerce.number().int().min(1).default(2),
  METRICS_PORT: optionalString.pipe(
    z.coerce.number<string | undefined>().int().min(0).max(65_535).optional(),
  ),
  METRICS_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString.pipe(z.url().optional()),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocolVariable,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocolVariable,
  EVENT_RETENTION_HOURS: z.coerce.number().positive().default(24),
  ROUTINE_TICK_INTERVAL_MS: z.coerce.number().int().min(100).default(500),
  CONNECTOR_SECRETS_KEY: optionalString.transform((value, ctx): Keyring => {
    if (value === undefined) return [];
    const keyring = parseKeyring(value);
    if (typeof keyring === 'string') {
      ctx.addIssue({ code: 'custom', message: keyring });
      return z.NEVER;
    }
    return keyring;
  }),
  AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
});

/** One variable as docs/configuration.md shows it. */
export interface VariableDocs {
  /** What it does, in Markdown. */
  meaning: string;
  /** The default as shown, where parsing the variable unset does not give it (computed later, or not text). */
  shownDefault?: string;
}

/**
 * What each variable does: the one source of docs/configuration.md (`npm run docs:config` writes it, a
 * test fails when it is stale). Defaults come from the schema above; the order is the page's.
 */
export const ENVIRONMENT_DOCS: Record<keyof typeof environment.shape, VariableDocs> = {
  PORT: { meaning: 'HTTP and WebSocket port (`0` picks a free one)' },
  HOST: { meaning: 'Interface to listen on' },
  DATA_DIR: { meaning: 'PGlite files, attachment blobs, the development JWT secret' },
  DATABASE_URL: { meaning: '`postgres://…`: use PostgreSQL instead of PGlite' },
  REDIS_URL: { meaning: '`redis://…`: carry events between instances (required to run more than one)' },
  AUTH_JWT_SECRET: { meaning: 'HS256 secret (≥ 32 characters); generated under `DATA_DIR` in development' },
  AUTH_JWKS_URL: { meaning: 'JWKS endpoint for RS256/ES256 tokens' },
  AUTH_ISSUER: { meaning: 'When set, `iss` must match' },
  AUTH_AUDIENCE: { meaning: 'When set, `aud` must match' },
  WS_MAX_SUBSCRIPTIONS_PER_SOCKET: {
    meaning: 'Operations open at once on one WebSocket (see [limits.md](limits.md))',
  },
  MAX_STREAMS_PER_CALLER: {
    shownDefault: String(STREAMS_PER_CALLER_DEFAULT),
    meaning:
      'WebSockets, SSE subscriptions and MCP streams one caller (tenant and subject) may hold open on one instance, counted together',
  },
  WS_MAX_SOCKETS_PER_CALLER: {
    meaning: 'Older name of `MAX_STREAMS_PER_CALLER`, read when that one is unset',
  },
  WS_MAX_FRAME_BYTES: { meaning: 'Largest WebSocket frame once the connection is acknowledged' },
  WS_MAX_INIT_BYTES: { meaning: 'Bytes a WebSocket may send before its connection_init is acknowledged' },
  WS_CONNECTION_INIT_TIMEOUT_MS: { meaning: 'Time a new WebSocket has to send connection_init' },
  SHUTDOWN_TIMEOUT_MS: {
    meaning: 'Time a shutdown may take; WebSockets get a fifth of it to close, then are cut',
  },
  HTTP_HEADERS_TIMEOUT_MS: {
    meaning:
      "Time a request's headers may take to arrive, from its first byte; then 408 and the connection is closed",
  },
  HTTP_BODY_TIMEOUT_MS: {
    meaning:
      'Time a whole request (headers and body) may take to arrive, from its first byte; then 408. At least `HTTP_HEADERS_TIMEOUT_MS`; raise it for large attachments over slow links',
  },
  HTTP_MAX_ANONYMOUS_PER_ADDRESS: {
    meaning: 'Requests without a valid token one client address may have in flight at once; one more is 429',
  },
  HTTP_LINGER_MS: {
    meaning:
      "Time a connection is held after an answer written while its request's body was still arriving (413, or 401/403/429 before the body was read), reading and dropping what the client still sends so that it can read the answer; then it is closed",
  },
  HTTP_LINGER_BYTES: {
    meaning:
      "Bytes read and dropped in that time at most, and never more than the request's body limit (1 MiB without a verified caller); past them the connection is no longer read",
  },
  DATABASE_POOL_SIZE: { meaning: 'PostgreSQL connections one instance opens at most' },
  DATABASE_QUEUE_SIZE: {
    meaning: 'Requests that may wait for a busy pool; beyond it a request gets 503 at once',
  },
  DATABASE_CONNECT_TIMEOUT_MS: {
    meaning: 'Longest wait for a PostgreSQL connection (queue plus connecting), then 503',
  },
  DATABASE_STATEMENT_TIMEOUT_MS: {
    meaning: 'Longest a PostgreSQL statement may run or wait for an answer, then 503',
  },
  READYZ_TIMEOUT_MS: { meaning: 'Time `/readyz` waits for the database before answering unready (503)' },
  RETRY_AFTER_SECONDS: {
    meaning:
      '`Retry-After` of a 503 when the database is unavailable, overloaded or full, and of a 429 for too many streams',
  },
  EVENT_RETENTION_HOURS: {
    meaning: 'How long published events are kept, i.e. how far back a subscriber resumes',
  },
  ROUTINE_TICK_INTERVAL_MS: {
    meaning:
      'How often each instance looks for due routine occurrences (one indexed query while none is due); an occurrence is queued within about this long of its time (see [routines.md](routines.md))',
  },
  CORS_ORIGINS: { meaning: 'Comma-separated origins allowed cross-origin access (with credentials); none' },
  MCP_ALLOWED_ORIGINS: {
    meaning:
      "Comma-separated origins whose pages may call `/mcp` (`Origin`); any other `Origin` is 403, except the server's own on a loopback host. Requests without `Origin` (every non-browser client) are not concerned",
  },
  MCP_ALLOWED_HOSTS: {
    meaning:
      'Comma-separated host names (no port) `Host` may name on `/mcp` besides loopback ones while `HOST` is loopback (a reverse proxy on the same machine that forwards its own name); otherwise 403',
  },
  CONNECTOR_EGRESS_ALLOW: {
    shownDefault: 'unset',
    meaning:
      'Comma-separated CIDRs, addresses and host names connector calls may reach although not public, each with an optional port (`host:8443`, `10.0.0.5:8443`, `[fd00::5]:8443`, `10.0.0.0/8:8443`); without one, port 443 only (docs/decisions/0023-connector-egress.md, Connector egress); metadata addresses never',
  },
  CONNECTOR_CALL_TIMEOUT_MS: {
    meaning:
      'Time for a whole connector call (OAuth token request, redirects and body included), then 504 `UPSTREAM_TIMEOUT`',
  },
  CONNECTOR_CALLS_PER_TENANT: {
    meaning:
      'Connector calls (invocations, probes, OAuth token requests) one tenant may have in flight per instance, then 429',
  },
  WEBHOOK_IN_FLIGHT_PER_TENANT: {
    meaning:
      'Webhook attempts one tenant may have in flight at once, across all instances (each instance sends 16 at once); its other deliveries wait their turn',
  },
  WEBHOOK_QUEUE_PER_TENANT: {
    meaning:
      'Webhook deliveries one tenant may have pending; one more is recorded `dropped` and never sent (docs/operations.md, "Webhook deliveries per tenant")',
  },
  RATE_LIMIT_PER_MINUTE: {
    meaning: 'Requests per caller (tenant and subject; client address without a token)',
  },
  AUTH_FAILURES_PER_MINUTE: {
    meaning: 'Refused tokens per client address before 429 (limits token guessing)',
  },
  CONNECTOR_SECRETS_KEY: {
    meaning:
      'Keys sealing connector credentials: `id:base64` (32 bytes) entries, comma-separated, the current first; unset: credentials cannot be set (503)',
  },
  LOG_LEVEL: { meaning: 'pino level (`silent` … `trace`); logs are JSON lines with request id' },
  NODE_ENV: {
    meaning:
      '`production` requires a secret or JWKS URL, hides GraphiQL, introspection and "Did you mean" suggestions; in development a Prisma query a resolver prepared but never used is logged as a warning',
  },
  METRICS_PORT: { meaning: 'Serve Prometheus `/metrics` on this port of `HOST` instead of the main port' },
  METRICS_TOKEN: { meaning: 'Bearer token (≥ 16 characters) required to read `/metrics`, on either port' },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    meaning: 'OTLP/HTTP collector (`http://…:4318`): turns tracing on; off when unset',
  },
  OTEL_EXPORTER_OTLP_PROTOCOL: {
    shownDefault: '`http/protobuf`',
    meaning: 'How spans are encoded: `http/protobuf` or `http/json` (`grpc` is not served)',
  },
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: {
    shownDefault: '`OTEL_EXPORTER_OTLP_PROTOCOL`',
    meaning: 'The same, for traces only; wins over `OTEL_EXPORTER_OTLP_PROTOCOL`',
  },
};

/** Variables read by the build and scripts rather than by `loadConfig`. */
export const BUILD_ENVIRONMENT_DOCS: Record<string, VariableDocs> = {
  PRISMA_SCHEMA_ENGINE_BINARY: {
    shownDefault: 'node itself',
    meaning: 'Build only: the file `prisma generate` is told is its engine (never run)',
  },
};

/** What each variable of the environment gives when it is unset, as parsed (before `loadConfig` combines them). */
export function environmentDefaults(): Record<keyof typeof environment.shape, unknown> {
  return Object.fromEntries(
    Object.entries(environment.shape).map(([name, variable]) => [name, variable.safeParse(undefined).data]),
  ) as Record<keyof typeof environment.shape, unknown>;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  auth: {
    jwtSecret: string | undefined;
    jwksUrl: string | undefined;
    issuer: string | undefined;
    audience: string | undefined;
  };
  /** Origins allowed cross-origin access, with credentials; empty: no cross-origin access. */
  corsOrigins: string[];
  /** Who may use the MCP endpoint from a browser or through a host name (mcp/origin.ts). */
  mcp: {
    /** Origins whose pages may call `/mcp` (`Origin`); any other origin is refused, except the server's own on loopback. */
    allowedOrigins: string[];
    /** Host names `Host` may name besides loopback ones while HOST is a loopback address. */
    allowedHosts: string[];
  };
  /** Requests each caller (verified tenant and subject, else client address) may make per minute. */
  rateLimitPerMinute: number;
  /**
   * Networks and host names connector calls may reach although their addresses are not public, each on
   * the one port it names (443 when it names none); empty: connector calls reach public addresses only.
   */
  connectorEgressAllow: EgressAllowlist;
  connectorCalls: {
    /** Time for a whole connector call (OAuth token request, redirects and body included). */
    timeoutMs: number;
    /** Connector calls (calls, probes, token requests) one tenant may have in flight per instance. */
    perTenant: number;
  };
  /** What one tenant's webhooks may take of delivery (see docs/operations.md, "Webhook deliveries per tenant"). */
  webhooks: {
    /** Delivery attempts one tenant may have in flight at once, across all instances. */
    inFlightPerTenant: number;
    /** Deliveries one tenant may have pending; the relay records any beyond it as dropped. */
    queuePerTenant: number;
  };
  /** Limits of graphql-ws sockets (see docs/limits.md). */
  websocket: {
    /** Operations open at once on one socket (subscriptions and queries in flight). */
    maxSubscriptionsPerSocket: number;
    /** Largest message accepted once the connection is acknowledged. */
    maxFrameBytes: number;
    /** Bytes a socket may send before its connection_init is acknowledged. */
    maxInitBytes: number;
    /** Time a new socket has to send connection_init. */
    connectionInitTimeoutMs: number;
  };
  /**
   * WebSockets and SSE subscriptions one caller (tenant and subject) may hold open at once on one instance,
   * counted together (MAX_STREAMS_PER_CALLER, or its older name WS_MAX_SOCKETS_PER_CALLER).
   */
  maxStreamsPerCaller: number;
  /** Time `close()` may take in all: in-flight requests, sockets, then background work. */
  shutdownTimeoutMs: number;
  /** Bounds of HTTP clients before they are authenticated and their request is read (see docs/limits.md). */
  http: {
    /** Time a request's headers may take to arrive, from its first byte (node:http `headersTimeout`). */
    headersTimeoutMs: number;
    /** Time a whole request, headers and body, may take to arrive (node:http `requestTimeout`). */
    bodyTimeoutMs: number;
    /** Requests without a verified caller one client address may have in flight at once. */
    maxAnonymousPerAddress: number;
    /**
     * Time a connection is held after an answer written while its request's body was still arriving,
     * reading and dropping what the client still sends (a lingering close), before it is closed.
     */
    lingerMs: number;
    /**
     * Bytes read and dropped in that time at most, and never more than the request's body limit (so 1 MiB
     * before its caller is authenticated); past them the connection is no longer read.
     */
    lingerBytes: number;
  };
  /** Limits that turn an overloaded or unreachable database into 503s (see docs/operations.md). */
  database: DatabaseLimits;
  /** Time `/readyz` waits for the database before it answers unready. */
  readyzTimeoutMs: number;
  /** `Retry-After` of a 503 (database unavailable, overloaded or out of disk). */
  retryAfterSeconds: number;
  metrics: {
    /** A separate listener for `/metrics` on HOST; unset: no separate listener. */
    port: number | undefined;
    /** Bearer token required to read `/metrics`; unset: see docs/operations.md for the default. */
    token: string | undefined;
  };
  /** OTLP/HTTP collector; tracing is off (and not loaded) when unset. */
  /** And how spans are encoded: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else …_PROTOCOL, else protobuf. */
  tracing: { endpoint: string | undefined; protocol: OtlpProtocol };
  /** How long published events are kept: the window in which a subscriber can resume with `after`. */
  eventRetentionHours: number;
  /** How often each instance ticks routines (ROUTINE_TICK_INTERVAL_MS). */
  routineTickIntervalMs: number;
  /** Failed authentications (refused tokens) each client address may make per minute. */
  authFailuresPerMinute: number;
  /**
   * Keys that seal connector credentials, current first (CONNECTOR_SECRETS_KEY); empty: credentials
   * cannot be set or opened.
   */
  connectorSecretsKeys: Keyring;
  logLevel: z.infer<typeof environment>['LOG_LEVEL'];
  production: boolean;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment once; every other module receives the resulting Config. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = environment.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const values = parsed.data;
  const production = values.NODE_ENV === 'production';
  if (production && !values.AUTH_JWT_SECRET && !values.AUTH_JWKS_URL) {
    throw new ConfigError('NODE_ENV=production needs AUTH_JWT_SECRET or AUTH_JWKS_URL');
  }
  if (values.HTTP_HEADERS_TIMEOUT_MS > values.HTTP_BODY_TIMEOUT_MS) {
    throw new ConfigError(
      'HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_BODY_TIMEOUT_MS: the body timeout counts from the first byte of the headers',
    );
  }
  if (values.METRICS_PORT && values.METRICS_PORT === values.PORT) {
    throw new ConfigError('METRICS_PORT must differ from PORT: metrics get a listener of their own');
  }
  return {
    port: values.PORT,
    host: values.HOST,
    dataDir: path.resolve(values.DATA_DIR),
    databaseUrl: values.DATABASE_URL,
    redisUrl: values.REDIS_URL,
    auth: {
      jwtSecret: values.AUTH_JWT_SECRET,
      jwksUrl: values.AUTH_JWKS_URL,
      issuer: values.AUTH_ISSUER,
      audience: values.AUTH_AUDIENCE,
    },
    corsOrigins: values.CORS_ORIGINS,
    mcp: {
      allowedOrigins: values.MCP_ALLOWED_ORIGINS,
      allowedHosts: values.MCP_ALLOWED_HOSTS.map((host) => host.toLowerCase()),
    },
    rateLimitPerMinute: values.RATE_LIMIT_PER_MINUTE,
    connectorEgressAllow: values.CONNECTOR_EGRESS_ALLOW,
    connectorCalls: {
      timeoutMs: values.CONNECTOR_CALL_TIMEOUT_MS,
      perTenant: values.CONNECTOR_CALLS_PER_TENANT,
    },
    webhooks: {
      inFlightPerTenant: values.WEBHOOK_IN_FLIGHT_PER_TENANT,
      queuePerTenant: values.WEBHOOK_QUEUE_PER_TENANT,
    },
    websocket: {
      maxSubscriptionsPerSocket: values.WS_MAX_SUBSCRIPTIONS_PER_SOCKET,
      maxFrameBytes: values.WS_MAX_FRAME_BYTES,
      maxInitBytes: values.WS_MAX_INIT_BYTES,
      connectionInitTimeoutMs: values.WS_CONNECTION_INIT_TIMEOUT_MS,
    },
    maxStreamsPerCaller:
      values.MAX_STREAMS_PER_CALLER ?? values.WS_MAX_SOCKETS_PER_CALLER ?? STREAMS_PER_CALLER_DEFAULT,
    shutdownTimeoutMs: values.SHUTDOWN_TIMEOUT_MS,
    http: {
      headersTimeoutMs: values.HTTP_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: values.HTTP_BODY_TIMEOUT_MS,
      maxAnonymousPerAddress: values.HTTP_MAX_ANONYMOUS_PER_ADDRESS,
      lingerMs: values.HTTP_LINGER_MS,
      lingerBytes: values.HTTP_LINGER_BYTES,
    },
    database: {
      poolSize: values.DATABASE_POOL_SIZE,
      queueSize: values.DATABASE_QUEUE_SIZE,
      connectTimeoutMs: values.DATABASE_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: values.DATABASE_STATEMENT_TIMEOUT_MS,
    },
    readyzTimeoutMs: values.READYZ_TIMEOUT_MS,
    retryAfterSeconds: values.RETRY_AFTER_SECONDS,
    metrics: { port: values.METRICS_PORT, token: values.METRICS_TOKEN },
    tracing: {
      endpoint: values.OTEL_EXPORTER_OTLP_ENDPOINT,
      protocol:
        values.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ??
        values.OTEL_EXPORTER_OTLP_PROTOCOL ??
        DEFAULT_OTLP_PROTOCOL,
    },
    eventRetentionHours: values.EVENT_RETENTION_HOURS,
    routineTickIntervalMs: values.ROUTINE_TICK_INTERVAL_MS,
    authFailuresPerMinute: values.AUTH_FAILURES_PER_MINUTE,
    connectorSecretsKeys: values.CONNECTOR_SECRETS_KEY,
    logLevel: values.LOG_LEVEL,
    production,
  };
}
