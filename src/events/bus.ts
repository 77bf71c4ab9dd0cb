import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub, filter, pipe } from 'graphql-yoga';
import { Redis } from 'ioredis';
import type { BusEvent, EventType } from './topics.js';

export interface EventBus {
  publish(event: BusEvent): Promise<void>;
  /** Events of one type for one tenant, each event id at most once per subscriber. */
  subscribe(type: EventType, tenantId: string): AsyncIterable<BusEvent>;
  /** Every event of one type, for in-process consumers such as cache invalidation. */
  subscribeAll(type: EventType): AsyncIterable<BusEvent>;
  close(): Promise<void>;
}

export interface EventBusOptions {
  /** redis:// URL; without it events stay in this process. */
  redisUrl?: string | undefined;
}

type Channels = Record<string, [BusEvent]>;

/**
 * The bus between instances: an in-process pub/sub, carried over Redis when REDIS_URL is set so a
 * subscriber on one instance receives what another committed. Delivery is at least once (the outbox relay
 * may publish an event again after a crash), so subscribers drop event ids they have already seen.
 */
export async function createEventBus(options: EventBusOptions = {}): Promise<EventBus> {
  const clients: Redis[] = [];
  let config: Parameters<typeof createPubSub<Channels>>[0] = {};
  if (options.redisUrl) {
    const connect = async () => {
      const client = new Redis(options.redisUrl as string, { lazyConnect: true, maxRetriesPerRequest: 3 });
      await client.connect();
      clients.push(client);
      return client;
    };
    config = {
      eventTarget: createRedisEventTarget({
        publishClient: await connect(),
        subscribeClient: await connect(),
      }),
    };
  }
  const pubsub = createPubSub<Channels>(config);
  const channel = (type: string) => `boardroom:${type}`;

  return {
    async publish(event) {
      pubsub.publish(channel(event.type), event);
    },
    subscribe(type, tenantId) {
      const seen = new Set<string>();
      return pipe(
        pubsub.subscribe(channel(type)),
        filter((event: BusEvent) => {
          if (event.tenantId !== tenantId || seen.has(event.eventId)) return false;
          seen.add(event.eventId);
          if (seen.size > 10_000) seen.delete(seen.values().next().value as string);
          return true;
        }),
      );
    },
    subscribeAll(type) {
      return pubsub.subscribe(channel(type));
    },
    async close() {
      await Promise.all(clients.map((client) => client.quit().catch(() => client.disconnect())));
    },
  };
}
