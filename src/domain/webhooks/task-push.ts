import { taskStateToJSON } from '@a2a-js/sdk';
import type { BusEvent } from '../../events/topics.js';
import { a2aStateOf } from '../agents/a2a-states.js';

/** The event type of a task webhook's deliveries (an A2A push notification: a task's status update). */
export const TASK_PUSH_EVENT_TYPE = 'task.status_update';

/** What a task webhook (an A2A push notification config) is told of one TASK_UPDATED: its task's new state. */
export interface TaskPush {
  taskId: string;
  /** The A2A state, as the JSON binding names it (`TASK_STATE_WORKING`...). */
  state: string;
  /** When the task changed. */
  timestamp: string | null;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/**
 * The push a TASK_UPDATED is for its task's webhooks: every change of the task, with the state A2A's
 * mapping gives it (a2a-states.ts, the one mapping). Other events reach no task webhook.
 */
export function taskPushOf(event: Pick<BusEvent, 'type' | 'payload'>): TaskPush | null {
  if (event.type !== 'TASK_UPDATED') return null;
  const taskId = text(event.payload.task_id);
  const status = text(event.payload.status);
  if (!taskId || !status) return null;
  const state = a2aStateOf(status);
  if (state === undefined) return null;
  return { taskId, state: taskStateToJSON(state), timestamp: text(event.payload.updated_at) };
}
