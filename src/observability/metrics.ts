import { createHash, timingSafeEqual } from 'node:crypto';
import type { Cache } from '@graphql-yoga/plugin-response-cache';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import { isLoopbackHost } from '../loopback.js';

/** Seconds; from a cached read to a slow chat with attachments. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export type OperationOutcome = 'success' | 'error' | 'invalid';

/** Everything the instance measures, in one registry per instance (tests run several in one process). */
export interface Metrics {
  registry: Registry;
  httpRequests: Histogram<'method' | 'route' | 'status'>;
  graphqlOperations: Histogram<'operation_name' | 'operation_type' | 'outcome'>;
  graphqlSubscriptions: Gauge;
  wsConnections: Gauge;
  rateLimitRefusals: Counter<'surface'>;
  /** Requests refused with 503 at the door (DATABASE_POOL_SIZE + DATABASE_QUEUE_SIZE already in flight). */
  overloadRefusals: Counter<'surface'>;
  responseCache: Counter<'result'>;
  /** Outbox relay passes: `published` (events went out), `empty` (woken, nothing pending), `failed`. */
  relayPasses: Counter<'outcome'>;
  /** Webhook dispatcher passes: `claimed` (deliveries were taken), `empty` (woken, nothing claimable), `failed`. */
  webhookDispatchPasses: Counter<'outcome'>;
  /** Webhook deliveries recorded as dropped because their tenant's queue was full (WEBHOOK_QUEUE_PER_TENANT). */
  webhookDeliveriesDropped: Counter;
  /** Connector calls (invocations and tests) by outcome: success, upstream_error or the egress reason. */
  connectorCalls: Counter<'kind' | 'outcome'>;
  connectorCallDuration: Histogram<'kind' | 'outcome'>;
  /** Counts a WebSocket connection until it closes. */
  trackWebSocket(socket: { once(event: 'close', listener: () => void): unknown }): void;
  /** The same cache, counting hits (a lookup found a result) and misses (a cacheable result was stored). */
  instrumentCache(cache: Cache): Cache;
  /**
   * The `operation_name` label of an operation: its name when its document is one the server knows (a REST
   * route's), `other` for everything else. Clients choose names, and label values are shared by every
   * tenant and read by whoever scrapes.
   */
  operationLabel(name: string | undefined, document: string | undefined): string;
  /** Reads the database figures, then renders every metric in the Prometheus text format. */
  render(): Promise<string>;
  contentType: string;
}

export interface MetricsOptions {
  db: Database;
  /** Documents the server runs itself, by their text, with their operation name. Default: none. */
  knownOperations?: ReadonlyMap<string, string>;
}

export function createMetrics({ db, knownOperations = new Map() }: MetricsOptions): Metrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });

  const httpRequests = new Histogram({
    name: 'boardroom_http_request_duration_seconds',
    help: 'HTTP requests by method, route template and status, with their latency',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const graphqlOperations = new Histogram({
    name: 'boardroom_graphql_operation_duration_seconds',
    help: 'GraphQL operations (HTTP, WebSocket and the ones REST routes run) by name, type and outcome',
    labelNames: ['operation_name', 'operation_type', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const graphqlSubscriptions = new Gauge({
    name: 'boardroom_graphql_subscriptions_active',
    help: 'GraphQL subscriptions currently open',
    registers,
  });
  const wsConnections = new Gauge({
    name: 'boardroom_websocket_connections_active',
    help: 'WebSocket connections currently open',
    registers,
  });
  const rateLimitRefusals = new Counter({
    name: 'boardroom_rate_limit_refusals_total',
    help: 'Requests refused with 429 by the per-caller rate limit',
    labelNames: ['surface'] as const,
    registers,
  });
  const overloadRefusals = new Counter({
    name: 'boardroom_overload_refusals_total',
    help: 'Requests refused with 503 before any work: the instance already works on its maximum',
    labelNames: ['surface'] as const,
    registers,
  });
  const responseCache = new Counter({
    name: 'boardroom_response_cache_requests_total',
    help: 'Response cache hits, and misses of cacheable operations',
    labelNames: ['result'] as const,
    registers,
  });
  const relayPasses = new Counter({
    name: 'boardroom_outbox_relay_passes_total',
    help: 'Outbox relay passes (each one transaction), by outcome: published, empty or failed',
    labelNames: ['outcome'] as const,
    registers,
  });
  const webhookDispatchPasses = new Counter({
    name: 'boardroom_webhook_dispatch_passes_total',
    help: 'Webhook dispatcher passes, by outcome: claimed (deliveries were taken), empty or failed',
    labelNames: ['outcome'] as const,
    registers,
  });
  const webhookDeliveriesDropped = new Counter({
    name: 'boardroom_webhook_deliveries_dropped_total',
    help: 'Webhook deliveries recorded as dropped, never sent: their tenant already had WEBHOOK_QUEUE_PER_TENANT pending',
    registers,
  });
  const connectorCalls = new Counter({
    name: 'boardroom_connector_calls_total',
    help: 'Outbound connector calls by kind (invoke, test) and outcome (success, upstream_error, or why the egress refused or failed)',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  });
  const connectorCallDuration = new Histogram({
    name: 'boardroom_connector_call_duration_seconds',
    help: 'Duration of outbound connector calls, from the first connection attempt to the last body byte',
    labelNames: ['kind', 'outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const outboxBacklog = new Gauge({
    name: 'boardroom_outbox_backlog_events',
    help: 'Outbox events not yet published to the bus',
    registers,
  });
  const outboxLag = new Gauge({
    name: 'boardroom_outbox_oldest_unpublished_age_seconds',
    help: 'Age of the oldest unpublished outbox event (relay lag); 0 when none is waiting',
    registers,
  });
  const taskQueue = new Gauge({
    name: 'boardroom_task_queue_depth',
    help: 'Agent tasks waiting (pending) or being worked on (running)',
    labelNames: ['state'] as const,
    registers,
  });
  const webhookQueue = new Gauge({
    name: 'boardroom_webhook_queue_depth',
    help: 'Webhook deliveries pending, waiting or with an attempt in flight',
    labelNames: ['state'] as const,
    registers,
  });
  const poolFigures = db.pool;
  if (poolFigures) {
    new Gauge({
      name: 'boardroom_db_pool_connections',
      help: 'PostgreSQL pool connections by state (total, idle, max)',
      labelNames: ['state'] as const,
      registers,
      collect() {
        const figures = poolFigures();
        this.set({ state: 'total' }, figures.total);
        this.set({ state: 'idle' }, figures.idle);
        this.set({ state: 'max' }, figures.max);
      },
    });
    new Gauge({
      name: 'boardroom_db_pool_waiting_requests',
      help: 'Queries waiting for a free PostgreSQL connection',
      registers,
      collect() {
        this.set(poolFigures().waiting);
      },
    });
  }

  // The queries use an index (published_at, created_at / status) and touch only rows still in flight.
  async function readDatabaseFigures(): Promise<void> {
    const [outbox, tasks, webhooks] = await Promise.all([
      db.prisma.$queryRawUnsafe<{ backlog: number; age: number | null }[]>(
        `SELECT count(*)::int AS backlog, EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS age
         FROM outbox_events WHERE published_at IS NULL`,
      ),
      db.prisma.$queryRawUnsafe<{ state: string; count: number }[]>(
        `SELECT status::text AS state, count(*)::int AS count FROM tasks
         WHERE status IN ('pending', 'running') GROUP BY status`,
      ),
      db.prisma.$queryRawUnsafe<{ waiting: number; in_flight: number }[]>(
        `SELECT count(*) FILTER (WHERE locked_until IS NULL OR locked_until <= now())::int AS waiting,
                count(*) FILTER (WHERE locked_until > now())::int AS in_flight
         FROM webhook_deliveries WHERE status = 'pending'`,
      ),
    ]);
    outboxBacklog.set(outbox[0]?.backlog ?? 0);
    outboxLag.set(Math.max(0, outbox[0]?.age ?? 0));
    for (const state of ['pending', 'running']) {
      taskQueue.set({ state }, tasks.find((row) => row.state === state)?.count ?? 0);
    }
    webhookQueue.set({ state: 'waiting' }, webhooks[0]?.waiting ?? 0);
    webhookQueue.set({ state: 'in_flight' }, webhooks[0]?.in_flight ?? 0);
  }

  return {
    registry,
    httpRequests,
    graphqlOperations,
    graphqlSubscriptions,
    wsConnections,
    rateLimitRefusals,
    overloadRefusals,
    responseCache,
    relayPasses,
    webhookDispatchPasses,
    webhookDeliveriesDropped,
    connectorCalls,
    connectorCallDuration,
    trackWebSocket(socket) {
      wsConnections.inc();
      socket.once('close', () => wsConnections.dec());
    },
    instrumentCache(cache) {
      return {
        get(key) {
          const found = cache.get(key);
          const count = (value: unknown) => {
            if (value != null) responseCache.inc({ result: 'hit' });
            return value;
          };
          return found instanceof Promise ? found.then(count) : count(found);
        },
        set(key, value, entities, ttl) {
          // The plugin stores only what it looked up and did not find: each store is a miss.
          responseCache.inc({ result: 'miss' });
          return cache.set(key, value, entities, ttl);
        },
        invalidate: (entities) => cache.invalidate(entities),
      } as Cache;
    },
    operationLabel(name, document) {
      return name !== undefined && document !== undefined && knownOperations.get(document) === name
        ? name
        : 'other';
    },
    async render() {
      try {
        await readDatabaseFigures();
      } catch {
        // An unanswering database leaves these series out rather than failing the whole scrape.
        outboxBacklog.reset();
        outboxLag.reset();
        taskQueue.reset();
        webhookQueue.reset();
      }
      return registry.metrics();
    },
    contentType: registry.contentType,
  };
}

/** Who may read `/metrics` on the main port. */
export type MetricsAccess = { kind: 'open' } | { kind: 'token'; token: string } | { kind: 'off' };

/**
 * A token, when set, is required everywhere. Otherwise a separate METRICS_PORT takes `/metrics` off the
 * main port; without either, only a development instance bound to loopback serves it openly.
 */
export function metricsAccess(config: Config): MetricsAccess {
  if (config.metrics.token) return { kind: 'token', token: config.metrics.token };
  if (config.metrics.port !== undefined) return { kind: 'off' };
  return !config.production && isLoopbackHost(config.host) ? { kind: 'open' } : { kind: 'off' };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** The `/metrics` answer for a request carrying `authorization`, under the given access rule. */
export async function metricsResponse(
  metrics: Metrics,
  access: MetricsAccess,
  authorization: string | null,
): Promise<Response> {
  if (access.kind === 'off') return Response.json({ detail: 'Not Found' }, { status: 404 });
  const presented = /^bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? '';
  if (access.kind === 'token' && !timingSafeEqual(digest(presented), digest(access.token))) {
    return Response.json(
      { detail: 'Not authenticated' },
      { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } },
    );
  }
  return new Response(await metrics.render(), { headers: { 'content-type': metrics.contentType } });
}
