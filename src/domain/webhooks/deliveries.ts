import type { BusEvent } from '../../events/topics.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { webhookBody, webhookEventOf } from './events.js';

/**
 * Queues a delivery of each event webhooks carry to every active webhook of its tenant that takes it (the
 * tenant's webhooks for every event, and its role's). Runs in the outbox relay's publishing transaction, so
 * a published event has its deliveries (at least once), in publication order: `seq` follows the events'
 * order. A delivery's `created_at` is when its event was recorded, so latency counts from there.
 */
export async function recordWebhookDeliveries(
  tx: Prisma.TransactionClient,
  events: readonly BusEvent[],
): Promise<void> {
  const occurredAt = new Date();
  const mapped = events.flatMap((event) => {
    const webhookEvent = webhookEventOf(event);
    return webhookEvent ? [{ event, webhookEvent, body: webhookBody(event, webhookEvent, occurredAt) }] : [];
  });
  if (mapped.length === 0) return;
  await tx.$executeRaw`
    INSERT INTO webhook_deliveries (id, message_id, tenant_id, webhook_id, event_id, event_type, body, created_at)
    SELECT d.id, d.id, d.tenant_id, d.webhook_id, d.event_id, d.event_type, d.body, d.created_at
    FROM (
      SELECT gen_random_uuid() AS id, w.tenant_id, w.id AS webhook_id, e.event_id, e.event_type, e.body,
             coalesce(o.created_at, now()) AS created_at, e.position, w.created_at AS webhook_created_at
      FROM unnest(
        ${mapped.map(({ event }) => event.eventId)}::uuid[],
        ${mapped.map(({ event }) => event.tenantId)}::uuid[],
        ${mapped.map(({ webhookEvent }) => webhookEvent.role)}::text[],
        ${mapped.map(({ webhookEvent }) => webhookEvent.type)}::text[],
        ${mapped.map(({ body }) => body)}::text[]
      ) WITH ORDINALITY AS e(event_id, tenant_id, role, event_type, body, position)
      JOIN webhooks AS w
        ON w.tenant_id = e.tenant_id AND w.status = 'active' AND (w.role IS NULL OR w.role = e.role)
      LEFT JOIN outbox_events AS o ON o.id = e.event_id
    ) AS d
    ORDER BY d.position, d.webhook_created_at, d.webhook_id`;
}
