import { Prisma, type Task } from '../../generated/prisma/client.js';

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

/**
 * The outbox insert of TASK_UPDATED for the one task a statement's CTE `source` changed (a claim, a
 * completion), built in SQL: the same payload as taskEventPayload's with enqueueEvent's fields, for
 * statements that write the task and announce it at once. The statement's outer INSERT (the outbox's NOTIFY
 * rule does not run inside WITH).
 */
export function taskUpdatedInsert(eventId: string, tenantId: string, source: string): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO outbox_events (id, tenant_id, type, payload)
    SELECT ${eventId}::uuid, ${tenantId}::uuid, 'TASK_UPDATED', jsonb_build_object(
      'task_id', c.id::text, 'role', c.role, 'status', c.status::text, 'attempts', c.attempts,
      'updated_at', to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'event_id', ${eventId}::text, 'type', 'TASK_UPDATED', 'tenant_id', ${tenantId}::text)
    FROM ${Prisma.raw(source)} c`;
}

/** Task's columns, named as Prisma names them (its cost as text), read from the one-row CTE `source`. */
const TASK_COLUMNS: [string, keyof Task][] = [
  ['id::text', 'id'],
  ['tenant_id::text', 'tenantId'],
  ['role', 'role'],
  ['status::text', 'status'],
  ['thread_id::text', 'threadId'],
  ['message', 'message'],
  ['created_by', 'createdBy'],
  ['attempts', 'attempts'],
  ['claimed_by', 'claimedBy'],
  ['lease_expires_at', 'leaseExpiresAt'],
  ['started_at', 'startedAt'],
  ['finished_at', 'finishedAt'],
  ['tokens_used', 'tokensUsed'],
  ['cost_usd::text', 'costUsd'],
  ['input_tokens', 'inputTokens'],
  ['cached_input_tokens', 'cachedInputTokens'],
  ['output_tokens', 'outputTokens'],
  ['reasoning_tokens', 'reasoningTokens'],
  ['output', 'output'],
  ['error', 'error'],
  ['model_version_id::text', 'modelVersionId'],
  ['canary_run_id::text', 'canaryRunId'],
  ['created_at', 'createdAt'],
  ['updated_at', 'updatedAt'],
];

/**
 * The RETURNING list of taskUpdatedInsert's statement that reads back the whole task from `source`: that
 * RETURNING reaches the CTE only through subqueries, one per column, each run once.
 */
export function taskColumnsOf(source: string): Prisma.Sql {
  return Prisma.raw(
    TASK_COLUMNS.map(([column, field]) => `(SELECT c.${column} FROM ${source} c) AS "${field}"`).join(', '),
  );
}

/** A task as taskColumnsOf reads it, cost still text. */
export type TaskColumns = Omit<Task, 'costUsd'> & { costUsd: string | null };

export function taskFromColumns({ costUsd, ...task }: TaskColumns): Task {
  return { ...task, costUsd: costUsd === null ? null : new Prisma.Decimal(costUsd) };
}
