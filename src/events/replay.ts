import type { PrismaClient } from '../db/client.js';
import { serviceError } from '../errors.js';
import type { EventBus } from './bus.js';
import { eventFromRow, type OutboxRow, PUBLISHED_EVENT_COLUMNS } from './outbox.js';
import { RELAY_LOCK_SQL } from './relay.js';
import type { BusEvent, EventType } from './topics.js';

export interface EventStreamOptions {
  prisma: PrismaClient;
  bus: EventBus;
  tenantId: string;
  types: readonly EventType[];
  /**
   * Where to resume: the id of the last event the client received, or a stream position (`start` of an
   * earlier stream, see `isStreamPosition`). Every later event of the tenant is replayed first.
   */
  after?: string | null | undefined;
  /**
   * Fix the stream's `start` when it opens without `after`: a position to resume from even if no event
   * ever reaches the client. Costs one relay barrier and one read, shared by the streams opening together.
   */
  announceStart?: boolean;
  /**
   * EVENT_RETENTION_HOURS: how old a position may be when no event published before it is left to prove
   * that nothing after it was pruned. Default 24.
   */
  retentionHours?: number;
  /** Which events the subscriber wants (a role, a base model); default all of `types`. */
  accept?: (event: BusEvent) => boolean;
  /** Live events held for a client that reads slower than they come; beyond it the stream ends. Default 10,000. */
  maxBuffered?: number;
}

const PAGE_SIZE = 200;

/** A tenant's event stream; `start` is where it begins (see `EventStreamOptions.announceStart`). */
export interface EventStream extends AsyncIterableIterator<BusEvent> {
  /**
   * Where the stream starts: `after` as given, or the position it fixed when it opened (with
   * `announceStart`); null otherwise. Passed back as `after`, it resumes exactly after what this stream
   * covers, whether or not an event came.
   */
  readonly start: string | null;
}

/**
 * A stream position: `pos:` and the database clock in microseconds since the epoch when the stream fixed
 * it, read while no relay pass was in flight. Every event published before it has an earlier
 * `published_at`, every event published after it a later one; unlike `seq`, which counts the events of
 * every tenant, it tells a client nothing about other tenants. Clients treat it as opaque.
 */
const POSITION = /^pos:(\d{1,18})$/;
export const isStreamPosition = (value: string): boolean => POSITION.test(value);

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
 * A read for streams opening at the same time: one at a time per database, and every stream that asks
 * while one is under way shares the next one, which starts after it asked (a read that began earlier could
 * miss an event published in between). Ten thousand subscribers arriving together cost a few reads instead
 * of a database queue full of identical ones.
 */
function sharedReads<Value>(read: (prisma: PrismaClient) => Promise<Value>) {
  const readers = new WeakMap<PrismaClient, () => Promise<Value>>();
  return (prisma: PrismaClient): Promise<Value> => {
    let reader = readers.get(prisma);
    if (!reader) {
      let inFlight: Promise<Value> | undefined;
      let queued: Promise<Value> | undefined;
      const start = () => {
        const pending: Promise<Value> = read(prisma).finally(() => {
          if (inFlight === pending) inFlight = undefined;
        });
        inFlight = pending;
        return pending;
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
      readers.set(prisma, reader);
    }
    return reader();
  };
}

const sharedCurrentSeq = sharedReads(currentSeq);

/**
 * The position now, with the outbox sequence beside it, read while holding the relay lock shared: no pass
 * is between stamping `seq`/`published_at` and committing, so every event published so far is committed
 * with an earlier time, and every later one will carry a later time and a higher `seq`.
 */
const sharedStartPoint = sharedReads(async (prisma) => {
  const [row] = await prisma.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock_shared(${RELAY_LOCK_SQL})`);
      return tx.$queryRawUnsafe<{ seq: string | null; micros: string }[]>(
        `SELECT pg_sequence_last_value(pg_get_serial_sequence('outbox_events', 'seq')::regclass)::text AS seq,
                (extract(epoch FROM clock_timestamp()) * 1000000)::bigint::text AS micros`,
      );
    },
    { maxWait: 10_000, timeout: 20_000 },
  );
  if (!row) throw new Error('reading the event stream position returned no row');
  return { seq: BigInt(row.seq ?? 0), position: `pos:${row.micros}` };
});

/** Where a resume point leaves off: replay rows after `seq`, and, for a position, published after it. */
interface ResumeFrom {
  seq: bigint;
  publishedAfter: string | null;
}

async function resumePoint(
  prisma: PrismaClient,
  tenantId: string,
  after: string,
  retentionHours: number | undefined,
): Promise<ResumeFrom> {
  const position = POSITION.exec(after)?.[1];
  if (position !== undefined) return positionPoint(prisma, after, position, retentionHours);
  const [row] = await prisma.$queryRawUnsafe<{ seq: string }[]>(
    `SELECT seq::text AS seq FROM outbox_events
     WHERE id = $1::uuid AND tenant_id = $2::uuid AND published_at IS NOT NULL`,
    after,
    tenantId,
  );
  if (!row) throw resumePointExpired(after);
  return { seq: BigInt(row.seq), publishedAfter: null };
}

/**
 * A position: the last event published at or before it (of any tenant) bounds the replay by `seq`; the
 * rows are then taken by time, since the events of one relay pass are stamped in no particular time
 * order. Pruning deletes the oldest rows first, so such a row still being there proves nothing after the
 * position was pruned; without one, the position must lie within the retention. A position from the
 * future is unknown.
 */
async function positionPoint(
  prisma: PrismaClient,
  after: string,
  micros: string,
  retentionHours = 24,
): Promise<ResumeFrom> {
  const [row] = await prisma.$queryRawUnsafe<
    { at: string; seq: string | null; recent: boolean; future: boolean }[]
  >(
    `WITH p AS (SELECT to_timestamp(0) + $1::bigint * interval '1 microsecond' AS at)
     SELECT p.at::text AS at,
            (SELECT o.seq::text FROM outbox_events o
             WHERE o.published_at IS NOT NULL AND o.published_at <= p.at
             ORDER BY o.published_at DESC LIMIT 1) AS seq,
            p.at >= clock_timestamp() - $2::int * interval '1 hour' AS recent,
            p.at > clock_timestamp() AS future
     FROM p`,
    micros,
    retentionHours,
  );
  if (!row || row.future || (row.seq === null && !row.recent)) throw resumePointExpired(after);
  return { seq: BigInt(row.seq ?? 0), publishedAfter: row.at };
}

function readPage(
  options: EventStreamOptions,
  afterSeq: bigint,
  publishedAfter: string | null,
): Promise<OutboxRow[]> {
  return options.prisma.$queryRawUnsafe<OutboxRow[]>(
    // Ordered by the bigint column, not by its text rendering in the select list.
    `SELECT ${PUBLISHED_EVENT_COLUMNS} FROM outbox_events o
     WHERE o.tenant_id = $1::uuid AND o.published_at IS NOT NULL AND o.seq > $2::bigint
       AND o.type = ANY($3::text[]) AND ($4::timestamptz IS NULL OR o.published_at > $4::timestamptz)
     ORDER BY o.seq LIMIT ${PAGE_SIZE}`,
    options.tenantId,
    afterSeq.toString(),
    [...options.types],
    publishedAfter,
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
 *
 * `after` may also be a position (`start` of an earlier stream opened with `announceStart`): the replay
 * then holds the tenant's events published after it, so a client that received no event at all still
 * resumes without a gap.
 */
export async function openEventStream(options: EventStreamOptions): Promise<EventStream> {
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
  let publishedAfter: string | null = null;
  let start: string | null = null;
  try {
    if (options.after) {
      await relayBarrier(options.prisma);
      const from = await resumePoint(options.prisma, options.tenantId, options.after, options.retentionHours);
      replayedUpTo = from.seq;
      position = from.seq;
      publishedAfter = from.publishedAfter;
      start = options.after;
    } else if (options.announceStart) {
      // Events published between the listener and this read reach the stream live although they are
      // older than `start`: a client that reads its state once it has `start` sees them there anyway.
      const point = await sharedStartPoint(options.prisma);
      position = point.seq;
      start = point.position;
    } else if (options.bus.status() !== 'in-process') {
      position = await sharedCurrentSeq(options.prisma);
    }
  } catch (error) {
    close();
    throw error;
  }

  /** Outbox rows after `position`, in seq order, less those `delivered` live; advances both marks. */
  async function* readBack(
    delivered?: Gap['delivered'],
    since: string | null = null,
  ): AsyncGenerator<BusEvent, undefined> {
    while (position !== null) {
      const rows = await readPage(options, position, since);
      for (const row of rows) {
        position = BigInt(row.seq);
        if (replayedUpTo === null || position > replayedUpTo) replayedUpTo = position;
        // A live event whose first publication rolled back is in the outbox under a later seq.
        if (delivered?.(row.id)) continue;
        const event = eventFromRow(row);
        if (accept(event)) yield event;
      }
      if (rows.length < PAGE_SIZE) return undefined;
    }
    return undefined;
  }

  // A backlog being read (the one after `after`, or one after a gap) is drained before live events.
  let backlog: AsyncGenerator<BusEvent, undefined> | undefined = options.after
    ? readBack(undefined, publishedAfter)
    : undefined;
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

  const stream: EventStream = {
    start,
    next,
    // Closing the queue ends a wait under way: its `next` answers done.
    return: async () => end(),
    [Symbol.asyncIterator]: () => stream,
  };
  return stream;
}
