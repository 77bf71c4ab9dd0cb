import { randomUUID } from 'node:crypto';
import { Prisma } from '../generated/prisma/client.js';
import { eventPayload } from './payload.js';
import type { BusEvent, EventType } from './topics.js';

export interface OutboxEntry {
  type: EventType;
  tenantId: string;
  payload: Record<string, unknown>;
  /** Defaults to a new uuid; pass one when the response must carry it (correlation id). */
  eventId?: string;
}

/** What every outbox row's payload carries after the event's own fields. */
interface Envelope<Value> {
  eventId: Value;
  type: Value;
  tenantId: Value;
}

/**
 * The fields every event's payload ends with, in TypeScript (outboxRow) and in SQL over expressions of
 * the statement that writes the row (taskUpdatedInsert, the budgets' ALERT_EVENTS).
 */
export const EVENT_ENVELOPE = eventPayload<Envelope<string>, Envelope<Prisma.Sql | string>>()({
  event_id: { ts: (event) => event.eventId, sql: (event) => event.eventId },
  type: { ts: (event) => event.type, sql: (event) => event.type },
  tenant_id: { ts: (event) => event.tenantId, sql: (event) => event.tenantId },
});

/** The row an entry becomes: its id and the payload as the bus carries it. */
function outboxRow(entry: OutboxEntry) {
  const eventId = entry.eventId ?? randomUUID();
  const payload = {
    ...entry.payload,
    ...EVENT_ENVELOPE.of({ eventId, type: entry.type, tenantId: entry.tenantId }),
  };
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
 * on a data-modifying WITH query. Returns the event id with the SQL, which ends in `RETURNING id` and
 * `returning`'s columns (scalar subqueries of the statement's other WITH queries, say).
 */
export function enqueueEventFrom(
  source: string,
  entry: OutboxEntry,
  returning: Prisma.Sql = Prisma.empty,
): { eventId: string; sql: Prisma.Sql } {
  const { eventId, payload } = outboxRow(entry);
  const sql = Prisma.sql`
    INSERT INTO outbox_events (id, tenant_id, type, payload)
    SELECT ${eventId}::uuid, ${entry.tenantId}::uuid, ${entry.type}, ${JSON.stringify(payload)}::jsonb
    FROM ${Prisma.raw(source)}
    RETURNING id::text${returning === Prisma.empty ? Prisma.empty : Prisma.sql`, ${returning}`}`;
  return { eventId, sql };
}

/** An outbox row as relay, replay and history read it (OUTBOX_EVENT_COLUMNS, PUBLISHED_EVENT_COLUMNS). */
export interface OutboxRow {
  id: string;
  tenant_id: string;
  type: string;
  payload: Record<string, unknown>;
  /** Publication order (the relay reads unpublished rows without it, then gives them theirs). */
  seq: string;
}

/** The columns of an outbox row (table alias `o`) that make its event. */
export const OUTBOX_EVENT_COLUMNS = 'o.id::text, o.tenant_id::text, o.type, o.payload';

/** OUTBOX_EVENT_COLUMNS with the publication order, for rows already published. */
export const PUBLISHED_EVENT_COLUMNS = `${OUTBOX_EVENT_COLUMNS}, o.seq::text AS seq`;

/** The event an outbox row is: what the relay publishes and replay and history read back. */
export function eventFromRow(row: OutboxRow): BusEvent {
  return {
    eventId: row.id,
    type: row.type as EventType,
    tenantId: row.tenant_id,
    payload: row.payload,
    seq: row.seq,
  };
}
