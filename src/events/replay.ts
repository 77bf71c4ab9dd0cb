import type { PrismaClient } from '../db/client.js';
import { serviceError } from '../errors.js';
import type { EventBus } from './bus.js';
import { RELAY_LOCK_SQL } from './relay.js';
import type { BusEvent, EventType } from './topics.js';

export interface EventStreamOptions {
  prisma: PrismaClient;
  bus: EventBus;
  tenantId: string;
  types: readonly EventType[];
  /** Id of the last event the client received: every later event of the tenant is replayed first. */
  after?: string | null | undefined;
  /** Which events the subscriber wants (a role, a base model); default all of `types`. */
  accept?: (event: BusEvent) => boolean;
  /** Live events held for a client that reads slower than they come; beyond it the stream ends. Default 10,000. */
  maxBuffered?: number;
}

const PAGE_SIZE = 200;

interface OutboxRow {
  id: string;
  tenant_id: string;
  type: string;
  payload: Record<string, unknown>;
  seq: string;
}

export const resumePointExpired = (after: string) =>
  serviceError(
    'RESUME_POINT_EXPIRED',
    `Cannot resume after event ${after}: it is unknown or older than the replay window ` +
      '(EVENT_RETENTION_HOURS). Subscribe without `after` and reload the current state.',
  );

/**
 * Queued when the bus re-subscribed after losing Redis: the stream reads what it missed from the outbox,
 * less what had reached it live already (`delivered`).
 */
interface Gap {
  delivered: (eventId: string) => boolean;
}
type Item = BusEvent | Gap;

/** Live events, held in arrival order from the moment the queue exists until they are read. */
class LiveQueue {
  private items: Item[] = [];
  private waiter: ((result: IteratorResult<Item, undefined>) => void) | undefined;
  private closed = false;

  constructor(private readonly max: number) {}

  push(event: Item): void {
    if (this.closed) return;
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter({ value: event, done: false });
    } else if (this.items.length < this.max) {
      this.items.push(event);
    } else {
      // A client this far behind resumes with `after` instead of holding memory without bound.
      this.close();
    }
  }

  next(): Promise<IteratorResult<Item, undefined>> {
    const item = this.items.shift();
    if (item) return Promise.resolve({ value: item, done: false });
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  close(): void {
    this.closed = true;
    this.items = [];
    this.waiter?.({ value: undefined, done: true });
    this.waiter = undefined;
  }
}

/**
 * Waits until no relay pass is in flight: every event the bus has carried so far is then committed. The
 * wait is one relay pass at most, which a slow Redis (2 s per publish) or a busy pool can stretch past
 * Prisma's defaults for an interactive transaction (2 s to start, 5 s to finish); running out of those
 * would end the client's subscription with an unexpected error instead of a late event.
 */
async function relayBarrier(prisma: PrismaClient): Promise<void> {
  await prisma.$transaction(
    (tx) => tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock_shared(${RELAY_LOCK_SQL})`),
    { maxWait: 10_000, timeout: 20_000 },
  );
}

/**
 * The outbox sequence's position now: every event published from now on gets a higher `seq`. A stream
 * opened without `after` reads back from here after a gap when no event has come since.
 */
async function currentSeq(prisma: PrismaClient): Promise<bigint> {
  const [row] = await prisma.$queryRawUnsafe<{ seq: string | null }[]>(
    `SELECT pg_sequence_last_value(pg_get_serial_sequence('outbox_events', 'seq')::regclass)::text AS seq`,
  );
  return BigInt(row?.seq ?? 0);
}

/**
 * `currentSeq` for streams opening at the same time: one read at a time per database, and every stream that
 * asks while one is under way shares the next one, which starts after it asked (a read that began earlier
 * could miss an event published in between). Ten thousand subscribers arriving together cost a few reads
 * instead of a database queue full of identical ones.
 */
const sequenceReaders = new WeakMap<PrismaClient, () => Promise<bigint>>();
function sharedCurrentSeq(prisma: PrismaClient): Promise<bigint> {
  let reader = sequenceReaders.get(prisma);
  if (!reader) {
    let inFlight: Promise<bigint> | undefined;
    let queued: Promise<bigint> | undefined;
    const start = () => {
      const read: Promise<bigint> = currentSeq(prisma).finally(() => {
        if (inFlight === read) inFlight = undefined;
      });
      inFlight = read;
      return read;
    };
    reader = () => {
      if (!inFlight) return start();
      queued ??= inFlight
        .catch(() => undefined)
        .then(() => {
          queued = undefined;
          return start();
        });
      return queued;
    };
    sequenceReaders.set(prisma, reader);
  }
  return reader();
}

async function resumePoint(prisma: PrismaClient, tenantId: string, after: string): Promise<bigint> {
  const [row] = await prisma.$queryRawUnsafe<{ seq: string }[]>(
    `SELECT seq::text AS seq FROM outbox_events
     WHERE id = $1::uuid AND tenant_id = $2::uuid AND published_at IS NOT NULL`,
    after,
    tenantId,
  );
  if (!row) throw resumePointExpired(after);
  return BigInt(row.seq);
}

function readPage(options: EventStreamOptions, afterSeq: bigint): Promise<OutboxRow[]> {
  return options.prisma.$queryRawUnsafe<OutboxRow[]>(
    // Ordered by the bigint column, not by its text rendering in the select list.
    `SELECT o.id::text, o.tenant_id::text, o.type, o.payload, o.seq::text AS seq FROM outbox_events o
     WHERE o.tenant_id = $1::uuid AND o.published_at IS NOT NULL AND o.seq > $2::bigint
       AND o.type = ANY($3::text[])
     ORDER BY o.seq LIMIT ${PAGE_SIZE}`,
    options.tenantId,
    afterSeq.toString(),
    [...options.types],
  );
}

/**
 * A tenant's events: with `after`, first the published outbox rows newer than that event in commit order,
 * then live ones, without gaps or duplicates. The live listener is registered before the backlog is read
 * and buffers meanwhile; a barrier on the relay lock makes everything published before that moment
 * visible to the backlog; live events the backlog already delivered are dropped by `seq` (a live copy of
 * a row carries the row's seq or, when that publication rolled back, an earlier one). The bus hands each
 * event id to a listener once, so the stream keeps no ids of its own. When the bus re-subscribes after
 * losing Redis, the stream reads the events it missed meanwhile from the outbox the same way (after the
 * last `seq` it delivered, less what the bus says reached it live) before going on with live ones: a gap
 * in the live feed never reaches the client. Throws RESUME_POINT_EXPIRED when `after` is unknown to the tenant
 * or was pruned.
 */
export async function openEventStream(options: EventStreamOptions): Promise<AsyncIterableIterator<BusEvent>> {
  const accept = options.accept ?? (() => true);
  const queue = new LiveQueue(options.maxBuffered ?? 10_000);
  const stopListening = options.bus.listen(
    options.types,
    options.tenantId,
    (event) => queue.push(event),
    (delivered) => queue.push({ delivered }),
  );
  const close = () => {
    stopListening();
    queue.close();
  };

  // Live events with a seq up to `replayedUpTo` were read from the outbox already; `position` is the
  // highest seq this stream has handled (or, opened without `after` on Redis, the sequence when it
  // opened), from where it reads back after a gap.
  let replayedUpTo: bigint | null = null;
  let position: bigint | null = null;
  try {
    if (options.after) {
      await relayBarrier(options.prisma);
      replayedUpTo = await resumePoint(options.prisma, options.tenantId, options.after);
      position = replayedUpTo;
    } else if (options.bus.status() !== 'in-process') {
      position = await sharedCurrentSeq(options.prisma);
    }
  } catch (error) {
    close();
    throw error;
  }

  /** Outbox rows after `position`, in seq order, less those `delivered` live; advances both marks. */
  async function* readBack(delivered?: Gap['delivered']): AsyncGenerator<BusEvent, undefined> {
    while (position !== null) {
      const rows = await readPage(options, position);
      for (const row of rows) {
        position = BigInt(row.seq);
        if (replayedUpTo === null || position > replayedUpTo) replayedUpTo = position;
        // A live event whose first publication rolled back is in the outbox under a later seq.
        if (delivered?.(row.id)) continue;
        const event: BusEvent = {
          eventId: row.id,
          type: row.type as EventType,
          tenantId: row.tenant_id,
          payload: row.payload,
          seq: row.seq,
        };
        if (accept(event)) yield event;
      }
      if (rows.length < PAGE_SIZE) return undefined;
    }
    return undefined;
  }

  // A backlog being read (the one after `after`, or one after a gap) is drained before live events.
  let backlog: AsyncGenerator<BusEvent, undefined> | undefined = options.after ? readBack() : undefined;
  let ended = false;
  const end = (): IteratorResult<BusEvent, undefined> => {
    if (!ended) {
      ended = true;
      close();
      // Its error, if any, reached the `next` that was reading it.
      backlog?.return(undefined).catch(() => undefined);
    }
    return { value: undefined, done: true };
  };

  /**
   * The stream's next event. A plain async function rather than an async generator: a live event costs
   * each of thousands of subscribers one wait on its queue and one promise, not a generator's extra turns.
   */
  async function next(): Promise<IteratorResult<BusEvent, undefined>> {
    try {
      for (;;) {
        if (ended) return end();
        if (backlog) {
          const step = await backlog.next();
          if (!step.done) return step;
          backlog = undefined;
        }
        const item = await queue.next();
        if (item.done) return end();
        const event = item.value;
        if ('delivered' in event) {
          // Whatever was published before the bus re-subscribed is committed once the relay lock is free.
          await relayBarrier(options.prisma);
          backlog = readBack(event.delivered);
          continue;
        }
        const seq = event.seq === undefined ? undefined : BigInt(event.seq);
        if (replayedUpTo !== null && seq !== undefined && seq <= replayedUpTo) continue;
        if (seq !== undefined && (position === null || seq > position)) position = seq;
        if (accept(event)) return { value: event, done: false };
      }
    } catch (error) {
      end();
      throw error;
    }
  }

  const stream: AsyncIterableIterator<BusEvent> = {
    next,
    // Closing the queue ends a wait under way: its `next` answers done.
    return: async () => end(),
    [Symbol.asyncIterator]: () => stream,
  };
  return stream;
}
