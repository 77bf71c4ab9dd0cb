import type { PrismaClient } from '../db/client.js';
import type { Logger } from '../logger.js';
import type { EventBus } from './bus.js';
import type { EventType } from './topics.js';

export interface OutboxRelay {
  /** Publishes what is pending now (call after a commit); resolves when that pass is done. */
  kick(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

export interface OutboxRelayOptions {
  prisma: PrismaClient;
  bus: EventBus;
  logger: Logger;
  /** How often to look for events left behind (by a crash or another instance). Default 1000 ms. */
  intervalMs?: number;
  /** Events per pass. Default 100. */
  batchSize?: number;
}

interface Row {
  id: string;
  tenant_id: string;
  type: string;
  payload: Record<string, unknown>;
}

/**
 * Publishes unpublished outbox rows to the bus. Rows are locked (skipping rows another instance holds),
 * published, then marked in one transaction: a crash before the commit leaves them unpublished, so they
 * go out again later — at least once.
 */
export function createOutboxRelay({
  prisma,
  bus,
  logger,
  intervalMs = 1000,
  batchSize = 100,
}: OutboxRelayOptions): OutboxRelay {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  async function pass(): Promise<number> {
    return prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<Row[]>(
        `SELECT id::text, tenant_id::text, type, payload FROM outbox_events
         WHERE published_at IS NULL ORDER BY created_at, id LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`,
      );
      for (const row of rows) {
        await bus.publish({
          eventId: row.id,
          type: row.type as EventType,
          tenantId: row.tenant_id,
          payload: row.payload,
        });
      }
      if (rows.length > 0) {
        await tx.outboxEvent.updateMany({
          where: { id: { in: rows.map((row) => row.id) } },
          data: { publishedAt: new Date() },
        });
      }
      return rows.length;
    });
  }

  async function drain() {
    do {
      again = false;
      try {
        while (!stopped && (await pass()) === batchSize) {}
      } catch (error) {
        logger.error({ err: error }, 'outbox relay pass failed');
      }
    } while (again && !stopped);
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
    start() {
      stopped = false;
      void kick();
      timer = setInterval(() => void kick(), intervalMs);
      timer.unref();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
