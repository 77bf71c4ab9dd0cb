/** Event types carried by the outbox and the bus. Payloads are JSON and never hold private fields. */
export const EVENT_TYPES = [
  'DOGFOOD_AGENT_PAUSED',
  'DOGFOOD_AGENT_RESUMED',
  'TASK_UPDATED',
  'MODEL_VERSION_CHANGED',
  'CONNECTOR_INVOKED',
  /** A test's counters or status changed; at most one per test per 250 ms (domain/experiments/announcements.ts). */
  'AB_TEST_RESULTS_CHANGED',
  /** A webhook's deliveries kept failing and it was disabled (domain/webhooks/dispatcher.ts). */
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
