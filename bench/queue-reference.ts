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
import { performance } from 'node:perf_hooks';
import PgBoss from 'pg-boss';
import { median, percentile } from './measure.js';
import { createDatabase, onCleanup, root } from './processes.js';
import { BACKLOG_MS, EMPTY_PAUSE_MS, PRODUCERS, RUNTIMES } from './queue.js';

/** The gateway's default pool (DATABASE_POOL_SIZE). */
const POOL_SIZE = 10;

export interface QueueReferenceRound {
  round: number;
  seconds: number;
  /** Jobs waiting when the workers started. */
  backlog: number;
  filled: number;
  /** Jobs fetched and completed in the window. */
  drained: number;
  fillPerSecond: number;
  drainPerSecond: number;
  drainToFill: number;
  /** Fetches that found the queue empty. */
  emptyFetches: number;
  /** Fetches that handed out a job. */
  fetchP50Ms: number;
  fetchP99Ms: number;
  sendP99Ms: number;
  /** Job ids handed out more than once. */
  duplicates: number;
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
    let producing = true;
    let draining = true;
    let windowStarted = 0;
    let windowEnded = 0;
    let filledBefore = 0;
    let filledInWindow = 0;
    let drainedInWindow = 0;
    let emptyFetches = 0;
    const sendMs: number[] = [];
    const fetchMs: number[] = [];
    const seen = new Set<string>();
    let duplicates = 0;
    const produce = async () => {
      while (producing) {
        const started = performance.now();
        await boss.send(queue, { message: 'Close the books' });
        const ended = performance.now();
        if (windowStarted === 0) filledBefore += 1;
        else if (windowEnded === 0 || ended <= windowEnded) {
          filledInWindow += 1;
          sendMs.push(ended - started);
        }
      }
    };
    const drain = async (index: number) => {
      let n = 0;
      while (draining) {
        const started = performance.now();
        const [job] = await boss.fetch(queue, { batchSize: 1 });
        const fetched = performance.now();
        if (!job) {
          emptyFetches += 1;
          await new Promise((resolve) => setTimeout(resolve, EMPTY_PAUSE_MS));
          continue;
        }
        fetchMs.push(fetched - started);
        if (seen.has(job.id)) duplicates += 1;
        seen.add(job.id);
        n += 1;
        // The same output the gateway's completion reports: tokens and a cost of its own.
        const cost = ((index * 7919 + n * 104729) % 99_999) + 1;
        await boss.complete(queue, job.id, { tokensUsed: 10, costUsd: cost / 1e6 });
        if (windowEnded === 0 || performance.now() <= windowEnded) drainedInWindow += 1;
      }
    };
    const producing$ = Promise.all(Array.from({ length: PRODUCERS }, produce));
    await new Promise((resolve) => setTimeout(resolve, BACKLOG_MS));
    windowStarted = performance.now();
    const backlog = filledBefore;
    const draining$ = Promise.all(Array.from({ length: RUNTIMES }, (_, i) => drain(i)));
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    windowEnded = performance.now();
    producing = false;
    draining = false;
    await Promise.all([producing$, draining$]);
    if (failure) throw failure;
    const window = (windowEnded - windowStarted) / 1000;
    return {
      round: number,
      seconds: window,
      backlog,
      filled: filledInWindow,
      drained: drainedInWindow,
      fillPerSecond: filledInWindow / window,
      drainPerSecond: drainedInWindow / window,
      drainToFill: drainedInWindow / filledInWindow,
      emptyFetches,
      fetchP50Ms: median(fetchMs),
      fetchP99Ms: percentile(fetchMs, 99),
      sendP99Ms: percentile(sendMs, 99),
      duplicates,
    };
  };
  return { name: `pg-boss ${version}`, round, stop };
}
