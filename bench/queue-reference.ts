// The reference of the `queue` case: pg-boss, a PostgreSQL-native job queue from the registry, on the same
// PostgreSQL server as the gateway, in a database of its own that the run creates and drops. Each round
// has the gateway round's shape: 16 producers send jobs to one queue (a fresh queue each round, as the
// gateway's round takes a fresh tenant), alone for the same moment to leave a backlog, then 32 workers
// fetch one job at a time and complete it for the same window, an empty fetch pausing as long as an empty
// claim does. It runs in the bench process, as a library runs in its user's process: producers and
// workers are the library's callers, with the same pool of 10 connections as the gateway's default
// (DATABASE_POOL_SIZE). The rounds never overlap the gateway's, so the bench's event loop carries one load
// at a time. Its maintenance (expiry, archiving) and cron clock are off: a round lasts seconds.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import PgBoss from 'pg-boss';
import { median, percentile } from './measure.js';
import { createDatabase, onCleanup, root } from './processes.js';
import { fillAndDrain, PRODUCERS, type RoundCounts, RUNTIMES } from './queue.js';

/** The gateway's default pool (DATABASE_POOL_SIZE). */
const POOL_SIZE = 10;

/** A pg-boss round: jobs for tasks, fetches for claims. */
export interface QueueReferenceRound extends RoundCounts {
  round: number;
  /** Fetches that found the queue empty. */
  emptyFetches: number;
  /** Fetches that handed out a job. */
  fetchP50Ms: number;
  fetchP99Ms: number;
  sendP99Ms: number;
}

export interface QueueReference {
  /** `pg-boss 10.4.2`. */
  name: string;
  round(round: number, seconds: number): Promise<QueueReferenceRound>;
  stop(): Promise<void>;
}

/** pg-boss started on a new database of the server of `postgresUrl`; stopped and dropped at clean-up too. */
export async function startQueueReference(postgresUrl: string): Promise<QueueReference> {
  const { version } = JSON.parse(readFileSync(path.join(root, 'node_modules/pg-boss/package.json'), 'utf8'));
  const connectionString = await createDatabase(postgresUrl, 'queue_reference');
  const boss = new PgBoss({
    connectionString,
    max: POOL_SIZE,
    application_name: 'boardroom-bench-queue-reference',
    supervise: false,
    schedule: false,
  });
  let failure: Error | undefined;
  boss.on('error', (error) => {
    failure ??= error;
  });
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= boss.stop({ graceful: false, wait: true });
    return stopping;
  };
  onCleanup(stop);
  try {
    await boss.start();
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  const round = async (number: number, seconds: number): Promise<QueueReferenceRound> => {
    const queue = `round-${number}`;
    await boss.createQueue(queue);
    const measured = await fillAndDrain({
      producers: PRODUCERS,
      workers: RUNTIMES,
      seconds,
      send: async () => {
        await boss.send(queue, { message: 'Close the books' });
      },
      async take() {
        const [job] = await boss.fetch(queue, { batchSize: 1 });
        return job?.id ?? null;
      },
      // The same output the gateway's completion reports: tokens and a cost of its own.
      async finish(_index, id, cost) {
        await boss.complete(queue, id, { tokensUsed: 10, costUsd: cost / 1e6 });
      },
    });
    if (failure) throw failure;
    const { takeMs, sendMs, emptyTakes, ...counts } = measured;
    return {
      round: number,
      ...counts,
      emptyFetches: emptyTakes,
      fetchP50Ms: median(takeMs),
      fetchP99Ms: percentile(takeMs, 99),
      sendP99Ms: percentile(sendMs, 99),
    };
  };
  return { name: `pg-boss ${version}`, round, stop };
}
