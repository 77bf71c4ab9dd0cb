import path from 'node:path';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { createInMemoryCache } from '@graphql-yoga/plugin-response-cache';
import { GraphQLError } from 'graphql';
import { createGraphQLError, createYoga, maskError, type YogaServerInstance } from 'graphql-yoga';
import { a2aBodyLimit, a2aOperations, useA2a } from '../a2a/index.js';
import { mcpBodyLimit, mcpOperations, useMcp } from '../mcp/index.js';
import { compiledRoutes, restBodyLimit, useRest } from '../rest/index.js';
import { routes } from '../rest/routes.js';
import { loadOrCreateDevSecret } from './auth/dev-secret.js';
import { createTokenVerifier } from './auth/tokens.js';
import { reportUnusedPrismaQueries } from './builder.js';
import type { Config } from './config.js';
import { type Context, createContextFactory, type ServerContext } from './context.js';
import { corsPolicy } from './cors.js';
import { type Database, openDatabase } from './db/client.js';
import { checkDataDir } from './db/data-dir.js';
import { createStorageGuard } from './db/storage-guard.js';
import { databaseUnavailableCause } from './db/unavailable.js';
import { createConnectorCallSlots } from './domain/connectors/call-slots.js';
import { credentialsUnderMissingKeys } from './domain/connectors/credential-store.js';
import { recordWebhookDeliveries } from './domain/webhooks/deliveries.js';
import { webhooksUnderMissingKeys } from './domain/webhooks/store.js';
import { domainRefusalOf, isInputCoercionError, MCP_PATH, unavailableErrorOf } from './errors.js';
import { createEventBus } from './events/bus.js';
import { createOutboxRelay } from './events/relay.js';
import { startOutboxRetention } from './events/retention.js';
import { MAX_BODY_BYTES, MAX_UPLOAD_BYTES } from './http/body.js';
import { createBlobStore } from './infra/blob-store.js';
import { createEgressClient, type EgressClientOptions } from './infra/egress-client.js';
import { invalidateModelVersions, startModelCacheInvalidation } from './infra/model-cache-invalidation.js';
import {
  startApprovalSweeper,
  startCanaryAnalysis,
  startIdempotencySweeper,
  startLeaseSweeper,
  startRoutineTicker,
  startRunContentSweeper,
} from './infra/sweepers.js';
import { createWebhookDispatcher, type WebhookDispatcherOptions } from './infra/webhook-dispatcher.js';
import { createLogger, type Logger } from './logger.js';
import { createMetrics, metricsAccess } from './observability/metrics.js';
import type { Tracing } from './observability/tracing.js';
import { graphiqlOptions, renderGraphiQL } from './pages/graphiql.js';
import { useAuthentication } from './plugins/use-authentication.js';
import { useBodyLimit } from './plugins/use-body-limit.js';
import { useCallerResponseCache } from './plugins/use-caller-response-cache.js';
import { useDashboard } from './plugins/use-dashboard.js';
import { useErrorLog } from './plugins/use-error-log.js';
import { useHealth } from './plugins/use-health.js';
import { useIdempotency } from './plugins/use-idempotency.js';
import { useInputDepthLimit } from './plugins/use-input-depth-limit.js';
import { useLoadShedding } from './plugins/use-load-shedding.js';
import { useMetrics } from './plugins/use-metrics.js';
import { useNoIntrospection } from './plugins/use-no-introspection.js';
import { useNoSuggestions } from './plugins/use-no-suggestions.js';
import { usePages } from './plugins/use-pages.js';
import { useRateLimit } from './plugins/use-rate-limit.js';
import { useRequestId } from './plugins/use-request-id.js';
import { useRequestLog } from './plugins/use-request-log.js';
import { useSecurityHeaders } from './plugins/use-security-headers.js';
import { useSharedEventExecution } from './plugins/use-shared-event-execution.js';
import { useSubscriptionStreams } from './plugins/use-subscription-streams.js';
import { useUploads } from './plugins/use-uploads.js';
import { createRateLimiter } from './rate-limit.js';
import { schema } from './schema/index.js';
import type { Services } from './services.js';
import { createStreamSlots } from './stream-slots.js';
import { createTenantRegistry } from './tenancy.js';
import { armorLimits } from './validation/document-limits.js';

export interface App {
  yoga: YogaServerInstance<ServerContext, Context>;
  services: Services;
  /**
   * Applies pending migrations, then starts the outbox relay; returns the migrations applied. Aborting
   * `signal` stops between two migrations and rejects with the signal's reason.
   */
  start(options?: { signal?: AbortSignal }): Promise<string[]>;
  /** Stops background work and closes the database and the bus. */
  close(): Promise<void>;
}

export interface AppOptions {
  /** An already opened database (tests share one); otherwise one is opened from the config. */
  db?: Database;
  logger?: Logger;
  /** Tracing, when configured; the app shuts it down on close. */
  tracing?: Tracing | undefined;
  /**
   * Egress settings besides the configured allowlist; tests trust their own certificate authority (`ca`)
   * and answer DNS themselves (`lookup`). Default: none.
   */
  egress?: Pick<EgressClientOptions, 'ca' | 'lookup'>;
  /**
   * Webhook delivery settings: tests shorten the retry schedule, the disable threshold and the call
   * timeout. Default: the documented ones (docs/decisions/0040-webhooks.md, "Webhooks").
   */
  webhooks?: Pick<WebhookDispatcherOptions, 'retry' | 'idleMs' | 'callTimeoutMs'>;
}

/**
 * Cache lifetimes by schema coordinate; everything else is not cached, nor is a document that selects
 * any other root field beside these. Entries are per verified caller (useCallerResponseCache). Mutations
 * invalidate cached entities they return, and bus events invalidate across instances.
 */
export const cacheTtlPerCoordinate: Record<string, number> = {
  'Query.productionModel': 30000,
  'Query.modelVersions': 30000,
  'Query.agentVitals': 2000,
  // Counters that change with every finished task: a response that reads them is never cached.
  'ModelVersion.outcomes': 0,
  'ModelVersion.canaryAnalysis': 0,
};

/** How long one webhook attempt may take (connect, send, the receiver's answer), before it counts as failed. */
const WEBHOOK_CALL_TIMEOUT_MS = 10_000;

/** Builds one instance: database, bus, relay and the yoga server with every plugin, REST included. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  reportUnusedPrismaQueries(
    config.production
      ? null
      : (info) =>
          logger.warn(
            { field: `${info.parentType.name}.${info.fieldName}` },
            'Prisma query was unused in its resolver',
          ),
  );
  await checkDataDir(config.dataDir);
  const storage = createStorageGuard(config.dataDir);
  const db =
    options.db ??
    (await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      limits: config.database,
      onDataDirWait: (holder) =>
        logger.warn(
          { dataDir: config.dataDir, ...holder },
          'DATA_DIR is held by another process; waiting for it',
        ),
    }));
  const jwtSecret =
    config.auth.jwtSecret ?? (config.auth.jwksUrl ? undefined : await loadOrCreateDevSecret(config.dataDir));
  const bus = await createEventBus({ redisUrl: config.redisUrl, logger });
  // The documents REST routes and MCP tools run, by their text: the only operations metrics label by name.
  const knownOperations = new Map(
    [...compiledRoutes, ...mcpOperations(), ...a2aOperations()].map(({ query, operationName }) => [
      query,
      operationName,
    ]),
  );
  const metrics = createMetrics({ db, knownOperations });
  const responseCache = metrics.instrumentCache(createInMemoryCache());
  const rateLimiter = await createRateLimiter({
    perMinute: config.rateLimitPerMinute,
    authFailuresPerMinute: config.authFailuresPerMinute,
    redisUrl: config.redisUrl,
    logger,
  });
  const webhookCallTimeoutMs = options.webhooks?.callTimeoutMs ?? WEBHOOK_CALL_TIMEOUT_MS;
  const webhookEgress = createEgressClient({
    ...options.egress,
    allowlist: config.connectorEgressAllow,
    maxRedirects: 0,
    callTimeoutMs: webhookCallTimeoutMs,
    maxResponseBytes: 64 * 1024,
  });
  const services: Services = {
    config: { ...config, auth: { ...config.auth, jwtSecret } },
    db,
    prisma: db.prisma,
    logger,
    tokens: createTokenVerifier({ ...config.auth, jwtSecret }),
    tenants: createTenantRegistry(db.prisma),
    bus,
    relay: createOutboxRelay({
      prisma: db.prisma,
      bus,
      logger,
      listen: db.listen,
      onPass: (outcome) => metrics.relayPasses.inc({ outcome }),
      tracing: options.tracing,
      onPublished: async (tx, events) => {
        const { dropped } = await recordWebhookDeliveries(tx, events, config.webhooks.queuePerTenant);
        return () => metrics.webhookDeliveriesDropped.inc(dropped);
      },
    }),
    blobs: createBlobStore(path.join(config.dataDir, 'blobs')),
    responseCache,
    modelVersionsChanged: () => invalidateModelVersions(responseCache),
    rateLimiter,
    streams: createStreamSlots(config.maxStreamsPerCaller),
    metrics,
    egress: createEgressClient({
      ...options.egress,
      allowlist: config.connectorEgressAllow,
      callTimeoutMs: config.connectorCalls.timeoutMs,
    }),
    webhookEgress,
    webhooks: createWebhookDispatcher({
      prisma: db.prisma,
      logger,
      listen: db.listen,
      egress: webhookEgress,
      keyring: config.connectorSecretsKeys,
      inFlightPerTenant: config.webhooks.inFlightPerTenant,
      serializeClaims: db.kind === 'postgresql',
      onPass: (outcome) => metrics.webhookDispatchPasses.inc({ outcome }),
      ...options.webhooks,
      callTimeoutMs: webhookCallTimeoutMs,
    }),
    connectorCalls: createConnectorCallSlots(config.connectorCalls.perTenant),
    storage,
    unavailableCause(error) {
      const cause = databaseUnavailableCause(error);
      if (cause === 'disk full') storage.noteDiskFull();
      return cause;
    },
  };
  const routeTemplates = [...routes.map((route) => route.path), MCP_PATH];

  const yoga: YogaServerInstance<ServerContext, Context> = createYoga<ServerContext, Context>({
    schema,
    context: createContextFactory(services),
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: config.production ? false : graphiqlOptions,
    renderGraphiQL,
    logging: false,
    cors: corsPolicy(config.corsOrigins),
    // The one place every error (resolver, context, subscription) passes: a domain refusal becomes the
    // GraphQL error of its code; a database that is unreachable, overloaded or out of disk answers 503
    // SERVICE_UNAVAILABLE with Retry-After; anything else unexpected stays masked.
    maskedErrors: {
      maskError(error, message, isDev) {
        if (error instanceof GraphQLError && isInputCoercionError(error)) {
          // Even when a scalar threw a plain error on a hostile value (`{"toString": 0}` for a SafeInt), the
          // variable is the client's mistake: answered like every other invalid variable, not as internal
          // (graphql-js keeps the scalar's error as the original, and yoga would mask the whole answer).
          return createGraphQLError(error.message, { nodes: error.nodes });
        }
        return (
          domainRefusalOf(error) ??
          unavailableErrorOf(error, services.unavailableCause, config.retryAfterSeconds) ??
          maskError(error, message, isDev)
        );
      },
    },
    // useBodyLimit bounds every body, by caller, path and type; yoga's own limit would only stream each
    // body through a second counter.
    maxRequestBodySize: false,
    // useUploads parses multipart requests, streaming files to disk; yoga's parser holds them in memory.
    multipart: false,
    plugins: [
      ...(options.tracing ? [options.tracing.plugin({ routeTemplates })] : []),
      useMetrics({ metrics, access: metricsAccess(config), routeTemplates }),
      useRequestId(),
      useSecurityHeaders(),
      useRequestLog({ logger }),
      useAuthentication({ tokens: services.tokens }),
      useLoadShedding({
        maxInFlight: config.database.poolSize + config.database.queueSize,
        maxAnonymousPerAddress: config.http.maxAnonymousPerAddress,
        retryAfterSeconds: config.retryAfterSeconds,
        refusals: metrics.overloadRefusals,
      }),
      useRateLimit({ limiter: rateLimiter, refusals: metrics.rateLimitRefusals }),
      // Before the body limit, whose counting wraps the upload parser.
      useUploads({ directory: path.join(config.dataDir, 'uploads'), fields: ['sendChatMessage'] }),
      useBodyLimit({
        maxBytes: MAX_BODY_BYTES,
        // Each transport declares its routes' limits: REST beside each route, MCP for its endpoint.
        declaredLimit: (method, pathname) =>
          restBodyLimit(method, pathname) ?? mcpBodyLimit(method, pathname) ?? a2aBodyLimit(method, pathname),
        maxUploadBytes: MAX_UPLOAD_BYTES,
      }),
      useInputDepthLimit(),
      // After authentication and the database budget: an unauthenticated request never reaches the store.
      useIdempotency({ prisma: db.prisma, logger }),
      useSubscriptionStreams({ slots: services.streams, retryAfterSeconds: config.retryAfterSeconds }),
      useSharedEventExecution(),
      useHealth({
        ready: async () => (await db.ready(config.readyzTimeoutMs)) && (await storage.ready()),
        bus: () => bus.status(),
      }),
      usePages({ graphiql: !config.production }),
      useDashboard({ buildOnDemand: !config.production }),
      useRest(services),
      useMcp(services),
      useA2a(services),
      EnvelopArmorPlugin({
        ...armorLimits,
        // useNoSuggestions leaves suggestions out of every message, coercion included; this only masked some.
        blockFieldSuggestion: { enabled: false },
      }),
      ...(config.production ? [useNoIntrospection(), useNoSuggestions()] : []),
      useCallerResponseCache({ cache: responseCache, schema, ttlPerCoordinate: cacheTtlPerCoordinate }),
      useErrorLog({ logger }),
    ],
  });

  const background: (() => Promise<void>)[] = [];
  return {
    yoga,
    services,
    async start({ signal } = {}) {
      const applied = await db.migrate({
        signal,
        onApplying: (migration) => logger.info({ migration }, 'applying migration'),
        onRecovered: (migrations) =>
          logger.warn({ migrations }, 'applied again migrations an interrupted start had left unfinished'),
      });
      const missingKeys = await credentialsUnderMissingKeys(db.prisma, config.connectorSecretsKeys);
      if (Object.keys(missingKeys).length > 0) {
        logger.error(
          { secretsByKeyId: missingKeys },
          'connector credentials are sealed under keys CONNECTOR_SECRETS_KEY does not hold: they cannot be used until the keys are added back or the credentials set again',
        );
      } else if (config.production && config.connectorSecretsKeys.length === 0) {
        logger.warn('CONNECTOR_SECRETS_KEY is not set: connector credentials cannot be stored');
      }
      const unopenedWebhooks = await webhooksUnderMissingKeys(db.prisma, config.connectorSecretsKeys);
      if (unopenedWebhooks > 0) {
        logger.error(
          { webhooks: unopenedWebhooks },
          'webhook secrets are sealed under keys CONNECTOR_SECRETS_KEY does not hold: their deliveries fail until the keys are added back or the secrets are rotated',
        );
      }
      if (background.length === 0) {
        background.push(
          startModelCacheInvalidation(services),
          startLeaseSweeper({ prisma: db.prisma, logger }),
          startCanaryAnalysis({ prisma: db.prisma, logger }),
          startApprovalSweeper({ prisma: db.prisma, logger }),
          startRoutineTicker({ prisma: db.prisma, logger, intervalMs: config.routineTickIntervalMs }),
          startIdempotencySweeper({ prisma: db.prisma, logger }),
          startRunContentSweeper({ prisma: db.prisma, logger }),
          startOutboxRetention({ prisma: db.prisma, logger, retentionHours: config.eventRetentionHours }),
        );
      }
      await services.relay.start();
      await services.webhooks.start();
      return applied;
    },
    async close() {
      await services.relay.stop();
      await services.webhooks.stop();
      await Promise.all(background.splice(0).map((stop) => stop()));
      await bus.close();
      await rateLimiter.close();
      await services.egress.close();
      await services.webhookEgress.close();
      if (!options.db) await db.close();
      await options.tracing?.shutdown();
    },
  };
}
