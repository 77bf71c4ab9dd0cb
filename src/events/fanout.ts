import type { BusEvent, EventType } from './topics.js';

export interface FanoutOptions {
  /** Listeners called before the fan-out yields to the event loop. Default 32. */
  slice?: number;
  /** Event ids remembered to drop a second publication of the same event. Default 10,000. */
  rememberedIds?: number;
}

/**
 * Told, in order with the events, that the bus lost events for a while (Redis re-subscribed);
 * `delivered(eventId)` says whether that event already reached this listener before the gap.
 */
export type GapListener = (delivered: (eventId: string) => boolean) => void;

interface Listener {
  types: readonly EventType[];
  tenantId: string;
  /** Ordinal of the last item dispatched before the listener was added: it receives later ones only. */
  since: number;
  event(event: BusEvent): void;
  gap: GapListener | undefined;
}

/** An event, with the ordinal of the previous publication of its id seen here (if any), or a gap. */
type Item =
  | { ordinal: number; event: BusEvent; previous: number | undefined }
  | { ordinal: number; gap: true };

/** Ordinals of the first and of the latest publication of an event id. */
interface Seen {
  first: number;
  last: number;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The bus's event listeners on this instance, by tenant. An event is handed to its tenant's listeners a
 * slice at a time, each slice in a turn of the event loop of its own: the subscriptions a slice wakes run
 * to the socket before the next slice starts, so what one delivery allocates is garbage before the next
 * begins (instead of every subscriber's half-done delivery living at once, long enough to be promoted to
 * the old generation), and other requests are served between slices. Events are delivered one after the
 * other, in arrival order, so each listener sees them in order.
 *
 * Delivery is at least once upstream (the relay may publish an event again), so a repeat of an event id is
 * handed only to listeners added since its previous publication reached this instance: one record per
 * event for the whole instance instead of a set of ids per subscriber.
 */
export class Fanout {
  private readonly byTenant = new Map<string, Set<Listener>>();
  private readonly all = new Set<Listener>();
  /** Event id → ordinals of its publications, for the last `rememberedIds` events. */
  private readonly seen = new Map<string, Seen>();
  private readonly queue: Item[] = [];
  private ordinal = 0;
  private draining = false;
  private readonly slice: number;
  private readonly rememberedIds: number;

  constructor(options: FanoutOptions = {}) {
    this.slice = options.slice ?? 32;
    this.rememberedIds = options.rememberedIds ?? 10_000;
  }

  /** Adds a listener for events dispatched from now on; returns the function that removes it. */
  listen(
    types: readonly EventType[],
    tenantId: string,
    event: (event: BusEvent) => void,
    gap?: GapListener,
  ): () => void {
    const listener: Listener = { types, tenantId, since: this.ordinal, event, gap };
    let listeners = this.byTenant.get(tenantId);
    if (!listeners) {
      listeners = new Set();
      this.byTenant.set(tenantId, listeners);
    }
    listeners.add(listener);
    this.all.add(listener);
    return () => {
      this.all.delete(listener);
      const current = this.byTenant.get(tenantId);
      if (!current?.delete(listener) || current.size > 0) return;
      this.byTenant.delete(tenantId);
    };
  }

  dispatch(event: BusEvent): void {
    const ordinal = ++this.ordinal;
    const seen = this.seen.get(event.eventId);
    const previous = seen?.last;
    if (seen) seen.last = ordinal;
    else {
      this.seen.set(event.eventId, { first: ordinal, last: ordinal });
      if (this.seen.size > this.rememberedIds) this.seen.delete(this.seen.keys().next().value as string);
    }
    this.queue.push({ ordinal, event, previous });
    this.drain();
  }

  /** Tells every listener, after the events dispatched so far, that events were lost meanwhile. */
  gap(): void {
    this.queue.push({ ordinal: ++this.ordinal, gap: true });
    this.drain();
  }

  /** Listeners registered now (all tenants). */
  get size(): number {
    return this.all.size;
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    // Runs synchronously up to its first slice boundary: a handful of listeners are called at once.
    void this.deliverQueued();
  }

  private async deliverQueued(): Promise<void> {
    try {
      for (let item = this.queue.shift(); item; item = this.queue.shift()) {
        let called = 0;
        // A live iteration: listeners removed meanwhile are skipped, those added meanwhile are newer than
        // the item and skipped by their ordinal.
        for (const listener of 'gap' in item ? this.all : (this.byTenant.get(item.event.tenantId) ?? [])) {
          if (!this.hand(item, listener)) continue;
          called += 1;
          if (called % this.slice === 0) await nextTurn();
        }
      }
    } finally {
      // In the same turn as the last check of the queue: an item dispatched later starts a new drain.
      this.draining = false;
    }
  }

  /** Hands the item to the listener if it is one for it; says whether it did. */
  private hand(item: Item, listener: Listener): boolean {
    if (listener.since >= item.ordinal) return false;
    if ('gap' in item) {
      const { gap } = listener;
      if (!gap) return false;
      const before = item.ordinal;
      // A listener got an event if one of its publications came between the listener and the gap (the
      // first and latest are known; a third publication in between is rare and only repeats the event).
      const reached = (ordinal: number) => listener.since < ordinal && ordinal < before;
      call(() =>
        gap((eventId) => {
          const seen = this.seen.get(eventId);
          return seen !== undefined && (reached(seen.first) || reached(seen.last));
        }),
      );
      return true;
    }
    // A repeat goes only to listeners that were not there for its previous publication.
    if (item.previous !== undefined && listener.since < item.previous) return false;
    if (!listener.types.includes(item.event.type)) return false;
    const { event } = item;
    call(() => listener.event(event));
    return true;
  }
}

/** A throwing listener is reported as an uncaught exception (as EventTarget does) and stops no other. */
function call(listener: () => void): void {
  try {
    listener();
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}
