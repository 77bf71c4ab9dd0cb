import { randomUUID } from 'node:crypto';
import type { PrismaClient } from '../../db/client.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { type BudgetState, readBudgets, refusingBudget } from '../agents/budgets.js';
import { queueChatTask } from '../agents/chat.js';
import { type CatchUp, ON_TIME_GRACE_MS, parseSchedule, planOccurrences } from './schedule.js';

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
 * different routines, never the same twice), and the unique (routine, occurrence) row is written before
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
      const budgets = new Map<string, BudgetState[]>();
      for (const routine of routines) await handleRoutine(tx, routine, now, graceMs, budgets, report);
      return routines.length;
    });
    if (taken < batchSize) return report;
  }
}

/** The tenant's budgets that bind the role, read once per tenant and batch (queuing reserves nothing). */
async function bindingBudgets(
  tx: Prisma.TransactionClient,
  cache: Map<string, BudgetState[]>,
  tenantId: string,
  role: string,
): Promise<BudgetState[]> {
  let budgets = cache.get(tenantId);
  if (!budgets) {
    budgets = await readBudgets(tx, tenantId);
    cache.set(tenantId, budgets);
  }
  return budgets.filter((budget) => budget.role === null || budget.role === role);
}

/** Writes an occurrence row unless one exists; true when it wrote it. */
async function recordOccurrence(
  tx: Prisma.TransactionClient,
  routine: DueRoutine,
  row: {
    scheduledFor: Date;
    outcome: 'queued' | 'skipped';
    reason: SkipReason | null;
    taskId: string | null;
    missedCount: number;
  },
): Promise<boolean> {
  const written = await tx.$executeRaw`
    INSERT INTO routine_occurrences (id, tenant_id, routine_id, scheduled_for, outcome, reason, task_id, missed_count)
    VALUES (${randomUUID()}::uuid, ${routine.tenant_id}::uuid, ${routine.id}::uuid, ${row.scheduledFor},
            ${row.outcome}, ${row.reason}, ${row.taskId}::uuid, ${row.missedCount})
    ON CONFLICT (routine_id, scheduled_for) DO NOTHING`;
  return written > 0;
}

async function handleRoutine(
  tx: Prisma.TransactionClient,
  routine: DueRoutine,
  now: Date,
  graceMs: number,
  budgets: Map<string, BudgetState[]>,
  report: RoutineTickReport,
) {
  let schedule: ReturnType<typeof parseSchedule>;
  try {
    schedule = parseSchedule(routine.cron, routine.time_zone);
  } catch {
    // Stored before a rule or the runtime's time zones changed: it cannot run, so it stops.
    await tx.$executeRaw`
      UPDATE routines SET enabled = false, last_reason = 'schedule_invalid', updated_at = now()
      WHERE id = ${routine.id}::uuid`;
    return;
  }
  const plan = planOccurrences(schedule, routine.next_run_at, now, routine.catch_up, graceMs);
  let last: { outcome: 'queued' | 'skipped'; reason: SkipReason | null; taskId: string | null } = {
    outcome: 'skipped',
    reason: 'missed',
    taskId: null,
  };
  if (plan.missed) {
    const written = await recordOccurrence(tx, routine, {
      scheduledFor: plan.missed.first,
      outcome: 'skipped',
      reason: 'missed',
      taskId: null,
      missedCount: plan.missed.count,
    });
    if (written) report.missed += 1;
  }
  if (plan.run) {
    let reason: SkipReason | null = null;
    if (routine.paused === null) reason = 'unknown_role';
    else if (routine.paused) reason = 'role_paused';
    else if (refusingBudget(await bindingBudgets(tx, budgets, routine.tenant_id, routine.role)))
      reason = 'budget_exhausted';
    const taskId = reason === null ? randomUUID() : null;
    const written = await recordOccurrence(tx, routine, {
      scheduledFor: plan.run,
      outcome: reason === null ? 'queued' : 'skipped',
      reason,
      taskId,
      missedCount: 0,
    });
    if (written && taskId) {
      const queued = await queueChatTask(tx, {
        tenantId: routine.tenant_id,
        sub: `routine:${routine.id}`,
        role: routine.role,
        message: routine.message,
        threadId: null,
        newThreadId: randomUUID(),
        messageId: randomUUID(),
        persistThread: false,
        taskId,
        taskThreadId: null,
        updatedAt: new Date(),
        attachments: [],
        costCapUsd: routine.cost_cap_usd,
        routineId: routine.id,
      });
      if (!queued) throw new Error(`routine ${routine.id}: the task for '${routine.role}' was not queued`);
    }
    if (written) {
      if (taskId) report.queued += 1;
      else report.skipped += 1;
    }
    last = { outcome: reason === null ? 'queued' : 'skipped', reason, taskId };
  }
  await tx.$executeRaw`
    UPDATE routines SET
      next_run_at = coalesce(${plan.next}::timestamptz, next_run_at),
      enabled = enabled AND ${plan.next !== null},
      last_run_at = ${plan.latest}, last_outcome = ${last.outcome}, last_reason = ${last.reason},
      last_task_id = ${last.taskId}::uuid, updated_at = now()
    WHERE id = ${routine.id}::uuid`;
}
