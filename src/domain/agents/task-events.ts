import { EVENT_ENVELOPE } from '../../events/outbox.js';
import { eventPayload, isoSql, type PayloadOf } from '../../events/payload.js';
import { Prisma, type Task } from '../../generated/prisma/client.js';

/** A task as TASK_UPDATED describes it. */
export interface TaskEventSource {
  id: string;
  role: string;
  status: string;
  attempts: number;
  updatedAt: Date;
  /** The task that delegated it; null for a root. */
  parentTaskId: string | null;
  /** The root of its delegation tree; null for a root itself. */
  rootTaskId: string | null;
}

/** A RETURNING list that reads a TaskEventSource back from a changed tasks row. */
export const TASK_EVENT_COLUMNS = Prisma.raw(
  'id::text, role, status::text, attempts, updated_at AS "updatedAt", ' +
    'parent_task_id::text AS "parentTaskId", root_task_id::text AS "rootTaskId"',
);

/**
 * What TASK_UPDATED carries: the task's state, never its message, output or error text. Each field in
 * TypeScript (from the task) and in SQL (from the alias of a tasks row).
 */
export const TASK_UPDATED_PAYLOAD = eventPayload<TaskEventSource>()({
  task_id: { ts: (task): string => task.id, sql: (c) => `${c}.id::text` },
  role: { ts: (task): string => task.role, sql: (c) => `${c}.role` },
  status: { ts: (task): string => task.status, sql: (c) => `${c}.status::text` },
  attempts: { ts: (task): number => task.attempts, sql: (c) => `${c}.attempts` },
  updated_at: { ts: (task): string => task.updatedAt.toISOString(), sql: (c) => isoSql(`${c}.updated_at`) },
  parent_task_id: {
    ts: (task): string | null => task.parentTaskId,
    sql: (c) => `${c}.parent_task_id::text`,
  },
  root_task_id: {
    ts: (task): string => task.rootTaskId ?? task.id,
    sql: (c) => `coalesce(${c}.root_task_id, ${c}.id)::text`,
  },
});

export type TaskEventPayload = PayloadOf<typeof TASK_UPDATED_PAYLOAD>;

export function taskEventPayload(task: TaskEventSource): Record<string, unknown> & TaskEventPayload {
  return TASK_UPDATED_PAYLOAD.of(task);
}

/**
 * The outbox insert of TASK_UPDATED for the one task a statement's CTE `source` changed (a claim, a
 * completion), built in SQL: TASK_UPDATED_PAYLOAD with the envelope enqueueEvent adds, for statements that
 * write the task and announce it at once. The statement's outer INSERT (the outbox's NOTIFY rule does not
 * run inside WITH).
 */
export function taskUpdatedInsert(eventId: string, tenantId: string, source: string): Prisma.Sql {
  const envelope = EVENT_ENVELOPE.sql({
    eventId: Prisma.sql`${eventId}::text`,
    type: "'TASK_UPDATED'",
    tenantId: Prisma.sql`${tenantId}::text`,
  });
  return Prisma.sql`
    INSERT INTO outbox_events (id, tenant_id, type, payload)
    SELECT ${eventId}::uuid, ${tenantId}::uuid, 'TASK_UPDATED', ${TASK_UPDATED_PAYLOAD.sql('c')} || ${envelope}
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
  ['parent_task_id::text', 'parentTaskId'],
  ['root_task_id::text', 'rootTaskId'],
  ['depth', 'depth'],
  ['role_chain', 'roleChain'],
  ['resume_on', 'resumeOn'],
  ['cost_cap_usd::text', 'costCapUsd'],
  ['routine_id::text', 'routineId'],
  ['steps_recorded', 'stepsRecorded'],
  ['claims', 'claims'],
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

/** A task as taskColumnsOf reads it, cost and cap still text. */
export type TaskColumns = Omit<Task, 'costUsd' | 'costCapUsd'> & {
  costUsd: string | null;
  costCapUsd: string | null;
};

export function taskFromColumns({ costUsd, costCapUsd, ...task }: TaskColumns): Task {
  return {
    ...task,
    costUsd: costUsd === null ? null : new Prisma.Decimal(costUsd),
    costCapUsd: costCapUsd === null ? null : new Prisma.Decimal(costCapUsd),
  };
}

/** A task as TASK_STEPS_RECORDED describes it: which task, and how far its run record goes. */
interface StepsRecordedSource {
  id: string;
  role: string;
  rootTaskId: string | null;
  claims: number;
  stepsRecorded: number;
}

/** What TASK_STEPS_RECORDED carries: ids and numbers, never a step's content. */
export const TASK_STEPS_RECORDED_PAYLOAD = eventPayload<StepsRecordedSource>()({
  task_id: { ts: (task): string => task.id, sql: (c) => `${c}.id::text` },
  role: { ts: (task): string => task.role, sql: (c) => `${c}.role` },
  root_task_id: {
    ts: (task): string => task.rootTaskId ?? task.id,
    sql: (c) => `coalesce(${c}.root_task_id, ${c}.id)::text`,
  },
  attempt: { ts: (task): number => task.claims, sql: (c) => `${c}.claims` },
  last_seq: { ts: (task): number => task.stepsRecorded, sql: (c) => `${c}.steps_recorded` },
});

export type TaskStepsRecordedPayload = PayloadOf<typeof TASK_STEPS_RECORDED_PAYLOAD>;

/**
 * The outbox rows of TASK_STEPS_RECORDED, one per task row of `source` (a CTE, or `tasks` itself with
 * `where`): a SELECT of (id, tenant_id, type, payload), to follow an INSERT INTO outbox_events or a UNION
 * ALL of one. Each event says only which task recorded steps and the last seq it has: a reader reads the
 * steps after the seq it holds (docs/runs.md). Webhooks, A2A and push notifications do not carry it.
 */
export function stepsRecordedRows(tenantId: string, source: string, where = Prisma.empty): Prisma.Sql {
  const envelope = EVENT_ENVELOPE.sql({
    eventId: 'c.event_id::text',
    type: "'TASK_STEPS_RECORDED'",
    tenantId: Prisma.sql`${tenantId}::text`,
  });
  return Prisma.sql`
    SELECT c.event_id, ${tenantId}::uuid, 'TASK_STEPS_RECORDED', ${TASK_STEPS_RECORDED_PAYLOAD.sql('c')} || ${envelope}
    FROM (SELECT s.*, gen_random_uuid() AS event_id FROM ${Prisma.raw(source)} s ${where}) c`;
}

/**
 * Announces that steps were recorded for these tasks of the tenant, one event per task, in a statement of
 * its own right after the one that recorded them (in the same transaction when there is one).
 */
export async function announceStepsRecorded(
  db: Prisma.TransactionClient,
  tenantId: string,
  taskIds: readonly string[],
): Promise<void> {
  if (taskIds.length === 0) return;
  await db.$executeRaw`
    INSERT INTO outbox_events (id, tenant_id, type, payload)
    ${stepsRecordedRows(tenantId, 'tasks', Prisma.sql`WHERE s.id = ANY(${taskIds}::uuid[]) AND s.tenant_id = ${tenantId}::uuid`)}`;
}
