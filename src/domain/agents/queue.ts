import { enqueueEvent } from '../../events/outbox.js';
import { Prisma, type Task } from '../../generated/prisma/client.js';
import { conflict, forbidden, notFound, Refusal } from '../errors.js';
import { countFinishedTasks } from '../finetuning/outcomes.js';
import {
  type BudgetState,
  lockBudgets,
  refusingBudget,
  releaseReservations,
  reserveForTask,
  settleTask,
} from './budgets.js';
import type { TokenUsage } from './completion-rules.js';
import { type ModelRouting, routeClaimedTask } from './model-routing.js';
import type { AuthedContext } from './registry.js';
import { normalizeRole } from './roles.js';
import { taskEventPayload } from './task-events.js';

/** How long a claim lasts before the task returns to the queue. */
export const DEFAULT_LEASE_MS = 5 * 60 * 1000;
/** Claims a task gets; a lease lapsing on the last one fails the task. */
export const MAX_ATTEMPTS = 3;

export interface ClaimOptions {
  /** Lease duration in milliseconds. Default DEFAULT_LEASE_MS. */
  leaseMs?: number;
}

interface ChangedTask {
  id: string;
  role: string;
  status: string;
  attempts: number;
  updatedAt: Date;
}

async function announce(tx: Prisma.TransactionClient, tenantId: string, tasks: readonly ChangedTask[]) {
  for (const task of tasks)
    await enqueueEvent(tx, { type: 'TASK_UPDATED', tenantId, payload: taskEventPayload(task) });
}

/**
 * Running tasks of one role whose lease lapsed go back to `pending`, or end `failed` (finished when the lease
 * ran out) when they used their last attempt. Rows another transaction holds are left for a later pass.
 * Returns how many changed.
 */
export async function reapExpiredLeases(
  tx: Prisma.TransactionClient,
  tenantId: string,
  role: string,
): Promise<number> {
  const changed = await tx.$queryRaw<ChangedTask[]>`
    UPDATE tasks SET
      status = CASE WHEN attempts >= ${MAX_ATTEMPTS} THEN 'failed'::"TaskStatus" ELSE 'pending'::"TaskStatus" END,
      finished_at = CASE WHEN attempts >= ${MAX_ATTEMPTS} THEN lease_expires_at END,
      error = CASE WHEN attempts >= ${MAX_ATTEMPTS} THEN ${`lease expired on the last of ${MAX_ATTEMPTS} attempts`} ELSE error END,
      claimed_by = CASE WHEN attempts >= ${MAX_ATTEMPTS} THEN claimed_by END,
      started_at = CASE WHEN attempts >= ${MAX_ATTEMPTS} THEN started_at END,
      lease_expires_at = NULL,
      updated_at = now()
    WHERE id IN (
      SELECT id FROM tasks
      WHERE tenant_id = ${tenantId}::uuid AND role = ${role} AND status = 'running' AND lease_expires_at < now()
      ORDER BY lease_expires_at
      LIMIT 100
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id::text, role, status::text, attempts, updated_at AS "updatedAt"`;
  await releaseReservations(
    tx,
    tenantId,
    role,
    changed.map((task) => task.id),
  );
  await countFinishedTasks(
    tx,
    changed.filter((task) => task.status === 'failed').map((task) => task.id),
  );
  await announce(tx, tenantId, changed);
  return changed.length;
}

/** Why a claim ended as it did: `claimed`, or the first reason there was nothing to hand out. */
export type ClaimOutcome =
  | 'claimed'
  | 'queue_empty'
  | 'role_paused'
  | 'role_budget_exhausted'
  | 'tenant_budget_exhausted';

export interface ClaimResult {
  outcome: ClaimOutcome;
  task: Task | null;
  /** The budget that refused the claim, as it stood. */
  budget: BudgetState | null;
  /** How the claimed task's model version was chosen; null when nothing was claimed. */
  routing: ModelRouting | null;
}

/**
 * Hands the oldest pending task of a role to the calling agent, or says why it cannot: the role is paused,
 * the tenant's or the role's budget has no room for one more task's estimate, or nothing is pending (checked
 * in that order). Each task goes to exactly one caller: the row is locked and rows other claimers hold are
 * skipped. The budgets are locked for the rest of the transaction, and the task's estimate is reserved in
 * the same transaction that hands it out, so spent + reserved never passes a limit. A refusal writes nothing.
 */
export async function claimNextTask(
  context: AuthedContext,
  rawRole: string,
  { leaseMs = DEFAULT_LEASE_MS }: ClaimOptions = {},
): Promise<ClaimResult> {
  const { tenantId, sub } = context.viewer;
  const role = normalizeRole(rawRole);
  return context.prisma.$transaction(async (tx) => {
    // A share lock, so a pause committing meanwhile waits for this claim and no claim follows it.
    const [agentRole] = await tx.$queryRaw<{ paused: boolean }[]>`
      SELECT paused FROM agent_roles WHERE tenant_id = ${tenantId}::uuid AND role = ${role} FOR SHARE`;
    if (!agentRole) throw notFound(`Unknown agent role '${role}'`);
    await reapExpiredLeases(tx, tenantId, role);
    if (agentRole.paused) return { outcome: 'role_paused', task: null, budget: null, routing: null };
    const budgets = await lockBudgets(tx, tenantId, role);
    const refusing = refusingBudget(budgets);
    if (refusing) {
      const outcome = refusing.role === null ? 'tenant_budget_exhausted' : 'role_budget_exhausted';
      return { outcome, task: null, budget: refusing, routing: null };
    }
    const [task] = await tx.$queryRaw<ChangedTask[]>`
      UPDATE tasks SET
        status = 'running', attempts = attempts + 1, claimed_by = ${sub}, started_at = now(),
        lease_expires_at = now() + ${leaseMs}::int * interval '1 millisecond', updated_at = now()
      WHERE id = (
        SELECT id FROM tasks
        WHERE tenant_id = ${tenantId}::uuid AND role = ${role} AND status = 'pending'
        ORDER BY created_at, id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
      )
      RETURNING id::text, role, status::text, attempts, updated_at AS "updatedAt"`;
    if (!task) return { outcome: 'queue_empty', task: null, budget: null, routing: null };
    await reserveForTask(tx, budgets, task.id);
    const routing = await routeClaimedTask(tx, task.id);
    await announce(tx, tenantId, [task]);
    return {
      outcome: 'claimed',
      task: await tx.task.findUniqueOrThrow({ where: { id: task.id } }),
      budget: null,
      routing,
    };
  });
}

/** claimNextTask's task: null when nothing is claimable, whatever the reason. */
export async function claimTask(context: AuthedContext, rawRole: string, options: ClaimOptions = {}) {
  return (await claimNextTask(context, rawRole, options)).task;
}

interface LockedTask {
  status: string;
  claimed_by: string | null;
}

/** Locks a running task of the caller's tenant that the caller claimed; 404, 403 or 409 otherwise. */
export async function lockOwnRunningTask(tx: Prisma.TransactionClient, context: AuthedContext, id: string) {
  const [task] = await tx.$queryRaw<LockedTask[]>`
    SELECT status::text, claimed_by FROM tasks WHERE id = ${id}::uuid AND tenant_id = ${context.viewer.tenantId}::uuid FOR UPDATE`;
  if (!task) throw notFound(`Task ${id} not found`);
  if (task.status !== 'running') throw conflict(`Task ${id} is ${task.status}, not running`);
  if (task.claimed_by !== context.viewer.sub) throw forbidden(`Task ${id} is claimed by another agent`);
}

export interface RecommendationDraft {
  summary: string;
  predictedOutcome?: string | null | undefined;
}

export interface CompletionReport {
  output?: string | null | undefined;
  tokensUsed: number;
  /** US dollars; stored exactly to the micro-dollar. */
  costUsd: number;
  recommendations?: readonly RecommendationDraft[] | null | undefined;
  /** The breakdown of tokensUsed by kind, already checked to add up (completion-rules.ts). */
  usage?: TokenUsage | null | undefined;
}

const tokensOrNull = (count: number | null | undefined) =>
  count === null || count === undefined ? null : BigInt(count);

async function finish(
  context: AuthedContext,
  id: string,
  write: (tx: Prisma.TransactionClient) => Promise<ChangedTask | undefined>,
): Promise<Task> {
  const task = await context.prisma.$transaction(async (tx) => {
    await lockOwnRunningTask(tx, context, id);
    const changed = await write(tx);
    if (!changed) throw new Error(`task ${id} vanished while locked`);
    await countFinishedTasks(tx, [changed.id]);
    await announce(tx, context.viewer.tenantId, [changed]);
    return tx.task.findUniqueOrThrow({ where: { id } });
  });
  return task;
}

/** Ends the caller's running task as `completed`, with its usage, output and recommendations. */
export function completeTask(context: AuthedContext, id: string, report: CompletionReport): Promise<Task> {
  return finish(context, id, async (tx) => {
    const [changed] = await tx.$queryRaw<ChangedTask[]>`
      UPDATE tasks SET
        status = 'completed', finished_at = now(), lease_expires_at = NULL, tokens_used = ${BigInt(report.tokensUsed)},
        cost_usd = ${report.costUsd.toFixed(6)}::numeric, output = ${report.output ?? null},
        input_tokens = ${tokensOrNull(report.usage?.inputTokens)},
        cached_input_tokens = ${tokensOrNull(report.usage ? (report.usage.cachedInputTokens ?? 0) : null)},
        output_tokens = ${tokensOrNull(report.usage?.outputTokens)},
        reasoning_tokens = ${tokensOrNull(report.usage ? (report.usage.reasoningTokens ?? 0) : null)},
        updated_at = now()
      WHERE id = ${id}::uuid
      RETURNING id::text, role, status::text, attempts, updated_at AS "updatedAt"`;
    if (changed)
      await settleTask(tx, context, changed, {
        costUsd: new Prisma.Decimal(report.costUsd.toFixed(6)),
        tokens: BigInt(report.tokensUsed),
      });
    if (changed && report.recommendations?.length) {
      // Recommendations have no position column: a millisecond apart, they read back in the reported order.
      const reportedAt = changed.updatedAt.getTime();
      await tx.recommendation.createMany({
        data: report.recommendations.map((draft, index) => ({
          tenantId: context.viewer.tenantId,
          taskId: id,
          role: changed.role,
          summary: draft.summary,
          predictedOutcome: draft.predictedOutcome ?? null,
          createdAt: new Date(reportedAt + index),
        })),
      });
    }
    return changed;
  });
}

/** Ends the caller's running task as `failed` at once, whatever attempts remain. */
export function failTask(context: AuthedContext, id: string, error: string): Promise<Task> {
  return finish(context, id, async (tx) => {
    const [changed] = await tx.$queryRaw<ChangedTask[]>`
      UPDATE tasks SET status = 'failed', finished_at = now(), lease_expires_at = NULL, error = ${error}, updated_at = now()
      WHERE id = ${id}::uuid
      RETURNING id::text, role, status::text, attempts, updated_at AS "updatedAt"`;
    if (changed) await releaseReservations(tx, context.viewer.tenantId, changed.role, [changed.id]);
    return changed;
  });
}

/**
 * Gives the caller's running task back to the queue, as an agent runtime that stops before finishing does:
 * `pending` again, without claimer or lease, its budget reservation released, and the claim not counted
 * against its attempts; the next claim of the role, on any instance, takes it (a waiting claim is woken).
 * 404 another tenant's task, 409 a task not running, 403 another agent's, as for completeTask; a refusal
 * changes nothing.
 */
export function releaseTask(context: AuthedContext, id: string): Promise<Task> {
  return context.prisma.$transaction(async (tx) => {
    await lockOwnRunningTask(tx, context, id);
    const [changed] = await tx.$queryRaw<ChangedTask[]>`
      UPDATE tasks SET
        status = 'pending', claimed_by = NULL, started_at = NULL, lease_expires_at = NULL,
        attempts = GREATEST(attempts - 1, 0), updated_at = now()
      WHERE id = ${id}::uuid
      RETURNING id::text, role, status::text, attempts, updated_at AS "updatedAt"`;
    if (!changed) throw new Error(`task ${id} vanished while locked`);
    await releaseReservations(tx, context.viewer.tenantId, changed.role, [changed.id]);
    await announce(tx, context.viewer.tenantId, [changed]);
    return tx.task.findUniqueOrThrow({ where: { id } });
  });
}

/**
 * Extends the lease of the caller's running task to DEFAULT_LEASE_MS (or `leaseMs`) from now. Refused, and
 * nothing changes, when the task is not the caller's tenant's (404), not running (409, `task_not_running`:
 * the sweeper may already have returned it to the queue), held by another agent (403), or when its lease
 * has already lapsed (409, `lease_expired`): the task may have been handed out again, so the agent must stop.
 * Publishes nothing: the lease is not part of TASK_UPDATED's payload.
 */
export async function renewTaskLease(
  context: AuthedContext,
  id: string,
  { leaseMs = DEFAULT_LEASE_MS }: ClaimOptions = {},
): Promise<Task> {
  return context.prisma.$transaction(async (tx) => {
    const [task] = await tx.$queryRaw<(LockedTask & { lapsed: boolean })[]>`
      SELECT status::text, claimed_by, lease_expires_at < now() AS lapsed
      FROM tasks WHERE id = ${id}::uuid AND tenant_id = ${context.viewer.tenantId}::uuid FOR UPDATE`;
    if (!task) throw notFound(`Task ${id} not found`);
    if (task.status !== 'running') {
      throw new Refusal('CONFLICT', `Task ${id} is ${task.status}, not running`, {
        reason: 'task_not_running',
        facts: { status: task.status },
      });
    }
    if (task.claimed_by !== context.viewer.sub) throw forbidden(`Task ${id} is claimed by another agent`);
    if (task.lapsed) {
      throw new Refusal('CONFLICT', `The lease of task ${id} has already lapsed`, {
        reason: 'lease_expired',
        facts: { status: task.status },
      });
    }
    await tx.$executeRaw`
      UPDATE tasks SET lease_expires_at = now() + ${leaseMs}::int * interval '1 millisecond', updated_at = now()
      WHERE id = ${id}::uuid`;
    return tx.task.findUniqueOrThrow({ where: { id } });
  });
}
