import type { EventBus } from '../events/bus.js';
import type { Logger } from '../logger.js';

/** The instance's response cache, as far as dropping entries by type goes. */
export interface ResponseCache {
  invalidate(entities: Iterable<{ typename: string; id?: number | string }>): Promise<void> | void;
}

/** Cached responses that hold a model version, including a cached null `productionModel`. */
const MODEL_VERSION_ENTITIES = [{ typename: 'ModelVersion' }];

/**
 * A query that read the old state before the change committed may store its result after the first
 * invalidation; a second pass this much later removes it.
 */
const SECOND_PASS_MS = 250;

/**
 * Drops every cached response of this instance that holds a model version: what app.ts answers the
 * domain's ModelVersionsChanged with.
 */
export async function invalidateModelVersions(responseCache: ResponseCache): Promise<void> {
  await responseCache.invalidate(MODEL_VERSION_ENTITIES);
}

/**
 * Keeps this instance's response cache in step with model version changes made on any instance: every
 * MODEL_VERSION_CHANGED event on the bus invalidates cached model versions, and so does the bus
 * re-subscribing after it lost Redis (changes made meanwhile never reached this instance). Returns a stop
 * function.
 */
export function startModelCacheInvalidation(services: {
  bus: EventBus;
  responseCache: ResponseCache;
  logger: Logger;
}): () => Promise<void> {
  const events = services.bus.subscribeAll('MODEL_VERSION_CHANGED')[Symbol.asyncIterator]();
  const timers = new Set<NodeJS.Timeout>();
  const invalidate = () =>
    Promise.resolve(invalidateModelVersions(services.responseCache)).catch((error: unknown) =>
      services.logger.error({ err: error }, 'model version cache invalidation failed'),
    );

  const stopGaps = services.bus.onResubscribed(() => void invalidate());

  const running = (async () => {
    for (;;) {
      const next = await events.next();
      if (next.done) return;
      await invalidate();
      const timer = setTimeout(() => {
        timers.delete(timer);
        void invalidate();
      }, SECOND_PASS_MS);
      timer.unref();
      timers.add(timer);
    }
  })().catch((error: unknown) =>
    services.logger.error({ err: error }, 'model version change subscription ended'),
  );

  return async () => {
    stopGaps();
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    await events.return?.();
    await running;
  };
}
