import type { BusEvent } from '../../events/topics.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { webhookBody, webhookEventOf } from './events.js';
import { TASK_PUSH_EVENT_TYPE, taskPushOf } from './task-push.js';

/** The `lastError` of a delivery recorded as dropped because its tenant's queue was full. */
const queueFullError = (queuePerTenant: number) =>
  `not queued: the tenant already had ${queuePerTenant} deliveries pending (its limit)`;

/**
 * Queues a delivery of each event webhooks carry to every active webhook of its tenant that takes it (the
 * tenant's webhooks for every event, and its role's), and of each TASK_UPDATED to its task's webhooks (A2A
 * push notification configs), which receive nothing else: their body is an A2A `StreamResponse` status
 * update (`{"statusUpdate": {"taskId", "contextId", "status": {"state", "timestamp"}}}`, no text), the
 * context being the task's thread (or the task itself), as the A2A face answers it. Runs in the outbox relay's publishing transaction, so
 * a published event has its deliveries (at least once), in publication order: `seq` follows the events'
 * order. A delivery's `created_at` is when its event was recorded, so latency counts from there.
 *
 * A tenant has at most `queuePerTenant` deliveries pending: one beyond that is recorded `dropped` (never
 * sent; it can be redelivered once the queue has room) rather than queued, so a tenant whose receivers
 * keep up with nothing cannot grow its queue without end. Relay passes run one at a time, so the count
 * each reads is exact. Answers how many were dropped.
 */
export async function recordWebhookDeliveries(
  tx: Prisma.TransactionClient,
  events: readonly BusEvent[],
  queuePerTenant: number,
): Promise<{ dropped: number }> {
  const occurredAt = new Date();
  const mapped = events.flatMap((event) => {
    const webhookEvent = webhookEventOf(event);
    const push = taskPushOf(event);
    if (!webhookEvent && !push) return [];
    return [
      {
        event,
        role: webhookEvent?.role ?? null,
        type: webhookEvent?.type ?? null,
        // Null: the event reaches task webhooks only.
        body: webhookEvent ? webhookBody(event, webhookEvent, occurredAt) : null,
        push,
      },
    ];
  });
  if (mapped.length === 0) return { dropped: 0 };
  // One statement, not a data-modifying WITH: the table's notify rule (DO ALSO) forbids that.
  const written = await tx.$queryRaw<{ status: string }[]>`
    INSERT INTO webhook_deliveries
      (id, message_id, tenant_id, webhook_id, event_id, event_type, body, created_at, status, last_error)
    WITH mapped AS (
      SELECT gen_random_uuid() AS id, w.tenant_id, w.id AS webhook_id, e.event_id,
             CASE WHEN w.task_id IS NULL THEN e.event_type ELSE ${TASK_PUSH_EVENT_TYPE} END AS event_type,
             CASE WHEN w.task_id IS NULL THEN e.body ELSE json_build_object('statusUpdate', json_build_object(
               'taskId', t.id, 'contextId', coalesce(t.thread_id, t.id),
               'status', json_build_object('state', e.state, 'timestamp', e.state_at)))::text END AS body,
             coalesce(o.created_at, now()) AS created_at, e.position, w.created_at AS webhook_created_at
      FROM unnest(
        ${mapped.map(({ event }) => event.eventId)}::uuid[],
        ${mapped.map(({ event }) => event.tenantId)}::uuid[],
        ${mapped.map(({ role }) => role)}::text[],
        ${mapped.map(({ type }) => type)}::text[],
        ${mapped.map(({ body }) => body)}::text[],
        ${mapped.map(({ push }) => push?.taskId ?? null)}::uuid[],
        ${mapped.map(({ push }) => push?.state ?? null)}::text[],
        ${mapped.map(({ push }) => push?.timestamp ?? null)}::text[]
      ) WITH ORDINALITY AS e(event_id, tenant_id, role, event_type, body, task_id, state, state_at, position)
      JOIN webhooks AS w
        ON w.tenant_id = e.tenant_id AND w.status = 'active' AND (
          (w.task_id IS NULL AND e.body IS NOT NULL AND (w.role IS NULL OR w.role = e.role))
          OR w.task_id = e.task_id)
      LEFT JOIN tasks AS t ON t.id = w.task_id
      LEFT JOIN outbox_events AS o ON o.id = e.event_id
    ),
    -- Each tenant's pending deliveries, counted once per pass (and no further than the limit).
    queued AS (
      SELECT t.tenant_id, (
        SELECT count(*) FROM (
          SELECT 1 FROM webhook_deliveries AS p
          WHERE p.tenant_id = t.tenant_id AND p.status = 'pending'
          LIMIT ${queuePerTenant}
        ) AS counted
      ) AS pending
      FROM (SELECT DISTINCT tenant_id FROM mapped) AS t
    ),
    placed AS (
      SELECT mapped.*, queued.pending + row_number() OVER (
               PARTITION BY mapped.tenant_id ORDER BY position, webhook_created_at, webhook_id) AS place
      FROM mapped JOIN queued USING (tenant_id)
    )
    SELECT id, id, tenant_id, webhook_id, event_id, event_type, body, created_at,
           CASE WHEN place > ${queuePerTenant} THEN 'dropped' ELSE 'pending' END,
           CASE WHEN place > ${queuePerTenant} THEN ${queueFullError(queuePerTenant)} END
    FROM placed
    ORDER BY position, webhook_created_at, webhook_id
    RETURNING status`;
  return { dropped: written.filter((row) => row.status === 'dropped').length };
}
