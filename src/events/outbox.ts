import { randomUUID } from 'node:crypto';
import type { Prisma } from '../generated/prisma/client.js';
import type { EventType } from './topics.js';

export interface OutboxEntry {
  type: EventType;
  tenantId: string;
  payload: Record<string, unknown>;
  /** Defaults to a new uuid; pass one when the response must carry it (correlation id). */
  eventId?: string;
}

/**
 * Records an event in the same transaction as the change it announces; the relay publishes it after
 * commit. Returns the event id.
 */
export async function enqueueEvent(tx: Prisma.TransactionClient, entry: OutboxEntry): Promise<string> {
  const eventId = entry.eventId ?? randomUUID();
  await tx.outboxEvent.create({
    data: {
      id: eventId,
      tenantId: entry.tenantId,
      type: entry.type,
      payload: {
        ...entry.payload,
        event_id: eventId,
        type: entry.type,
        tenant_id: entry.tenantId,
      } as Prisma.InputJsonValue,
    },
  });
  return eventId;
}
