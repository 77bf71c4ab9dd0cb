import path from 'node:path';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { createInMemoryCache, useResponseCache } from '@graphql-yoga/plugin-response-cache';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { useRest } from '../rest/index.js';
import { loadOrCreateDevSecret } from './auth/dev-secret.js';
import { createTokenVerifier } from './auth/tokens.js';
import type { Config } from './config.js';
import { type Context, createContextFactory, type ServerContext } from './context.js';
import { type Database, openDatabase } from './db/client.js';
import { createBlobStore } from './domain/agents/blob-store.js';
import { startLeaseSweeper } from './domain/agents/lease-sweeper.js';
import { startModelCacheInvalidation } from './domain/finetuning/cache-invalidation.js';
import { createEventBus } from './events/bus.js';
import { createOutboxRelay } from './events/relay.js';
import { createLogger, type Logger } from './logger.js';
import { MAX_REQUEST_BYTES, useBodyLimit } from './plugins/use-body-limit.js';
import { useErrorLog } from './plugins/use-error-log.js';
import { useHealth } from './plugins/use-health.js';
import { useNoIntrospection } from './plugins/use-no-introspection.js';
import { useRateLimit } from './plugins/use-rate-limit.js';
import { useRequestId } from './plugins/use-request-id.js';
import { useRequestLog } from './plugins/use-request-log.js';
import { createRateLimiter } from './rate-limit.js';
import { schema } from './schema/index.js';
import type { Services } from './services.js';
import { createTenantRegistry } from './tenancy.js';

export interface App {
  yoga: YogaServerInstance<ServerContext, Context>;
  services: Services;
  /** Applies pending migrations, then starts the outbox relay; returns the migrations applied. */
  start(): Promise<string[]>;
  /** Stops background work and closes the database and the bus. */
  close(): Promise<void>;
}

export interface AppOptions {
  /** An already opened database (tests share one); otherwise one is opened from the config. */
  db?: Database;
  logger?: Logger;
}

/**
 * Cache lifetimes by schema coordinate; everything else is not cached. Mutations invalidate cached
 * entities they return, and bus events invalidate across instances.
 */
export const cacheTtlPerCoordinate: Record<string, number> = {
  'Query.productionModel': 30000,
  'Query.modelVersions': 30000,
  'Query.agentVitals': 2000,
};

/** Builds one instance: database, bus, relay and the yoga server with every plugin, REST included. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const db = options.db ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }));
  const jwtSecret =
    config.auth.jwtSecret ?? (config.auth.jwksUrl ? undefined : await loadOrCreateDevSecret(config.dataDir));
  const bus = await createEventBus({ redisUrl: config.redisUrl });
  const responseCache = createInMemoryCache();
  const rateLimiter = await createRateLimiter({
    perMinute: config.rateLimitPerMinute,
    redisUrl: config.redisUrl,
  });
  const services: Services = {
    config: { ...config, auth: { ...config.auth, jwtSecret } },
    db,
    prisma: db.prisma,
    logger,
    tokens: createTokenVerifier({ ...config.auth, jwtSecret }),
    tenants: createTenantRegistry(db.prisma),
    bus,
    relay: createOutboxRelay({ prisma: db.prisma, bus, logger }),
    blobs: createBlobStore(path.join(config.dataDir, 'blobs')),
    responseCache,
  };

  const yoga: YogaServerInstance<ServerContext, Context> = createYoga<ServerContext, Context>({
    schema,
    context: createContextFactory(services),
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: config.production ? false : { title: 'Boardroom', subscriptionsProtocol: 'WS' },
    logging: false,
    maskedErrors: true,
    // yoga's own limit (25 MB by default) must admit what useBodyLimit admits: a chat with 5 attachments.
    maxRequestBodySize: MAX_REQUEST_BYTES,
    plugins: [
      useRequestId(),
      useRequestLog({ logger }),
      useRateLimit({ limiter: rateLimiter }),
      useBodyLimit({ maxBytes: MAX_REQUEST_BYTES }),
      useHealth({ ready: () => db.ready() }),
      useRest(services, (): YogaServerInstance<ServerContext, Context> => yoga),
      EnvelopArmorPlugin({
        maxDepth: { n: 12 },
        costLimit: { maxCost: 5000 },
        maxAliases: { n: 40 },
        maxDirectives: { n: 20 },
        maxTokens: { n: 5000 },
        blockFieldSuggestion: { enabled: config.production },
      }),
      ...(config.production ? [useNoIntrospection()] : []),
      useResponseCache<Context>({
        cache: responseCache,
        session: (_request, context) =>
          context.viewer
            ? `${context.viewer.tenantId}:${context.viewer.sub}:${[...context.viewer.roles].sort()}`
            : null,
        ttl: 0,
        ttlPerSchemaCoordinate: cacheTtlPerCoordinate,
        invalidateViaMutation: true,
      }),
      useErrorLog(),
    ],
  });

  const background: (() => Promise<void>)[] = [];
  return {
    yoga,
    services,
    async start() {
      const applied = await db.migrate();
      if (background.length === 0) {
        background.push(
          startModelCacheInvalidation(services),
          startLeaseSweeper({ prisma: db.prisma, logger, onChange: () => void services.relay.kick() }),
        );
      }
      services.relay.start();
      return applied;
    },
    async close() {
      await services.relay.stop();
      await Promise.all(background.splice(0).map((stop) => stop()));
      await bus.close();
      await rateLimiter.close();
      if (!options.db) await db.close();
    },
  };
}
