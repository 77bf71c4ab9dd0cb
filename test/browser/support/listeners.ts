import type { EventBus } from '../../../src/events/bus.js';
import type { EventType } from '../../../src/events/topics.js';

/**
 * Resolves when the next subscriber of `type` starts listening on the bus, so that an event published
 * afterwards reaches it: `listen` registers its listener before it returns.
 */
export function nextListener(bus: EventBus, type: EventType): Promise<void> {
  const original = bus.listen;
  return new Promise((resolve) => {
    bus.listen = (types, tenantId, listener, onGap) => {
      const stop = original.call(bus, types, tenantId, listener, onGap);
      if (types.includes(type)) {
        bus.listen = original;
        resolve();
      }
      return stop;
    };
  });
}
