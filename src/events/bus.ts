import { createPubSub, filter, pipe } from 'graphql-yoga';
import type { Logger } from '../logger.js';
import { createRedisClient } from '../redis.js';
import { Fanout, type GapListener } from './fanout.js';
import { type BusEvent, EVENT_TYPES, type EventType } from './topics.js';

/** `in-process`: no Redis configured; `disconnected`: Redis configured but unreachable right now. */
export type BusStatus = 'in-process' | 'connected' | 'disconnected';

export interface EventBus {
  /** Resolves once the bus has accepted the event (with Redis: Redis confirmed it), else rejects. */
  publish(event: BusEvent): Promise<void>;
  /** Events of one type for one tenant, each event id at most once per subscriber (tests and tools). */
  subscribe(type: EventType, tenantId: string): AsyncIterable<BusEvent>;
  /** Every event of one type, for in-process consumers such as cache invalidation. */
  subscribeAll(type: EventType): AsyncIterable<BusEvent>;
  /**
   * Calls `listener` with every event of these types for one tenant from the moment this returns (no lazy
   * start, unlike the iterables above: replay relies on it), each event id once, in order; and `onGap`, in
   * order with the events, each time this instance's subscription to Redis is confirmed again after it was
   * lost, with a test of whether an event id had already reached the listener (see replay.ts). Listeners
   * are called a slice at a time (see fanout.ts). Returns the function that stops listening.
   */
  listen(
    types: readonly EventType[],
    tenantId: string,
    listener: (event: BusEvent) => void,
    onGap?: GapListener,
  ): () => void;
  /**
   * Calls `listener` each time this instance's subscription to Redis is confirmed again after it was
   * lost: whatever other instances published meanwhile never reached this instance's listeners (it is
   * in the outbox). Never called without Redis. Returns the function that stops listening.
   */
  onResubscribed(listener: () => void): () => void;
  /** Whether events can reach other instances right now (reported by `/readyz`). */
  status(): BusStatus;
  close(): Promise<void>;
}

export interface EventBusOptions {
  /** redis:// URL; without it events stay in this process. */
  redisUrl?: string | undefined;
  /** Where Redis outages and recoveries are logged. Default: nowhere. */
  logger?: Logger | undefined;
}

type Channels = Record<string, [BusEvent]>;
/** The part of an EventTarget the bus uses; yoga's pub/sub dispatches CustomEvents carrying the event. */
interface BusEventTarget {
  addEventListener(type: string, listener: (event: CustomEvent<BusEvent>) => void): void;
  removeEventListener(type: string, listener: (event: CustomEvent<BusEvent>) => void): void;
  dispatchEvent(event: Event): boolean;
}

const channel = (type: string) => `boardroom:${type}`;
/** Messages held while a re-subscription is being confirmed; beyond it they are dropped (the outbox has them). */
const MAX_HELD = 10_000;

/**
 * The bus between instances: an in-process pub/sub, carried over Redis when REDIS_URL is set so a
 * subscriber on one instance receives what another committed. Delivery is at least once (the outbox relay
 * may publish an event again after a crash or a failed publish), so subscribers drop event ids they have
 * already seen.
 *
 * With Redis, `publish` resolves only once Redis has accepted the event and rejects at once while Redis is
 * unreachable (no offline queue), so the relay keeps the event in the outbox until it can go out. The
 * subscriber connection queues its commands instead and re-subscribes every channel after a reconnect,
 * so subscriptions recover on their own; what other instances published while this one was not
 * subscribed is announced by `onResubscribed` and read back from the outbox by the event streams
 * (replay.ts). Neither client can take the process down.
 */
export async function createEventBus(options: EventBusOptions = {}): Promise<EventBus> {
  const target: BusEventTarget = new EventTarget() as BusEventTarget;
  const pubsub = createPubSub<Channels>({ eventTarget: target as never });
  const fanout = new Fanout();
  if (!options.redisUrl) {
    return {
      ...listeners(pubsub, fanout),
      async publish(event) {
        pubsub.publish(channel(event.type), event);
        fanout.dispatch(event);
      },
      onResubscribed: () => () => {},
      status: () => 'in-process',
      async close() {},
    };
  }
  const publisher = await createRedisClient(options.redisUrl, 'bus publisher', options.logger, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // A hung Redis must not hold the relay's transaction open.
    commandTimeout: 2000,
  });
  const subscriber = await createRedisClient(options.redisUrl, 'bus subscriber', options.logger, {
    maxRetriesPerRequest: null,
    autoResubscribe: true,
  });
  let subscribed = false;
  const deliver = (name: string, message: string) => {
    let event: BusEvent;
    try {
      event = JSON.parse(message) as BusEvent;
    } catch {
      return;
    }
    target.dispatchEvent(new CustomEvent(name, { detail: event }));
    fanout.dispatch(event);
  };
  // Messages that arrive after a reconnect but before the subscription is confirmed are held back and
  // delivered after the `onResubscribed` listeners ran, so a stream sees the gap before anything newer.
  let held: [string, string][] = [];
  subscriber.on('message', (name: string, message: string) => {
    if (subscribed) deliver(name, message);
    else if (held.length < MAX_HELD) held.push([name, message]);
  });
  // Every channel stays subscribed for the bus's lifetime. When Redis answers, the subscription is
  // confirmed before the bus is handed out: a listener added later receives everything Redis delivers
  // from then on. When it does not, the instance starts without it (the outbox keeps what is written)
  // and the queued SUBSCRIBE goes out once Redis is back. ioredis re-subscribes by itself after a
  // reconnect; subscribing again on 'ready' tells us when that is confirmed.
  const channels = EVENT_TYPES.map(channel);
  const resubscribed = new Set<() => void>();
  const confirmSubscription = () =>
    subscriber.subscribe(...channels).then(
      () => {
        const was = subscribed;
        subscribed = subscriber.status === 'ready';
        if (!subscribed || was) return;
        for (const listener of [...resubscribed]) listener();
        fanout.gap();
        const waiting = held;
        held = [];
        for (const [name, message] of waiting) deliver(name, message);
      },
      () => {},
    );
  subscriber.on('close', () => {
    subscribed = false;
  });
  subscriber.on('ready', () => void confirmSubscription());
  await new Promise<void>((resolve) => {
    void confirmSubscription().then(resolve);
    subscriber.once('error', () => resolve());
  });
  const connected = () => publisher.status === 'ready' && subscribed;

  return {
    ...listeners(pubsub, fanout),
    async publish(event) {
      // Not while this instance's own subscription is down: its subscribers would miss the event for good.
      if (!connected()) throw new Error('the event bus is not connected to Redis');
      await publisher.publish(channel(event.type), JSON.stringify(event));
    },
    onResubscribed(listener) {
      resubscribed.add(listener);
      return () => resubscribed.delete(listener);
    },
    status: () => (connected() ? 'connected' : 'disconnected'),
    async close() {
      await Promise.all(
        [publisher, subscriber].map((client) => client.quit().catch(() => client.disconnect())),
      );
    },
  };
}

/** Subscribing and listening, the same over Redis and in process. */
function listeners(
  pubsub: ReturnType<typeof createPubSub<Channels>>,
  fanout: Fanout,
): Pick<EventBus, 'subscribe' | 'subscribeAll' | 'listen'> {
  return {
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
    listen: (types, tenantId, listener, onGap) => fanout.listen(types, tenantId, listener, onGap),
  };
}
