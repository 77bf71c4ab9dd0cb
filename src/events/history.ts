import type { PrismaClient } from '../db/client.js';
import { eventFromRow, type OutboxRow, PUBLISHED_EVENT_COLUMNS } from './outbox.js';
import type { BusEvent, EventType } from './topics.js';

/** An event the outbox keeps, with the time its change was committed. */
export interface RecordedEvent {
  event: BusEvent;
  recordedAt: Date;
}

export interface RecentEventsOptions {
  tenantId: string;
  types: readonly EventType[];
  /** How many, newest first. */
  first: number;
  /** EVENT_RETENTION_HOURS: older events are not returned, even while they wait to be pruned. */
  retentionHours: number;
}

/**
 * The tenant's most recent published events of `types`, newest first (in publication order, the order
 * subscribers received them), from the replay window. A reader that reads this after its `events`
 * subscription announced its start misses nothing in between: whatever was published before the start is
 * here, and whatever after it arrives on the stream (an event in both has the same id).
 */
export async function recentEvents(
  prisma: PrismaClient,
  options: RecentEventsOptions,
): Promise<RecordedEvent[]> {
  const rows = await prisma.$queryRawUnsafe<(OutboxRow & { created_at: Date })[]>(
    // Walks the (tenant_id, seq) index backwards from the newest event.
    `SELECT ${PUBLISHED_EVENT_COLUMNS}, o.created_at
     FROM outbox_events o
     WHERE o.tenant_id = $1::uuid AND o.published_at IS NOT NULL AND o.type = ANY($2::text[])
       AND o.published_at >= now() - $3::int * interval '1 hour'
     ORDER BY o.seq DESC LIMIT $4::int`,
    options.tenantId,
    [...options.types],
    options.retentionHours,
    options.first,
  );
  return rows.map((row) => ({ event: eventFromRow(row), recordedAt: row.created_at }));
}
