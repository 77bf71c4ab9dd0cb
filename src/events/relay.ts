import type { Database, PrismaClient } from '../db/client.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import type { EventBus } from './bus.js';
import { eventFromRow, OUTBOX_EVENT_COLUMNS, type OutboxRow } from './outbox.js';
import type { BusEvent } from './topics.js';

/** What the relay needs of tracing (src/observability/tracing.ts provides it when tracing is on). */
export interface RelayTracing {
  /** Runs a relay pass with tracing suppressed, so an idle poll every second leaves no trace. */
  untraced<T>(pass: () => Promise<T>): Promise<T>;
  /** Runs the publishing of `events` events in an `outbox.publish` span, under whoever kicked the relay. */
  publishing<T>(events: number, publish: () => Promise<T>): Promise<T>;
}

export interface OutboxRelay {
  /** Publishes what is pending now; resolves when that pass is done. */
  kick(): Promise<void>;
  /** Publishes what is pending, then whenever events commit (on any instance); resolves once listening. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** True while a failed pass waits to be retried (the only time the relay runs without being woken). */
  retrying(): boolean;
}

export interface OutboxRelayOptions {
  prisma: PrismaClient;
  bus: EventBus;
  logger: Logger;
  /** Wakes the relay when outbox rows commit (the outbox_events_notify trigger). */
  listen: Database['listen'];
  /** First wait before a failed pass is retried; it doubles up to `maxRetryMs`. Default 250 ms. */
  retryMs?: number;
  /** Longest wait between retries of failed passes. Default 10 s. */
  maxRetryMs?: number;
  /** Events per pass. Default 100. */
  batchSize?: number;
  /** Told the outcome of every pass (metrics). */
  onPass?: (outcome: 'published' | 'empty' | 'failed') => void;
  /** Spans around passes that publish (only when tracing is configured). Default: none. */
  tracing?: RelayTracing | undefined;
  /**
   * Runs in the transaction of each pass that publishes, after the events are stamped: what must follow
   * every event at least once (webhook deliveries) writes its rows here, committed with the publication
   * and rolled back with it. It may answer a function to call once the pass committed (counting what it
   * wrote), so a pass rolled back and run again counts nothing twice. Default: nothing.
   */
  onPublished?:
    | ((tx: Prisma.TransactionClient, events: readonly BusEvent[]) => Promise<(() => void) | undefined>)
    | undefined;
}

/**
 * Serializes relay passes across instances. Replay takes it shared as a barrier: once it holds it, every
 * event published to the bus so far is committed (see replay.ts).
 */
export const RELAY_LOCK_SQL = `hashtext('boardroom.outbox_relay')`;

/** The channel the outbox_events_notify trigger notifies at each commit that inserted events. */
const OUTBOX_CHANNEL = 'outbox_events';

/**
 * Publishes unpublished outbox rows to the bus. It is woken, never polls: by the notification every commit
 * that inserts outbox rows sends (so an idle gateway commits nothing), by listening starting again after
 * a lost connection, by the bus's Redis subscription coming back, and, while the bus refuses events, by a
 * retry timer with backoff. One pass at a time across instances (an advisory lock held
 * to commit) stamps each row with the next `seq`, publishes it and marks it published in one transaction,
 * so publication order, commit order and `seq` order are the same: what replay needs. A crash before the
 * commit leaves the rows unpublished, so they go out again later (with a new seq): at least once. The same
 * holds for a publish the bus does not confirm (Redis down): it rejects, the pass rolls back, and the
 * rows go out, in order, on a later pass once the bus takes them again.
 */
export function createOutboxRelay({
  prisma,
  bus,
  logger,
  listen,
  retryMs = 250,
  maxRetryMs = 10_000,
  batchSize = 100,
  onPass = () => {},
  tracing,
  onPublished,
}: OutboxRelayOptions): OutboxRelay {
  const untraced: RelayTracing['untraced'] = tracing ? (pass) => tracing.untraced(pass) : (pass) => pass();
  const publishing: RelayTracing['publishing'] = tracing
    ? (events, publish) => tracing.publishing(events, publish)
    : (_events, publish) => publish();

  let retry: NodeJS.Timeout | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  let stopBusWatch: (() => void) | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  async function pass(): Promise<number> {
    let committed: (() => void) | undefined;
    const published = await prisma.$transaction(async (tx) => {
      committed = undefined;
      await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${RELAY_LOCK_SQL})`);
      const rows = await tx.$queryRawUnsafe<Omit<OutboxRow, 'seq'>[]>(
        `SELECT ${OUTBOX_EVENT_COLUMNS} FROM outbox_events o
         WHERE o.published_at IS NULL ORDER BY o.seq LIMIT ${batchSize} FOR UPDATE`,
      );
      if (rows.length === 0) return 0;
      return publishing(rows.length, async () => {
        const seqs = await tx.$queryRawUnsafe<{ seq: string }[]>(
          `SELECT nextval(pg_get_serial_sequence('outbox_events', 'seq'))::text AS seq
           FROM generate_series(1, ${rows.length})`,
        );
        const ordered = seqs.map((row) => BigInt(row.seq)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const stamped = rows.map((row, index) => ({ ...row, seq: String(ordered[index]) }));
        // clock_timestamp, not now(): a pass that waited for the lock must not look older than the last one.
        await tx.$executeRawUnsafe(
          `UPDATE outbox_events AS o SET seq = v.seq, published_at = clock_timestamp()
           FROM unnest($1::uuid[], $2::bigint[]) AS v(id, seq) WHERE o.id = v.id`,
          stamped.map((row) => row.id),
          stamped.map((row) => row.seq),
        );
        const events = stamped.map(eventFromRow);
        committed = await onPublished?.(tx, events);
        for (const event of events) await bus.publish(event);
        return rows.length;
      });
    });
    committed?.();
    return published;
  }

  // Consecutive failed passes: an outage of the bus is logged when it starts and when it ends, not once
  // a second.
  let failures = 0;
  async function drain() {
    do {
      again = false;
      try {
        for (let published = batchSize; !stopped && published === batchSize; ) {
          published = await untraced(pass);
          onPass(published > 0 ? 'published' : 'empty');
        }
        if (failures > 0) logger.info({ failedPasses: failures }, 'outbox relay publishing again');
        failures = 0;
      } catch (error) {
        onPass('failed');
        if (failures === 0) {
          logger.error({ err: error }, 'outbox relay pass failed; events stay in the outbox and are retried');
        }
        failures += 1;
      }
    } while (again && !stopped);
    clearTimeout(retry);
    retry = undefined;
    if (failures > 0 && !stopped) {
      retry = setTimeout(() => void kick(), Math.min(retryMs * 2 ** (failures - 1), maxRetryMs));
      retry.unref();
    }
  }

  function kick(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = drain().finally(() => {
      running = undefined;
    });
    return running;
  }

  return {
    kick,
    async start() {
      stopped = false;
      // Listening starts with a wake-up (what committed before it), so no separate first pass is needed.
      unlisten ??= await listen(OUTBOX_CHANNEL, () => void kick());
      // Redis back: what waited in the outbox goes out now rather than at the next retry.
      stopBusWatch ??= bus.onResubscribed(() => void kick());
    },
    async stop() {
      stopped = true;
      clearTimeout(retry);
      retry = undefined;
      await unlisten?.();
      unlisten = undefined;
      stopBusWatch?.();
      stopBusWatch = undefined;
      await running;
    },
    retrying: () => retry !== undefined,
  };
}
