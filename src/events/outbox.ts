import { randomUUID } from 'node:crypto';
import { Prisma } from '../generated/prisma/client.js';
import type { EventType } from './topics.js';

export interface OutboxEntry {
  type: EventType;
  tenantId: string;
  payload: Record<string, unknown>;
  /** Defaults to a new uuid; pass one when the response must carry it (correlation id). */
  eventId?: string;
}

/** The row an entry becomes: its id and the payload as the bus carries it. */
function outboxRow(entry: OutboxEntry) {
  const eventId = entry.eventId ?? randomUUID();
  const payload = { ...entry.payload, event_id: eventId, type: entry.type, tenant_id: entry.tenantId };
  return { eventId, payload };
}

/**
 * Records an event in the same transaction as the change it announces; the relay publishes it after
 * commit. Returns the event id.
 */
export async function enqueueEvent(tx: Prisma.TransactionClient, entry: OutboxEntry): Promise<string> {
  const { eventId, payload } = outboxRow(entry);
  await tx.outboxEvent.create({
    data: {
      id: eventId,
      tenantId: entry.tenantId,
      type: entry.type,
      payload: payload as Prisma.InputJsonValue,
    },
  });
  return eventId;
}

/**
 * Records an event in the same statement as the change it announces, without a transaction around it:
 * an INSERT of the entry's row for each row of `source` (a WITH query of that statement, such as the
 * rows it inserted), so the event is written exactly when the change is. It must be the statement's
 * main query: outbox_events carries the rule that wakes the relay, and PostgreSQL allows no such rule
 * on a data-modifying WITH query. Returns the event id with the SQL, which ends in `RETURNING id`.
 */
export function enqueueEventFrom(source: string, entry: OutboxEntry): { eventId: string; sql: Prisma.Sql } {
  const { eventId, payload } = outboxRow(entry);
  const sql = Prisma.sql`
    INSERT INTO outbox_events (id, tenant_id, type, payload)
    SELECT ${eventId}::uuid, ${entry.tenantId}::uuid, ${entry.type}, ${JSON.stringify(payload)}::jsonb
    FROM ${Prisma.raw(source)}
    RETURNING id::text`;
  return { eventId, sql };
}
