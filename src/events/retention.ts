import type { PrismaClient } from '../db/client.js';
import { runPeriodically } from '../infra/periodic.js';
import type { Logger } from '../logger.js';

export interface PruneOptions {
  /** Published events older than this are deleted; it is also how far back subscribers can resume. */
  retentionHours: number;
  /** Rows per DELETE. Default 500. */
  batchSize?: number;
  /** The time the cutoff is measured from. Default now. */
  now?: Date;
}

/**
 * Deletes published outbox rows older than the retention, one short batch at a time, yielding to other
 * work between batches so requests never wait behind a long delete. Unpublished rows are never touched.
 * Returns how many rows it deleted.
 */
export async function pruneOutbox(
  prisma: PrismaClient,
  { retentionHours, batchSize = 500, now = new Date() }: PruneOptions,
): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionHours * 3_600_000);
  let total = 0;
  for (;;) {
    const deleted = await prisma.$executeRawUnsafe(
      `DELETE FROM outbox_events WHERE id IN (
         SELECT id FROM outbox_events WHERE published_at IS NOT NULL AND published_at < $1
         ORDER BY published_at LIMIT ${batchSize})`,
      cutoff,
    );
    total += deleted;
    if (deleted < batchSize) return total;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export interface OutboxRetentionOptions {
  prisma: PrismaClient;
  logger: Logger;
  /** EVENT_RETENTION_HOURS: how long published events stay replayable. */
  retentionHours: number;
  /** How often to prune. Default 10 minutes (the first pass runs after one interval). */
  intervalMs?: number;
}

/** Prunes published outbox rows in the background; returns the function that stops it. */
export function startOutboxRetention({
  prisma,
  logger,
  retentionHours,
  intervalMs = 600_000,
}: OutboxRetentionOptions): () => Promise<void> {
  return runPeriodically(
    async () => {
      const deleted = await pruneOutbox(prisma, { retentionHours });
      if (deleted > 0) logger.info({ deleted, retentionHours }, 'pruned published events');
    },
    { intervalMs, logger, failure: 'outbox pruning failed' },
  );
}
