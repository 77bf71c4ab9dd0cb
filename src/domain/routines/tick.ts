import { randomUUID } from 'node:crypto';
import type { Cron } from 'croner';
import type { PrismaClient } from '../../db/client.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { type BudgetState, readBudgetsOfTenants, refusingBudget } from '../agents/budgets.js';
import { queueChatTask } from '../agents/chat.js';
import {
  type CatchUp,
  type OccurrencePlan,
  ON_TIME_GRACE_MS,
  parseSchedule,
  planOccurrences,
} from './schedule.js';

/** Why an occurrence queued nothing. */
export type SkipReason = 'role_paused' | 'budget_exhausted' | 'missed' | 'unknown_role' | 'schedule_invalid';

export interface RoutineTickOptions {
  /** The tick's clock; default the machine's. Tests move it. */
  now?: Date;
  /** Routines handled per transaction; default 200. */
  batchSize?: number;
  /** How late an occurrence may be handled and still run as scheduled; default ON_TIME_GRACE_MS. */
  graceMs?: number;
}

/** What one tick did, counted by occurrence rows written. */
export interface RoutineTickReport {
  queued: number;
  skipped: number;
  /** `missed` rows (each may stand for several occurrences). */
  missed: number;
}

interface DueRoutine {
  id: string;
  tenant_id: string;
  role: string;
  cron: string;
  time_zone: string;
  message: string;
  cost_cap_usd: string | null;
  catch_up: CatchUp;
  next_run_at: Date;
  /** Null when the tenant no longer has the role. */
  paused: boolean | null;
}

/**
 * Handles every enabled routine whose next occurrence is at or before `now`, on any number of instances at
 * once: each occurrence is handled exactly once. While nothing is due this is one indexed query. Otherwise
 * routines are taken in batches, each in one transaction, locked with SKIP LOCKED (two instances take
 * different routines, never the same twice), and the unique (routine, occurrence) rows are written before
 * anything is queued. Per routine (planOccurrences): missed occurrences are recorded as one `missed` row;
 * the occurrence to run queues one task for the role (the chat message's statement, announced as
 * TASK_UPDATED), or is recorded as skipped while the role is paused (`role_paused`) or a budget that binds
 * it has no room for one more task (`budget_exhausted`). Then the routine moves to its next occurrence.
 */
export async function tickRoutines(
  prisma: PrismaClient,
  { now = new Date(), batchSize = 200, graceMs = ON_TIME_GRACE_MS }: RoutineTickOptions = {},
): Promise<RoutineTickReport> {
  const report: RoutineTickReport = { queued: 0, skipped: 0, missed: 0 };
  const [due] = await prisma.$queryRaw<{ due: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM routines WHERE enabled AND next_run_at <= ${now}) AS due`;
  if (!due?.due) return report;
  for (;;) {
    const taken = await prisma.$transaction(async (tx) => {
      const routines = await tx.$queryRaw<DueRoutine[]>`
        SELECT r.id::text, r.tenant_id::text, r.role, r.cron, r.time_zone, r.message,
               r.cost_cap_usd::text, r.catch_up::text, r.next_run_at, a.paused
        FROM routines r
        LEFT JOIN agent_roles a ON a.tenant_id = r.tenant_id AND a.role = r.role
        WHERE r.enabled AND r.next_run_at <= ${now}
        ORDER BY r.next_run_at, r.id
        LIMIT ${batchSize}
        FOR UPDATE OF r SKIP LOCKED`;
      if (routines.length > 0) await handleBatch(tx, routines, now, graceMs, report);
      return routines.length;
    });
    if (taken < batchSize) return report;
  }
}

/** Parsed schedules by expression and time zone, kept across ticks (routines share a few). */
const schedules = new Map<string, Cron>();
const MAX_CACHED_SCHEDULES = 10_000;

function scheduleOf(routine: DueRoutine): Cron {
  const key = `${routine.time_zone}\u0000${routine.cron}`;
  let schedule = schedules.get(key);
  if (!schedule) {
    schedule = parseSchedule(routine.cron, routine.time_zone);
    if (schedules.size >= MAX_CACHED_SCHEDULES) schedules.clear();
    schedules.set(key, schedule);
  }
  return schedule;
}

interface OccurrenceRow {
  routine: DueRoutine;
  scheduledFor: Date;
  outcome: 'queued' | 'skipped';
  reason: SkipReason | null;
  taskId: string | null;
  missedCount: number;
}

/** What a routine's row says of its latest occurrence once the batch is handled. */
interface RoutineState {
  routine: DueRoutine;
  plan: OccurrencePlan | null;
  last: { outcome: 'queued' | 'skipped'; reason: SkipReason | null; taskId: string | null };
}

/**
 * Handles a batch of locked due routines in four statements besides one per task queued: the binding
 * budgets, the occurrence rows (those another tick already wrote are left, and queue nothing), the tasks,
 * and the routines' next run and last outcome.
 */
async function handleBatch(
  tx: Prisma.TransactionClient,
  routines: DueRoutine[],
  now: Date,
  graceMs: number,
  report: RoutineTickReport,
) {
  const budgets = await readBudgetsOfTenants(tx, [...new Set(routines.map((routine) => routine.tenant_id))]);
  const rows: OccurrenceRow[] = [];
  const states: RoutineState[] = [];
  for (const routine of routines) {
    let plan: OccurrencePlan;
    try {
      plan = planOccurrences(scheduleOf(routine), routine.next_run_at, now, routine.catch_up, graceMs);
    } catch {
      // Stored before a rule or the runtime's time zones changed: it cannot run, so it stops.
      states.push({
        routine,
        plan: null,
        last: { outcome: 'skipped', reason: 'schedule_invalid', taskId: null },
      });
      continue;
    }
    const state: RoutineState = {
      routine,
      plan,
      last: { outcome: 'skipped', reason: 'missed', taskId: null },
    };
    if (plan.missed) {
      rows.push({
        routine,
        scheduledFor: plan.missed.first,
        outcome: 'skipped',
        reason: 'missed',
        taskId: null,
        missedCount: plan.missed.count,
      });
    }
    if (plan.run) {
      const binding = (budgets.get(routine.tenant_id) ?? []).filter(
        (budget: BudgetState) => budget.role === null || budget.role === routine.role,
      );
      let reason: SkipReason | null = null;
      if (routine.paused === null) reason = 'unknown_role';
      else if (routine.paused) reason = 'role_paused';
      else if (refusingBudget(binding)) reason = 'budget_exhausted';
      const taskId = reason === null ? randomUUID() : null;
      state.last = { outcome: reason === null ? 'queued' : 'skipped', reason, taskId };
      rows.push({
        routine,
        scheduledFor: plan.run,
        outcome: state.last.outcome,
        reason,
        taskId,
        missedCount: 0,
      });
    }
    states.push(state);
  }

  const written = await tx.$queryRaw<{ routine_id: string; scheduled_for: Date }[]>`
    INSERT INTO routine_occurrences (id, tenant_id, routine_id, scheduled_for, outcome, reason, task_id, missed_count)
    SELECT gen_random_uuid(), r.tenant_id, r.routine_id, r.scheduled_for, r.outcome, r.reason, r.task_id, r.missed_count
    FROM unnest(
      ${rows.map((row) => row.routine.tenant_id)}::uuid[], ${rows.map((row) => row.routine.id)}::uuid[],
      ${rows.map((row) => row.scheduledFor)}::timestamptz[], ${rows.map((row) => row.outcome)}::text[],
      ${rows.map((row) => row.reason)}::text[], ${rows.map((row) => row.taskId)}::uuid[],
      ${rows.map((row) => row.missedCount)}::int[]
    ) AS r(tenant_id, routine_id, scheduled_for, outcome, reason, task_id, missed_count)
    ON CONFLICT (routine_id, scheduled_for) DO NOTHING
    RETURNING routine_id::text, scheduled_for`;
  const isWritten = new Set(written.map((row) => `${row.routine_id}@${row.scheduled_for.getTime()}`));

  for (const row of rows) {
    if (!isWritten.has(`${row.routine.id}@${row.scheduledFor.getTime()}`)) continue;
    if (row.reason === 'missed') report.missed += 1;
    else if (row.taskId === null) report.skipped += 1;
    else {
      const queued = await queueChatTask(tx, {
        tenantId: row.routine.tenant_id,
        sub: `routine:${row.routine.id}`,
        role: row.routine.role,
        message: row.routine.message,
        threadId: null,
        newThreadId: randomUUID(),
        messageId: randomUUID(),
        persistThread: false,
        taskId: row.taskId,
        taskThreadId: null,
        updatedAt: new Date(),
        attachments: [],
        costCapUsd: row.routine.cost_cap_usd,
        routineId: row.routine.id,
      });
      if (!queued)
        throw new Error(`routine ${row.routine.id}: the task for '${row.routine.role}' was not queued`);
      report.queued += 1;
    }
  }

  await tx.$executeRaw`
    UPDATE routines AS r SET
      next_run_at = coalesce(u.next_run_at, r.next_run_at),
      enabled = r.enabled AND u.next_run_at IS NOT NULL,
      last_run_at = coalesce(u.last_run_at, r.last_run_at),
      last_outcome = coalesce(u.last_outcome, r.last_outcome),
      last_reason = u.last_reason,
      last_task_id = u.last_task_id,
      updated_at = now()
    FROM unnest(
      ${states.map((state) => state.routine.id)}::uuid[],
      ${states.map((state) => state.plan?.next ?? null)}::timestamptz[],
      ${states.map((state) => state.plan?.latest ?? null)}::timestamptz[],
      ${states.map((state) => (state.plan ? state.last.outcome : null))}::text[],
      ${states.map((state) => state.last.reason)}::text[],
      ${states.map((state) => state.last.taskId)}::uuid[]
    ) AS u(id, next_run_at, last_run_at, last_outcome, last_reason, last_task_id)
    WHERE r.id = u.id`;
}
