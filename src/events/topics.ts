/** Event types carried by the outbox and the bus. Payloads are JSON and never hold private fields. */
export const EVENT_TYPES = [
  'DOGFOOD_AGENT_PAUSED',
  'DOGFOOD_AGENT_RESUMED',
  'TASK_UPDATED',
  /**
   * Steps were appended to a task's run record (one event per recording statement, not per step): its id,
   * role and last seq only (domain/agents/task-events.ts). Not delivered to webhooks, A2A or push.
   */
  'TASK_STEPS_RECORDED',
  'MODEL_VERSION_CHANGED',
  'CONNECTOR_INVOKED',
  /**
   * A connector was created, or its name, template or status changed: what MCP tool lists are computed
   * from (domain/connectors/changes.ts). Ids and the names of the changed fields only.
   */
  'CONNECTOR_CHANGED',
  /** A call of a gated endpoint waits for a decision (domain/connectors/call-approvals-store.ts). */
  'CONNECTOR_CALL_APPROVAL_REQUESTED',
  /** A waiting call was approved, rejected, sent back for changes, expired or cancelled. */
  'CONNECTOR_CALL_APPROVAL_DECIDED',
  /** The agent holding a task asked for a decision; the task is awaiting_approval (domain/agents/task-approvals.ts). */
  'TASK_APPROVAL_REQUESTED',
  /** A task's decision request was approved, rejected or sent back for changes; the task is pending again. */
  'TASK_APPROVAL_DECIDED',
  /** A test's counters or status changed; at most one per test per 250 ms (domain/experiments/announcements.ts). */
  'AB_TEST_RESULTS_CHANGED',
  /** A budget's spend passed its warning threshold; at most one per budget per period. */
  'BUDGET_WARNING',
  /** A budget has no room for one more task's estimate; at most one per budget per period. */
  'BUDGET_EXHAUSTED',
  /** The chairman set a budget (created or changed its limits, estimates or period): it wakes waiting claims. */
  'BUDGET_CHANGED',
  /** A webhook's deliveries kept failing and it was disabled (infra/webhook-dispatcher.ts). */
  'WEBHOOK_DISABLED',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface BusEvent<Payload = Record<string, unknown>> {
  eventId: string;
  type: EventType;
  tenantId: string;
  payload: Payload;
  /** Publication order (outbox_events.seq, a decimal string); set by the relay. */
  seq?: string;
}
