import type { Cache } from '@graphql-yoga/plugin-response-cache';
import type { TokenVerifier } from './auth/tokens.js';
import type { Config } from './config.js';
import type { Database, PrismaClient } from './db/client.js';
import type { StorageGuard } from './db/storage-guard.js';
import type { BlobStore } from './domain/agents/blob-store.js';
import type { ConnectorCallSlots } from './domain/connectors/call-slots.js';
import type { EgressClient } from './domain/connectors/egress/index.js';
import type { ModelVersionsChanged } from './domain/finetuning/version-changes.js';
import type { WebhookDispatcher } from './domain/webhooks/dispatcher.js';
import type { EventBus } from './events/bus.js';
import type { OutboxRelay } from './events/relay.js';
import type { Logger } from './logger.js';
import type { Metrics } from './observability/metrics.js';
import type { RateLimiter } from './rate-limit.js';
import type { StreamSlots } from './stream-slots.js';
import type { TenantRegistry } from './tenancy.js';

/** Long-lived parts of one running instance, built once by createApp and shared by every request. */
export interface Services {
  config: Config;
  db: Database;
  prisma: PrismaClient;
  logger: Logger;
  tokens: TokenVerifier;
  tenants: TenantRegistry;
  bus: EventBus;
  relay: OutboxRelay;
  blobs: BlobStore;
  responseCache: Cache;
  /** Drops this instance's cached model versions once a change to them committed (the response cache). */
  modelVersionsChanged: ModelVersionsChanged;
  /** Request budgets per caller, shared by HTTP and the WebSocket transport. */
  rateLimiter: RateLimiter;
  /** Open WebSockets and SSE subscriptions per caller, counted together (MAX_STREAMS_PER_CALLER). */
  streams: StreamSlots;
  metrics: Metrics;
  /** The only way connector calls leave the instance (address checks at connect time, caps, timeouts). */
  egress: EgressClient;
  /**
   * The guarded client webhook deliveries leave by: the same address checks and allowlist as connector
   * calls, but redirects are never followed and calls end sooner.
   */
  webhookEgress: EgressClient;
  /** Sends queued webhook deliveries; woken when they commit. */
  webhooks: WebhookDispatcher;
  /** Connector calls in flight per tenant (CONNECTOR_CALLS_PER_TENANT). */
  connectorCalls: ConnectorCallSlots;
  /** Readiness of DATA_DIR's disk after a write failed for lack of space. */
  storage: StorageGuard;
  /**
   * Why a failure means the database is unavailable (answered 503), or undefined; notes a full disk in
   * `storage`. See src/db/unavailable.ts.
   */
  unavailableCause(error: unknown): string | undefined;
}
