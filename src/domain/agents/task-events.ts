/** What TASK_UPDATED carries: the task's state, never its message, output or error text. */
export interface TaskEventPayload {
  task_id: string;
  role: string;
  status: string;
  attempts: number;
  updated_at: string;
}

export function taskEventPayload(task: {
  id: string;
  role: string;
  status: string;
  attempts: number;
  updatedAt: Date;
}): Record<string, unknown> & TaskEventPayload {
  return {
    task_id: task.id,
    role: task.role,
    status: task.status,
    attempts: task.attempts,
    updated_at: task.updatedAt.toISOString(),
  };
}
