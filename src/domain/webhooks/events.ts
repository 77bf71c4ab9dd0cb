import type { BusEvent, EventType } from '../../events/topics.js';

/** What a webhook receives, before it is serialised and signed. */
export interface WebhookEvent {
  /** `task.queued`, `agent.paused`, `agent.resumed`, ... */
  type: string;
  /** The agent role it concerns: role webhooks receive only their role's events. Null: the tenant's webhooks only. */
  role: string | null;
  /**
   * Ids, types, the role, timestamps and figures only: never a reason, a credential, message text or a
   * sealed body. `breaker` (agent.paused by a breaker) holds its kind, trip id and evidence.
   */
  data: Record<string, string | number | null | BreakerData>;
}

/** A breaker's evidence as webhooks carry it: numbers, strings and lists of them (figures and task ids). */
type EvidenceValue = string | number | boolean | null | (string | number)[];
interface BreakerData {
  kind: string | null;
  trip_id: string | null;
  evidence: Record<string, EvidenceValue>;
}

type Payload = Record<string, unknown>;
type WebhookEventOf = (payload: Payload) => WebhookEvent | null;

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const count = (value: unknown): number | null => (typeof value === 'number' ? value : null);

const isScalar = (value: unknown): value is string | number | boolean | null =>
  value === null || ['string', 'number', 'boolean'].includes(typeof value);

/** The breaker of a pause, its evidence kept to scalars and lists of ids or figures (nothing nested deeper). */
function breakerData(value: unknown): BreakerData | null {
  if (value === null || typeof value !== 'object') return null;
  const breaker = value as Record<string, unknown>;
  const evidence: Record<string, EvidenceValue> = {};
  const given = breaker.evidence;
  if (given !== null && typeof given === 'object') {
    for (const [key, item] of Object.entries(given)) {
      if (isScalar(item)) evidence[key] = item;
      else if (Array.isArray(item))
        evidence[key] = item.filter((each) => typeof each === 'string' || typeof each === 'number');
    }
  }
  return { kind: text(breaker.kind), trip_id: text(breaker.trip_id), evidence };
}

/**
 * Which outbox events reach webhooks, and as what. A new event type plugs in with one entry here: it picks
 * the fields a receiver may see (allow-listed, so a field added to an event later never leaks) and the role
 * it belongs to. Types without an entry are not delivered: among them CONNECTOR_CHANGED, whose readers are
 * MCP clients' tool lists and the dashboard, both over the tenant's own streams, and TASK_STEPS_RECORDED,
 * whose readers are an open task's timeline and `taskStepsRecorded` subscribers.
 */
export const WEBHOOK_EVENT_OF: Partial<Record<EventType, WebhookEventOf>> = {
  // A task is pending when it is created, when its lease lapsed or when its sub-tasks ended: either way there
  // is work to claim. It is waiting once it delegated. Both carry its place in its delegation tree.
  TASK_UPDATED: (payload) => {
    const role = text(payload.role);
    const type = { pending: 'task.queued', waiting: 'task.waiting' }[String(payload.status)];
    if (!type || !role) return null;
    return {
      type,
      role,
      data: {
        task_id: text(payload.task_id),
        attempts: count(payload.attempts),
        updated_at: text(payload.updated_at),
        parent_task_id: text(payload.parent_task_id),
        root_task_id: text(payload.root_task_id) ?? text(payload.task_id),
      },
    };
  },
  DOGFOOD_AGENT_PAUSED: (payload) => {
    const role = text(payload.role);
    if (!role) return null;
    return {
      type: 'agent.paused',
      role,
      data: {
        actor_user_id: text(payload.actor_user_id),
        paused_at: text(payload.paused_at),
        // Present only when a breaker paused the role: its kind, trip and evidence.
        ...(payload.breaker ? { breaker: breakerData(payload.breaker) } : {}),
      },
    };
  },
  DOGFOOD_AGENT_RESUMED: (payload) => {
    const role = text(payload.role);
    if (!role) return null;
    return {
      type: 'agent.resumed',
      role,
      data: { actor_user_id: text(payload.actor_user_id), resumed_at: text(payload.resumed_at) },
    };
  },
  // A role's budget reaches its role's webhooks and the tenant's; the tenant's budget (role null) only the tenant's.
  BUDGET_WARNING: (payload) => budgetEvent('budget.warning', payload),
  BUDGET_EXHAUSTED: (payload) => budgetEvent('budget.exhausted', payload),
  // Approvals belong to a connector, not a role: the tenant's webhooks receive them. No input, note or result.
  CONNECTOR_CALL_APPROVAL_REQUESTED: (payload) => approvalEvent('approval.requested', payload),
  CONNECTOR_CALL_APPROVAL_DECIDED: (payload) => approvalEvent('approval.decided', payload),
  // A task's decision request belongs to the task's role. No summary, payload or note.
  TASK_APPROVAL_REQUESTED: (payload) => taskApprovalEvent('task_approval.requested', payload),
  TASK_APPROVAL_DECIDED: (payload) => taskApprovalEvent('task_approval.decided', payload),
};

function taskApprovalEvent(type: string, payload: Payload): WebhookEvent | null {
  const role = text(payload.role);
  if (!role) return null;
  return {
    type,
    role,
    data: {
      approval_id: text(payload.approval_id),
      task_id: text(payload.task_id),
      status: text(payload.status),
      decided_by: text(payload.decided_by),
    },
  };
}

function budgetEvent(type: string, payload: Payload): WebhookEvent {
  return {
    type,
    role: text(payload.role),
    data: {
      budget_id: text(payload.budget_id),
      period: text(payload.period),
      period_start: text(payload.period_start),
      period_end: text(payload.period_end),
      limit_usd: text(payload.limit_usd),
      spent_usd: text(payload.spent_usd),
      reserved_usd: text(payload.reserved_usd),
    },
  };
}

function approvalEvent(type: string, payload: Payload): WebhookEvent {
  return {
    type,
    role: null,
    data: {
      approval_id: text(payload.approval_id),
      connector_id: text(payload.connector_id),
      method: text(payload.method),
      status: text(payload.status),
      expires_at: text(payload.expires_at),
      changed_at: text(payload.changed_at),
    },
  };
}

/** The webhook event an outbox event becomes, or null when webhooks do not carry it. */
export function webhookEventOf(event: Pick<BusEvent, 'type' | 'payload'>): WebhookEvent | null {
  return WEBHOOK_EVENT_OF[event.type]?.(event.payload) ?? null;
}

/**
 * The JSON body of a delivery (Standard Webhooks' recommended shape: `type`, `timestamp`, `data`). The
 * timestamp is when the event happened; the `webhook-timestamp` header says when the attempt was signed.
 */
export function webhookBody(event: BusEvent, webhookEvent: WebhookEvent, occurredAt: Date): string {
  return JSON.stringify({
    type: webhookEvent.type,
    timestamp: occurredAt.toISOString(),
    data: {
      event_id: event.eventId,
      tenant_id: event.tenantId,
      role: webhookEvent.role,
      ...webhookEvent.data,
    },
  });
}
