import { TaskState } from '@a2a-js/sdk';
import type { TaskStatus } from '../../generated/prisma/client.js';

/**
 * Our task states as A2A's, faithfully: a pending task (a paused role's included) is `submitted`; one an agent
 * holds, or that waits for its sub-tasks, is `working`; one whose agent asked for a decision is
 * `input-required` (the decision is a person's, through the approvals API, not the A2A client's next message);
 * one its agent completed that waits for a reviewer's acceptance is still `working`: it is not done until
 * accepted, and a rejection sends it back to the queue.
 * Read by the A2A face (a2a/wire.ts) and by the push notifications its task webhooks carry.
 */
export const A2A_STATES: Record<TaskStatus, TaskState> = {
  pending: TaskState.TASK_STATE_SUBMITTED,
  running: TaskState.TASK_STATE_WORKING,
  waiting: TaskState.TASK_STATE_WORKING,
  awaiting_approval: TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  cancelled: TaskState.TASK_STATE_CANCELED,
  in_review: TaskState.TASK_STATE_WORKING,
};

/** Our task state as A2A's: the one place the mapping is read; undefined for a string that is no state. */
export const a2aStateOf = (status: string): TaskState | undefined =>
  Object.hasOwn(A2A_STATES, status) ? A2A_STATES[status as TaskStatus] : undefined;
